"""Segment Hausdorff distance between trajectories (vertices against polylines)."""

from __future__ import annotations

import numpy as np

from anoneval.plugins.distances import _geojit
from anoneval.plugins.distances._geobase import GeoDistance
from anoneval.plugins.distances._geodp import vertex_to_polyline


class SegmentHausdorff(GeoDistance):
    """Hausdorff distance of vertices against polylines, the traj-dist convention.

    Source: traj-dist ``hausdorff.py`` (Besse et al. 2016); reference ``mobility_semantics.md``
    §2:  max( max_i dseg(p_i, Q), max_j dseg(q_j, P) ), with the clamped point-to-segment
    distance (cross-track on the sphere). Interior points of segments are not matched against
    each other, so this is not the full polyline Hausdorff distance; it is ≤ the vertex form
    :class:`Hausdorff`. A one-point trajectory is a point.
    """

    name = "SegmentHausdorff"
    description = "Hausdorff distance of each trajectory's vertices to the other's polyline."

    needs_segments = True

    def _depth(self, n1: int, n2: int) -> int:
        return 8 * n1 * n2

    def _jit(self):
        return (_geojit.CODES["SegmentHausdorff"], 0.0, -1.0, 0, None)

    def _batch(self, P, Q, TP, TQ) -> np.ndarray:
        return np.maximum(vertex_to_polyline(P, Q, self.sphere).max(axis=1),
                          vertex_to_polyline(Q, P, self.sphere).max(axis=1))
