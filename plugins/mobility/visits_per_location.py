"""Visits per tile, original against anonymized (skmob's collective visits_per_location)."""

from __future__ import annotations

from typing import Any

import numpy as np

from anoneval.core.api import Trajectories
from anoneval.plugins.mobility._collective import CollectiveMeasure
from anoneval.plugins.mobility._tiles import Tiling, VisitTable


class VisitsPerLocation(CollectiveMeasure):
    """Number of visits per tile on each side, compared with ``metric``.

    Source: scikit-mobility 1.3.1 ``skmob/measures/collective.py`` ``visits_per_location`` (the
    count of visit-table rows per location) and ``evaluation.py`` for the comparison
    (reference/mobility_semantics.md §5); comparisons: see ``_collective.py``.
    """

    name = "VisitsPerLocation"
    description = "Visits per tile, original against anonymized (cpc, rmse, pearson or jsd)."

    def vector(self, data: Trajectories, table: VisitTable, grid: Tiling) -> dict[Any, float]:
        tiles, counts = np.unique(table.tile, return_counts=True)
        return {int(t): float(c) for t, c in zip(tiles, counts, strict=True)}
