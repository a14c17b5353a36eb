"""Symmetrized segment-path distance (SSPD) between trajectories."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from anoneval.plugins.distances import _geojit
from anoneval.plugins.distances._geobase import GeoDistance, SpaceParams
from anoneval.plugins.distances._geodp import vertex_to_polyline


class SSPD(GeoDistance):
    """Symmetrized segment-path distance: the mean distance from the vertices of each
    trajectory to the other's polyline, averaged both ways.

    Source: Besse, Guillouet, Loubes & Royer (2016), "Review and perspective for distance based
    clustering of vehicle trajectories", IEEE T-ITS; reference ``mobility_semantics.md`` §2.

        spd(P, Q) = (1/n) Σ_i min_k dseg(p_i, [q_k, q_{k+1}]),   SSPD = (spd(P,Q) + spd(Q,P)) / 2.

    ``dseg`` on the plane: the clamped projection (textbook); on the sphere: the cross-track
    distance, clamped to the nearer endpoint when an along-track distance exceeds the segment
    (as traj-dist). A one-point trajectory is a point: dseg is the point distance.

    ``variant="traj-dist"`` reproduces traj-dist (and traj-dist-rs) defects included: on the
    plane the endpoint rule ``u < 1e-5 or u > 1`` instead of the clamp (traj-dist-rs: ``≤``/``≥``,
    which differs only on that sliver), on the sphere the **sum** spd + spd instead of the mean.
    """

    name = "SSPD"
    description = "Symmetrized segment-path distance (mean vertex-to-polyline distance)."

    class Params(SpaceParams):
        variant: Literal["textbook", "traj-dist"] = Field(
            "textbook", description="'textbook' (the mean of both ways) or 'traj-dist' (the "
            "library's value, defects included: a sum on the sphere).")

    needs_segments = True

    def _depth(self, n1: int, n2: int) -> int:
        return 8 * n1 * n2

    def _jit(self):
        return (_geojit.CODES["SSPD"], 0.0, -1.0, int(self.params.variant == "traj-dist"),
                None)

    def _batch(self, P, Q, TP, TQ) -> np.ndarray:
        lib = self.params.variant == "traj-dist"
        a = vertex_to_polyline(P, Q, self.sphere, lib).mean(axis=1)
        b = vertex_to_polyline(Q, P, self.sphere, lib).mean(axis=1)
        return a + b if (lib and self.sphere) else (a + b) / 2
