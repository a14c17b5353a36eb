"""Discrete Fréchet distance between trajectories."""

from __future__ import annotations

import numpy as np

from anoneval.plugins.distances import _geojit
from anoneval.plugins.distances._geobase import GeoDistance
from anoneval.plugins.distances._geodp import cost_matrix, discrete_frechet


class DiscreteFrechet(GeoDistance):
    """Discrete Fréchet (coupling) distance.

    Source: Eiter & Mannila (1994), "Computing discrete Fréchet distance", TU Vienna
    CD-TR 94/64; reference ``mobility_semantics.md`` §2. C[0][0] = 0, C[i][0] = C[0][j] = ∞,

        C[i][j] = max( d(p_i, q_j), min(C[i−1][j], C[i][j−1], C[i−1][j−1]) ),  result C[n][m].

    As traj-dist, traj-dist-rs (which refuses the sphere), similaritymeasures ``frechet_dist``
    and tslearn ``frechet``. A metric on point sequences; always ≥ the continuous
    :class:`Frechet`. Defined for one-point trajectories (the max distance to that point).
    """

    name = "DiscreteFrechet"
    description = "Discrete Fréchet distance (minimal max point distance over couplings)."

    def _jit(self):
        return (_geojit.CODES["DiscreteFrechet"], 0.0, -1.0, 0, None)

    def _batch(self, P, Q, TP, TQ) -> np.ndarray:
        return discrete_frechet(cost_matrix(P, Q, self.sphere))
