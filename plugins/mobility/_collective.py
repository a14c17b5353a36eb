"""Shared parts of the collective mobility measures: per-tile vectors, home tiles, comparisons.

Comparisons follow scikit-mobility's ``skmob/measures/evaluation.py`` (reference/
mobility_semantics.md §5): the two vectors are aligned over the union of their keys with 0 for
a missing key. ``cpc`` (common part of commuters, Lenormand et al. 2012) = 2 Σ min(a, b) /
(Σ a + Σ b); ``rmse`` = sqrt(mean (a − b)²) over the aligned keys (sklearn's mse, rooted);
``pearson`` = Pearson's r (scipy; NaN when a side is constant); ``jsd`` = Jensen–Shannon
divergence of the normalised vectors, log base 2 (in [0, 1]), 0·log 0 = 0 (not scipy's
square root).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    Direction,
    LossMeasure,
    MeasureResult,
    Params,
    Trajectories,
)
from anoneval.plugins.mobility._tiles import (
    STAYS_HELP,
    VISITS_HELP,
    StaySpec,
    TileSpec,
    Tiling,
    VisitRule,
    VisitTable,
    make_grid,
    visit_table,
)

Metric = Literal["cpc", "rmse", "pearson", "jsd"]
NIGHT_START, NIGHT_END = 22 * 3600, 7 * 3600  # skmob home_location: [22:00, 07:00], inclusive


def compare(a: dict[int, float], b: dict[int, float], metric: str) -> float:
    """``metric`` between two keyed vectors aligned on the union of their keys (0 if absent)."""
    keys = sorted(set(a) | set(b))
    x = np.array([a.get(k, 0.0) for k in keys], dtype=np.float64)
    y = np.array([b.get(k, 0.0) for k in keys], dtype=np.float64)
    if metric == "cpc":
        total = x.sum() + y.sum()
        return float(2 * np.minimum(x, y).sum() / total) if total else 1.0
    if metric == "rmse":
        return float(np.sqrt(np.mean((x - y) ** 2)))
    if metric == "pearson":
        if x.std() == 0 or y.std() == 0:
            return float("nan")
        return float(np.corrcoef(x, y)[0, 1])
    return jsd(x, y)


def jsd(x: np.ndarray, y: np.ndarray) -> float:
    """Jensen–Shannon divergence (log base 2) of two non-negative vectors, normalised."""
    p, q = x / x.sum(), y / y.sum()
    m = (p + q) / 2

    def kl(a: np.ndarray) -> float:
        nz = a > 0
        return float(np.sum(a[nz] * np.log2(a[nz] / m[nz])))

    return 0.5 * kl(p) + 0.5 * kl(q)


def home_tiles(table: VisitTable, grid: Tiling) -> tuple[np.ndarray, np.ndarray]:
    """(user code, home tile) of each user with a visit, as skmob's ``home_location``.

    Home is the most frequent tile among the user's visits between 22:00 and 07:00 UTC (both
    ends included, pandas ``between_time``), or among all its visits when it has none at night;
    ties go to the smallest (lat, lng) of the tile centre.
    """
    tod = table.t % 86400
    night = (tod >= NIGHT_START) | (tod <= NIGHT_END)
    has_night = np.bincount(table.uid[night], minlength=len(table.users)) > 0
    use = night | ~has_night[table.uid]
    uid, tile = table.uid[use], table.tile[use]
    n = grid.n_tiles
    keys, counts = np.unique(uid.astype(np.int64) * n + tile, return_counts=True)
    u, t = keys // n, keys % n
    rank = grid.rank(t)  # (lat, lng) order of the tile centres
    order = np.lexsort((rank, -counts, u))
    u, t = u[order], t[order]
    first = np.r_[True, u[1:] != u[:-1]]
    return u[first], t[first]


class CollectiveParams(Params):
    tiles: TileSpec = Field(default_factory=TileSpec, description="Tiles locations are counted on.")
    visits: VisitRule = Field("last_point", description=VISITS_HELP)
    stays: StaySpec = Field(default_factory=StaySpec, description=STAYS_HELP)
    metric: Metric = Field("cpc", description=(
        "cpc (common part of commuters), rmse, pearson or jsd (base 2) between the sides."))
    top: int = Field(10, ge=0, le=1000, description="Largest entries of each side in details.")


class CollectiveMeasure(LossMeasure):
    """Base: a per-key count vector of each side, compared with ``metric``."""

    accepts = ("trajectories",)
    Params = CollectiveParams

    def direction(self) -> Direction:
        return (Direction.MORE_LOSS if self.params.metric in ("rmse", "jsd")
                else Direction.LESS_LOSS)

    def vector(self, data: Trajectories, table: VisitTable, grid: Tiling) -> dict[Any, float]:
        raise NotImplementedError

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(original, Trajectories) and isinstance(anonymized, Trajectories)
        p = self.params
        grid = make_grid(p.tiles, original, anonymized)
        vectors = {}
        for side, data in (("original", original), ("anonymized", anonymized)):
            table = visit_table(data, grid, p.visits, p.stays)
            vectors[side] = self.vector(data, table, grid)
            if not vectors[side]:
                raise DataError(f"{self.name}: the {side} data has nothing inside the tile "
                                "grid")
        a, b = vectors["original"], vectors["anonymized"]
        details: dict[str, Any] = {"metric": p.metric,
                                   "keys": {"original": len(a), "anonymized": len(b),
                                            "common": len(set(a) & set(b))},
                                   "totals": {"original": float(sum(a.values())),
                                              "anonymized": float(sum(b.values()))}}
        for m in ("cpc", "rmse", "pearson", "jsd"):
            details[m] = compare(a, b, m)
        for side, v in vectors.items():
            best = sorted(v.items(), key=lambda kv: (-kv[1], str(kv[0])))[:p.top]
            details[f"top_{side}"] = [[str(k), float(c)] for k, c in best]
        return MeasureResult(value=details[p.metric], details=details)
