"""Symmetric one-way distance (OWD, vertex form) between trajectories."""

from __future__ import annotations

import numpy as np

from anoneval.plugins.distances import _geojit
from anoneval.plugins.distances._geobase import GeoDistance
from anoneval.plugins.distances._geodp import cost_matrix


class OWD(GeoDistance):
    """Symmetric one-way distance in its vertex form (traj-dist ``sowd_brut`` on raw points).

    Source: Lin & Su (2005), "Shapes based trajectory queries for moving objects", ACM GIS;
    reference ``mobility_semantics.md`` §2.

        owd(P, Q) = (1/n) Σ_i min_j d(p_i, q_j),   OWD = (owd(P,Q) + owd(Q,P)) / 2.

    The vertex form (points to points); the vertex-to-polyline form is :class:`SSPD`.
    Not a metric (the triangle inequality can fail); OWD(T, T) = 0, symmetric.
    """

    name = "OWD"
    description = "Symmetric one-way distance: mean nearest-vertex distance, both ways."

    def _jit(self):
        return (_geojit.CODES["OWD"], 0.0, -1.0, 0, None)

    def _batch(self, P, Q, TP, TQ) -> np.ndarray:
        c = cost_matrix(P, Q, self.sphere)
        return (c.min(axis=1).mean(axis=0) + c.min(axis=0).mean(axis=0)) / 2
