"""LCSS distance between trajectories (1 − longest common subsequence share)."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from anoneval.plugins.distances import _geojit
from anoneval.plugins.distances._geobase import GeoDistance, SpaceParams
from anoneval.plugins.distances._geodp import lcss_length
from anoneval.plugins.distances._match import distance_match


class LCSS(GeoDistance):
    """Longest-common-subsequence distance, 1 − L / min(n, m).

    Source: Vlachos, Kollios & Gunopulos (2002), "Discovering similar multidimensional
    trajectories", ICDE; the traj-dist convention (reference ``mobility_semantics.md`` §2).
    Points match when d(p_i, q_j) **<** ``eps_m`` (strict, on the point distance: haversine
    metres or plane units, as traj-dist; tslearn's similarity uses ≤) and, with ``delta_s``,
    |t_i − t_j| ≤ delta_s (Vlachos' time window, inclusive). L[i][j] = L[i−1][j−1] + 1 if
    matched, else max(L[i−1][j], L[i][j−1]). In [0, 1]; 0 for identical trajectories;
    defined for one-point trajectories. Not a metric. tslearn's ``lcss`` = 1 − this value
    (with ≤).
    """

    name = "LCSS"
    description = "LCSS distance: 1 − longest common subsequence / min length (eps match)."
    scaled = False
    unit = None

    class Params(SpaceParams):
        eps_m: float = Field(description="Match threshold: metres on the sphere, coordinate "
                             "units on the plane; must be > 0.", gt=0)
        delta_s: float | None = Field(None, ge=0, description="Time window in seconds: points "
                                      "match only if their timestamps differ by at most this.")

    @property
    def needs_times(self) -> bool:  # type: ignore[override]
        return self.params.delta_s is not None

    def _jit(self):
        p = self.params
        eps = p.eps_m / p.earth_radius_m if self.sphere else p.eps_m
        window = -1.0 if p.delta_s is None else float(p.delta_s)
        return (_geojit.CODES["LCSS"], eps, window, 0, None)

    def _batch(self, P, Q, TP, TQ) -> np.ndarray:
        p = self.params
        match = distance_match(P, Q, self.sphere, p.earth_radius_m, p.eps_m, strict=True)
        if p.delta_s is not None:
            dt = np.abs(TP[:, :, None] - TQ[:, None, :])
            match &= np.moveaxis(dt <= p.delta_s, 0, -1)
        return 1.0 - lcss_length(match) / min(P.shape[1], Q.shape[1])
