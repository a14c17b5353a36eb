"""Edit distance with real penalty (ERP) between trajectories."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, field_validator

from anoneval.plugins.distances import _geojit
from anoneval.plugins.distances._geobase import GeoDistance, SpaceParams
from anoneval.plugins.distances._geodp import cost_matrix, erp, point_dist, unit_vectors


class ERP(GeoDistance):
    """Edit distance with real penalty: gaps cost the distance to a fixed gap point g.

    Source: Chen & Ng (2004), "On the marriage of Lp-norms and edit distance", VLDB; reference
    ``mobility_semantics.md`` §2. With g0_i = d(p_i, g), g1_j = d(q_j, g):
    C[0][0] = 0, C[i][0] = Σ_{k≤i} g0_k, C[0][j] = Σ_{k≤j} g1_k,
    C[i][j] = min(C[i−1][j] + g0_i, C[i][j−1] + g1_j, C[i−1][j−1] + d(p_i, q_j)); value C[n][m],
    not normalised (metres on the sphere). A metric (Chen & Ng, Thm 1).

    ``g`` is required, ``[lon, lat]`` in the points' coordinates (traj-dist defaults to the
    origin, traj-dist-rs to the centroid: pass it explicitly there too). A g outside the data's
    range is allowed: it only makes gaps dearer.

    ``variant="traj-dist"`` reproduces traj-dist (and traj-dist-rs ``erp_compat_traj_dist``):
    C[i][0] = Σ_all g0 and C[0][j] = Σ_all g1 for every i, j ≥ 1 (the whole-trajectory sum).
    Hand case P = (1,0),(5,0), Q = (5,0), g = (0,0) (plane): textbook 1, library 6.
    (traj-dist-rs' "standard" ERP with its default rolling rows is off by one and gives 0.)
    """

    name = "ERP"
    description = "Edit distance with real penalty (gap point g), unnormalised."

    class Params(SpaceParams):
        g: list[float] = Field(description="Gap point [lon, lat] (plane: [x, y]).",
                               min_length=2, max_length=2)
        variant: Literal["textbook", "traj-dist"] = Field(
            "textbook", description="'textbook' cumulative borders, or 'traj-dist' (the "
            "whole-trajectory sum: the library's value, defect included).")

        @field_validator("g")
        @classmethod
        def _finite(cls, g: list[float]) -> list[float]:
            if not all(np.isfinite(g)):
                raise ValueError(f"g must be two finite numbers [lon, lat], got {g}")
            return g

    def _jit(self):
        return (_geojit.CODES["ERP"], 0.0, -1.0, int(self.params.variant == "traj-dist"),
                self._gap())

    def _gap(self) -> np.ndarray:
        p = self.params
        if self.sphere:
            if abs(p.g[1]) > 90:
                raise ValueError(f"g's latitude must be in [-90, 90], got {p.g[1]}")
            return unit_vectors(np.float64(p.g[0]), np.float64(p.g[1]))
        return np.asarray(p.g, dtype=np.float64)

    def _batch(self, P, Q, TP, TQ) -> np.ndarray:
        p = self.params
        g = self._gap()
        g0 = point_dist(P, g, self.sphere).T
        g1 = point_dist(Q, g, self.sphere).T
        return erp(cost_matrix(P, Q, self.sphere), g0, g1, p.variant == "traj-dist")
