"""Location frequency attack: the intruder knows k locations and how often the user visited them."""

from __future__ import annotations

from anoneval.plugins.mobility._frequency import VectorAttack


class LocationFrequencyAttack(VectorAttack):
    """The intruder knows k rows of a user's frequency vector (location, visit count f).

    v matches I when it visited every location ℓ of I with ``f_v(1−τ) ≤ f_I(ℓ) ≤ f_v(1+τ)``
    (reference/mobility_semantics.md §3; τ = ``tolerance``, default 0: equal counts).

    Source: Pellungrini et al. (2017), ACM TIST 9(3); scikit-mobility 1.3.1
    ``skmob/privacy/attacks.py``. Risk, targets and sampling: see ``_risk.py``.
    """

    name = "LocationFrequencyAttack"
    description = "Location frequency attack: k known locations with their visit counts."
