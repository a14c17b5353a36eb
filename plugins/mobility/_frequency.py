"""The frequency-vector attacks' shared part: the tolerance τ and the attack on k known rows of a
user's vector (location, value)."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from anoneval.plugins.mobility._attacks import (
    Lookup,
    Plan,
    Predicate,
    Rows,
    frequency_rows,
    within,
)
from anoneval.plugins.mobility._risk import AttackParams, MobilityAttack


class ToleranceParams(AttackParams):
    tolerance: float = Field(0.0, ge=0, le=1, description=(
        "τ: a value matches when v(1−τ) ≤ value ≤ v(1+τ) (skmob's default 0: equality)."))


class VectorAttack(MobilityAttack):
    """Base of the attacks on a user's frequency vector: the intruder knows k of its rows
    (instances drawn as combinations); a subclass says which values the vector holds
    (:meth:`vector`) and when a user matches (:meth:`match`)."""

    Params = ToleranceParams

    def vector(self, rows: Rows) -> Rows:
        """skmob's frequency vector: (location, visit count) per visited location."""
        return frequency_rows(rows.starts, rows.loc)

    def match(self, look: Lookup) -> Predicate:
        """Every known location visited with a value within τ of the known one (skmob)."""
        return within(look, self.params.tolerance)

    def attack(self, know: Rows, pop: Rows, n_loc: int,
               tie: np.ndarray) -> tuple[Plan, Lookup, Predicate]:
        plan = Plan(self.vector(know), self.params.knowledge_length, "combo")
        look = Lookup(self.vector(pop), n_loc)
        return plan, look, self.match(look)
