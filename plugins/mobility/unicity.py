"""Unicity (de Montjoye et al. 2013): share of users singled out by p points of their trace."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np
from pydantic import Field
from scipy.stats import norm

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    MeasureResult,
    Params,
    RiskMeasure,
    Trajectories,
    released,
)
from anoneval.plugins._shared.intervals import LevelParams
from anoneval.plugins.mobility._attacks import (
    Lookup,
    Rows,
    _combos,
    _n_instances,
    _random_subsets,
    atleast,
    count_matches,
)
from anoneval.plugins.mobility._tiles import TileSpec, make_grid, visit_table

BLOCK = 1 << 20  # subsets counted at once: bounds memory


class Unicity(RiskMeasure):
    """Share of users uniquely identified by ``points`` random (tile, hour) points of their trace.

    de Montjoye, Hidalgo, Verleysen, Blondel (2013), "Unique in the Crowd: The privacy bounds of
    human mobility", Scientific Reports 3:1376; reference/mobility_semantics.md §6. A point is
    ``(tile, floor(t / 3600 s))`` (UTC hours; tiles of ``tiles``); T_u is the SET of user u's
    distinct points (every GPS point; ``visits: "last_point"`` uses arrivals only). For each
    user with |T_u| ≥ p,

        f_u = Pr_S[ no user v ≠ u has S ⊆ T_v ],  S a uniform p-subset of T_u,

    and the value is the mean of f_u over those users (users with fewer points are counted in
    the details, not in the mean). ``method: "exact"`` enumerates every p-subset of every T_u
    and counts the users containing it (f_u = unique subsets / C(|T_u|, p)); ``"monte_carlo"``
    draws ``samples`` subsets per user (seeded), with the standard error
    ``sqrt(Σ_u f_u(1 − f_u)/N) / |U|`` and ``ci`` the normal interval value ± z·se at
    ``confidence_level`` clipped to [0, 1] (the exact method has no sampling error: ``ci`` is
    None); ``"auto"`` is exact when Σ_u C(|T_u|, p) ≤ ``max_subsets``. Knowledge and
    population are the same (released) dataset.
    """

    name = "Unicity"
    description = "Share of users singled out by p random (tile, hour) points of their trace."
    unit = "share"
    accepts = ("trajectories",)
    inputs = "either"

    class Params(Params, LevelParams):
        points: int = Field(4, ge=1, le=10, description="p: points the intruder knows.")
        tiles: TileSpec = Field(default_factory=TileSpec, description="Spatial resolution.")
        visits: Literal["points", "last_point"] = Field(
            "points", description="points: every GPS point (de Montjoye); last_point: arrivals.")
        method: Literal["auto", "exact", "monte_carlo"] = Field(
            "auto", description="exact enumeration, seeded Monte Carlo, or exact when small.")
        max_subsets: int = Field(2_000_000, ge=1, description=(
            "auto: exact when the users' p-subsets are at most this many in all."))
        samples: int = Field(200, ge=1, description="monte_carlo: subsets drawn per user.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        data = released(original, anonymized)
        assert isinstance(data, Trajectories)
        grid = make_grid(p.tiles, data)
        table = visit_table(data, grid, p.visits)
        if len(table) == 0:
            raise DataError("Unicity: no point falls inside the tile grid")
        # T_u: distinct (tile, hour) codes per user, sorted by user
        hour = np.floor_divide(table.t, 3600)
        _, code = np.unique(np.stack([table.tile, hour], 1), axis=0, return_inverse=True)
        code = code.ravel()
        n_users = len(table.users)
        key = np.unique(table.uid.astype(np.int64) * (int(code.max()) + 1) + code)
        uid, pt = key // (int(code.max()) + 1), key % (int(code.max()) + 1)
        starts = np.searchsorted(uid, np.arange(n_users + 1))
        sets = Rows(starts, pt, np.ones(len(pt)))
        sizes = sets.sizes()
        eligible = np.flatnonzero(sizes >= p.points)
        if not len(eligible):
            raise DataError(f"Unicity: no user has {p.points} distinct (tile, hour) points")
        look = Lookup(sets, int(pt.max()) + 1)
        pred = atleast(look)
        n_subsets = float(_n_instances(sizes[eligible], p.points, False).sum())
        exact = p.method == "exact" or (p.method == "auto" and n_subsets <= p.max_subsets)
        unique = np.zeros(n_users)
        drawn = np.zeros(n_users)
        for owner, loc in self._subsets(sets, eligible, exact, ctx):
            counts = count_matches(look, loc, np.ones(loc.shape), pred)
            np.add.at(unique, owner, counts == 1)
            np.add.at(drawn, owner, 1)
        f = unique[eligible] / drawn[eligible]
        details: dict[str, Any] = {
            "method": "exact" if exact else "monte_carlo",
            "points": p.points,
            "users": len(eligible),
            "users_with_fewer_points": int(n_users - len(eligible)),
            "subsets": int(drawn.sum()),
            "per_user": {str(u): float(v) for u, v in zip(table.users[eligible], f,
                                                           strict=True)},
        }
        ci = None
        if not exact:
            se = math.sqrt(float(np.sum(f * (1 - f))) / p.samples) / len(eligible)
            details["standard_error"] = se
            half = float(norm.ppf((1 + p.confidence_level) / 2)) * se
            ci = [max(float(f.mean()) - half, 0.0), min(float(f.mean()) + half, 1.0)]
        return MeasureResult(value=float(f.mean()), ci=ci, details=details)

    def _subsets(self, sets: Rows, users: np.ndarray, exact: bool,
                 ctx: Context) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(owner, p point codes) blocks: every p-subset, or ``samples`` uniform ones, per user."""
        p = self.params.points
        sizes = sets.sizes()
        if exact:
            for n in np.unique(sizes[users]):
                group = users[sizes[users] == n]
                idx = _combos(int(n), p, False)
                per = max(1, BLOCK // max(len(idx), 1))
                for i in range(0, len(group), per):
                    g = group[i:i + per]
                    pos = (sets.starts[g][:, None, None] + idx[None]).reshape(-1, p)
                    yield np.repeat(g, len(idx)), sets.loc[pos]
            return
        rng = ctx.rng()
        per = max(1, BLOCK // self.params.samples)
        for i in range(0, len(users), per):
            g = users[i:i + per]
            n = sizes[g]
            # a user with exactly p points has one subset; the others draw uniform ones
            idx = np.tile(np.arange(p), (len(g) * self.params.samples, 1))
            bigger = np.repeat(n > p, self.params.samples)
            if bigger.any():
                idx[bigger] = _random_subsets(n[n > p], p, self.params.samples, rng)
            pos = np.repeat(sets.starts[g], self.params.samples)[:, None] + idx
            yield np.repeat(g, self.params.samples), sets.loc[pos]
