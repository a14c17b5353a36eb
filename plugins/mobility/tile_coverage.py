"""Share of tiles visited on each side and their overlap."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    LossMeasure,
    MeasureResult,
    Params,
    Trajectories,
)
from anoneval.plugins.mobility._tiles import TileSpec, make_grid


class TileCoverage(LossMeasure):
    """Share of the original's tiles that the anonymized data still visits.

    Every point counts (reference/mobility_semantics.md §8): ``share_tiles_covered`` of a side
    = #tiles holding ≥ 1 of its points / #tiles of the grid; the value is
    ``share_of_original_tiles_covered`` = |tiles(anon) ∩ tiles(orig)| / |tiles(orig)| (higher =
    less loss); ``jaccard`` = |∩| / |∪| is in the details. Points outside the grid are counted.
    """

    name = "TileCoverage"
    description = "Share of the original's tiles the anonymized data still visits."
    unit = "share"
    accepts = ("trajectories",)
    higher_is_worse = False

    class Params(Params):
        tiles: TileSpec = Field(default_factory=TileSpec, description="Tiles to count.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(original, Trajectories) and isinstance(anonymized, Trajectories)
        grid = make_grid(self.params.tiles, original, anonymized)
        sets, outside = {}, {}
        for side, data in (("original", original), ("anonymized", anonymized)):
            tile = grid.tile_of(data.lon, data.lat)
            sets[side] = np.unique(tile[tile >= 0])
            outside[side] = int((tile < 0).sum())
        if not len(sets["original"]):
            raise DataError("TileCoverage: no original point falls inside the tile grid")
        common = len(np.intersect1d(sets["original"], sets["anonymized"]))
        union = len(np.union1d(sets["original"], sets["anonymized"]))
        details: dict[str, Any] = {
            "tiles": grid.n_tiles,
            "share_tiles_covered": {s: len(v) / grid.n_tiles for s, v in sets.items()},
            "tiles_covered": {s: len(v) for s, v in sets.items()},
            "common_tiles": common,
            "jaccard": common / union,
            "points_outside_grid": outside,
        }
        return MeasureResult(value=common / len(sets["original"]), details=details)
