"""Continuous Fréchet distance between trajectories (exact)."""

from __future__ import annotations

import numpy as np

from anoneval.plugins.distances import _geojit
from anoneval.plugins.distances._geobase import GeoDistance
from anoneval.plugins.distances._geodp import cost_matrix, frechet


class Frechet(GeoDistance):
    """Exact continuous Fréchet distance between the polylines.

    Source: Alt & Godau (1995), "Computing the Fréchet distance between two polygonal curves",
    IJCGA 5; reference ``mobility_semantics.md`` §2. The value is the smallest critical value ε
    at which the free-space decision succeeds, with reachable intervals propagated
    **monotonically** (from the left edge, the right edge is reachable on
    [max(lo_left_reach, lo_right), hi_right]; from the bottom edge, its whole free interval).
    Critical values of all three kinds are searched: (a) the endpoint distances, (b) the
    vertex-to-segment distances both ways, (c) for each segment of one curve and each pair of
    vertices u, v of the other, d(u, x) at the point x of the segment equidistant from u and v.
    Binary search over the sorted candidates clipped to [(a), discrete Fréchet].

    Floating point: the decision runs at ε·(1 + 1e-11), so a tie at a critical value is not lost
    to rounding; the result is a critical value, exact up to that relative slack (the compiled
    kernel: 4e-11, see below). On the sphere the segments are great-circle arcs (valid for
    values below a quarter of the circumference) and the free intervals are computed in
    haversine form, which keeps ε resolved to the last bits.

    Speed (numba, the ``fast`` extra): the compiled kernel takes the discrete Fréchet distance
    as upper bound and the endpoint and vertex-to-curve distances as lower bound (equal bounds
    end there), decides just below the upper bound (most other pairs end there), and only then
    at the lower bound and over the sorted type-(a)/(b) values and the type-(c) values inside
    the bracket they leave; the free intervals are computed in the decision, for the cells it
    enters only; see ``docs/trajectory-distances.md``. The numpy kernel sorts all candidates.

    traj-dist's ``frechet`` (and traj-dist-rs) ignore monotonicity and type (c): on
    P = (0,0),(10,0), Q = (0,1),(8,1),(2,1),(10,1) they give 1, the exact value is √10.
    A one-point trajectory is a point: the value is the maximum distance from it to the other's
    vertices. Cost (numpy kernel): O(n²m + m²n) candidates per pair, log₂ of that many O(nm)
    decisions; compiled: O(nm) and one to three decisions for most pairs.
    """

    name = "Frechet"
    description = "Exact continuous Fréchet distance (Alt & Godau, monotone free space)."

    needs_segments = True

    def _jit(self):
        return (_geojit.CODES["Frechet"], 0.0, -1.0, 0, None)

    def _depth(self, n1: int, n2: int) -> int:
        return 4 * (n1 * n1 * n2 + n2 * n2 * n1) + 40 * n1 * n2

    def _batch(self, P, Q, TP, TQ) -> np.ndarray:
        if P.shape[1] == 1 or Q.shape[1] == 1:
            return cost_matrix(P, Q, self.sphere).max(axis=(0, 1))
        return frechet(P, Q, self.sphere)
