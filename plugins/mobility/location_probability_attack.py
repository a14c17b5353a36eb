"""Location probability attack: the intruder knows k locations and the share of visits to each."""

from __future__ import annotations

import numpy as np

from anoneval.plugins.mobility._attacks import Rows, frequency_rows
from anoneval.plugins.mobility._frequency import VectorAttack


def probability_rows(rows: Rows) -> Rows:
    """skmob's probability vector: f / (the user's number of visits), per frequency row."""
    freq = frequency_rows(rows.starts, rows.loc)
    n = np.repeat(rows.sizes(), freq.sizes()).astype(np.float64)
    return Rows(freq.starts, freq.loc, freq.value / n)


class LocationProbabilityAttack(VectorAttack):
    """The intruder knows k rows of a user's probability vector (location, p = f/n).

    v matches I when it visited every location ℓ of I with ``p_v(1−τ) ≤ p_I(ℓ) ≤ p_v(1+τ)``,
    n being the user's number of visits (reference/mobility_semantics.md §3; τ = ``tolerance``,
    default 0; p is computed as f/n in floating point on both sides, as skmob, so τ = 0 is
    equality of the rationals).

    Source: Pellungrini et al. (2017), ACM TIST 9(3); scikit-mobility 1.3.1
    ``skmob/privacy/attacks.py``. Risk, targets and sampling: see ``_risk.py``.
    """

    name = "LocationProbabilityAttack"
    description = "Location probability attack: k known locations with their visit shares."

    def vector(self, rows: Rows) -> Rows:
        return probability_rows(rows)
