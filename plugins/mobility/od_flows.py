"""Origin–destination flows between tiles, original against anonymized."""

from __future__ import annotations

from typing import Any

import numpy as np

from anoneval.core.api import Trajectories
from anoneval.plugins.mobility._collective import CollectiveMeasure
from anoneval.plugins.mobility._tiles import Tiling, VisitTable


class ODFlows(CollectiveMeasure):
    """Trips per (origin tile, destination tile) on each side, compared with ``metric``.

    A trip is a trajectory, from the tile of its first point to the tile of its last point
    (reference/mobility_semantics.md §1 "Trip OD"); trips with an end outside the grid are
    left out. ``cpc`` is the common part of commuters of Lenormand, Huet, Gargiulo, Deffuant
    (2012), "A universal model of commuting networks", PLoS ONE 7(10): e45985, as skmob's
    ``common_part_of_commuters``; the details list the largest flows of each side as
    ``"origin>destination"``. ``visits`` has no effect.
    """

    name = "ODFlows"
    description = "Trips between tiles (first → last point), original against anonymized."

    def vector(self, data: Trajectories, table: VisitTable, grid: Tiling) -> dict[Any, float]:
        keep = data.lengths > 0
        first, last = data.offsets[:-1][keep], data.offsets[1:][keep] - 1
        o = grid.tile_of(data.lon[first], data.lat[first])
        d = grid.tile_of(data.lon[last], data.lat[last])
        ok = (o >= 0) & (d >= 0)
        keys, counts = np.unique(o[ok] * grid.n_tiles + d[ok], return_counts=True)
        n = grid.n_tiles
        return {f"{k // n}>{k % n}": float(c) for k, c in zip(keys, counts, strict=True)}
