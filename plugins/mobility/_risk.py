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
    Lookup,
    Plan,
    Predicate,
    Rows,
    count_matches,
    lower_bound_note,
    row_groups,
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
    """Base of the eight skmob attacks: subclasses say how instances are drawn and matched.

    When users' instances are sampled (``max_instances``) the value is a lower bound and
    ``ci`` the sure bounds [value, the mean with every sampled user at risk 1]; an exact run
    has no ``ci``.
    """

    #: ``ci`` is given when instances are sampled: a threshold may test its ends.
    gives_interval = True
    unit = "share"
    accepts = ("trajectories",)
    inputs = "either"
    Params = AttackParams

    # -- what a subclass provides -----------------------------------------------------------
    def location_keys(self, table: VisitTable) -> np.ndarray:
        """The location each visit is matched on (the tile; with time for LocationTimeAttack)."""
        return table.tile

    def attack(self, know: Rows, pop: Rows, n_loc: int,
               tie: np.ndarray) -> tuple[Plan, Lookup, Predicate]:
        """(how instances are drawn, the population's lookup, the match predicate)."""
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
        plan, look, predicate = self.attack(know, pop, len(uniq), tie)
        true = user_codes(pop_table, know_table.users) if cross else None
        risk, inst_count, drawn, sampled = _assess(plan, look, predicate, p.max_instances,
                                                   ctx.rng(), true)
        has = know_table.starts[1:] > know_table.starts[:-1]
        result = self._result(know_table, pop_table, risk, has, inst_count, drawn, sampled,
                              cross, grid)
        sides = {"anonymized" if anonymized is not None else "original": pop_table}
        if original is not None and anonymized is not None:
            sides["original"] = visit_table(original, grid, p.visits)
        result.details["tile_visits"] = tile_counts(grid, sides)
        return result

    def tile_of_key(self, keys: np.ndarray) -> np.ndarray:
        return keys

    def _result(self, know: VisitTable, pop: VisitTable, risk: np.ndarray, has: np.ndarray,
                n_instances: int, drawn: np.ndarray, sampled: np.ndarray, cross: bool,
                grid: Grid) -> MeasureResult:
        p = self.params
        users = know.users[has]
        r = risk[has]
        sampled = sampled & has
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
            "instances": n_instances,
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
                f"{lower_bound_note(drawn[sampled]):.4f} of any such user's k-combinations "
                "of rows (by skmob's weighting) give a higher risk than its sampled maximum.")
            # exact users give the exact risk; sampled users lie in [sampled risk, 1]
            details["interval"] = [float(r.mean()),
                                   float(np.where(sampled[has], 1.0, r).mean())]
        details.update(self.extra_details())
        # sampled users: the value is a lower bound and ci the sure bounds [value, all at 1]
        return MeasureResult(value=float(r.mean()), ci=details.get("interval"),
                             details=details)


BATCH_INSTANCES = 1 << 20  # instances enumerated at once: bounds memory (~100 MB)
ROUNDS = (0, 4, 64)  # a user's instances by rarity: the first 4, the next 60, the rest
FIRST_DRAWS = 256  # a sampled user's first draws (then 1024 at a time while its risk is < 1)


def _assess(plan: Plan, look: Lookup, predicate: Predicate, max_instances: int,
            rng: np.random.Generator, true: np.ndarray | None
            ) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """Per-user risk, number of instances, draws per sampled user and sampled flags.

    Users are processed in batches of about BATCH_INSTANCES instances. A user's instances are
    tried rarest first (by the fewest users having one of their locations) in rounds of 4, 60
    and the rest; a sampled user's are drawn FIRST_DRAWS at a time. A user whose risk reached 1
    skips the later rounds and draws (skmob stops there too), so exact users get the exact
    maximum. Identical instances of a round are counted once.
    """
    n_users = plan.rows.n_users
    risk = np.zeros(n_users)
    drawn = np.zeros(n_users, dtype=np.int64)
    sampled = plan.sampled(max_instances)
    ends = np.cumsum(plan.bound(max_instances))
    total = 0
    start = 0

    def score(loc: np.ndarray, val: np.ndarray, own: np.ndarray) -> None:
        k = loc.shape[1]
        gid = row_groups(*[loc[:, j] for j in range(k)], *[val[:, j] for j in range(k)])
        _, uniq, back = np.unique(gid, return_index=True, return_inverse=True)
        counts = count_matches(look, loc[uniq], val[uniq], predicate)[back]
        if true is None:
            r = 1.0 / np.maximum(counts, 1)
        else:
            t = true[own]
            hit = np.zeros(len(own), dtype=bool)
            there = np.flatnonzero(t >= 0)
            hit[there] = predicate(t[there], loc[there], val[there])
            r = np.where(hit & (counts > 0), 1.0 / np.maximum(counts, 1), 0.0)
        np.maximum.at(risk, own, r)

    def rarest_first(inst: Instances) -> None:
        k = inst.loc.shape[1]
        rarity = np.min(np.stack([look.n_users_with(inst.loc[:, j]) for j in range(k)], 1), 1)
        order = np.lexsort((rarity, inst.owner))
        owner = inst.owner[order]
        rank = np.arange(len(owner)) - np.searchsorted(owner, owner)
        for lo, hi in zip(ROUNDS, (*ROUNDS[1:], None), strict=True):
            sel = order[(rank >= lo) & ((rank < hi) if hi is not None else True)]
            sel = sel[risk[inst.owner[sel]] < 1.0]
            if len(sel):
                score(inst.loc[sel], inst.value[sel], inst.owner[sel])

    while start < n_users:
        stop = int(np.searchsorted(ends, (ends[start - 1] if start else 0) + BATCH_INSTANCES,
                                   side="right"))
        stop = max(stop, start + 1)
        batch = np.arange(start, stop)
        exact = batch[~sampled[batch]]
        if len(exact):
            inst = plan.enumerate(max_instances, rng, exact)
            total += len(inst.owner)
            rarest_first(inst)
        active = batch[sampled[batch]]
        left = max_instances
        step = min(FIRST_DRAWS, max_instances)
        while len(active) and left > 0:
            inst = plan.enumerate(max_instances, rng, active, draws=step)
            drawn[active] += step
            total += len(inst.owner)
            rarest_first(inst)
            left -= step
            step = min(left, FIRST_DRAWS * 4)
            active = active[risk[active] < 1.0]
        start = stop
    return risk, total, drawn, sampled & (risk < 1.0)


def tile_counts(grid: Grid, tables: dict[str, VisitTable]) -> dict[str, Any]:
    """Visits per tile of each side, for the report's heat map: ``[[tile, count], ...]``."""
    out: dict[str, Any] = {"nx": grid.nx, "ny": grid.ny}
    for side, table in tables.items():
        tiles, counts = np.unique(table.tile, return_counts=True)
        out[side] = [[int(t), int(c)] for t, c in zip(tiles, counts, strict=True)]
    return out


def _tie_rank(grid: Grid, keys: np.ndarray, tile_of_key: Any) -> np.ndarray:
    """Rank of each location code by its tile centre's (lat, lng), as skmob's group-by order."""
    tile = tile_of_key(keys)
    i, j = tile // grid.ny, tile % grid.ny
    order = np.lexsort((np.arange(len(tile)), i, j))
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank
