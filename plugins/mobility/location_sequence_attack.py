"""Location sequence attack: the intruder knows k visited locations in time order."""

from __future__ import annotations

from anoneval.plugins.mobility._attacks import (
    Lookup,
    Plan,
    Positions,
    frequency_rows,
)
from anoneval.plugins.mobility._risk import MobilityAttack


class LocationSequenceAttack(MobilityAttack):
    """The intruder knows k visited locations in time order.

    The intruder knows k of a user's visits in their time order; v matches I when I's locations
    occur in v's time-ordered visits as a subsequence, not necessarily contiguous (greedy scan,
    reference/mobility_semantics.md §3). Instances are the distinct location tuples of the
    k-combinations of the user's time-sorted visits.

    Source: Pellungrini et al. (2017), ACM TIST 9(3); scikit-mobility 1.3.1
    ``skmob/privacy/attacks.py``. Risk, targets and sampling: see ``_risk.py``.
    """

    name = "LocationSequenceAttack"
    description = "Location sequence attack: the intruder knows k visited locations in time order."

    def attack(self, know, pop, n_loc, tie):
        plan = Plan(know, self.params.knowledge_length, "sequence")
        look = Lookup(frequency_rows(pop.starts, pop.loc), n_loc)
        return plan, look, Positions(pop, n_loc).predicate
