"""Location proportion attack: the intruder knows k locations and their relative visit counts."""

from __future__ import annotations

from anoneval.plugins.mobility._attacks import Lookup, Predicate, proportion
from anoneval.plugins.mobility._frequency import VectorAttack


class LocationProportionAttack(VectorAttack):
    """The intruder knows k locations of a user and their counts relative to each other.

    With ``prop(ℓ) = f(ℓ) / max_{ℓ'∈I} f(ℓ')`` taken over I's locations only, for u and for v,
    v matches I when it visited every ℓ of I with ``prop_v(1−τ) ≤ prop_I ≤ prop_v(1+τ)``
    (reference/mobility_semantics.md §3; τ = ``tolerance``, default 0).

    Source: Pellungrini et al. (2017), ACM TIST 9(3); scikit-mobility 1.3.1
    ``skmob/privacy/attacks.py``. Risk, targets and sampling: see ``_risk.py``.
    """

    name = "LocationProportionAttack"
    description = "Location proportion attack: k known locations with their proportions."

    def match(self, look: Lookup) -> Predicate:
        """Every known location visited, the proportions within τ."""
        return proportion(look, self.params.tolerance)
