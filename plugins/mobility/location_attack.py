"""Location attack: the intruder knows k visited locations (with repeats)."""

from __future__ import annotations

from anoneval.plugins.mobility._attacks import Lookup, Plan, atleast, frequency_rows
from anoneval.plugins.mobility._risk import MobilityAttack


class LocationAttack(MobilityAttack):
    """The intruder knows k visited locations (with repeats).

    The intruder knows k of a user's visits, without times; a user v matches instance I when
    every location of I is visited by v at least as often as in I (multiset inclusion,
    reference/mobility_semantics.md §3). Instances are the distinct multisets of size k drawn
    from the user's visits (skmob enumerates all row k-combinations; identical multisets give
    identical matches).

    Source: Pellungrini et al. (2017), ACM TIST 9(3); scikit-mobility 1.3.1
    ``skmob/privacy/attacks.py``. Risk, targets and sampling: see ``_risk.py``.
    """

    name = "LocationAttack"
    description = "Location attack: the intruder knows k visited locations (with repeats)."

    def attack(self, know, pop, n_loc, tie):
        fk = frequency_rows(know.starts, know.loc)
        plan = Plan(fk, self.params.knowledge_length, "multiset",
                                   sample_rows=know)
        look = Lookup(frequency_rows(pop.starts, pop.loc), n_loc)
        return plan, look, atleast(look)
