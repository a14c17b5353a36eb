"""Users per home tile, original against anonymized (skmob's collective homes_per_location)."""

from __future__ import annotations

from typing import Any

import numpy as np

from anoneval.core.api import Trajectories
from anoneval.plugins.mobility._collective import CollectiveMeasure, home_tiles
from anoneval.plugins.mobility._tiles import Tiling, VisitTable


class HomesPerLocation(CollectiveMeasure):
    """Number of users whose home is each tile, on each side, compared with ``metric``.

    Home: skmob's ``home_location`` (the most frequent location between 22:00 and 07:00 UTC,
    both ends included, else over all visits; ties to the smallest (lat, lng)); see
    ``_collective.home_tiles``. Source: scikit-mobility 1.3.1
    ``skmob/measures/collective.py`` ``homes_per_location`` and ``individual.py``
    ``home_location`` (reference/mobility_semantics.md §4–§5); comparisons: ``_collective.py``.
    """

    name = "HomesPerLocation"
    description = "Users per home tile, original against anonymized (cpc, rmse, pearson or jsd)."

    def vector(self, data: Trajectories, table: VisitTable, grid: Tiling) -> dict[Any, float]:
        _, home = home_tiles(table, grid)
        tiles, counts = np.unique(home, return_counts=True)
        return {int(t): float(c) for t, c in zip(tiles, counts, strict=True)}
