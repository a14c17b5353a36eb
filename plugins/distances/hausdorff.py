"""Hausdorff distance between trajectories' point sets."""

from __future__ import annotations

import numpy as np

from anoneval.plugins.distances import _geojit
from anoneval.plugins.distances._geobase import GeoDistance
from anoneval.plugins.distances._geodp import cost_matrix


class Hausdorff(GeoDistance):
    """Symmetric Hausdorff distance between the trajectories' point sets (timestamps ignored).

    Source: Hausdorff (1914); reference ``mobility_semantics.md`` §2 (vertex Hausdorff). With d
    the point distance (haversine metres, radius ``earth_radius_m``, or plane):

        H(T1, T2) = max( max_{p ∈ T1} min_{q ∈ T2} d(p, q),  max_{q ∈ T2} min_{p ∈ T1} d(p, q) ),

    equal to scipy's ``directed_hausdorff`` both ways. Points only (no interpolation along
    segments: that is :class:`SegmentHausdorff`). A metric on finite point sets.
    """

    name = "Hausdorff"
    description = "Hausdorff distance between trajectory point sets (vertex form)."

    def _jit(self):
        return (_geojit.CODES["Hausdorff"], 0.0, -1.0, 0, None)

    def _batch(self, P, Q, TP, TQ) -> np.ndarray:
        c = cost_matrix(P, Q, self.sphere)
        return np.maximum(c.min(axis=1).max(axis=0), c.min(axis=0).max(axis=0))
