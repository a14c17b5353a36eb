"""Unique location attack: the intruder knows k distinct visited locations."""

from __future__ import annotations

import numpy as np

from anoneval.plugins.mobility._attacks import (
    Lookup,
    Plan,
    Rows,
    atleast,
    frequency_rows,
)
from anoneval.plugins.mobility._risk import MobilityAttack


class UniqueLocationAttack(MobilityAttack):
    """The intruder knows k distinct visited locations.

    The intruder knows k distinct locations of a user (rows of its frequency vector); v matches
    when it visited each of them (reference/mobility_semantics.md §3).

    Source: Pellungrini et al. (2017), ACM TIST 9(3); scikit-mobility 1.3.1
    ``skmob/privacy/attacks.py``. Risk, targets and sampling: see ``_risk.py``.
    """

    name = "UniqueLocationAttack"
    description = "Unique location attack: the intruder knows k distinct visited locations."

    def attack(self, know, pop, n_loc, tie):
        fk = frequency_rows(know.starts, know.loc)
        fk = Rows(fk.starts, fk.loc, np.ones(len(fk.loc)))
        plan = Plan(fk, self.params.knowledge_length, "combo")
        look = Lookup(frequency_rows(pop.starts, pop.loc), n_loc)
        return plan, look, atleast(look)
