"""Dynamic time warping between trajectories (haversine metres)."""

from __future__ import annotations

import numpy as np

from anoneval.plugins.distances._traj import PointTensorDistance


class DTW(PointTensorDistance):
    """Dynamic time warping distance on the points' positions (timestamps ignored).

    Source: Berndt & Clifford (1994), "Using dynamic time warping to find patterns in time
    series"; the spherical DTW of traj-dist (Besse et al. 2016). With c(i, j) the haversine
    distance in metres (mean Earth radius 6371.0088 km) between point i of T1 and point j of T2:

        D(0, 0) = 0,  D(i, 0) = D(0, j) = ∞ (i, j > 0),
        D(i, j) = c(i, j) + min(D(i−1, j−1), D(i−1, j), D(i, j−1)),   DTW = D(n1, n2),

    the unnormalised sum of point distances along the cheapest monotone warping path (steps
    (1,1), (1,0), (0,1), no window). Symmetric, DTW(T, T) = 0, not a metric (no triangle
    inequality). traj-dist uses the equatorial radius 6378137 m: its values are ours × 1.00112.
    """

    name = "DTW"
    description = "Dynamic time warping of trajectory positions (sum of haversine metres)."

    def _reduce(self, cost: np.ndarray, n1: int, n2: int) -> np.ndarray:
        """The DP by anti-diagonals, vectorised over the cells of a diagonal and all pairs."""
        acc = np.full((n1 + 1, n2 + 1, *cost.shape[2:]), np.inf)
        acc[0, 0] = 0.0
        for s in range(2, n1 + n2 + 1):
            i = np.arange(max(1, s - n2), min(n1, s - 1) + 1)
            j = s - i
            best = np.minimum(np.minimum(acc[i - 1, j - 1], acc[i - 1, j]), acc[i, j - 1])
            acc[i, j] = cost[i - 1, j - 1] + best
        return acc[n1, n2]
