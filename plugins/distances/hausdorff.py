"""Hausdorff distance between trajectories (haversine metres)."""

from __future__ import annotations

import numpy as np

from anoneval.plugins.distances._traj import PointTensorDistance


class Hausdorff(PointTensorDistance):
    """Symmetric Hausdorff distance between the trajectories' point sets (timestamps ignored).

    Source: Hausdorff (1914); for trajectories e.g. traj-dist (Besse et al. 2016). With d the
    haversine distance in metres (mean Earth radius 6371.0088 km):

        H(T1, T2) = max( max_{p ∈ T1} min_{q ∈ T2} d(p, q),  max_{q ∈ T2} min_{p ∈ T1} d(p, q) ).

    Points only (no interpolation along segments). A metric on finite point sets: H(T, T) = 0,
    symmetric, triangle inequality. traj-dist uses the equatorial radius 6378137 m.
    """

    name = "Hausdorff"
    description = "Hausdorff distance between trajectory point sets (haversine metres)."

    def _reduce(self, cost: np.ndarray, n1: int, n2: int) -> np.ndarray:
        return np.maximum(cost.min(axis=1).max(axis=0), cost.min(axis=0).max(axis=0))
