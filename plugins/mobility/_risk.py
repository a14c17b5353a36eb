"""The common frame of the skmob attacks: params, tile and visit tables, per-user risk, details.

Risk definitions follow Pellungrini, Pappalardo, Pratesi, Monreale (2017), "A data mining approach
to assess privacy risk in human mobility data", ACM TIST 9(3), as scikit-mobility 1.3.1
implements them (reference/mobility_semantics.md §3): risk(u) = max over u's background-knowledge
instances I of 1/#{users v matching I}; the value is the mean risk over users with a visit.

``target``: ``"anonymized"`` attacks the release alone (knowledge and population both from it,
as ``skmob.privacy.attacks.*.assess_risk``; the true user always matches); with
``"original_to_anonymized"`` each user's knowledge comes from its ORIGINAL visits and is matched
against the released users, users being paired by ``user_id``: risk(u) = max over I of
[u's release matches I] / #{released users matching I} (0 when no released user matches or u
is not released).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    MeasureResult,
    Params,
    RiskMeasure,
    Trajectories,
)
from anoneval.plugins.mobility._attacks import (
    Instances,
    Rows,
    count_matches,
    lower_bound_note,
    row_groups,
    user_risks,
)
from anoneval.plugins.mobility._tiles import (
    Grid,
    TileSpec,
    VisitRule,
    VisitTable,
    make_grid,
    user_codes,
    visit_table,
)


class AttackParams(Params):
    knowledge_length: int = Field(2, ge=1, le=10, description=(
        "k: number of rows of a user's data the intruder knows (skmob's default 2)."))
    tiles: TileSpec = Field(default_factory=TileSpec, description=(
        "Square tiles locations are matched on (skmob's squared tessellation)."))
    visits: VisitRule = Field("last_point", description=(
        "last_point: one visit per trajectory at its arrival (skmob's visit table); "
        "points: every point."))
    target: Literal["anonymized", "original_to_anonymized"] = Field("anonymized", description=(
        "anonymized: the attack on the release alone; original_to_anonymized: knowledge from "
        "the original visits matched against the released users (paired by user_id)."))
    max_instances: int = Field(5000, ge=1, description=(
        "Above this many instances a user's are a seeded sample of this many (a lower bound)."))
    risk_threshold: float = Field(0.5, gt=0, le=1, description=(
        "details.share_at_risk is the share of users with risk ≥ this."))


class MobilityAttack(RiskMeasure):
    """Base of the eight skmob attacks: subclasses say how instances are drawn and matched."""

    unit = "share"
    accepts = ("trajectories",)
    inputs = "either"
    Params = AttackParams

    # -- what a subclass provides -----------------------------------------------------------
    def location_keys(self, table: VisitTable) -> np.ndarray:
        """The location each visit is matched on (the tile; with time for LocationTimeAttack)."""
        return table.tile

    def attack(self, know: Rows, pop: Rows, n_loc: int, tie: np.ndarray,
               rng: np.random.Generator) -> tuple[Instances, Any, Any]:
        """(instances of the knowledge users, population structure, predicate)."""
        raise NotImplementedError

    def extra_details(self) -> dict[str, Any]:
        return {}

    # -- the common flow --------------------------------------------------------------------
    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        cross = p.target == "original_to_anonymized"
        if cross and (original is None or anonymized is None):
            raise DataError(f"{self.name}: target 'original_to_anonymized' needs both the "
                            "original and the anonymized data")
        release = anonymized if anonymized is not None else original
        assert isinstance(release, Trajectories)
        assert original is None or isinstance(original, Trajectories)
        grid = make_grid(p.tiles, original, anonymized)
        pop_table = visit_table(release, grid, p.visits)
        know_table = visit_table(original, grid, p.visits) if cross else pop_table
        if len(pop_table) == 0 or len(know_table) == 0:
            raise DataError(f"{self.name}: no visit falls inside the tile grid "
                            f"(tiles.bbox {p.tiles.bbox})")
        keys_k, keys_p = self.location_keys(know_table), self.location_keys(pop_table)
        both = np.concatenate([keys_k, keys_p])
        uniq, inv = np.unique(both, return_inverse=True, axis=0 if both.ndim == 2 else None)
        inv = inv.ravel()
        code_k, code_p = inv[:len(keys_k)], inv[len(keys_k):]
        know = Rows(know_table.starts, code_k, np.ones(len(code_k)))
        pop = Rows(pop_table.starts, code_p, np.ones(len(code_p)))
        tie = _tie_rank(grid, uniq, self.tile_of_key)
        inst, structure, predicate = self.attack(know, pop, len(uniq), tie, ctx.rng())
        # count each distinct instance once, whoever holds it
        k = inst.loc.shape[1]
        gid = row_groups(*[inst.loc[:, j] for j in range(k)],
                          *[inst.value[:, j] for j in range(k)])
        _, first, back = np.unique(gid, return_index=True, return_inverse=True)
        counts = count_matches(structure, inst.loc[first], inst.value[first], predicate)[back]
        hits = None
        n_know = len(know_table.users)
        if cross:
            true = user_codes(pop_table, know_table.users)[inst.owner]
            hits = np.zeros(len(inst.owner), dtype=bool)
            there = np.flatnonzero(true >= 0)
            hits[there] = predicate(true[there], inst.loc[there], inst.value[there])
        risk = user_risks(inst, n_know, counts, hits)
        has = know_table.starts[1:] > know_table.starts[:-1]
        return self._result(know_table, pop_table, risk, has, inst, cross, grid)

    def tile_of_key(self, keys: np.ndarray) -> np.ndarray:
        return keys

    def _result(self, know: VisitTable, pop: VisitTable, risk: np.ndarray, has: np.ndarray,
                inst: Instances, cross: bool, grid: Grid) -> MeasureResult:
        p = self.params
        users = know.users[has]
        r = risk[has]
        sampled = inst.sampled & has
        counts, edges = np.histogram(r, bins=20, range=(0.0, 1.0))
        details: dict[str, Any] = {
            "users": int(has.sum()),
            "users_without_visits": int((~has).sum()),
            "share_at_risk": float(np.mean(r >= p.risk_threshold)),
            "risk_threshold": p.risk_threshold,
            "users_at_risk_1": int(np.sum(r >= 1.0)),
            "risk_histogram": {"edges": [float(e) for e in edges],
                               "counts": [int(c) for c in counts]},
            "visits": len(know) if not cross else {"original": len(know), "anonymized": len(pop)},
            "visits_outside_grid": know.dropped if not cross else {
                "original": know.dropped, "anonymized": pop.dropped},
            "tiles": {"nx": grid.nx, "ny": grid.ny, "size": grid.size,
                      "projection": grid.projection},
            "instances": len(inst.owner),
            "sampled_users": int(sampled.sum()),
            "per_user": {str(u): float(v) for u, v in zip(users, r, strict=True)},
        }
        if cross:
            released = user_codes(pop, users) >= 0
            details["users_not_released"] = int((~released).sum())
        if sampled.any():
            details["estimate"] = "lower_bound"
            details["sampled_note"] = (
                f"{int(sampled.sum())} users have more than max_instances={p.max_instances} "
                "instances: their risk is the maximum over a seeded sample of k-combinations, a "
                "lower bound of the exact value; with 95 % confidence at most "
                f"{lower_bound_note(inst.drawn[sampled]):.4f} of any such user's instances "
                "beat its sampled maximum.")
            # exact users give the exact risk; sampled users lie in [sampled risk, 1]
            details["interval"] = [float(r.mean()),
                                   float(np.where(sampled[has], 1.0, r).mean())]
        details.update(self.extra_details())
        return MeasureResult(value=float(r.mean()), details=details)


def _tie_rank(grid: Grid, keys: np.ndarray, tile_of_key: Any) -> np.ndarray:
    """Rank of each location code by its tile centre's (lat, lng), as skmob's group-by order."""
    tile = tile_of_key(keys)
    i, j = tile // grid.ny, tile % grid.ny
    order = np.lexsort((np.arange(len(tile)), i, j))
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank
