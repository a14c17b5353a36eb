"""Edit distance on real sequences (EDR) between trajectories."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from anoneval.plugins.distances import _geojit
from anoneval.plugins.distances._geobase import GeoDistance, SpaceParams
from anoneval.plugins.distances._geodp import edr
from anoneval.plugins.distances._match import axes_match, distance_match


class EDR(GeoDistance):
    """Edit distance on real sequences, normalised by max(n, m).

    Source: Chen, Özsu & Oria (2005), "Robust and fast similarity search for moving object
    trajectories", SIGMOD; reference ``mobility_semantics.md`` §2. Textbook DP: C[i][0] = i,
    C[0][j] = j, C[i][j] = min(C[i−1][j] + 1, C[i][j−1] + 1, C[i−1][j−1] + s_ij), s_ij = 0 when
    p_i and q_j match, else 1; value C[n][m] / max(n, m), in [0, 1].

    Match rule ``match``: ``"distance"`` (default, as traj-dist): d(p_i, q_j) **<** eps_m
    (strict, haversine metres or plane units); ``"axes"`` (the paper): |Δx| ≤ eps_m and
    |Δy| ≤ eps_m (on the sphere: north–south and east–west metres).

    ``variant="traj-dist"`` reproduces traj-dist and traj-dist-rs, whose matrix starts **all
    zeros** (C[i][0] = C[0][j] = 0): unmatched prefixes are free and the value is ≤ the textbook
    one. Hand case P = (5,5),(0,0), Q = (0,0), eps 0.5 (plane): textbook 0.5, library 0.
    """

    name = "EDR"
    description = "Edit distance on real sequences, normalised by the longer length."
    scaled = False
    unit = None

    class Params(SpaceParams):
        eps_m: float = Field(gt=0, description="Match threshold: metres on the sphere, "
                             "coordinate units on the plane; must be > 0.")
        match: Literal["distance", "axes"] = Field(
            "distance", description="'distance': d < eps (strict, traj-dist); 'axes': "
            "|Δx| ≤ eps and |Δy| ≤ eps (Chen et al. 2005).")
        variant: Literal["textbook", "traj-dist"] = Field(
            "textbook", description="'textbook' borders i and j, or 'traj-dist' (all-zero "
            "borders: the library's value, defect included).")

    def _jit(self):
        p = self.params
        if p.match == "axes":
            return None
        eps = p.eps_m / p.earth_radius_m if self.sphere else p.eps_m
        return (_geojit.CODES["EDR"], eps, -1.0, int(p.variant == "traj-dist"), None)

    def _batch(self, P, Q, TP, TQ) -> np.ndarray:
        p = self.params
        if p.match == "axes":
            match = axes_match(P, Q, self.sphere, p.earth_radius_m, p.eps_m)
        else:
            match = distance_match(P, Q, self.sphere, p.earth_radius_m, p.eps_m, strict=True)
        return edr(match, p.variant == "traj-dist") / max(P.shape[1], Q.shape[1])
