"""Home-work attack: the intruder knows a user's two most frequent locations."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from anoneval.plugins.mobility._attacks import (
    Lookup,
    Plan,
    Rows,
    atleast,
    frequency_rows,
)
from anoneval.plugins.mobility._risk import AttackParams, MobilityAttack


def first_two(rows: Rows) -> Rows:
    """The first (at most) two rows of each user."""
    n = np.minimum(rows.sizes(), 2)
    starts = np.concatenate([[0], np.cumsum(n)])
    pos = np.repeat(rows.starts[:-1] - starts[:-1], n) + np.arange(int(starts[-1]))
    return Rows(starts, rows.loc[pos], np.ones(len(pos)))


class HomeWorkAttack(MobilityAttack):
    """The intruder knows a user's "home" and "work": the first two rows of its frequency vector.

    v matches when both locations are among v's own first two rows (one location when a user
    has one). Intended (default): the two MOST frequent locations (count descending, ties by
    the tile centre's (lat, lng) ascending). ``compat: "skmob"`` reproduces skmob's defect: its
    frequency vector is sorted ascending, so it takes the two LEAST frequent locations
    (reference/mobility_semantics.md §3, defect 1). ``knowledge_length`` has no effect.

    Source: Pellungrini et al. (2017), ACM TIST 9(3); scikit-mobility 1.3.1
    ``skmob/privacy/attacks.py``. Risk, targets and sampling: see ``_risk.py``.
    """

    name = "HomeWorkAttack"
    description = "Home-work attack: the intruder knows a user's two most frequent locations."

    class Params(AttackParams):
        compat: Literal["skmob"] | None = Field(None, description=(
            "skmob: its two least frequent locations (ascending sort) instead of the most."))

    def attack(self, know, pop, n_loc, tie):  # type: ignore[no-untyped-def]
        order = "ascending" if self.params.compat == "skmob" else "descending"
        hk = first_two(frequency_rows(know.starts, know.loc, order, tie))
        plan = Plan(hk, 2, "combo")
        look = Lookup(first_two(frequency_rows(pop.starts, pop.loc, order, tie)), n_loc)
        return plan, look, atleast(look)

    def extra_details(self) -> dict[str, Any]:
        return {"compat": self.params.compat}
