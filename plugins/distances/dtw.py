"""Dynamic time warping between trajectories."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from anoneval.plugins.distances import _geojit
from anoneval.plugins.distances._geobase import GeoDistance, SpaceParams
from anoneval.plugins.distances._geodp import cost_matrix, dtw


class DTW(GeoDistance):
    """Dynamic time warping distance on the points' positions (timestamps ignored).

    Source: Berndt & Clifford (1994), "Using dynamic time warping to find patterns in time
    series"; the DTW of traj-dist (Besse et al. 2016); reference ``mobility_semantics.md`` §2.
    With c(i, j) the point distance (haversine metres, radius ``earth_radius_m``, or plane):

        D(0, 0) = 0,  D(i, 0) = D(0, j) = ∞ (i, j > 0),
        D(i, j) = c(i, j) + min(D(i−1, j−1), D(i−1, j), D(i, j−1)),

    steps (1,1), (1,0), (0,1), no window. ``convention="sum"`` (default): D(n, m), the sum of
    unsquared distances along the path (traj-dist, traj-dist-rs, similaritymeasures ``dtw``);
    ``"rms"``: the same DP on c², then the square root (tslearn ``dtw``, dtaidistance
    ``dtw_ndim.distance``). Symmetric, DTW(T, T) = 0, not a metric. traj-dist's sphere uses
    6378137 m: its values are ours × 1.00112 at the default radius.
    """

    name = "DTW"
    description = "Dynamic time warping of trajectory positions (sum or root of squares)."

    class Params(SpaceParams):
        convention: Literal["sum", "rms"] = Field(
            "sum", description="'sum': Σ distances over the alignment (traj-dist); "
            "'rms': √Σ squared distances (tslearn, dtaidistance).")

    def _jit(self):
        return (_geojit.CODES["DTW-rms" if self.params.convention == "rms" else "DTW"],
                0.0, -1.0, 0, None)

    def _batch(self, P, Q, TP, TQ) -> np.ndarray:
        cost = cost_matrix(P, Q, self.sphere)
        if self.params.convention == "rms":
            return np.sqrt(dtw(cost * cost))
        return dtw(cost)
