"""Compiled kernels of the traj-dist family (numba, the optional ``fast`` extra).

The same formulas as :mod:`anoneval.plugins.distances._geodp`, one pair at a time in compiled
loops, pairs spread over the cores (``prange``): the numpy kernels are vectorised over pairs of
equal lengths, which leaves them dominated by interpreter overhead when lengths vary (2,601
length pairs for trajectories of 10–60 points). ``KERNELS`` is None without numba, and the
numpy kernels run instead (same values up to rounding).
"""

from __future__ import annotations

import math
import os

import numpy as np

try:
    import numba
except ImportError:  # pragma: no cover - the numpy kernels run instead
    numba = None

#: Algorithm codes of :func:`matrix`.
CODES = {"DTW": 0, "DTW-rms": 1, "DiscreteFrechet": 2, "LCSS": 3, "EDR": 4, "ERP": 5,
         "OWD": 6, "Hausdorff": 7, "SSPD": 8, "SegmentHausdorff": 9}


def _build():
    jit = numba.njit(cache=True, nogil=True)

    @jit
    def pdist(X, i, Y, j, sphere):
        s = 0.0
        for k in range(X.shape[1]):
            d = X[i, k] - Y[j, k]
            s += d * d
        c = math.sqrt(s)
        if sphere:
            return 2.0 * math.asin(min(c * 0.5, 1.0))
        return c

    @jit
    def gdist(X, i, g, sphere):
        s = 0.0
        for k in range(X.shape[1]):
            d = X[i, k] - g[k]
            s += d * d
        c = math.sqrt(s)
        if sphere:
            return 2.0 * math.asin(min(c * 0.5, 1.0))
        return c

    @jit
    def poly_sphere(X, i, Y, G, s, m, cut_s, cut_c):
        """Angle from point i of X to the polyline Y[s:s+m] (m ≥ 2), as :func:`segdist` per
        segment with the segment's geometry G precomputed (:func:`segment_geometry`). The
        minimum is kept apart for the cross-track sines and the endpoint chords², each a
        monotone function of the angle, so no trigonometry runs per segment. Stops early once
        either minimum is below its ``cut`` (SegmentHausdorff: the point cannot raise the max).
        """
        px, py, pz = X[i, 0], X[i, 1], X[i, 2]
        best_s = np.inf
        best_c = np.inf
        dx, dy, dz = Y[s, 0] - px, Y[s, 1] - py, Y[s, 2] - pz
        c_prev = dx * dx + dy * dy + dz * dz
        for k in range(s, s + m - 1):
            dx, dy, dz = Y[k + 1, 0] - px, Y[k + 1, 1] - py, Y[k + 1, 2] - pz
            c_next = dx * dx + dy * dy + dz * dz
            if (px * G[k, 3] + py * G[k, 4] + pz * G[k, 5] >= 0.0
                    and px * G[k, 6] + py * G[k, 7] + pz * G[k, 8] >= 0.0):
                v = abs(px * G[k, 0] + py * G[k, 1] + pz * G[k, 2])
                if v < best_s:
                    best_s = v
                    if v < cut_s:
                        break
            else:
                c = min(c_prev, c_next)
                if c < best_c:
                    best_c = c
                    if c < cut_c:
                        break
            c_prev = c_next
        return min(math.asin(min(best_s, 1.0)), 2.0 * math.asin(min(math.sqrt(best_c) * 0.5,
                                                                        1.0)))

    @jit
    def poly_plane(X, i, Y, s, m, tdist, cut2):
        """Distance from point i of X to the polyline Y[s:s+m] (m ≥ 2), as :func:`segdist` per
        segment on squared distances (one square root per point); stops early below ``cut2``."""
        px, py = X[i, 0], X[i, 1]
        best = np.inf
        for k in range(s, s + m - 1):
            ax, ay = Y[k, 0], Y[k, 1]
            abx, aby = Y[k + 1, 0] - ax, Y[k + 1, 1] - ay
            apx, apy = px - ax, py - ay
            den = abx * abx + aby * aby
            d2 = apx * apx + apy * apy
            if den != 0.0:
                u = (apx * abx + apy * aby) / den
                if tdist and (u < 1e-5 or u > 1.0):
                    bpx, bpy = px - Y[k + 1, 0], py - Y[k + 1, 1]
                    d2 = min(d2, bpx * bpx + bpy * bpy)
                else:
                    if not tdist:
                        u = max(0.0, min(1.0, u))
                    dx = apx - u * abx
                    dy = apy - u * aby
                    d2 = dx * dx + dy * dy
            if d2 < best:
                best = d2
                if d2 < cut2:
                    break
        return math.sqrt(best)

    @jit
    def to_poly(X, i, Y, G, s, m, sphere, tdist, cut):
        """Distance from point i of X to the polyline Y[s:s+m]; may stop once below ``cut``."""
        if m == 1:
            return pdist(X, i, Y, s, sphere)
        if sphere:
            if cut <= 0.0:
                return poly_sphere(X, i, Y, G, s, m, -1.0, -1.0)
            half = 2.0 * math.sin(min(cut, math.pi) * 0.5)
            cut_s = math.sin(cut) if cut < 0.5 * math.pi else np.inf
            return poly_sphere(X, i, Y, G, s, m, cut_s, half * half)
        return poly_plane(X, i, Y, s, m, tdist, cut * cut if cut > 0.0 else -1.0)

    @jit
    def pair(code, X, TX, sx, n, Y, TY, sy, m, GX, GY, sphere, eps, window, flag, g):
        if code == 6 or code == 7:  # OWD, Hausdorff
            colmin = np.full(m, np.inf)
            rsum = 0.0
            rmax = 0.0
            for i in range(n):
                best = np.inf
                for j in range(m):
                    d = pdist(X, sx + i, Y, sy + j, sphere)
                    if d < best:
                        best = d
                    if d < colmin[j]:
                        colmin[j] = d
                rsum += best
                rmax = max(rmax, best)
            if code == 6:
                return (rsum / n + colmin.sum() / m) / 2
            return max(rmax, colmin.max())
        if code == 8 or code == 9:  # SSPD, SegmentHausdorff
            tdist = flag == 1
            if code == 9:  # a point nearer than the running max cannot raise it: stop early
                top = 0.0
                for i in range(n):
                    top = max(top, to_poly(X, sx + i, Y, GY, sy, m, sphere, tdist, top))
                for j in range(m):
                    top = max(top, to_poly(Y, sy + j, X, GX, sx, n, sphere, tdist, top))
                return top
            a_sum = 0.0
            for i in range(n):
                a_sum += to_poly(X, sx + i, Y, GY, sy, m, sphere, tdist, 0.0)
            b_sum = 0.0
            for j in range(m):
                b_sum += to_poly(Y, sy + j, X, GX, sx, n, sphere, tdist, 0.0)
            total = a_sum / n + b_sum / m
            return total if (tdist and sphere) else total / 2
        prev = np.empty(m + 1)
        cur = np.empty(m + 1)
        if code <= 2:
            prev[:] = np.inf
            prev[0] = 0.0
        elif code == 3:
            prev[:] = 0.0
        elif code == 4:
            for j in range(m + 1):
                prev[j] = 0.0 if flag == 1 else float(j)
        else:  # ERP
            g1 = np.empty(m)
            for j in range(m):
                g1[j] = gdist(Y, sy + j, g, sphere)
            prev[0] = 0.0
            if flag == 1:
                total = g1.sum()
                for j in range(1, m + 1):
                    prev[j] = total
            else:
                for j in range(1, m + 1):
                    prev[j] = prev[j - 1] + g1[j - 1]
            g0_total = 0.0
            if flag == 1:
                for i in range(n):
                    g0_total += gdist(X, sx + i, g, sphere)
            g0_cum = 0.0
        for i in range(1, n + 1):
            if code <= 2:
                cur[0] = np.inf
            elif code == 3:
                cur[0] = 0.0
            elif code == 4:
                cur[0] = 0.0 if flag == 1 else float(i)
            else:
                g0 = gdist(X, sx + i - 1, g, sphere)
                g0_cum += g0
                cur[0] = g0_total if flag == 1 else g0_cum
            for j in range(1, m + 1):
                d = pdist(X, sx + i - 1, Y, sy + j - 1, sphere)
                if code == 0:
                    cur[j] = d + min(prev[j - 1], prev[j], cur[j - 1])
                elif code == 1:
                    cur[j] = d * d + min(prev[j - 1], prev[j], cur[j - 1])
                elif code == 2:
                    cur[j] = max(d, min(prev[j - 1], prev[j], cur[j - 1]))
                elif code == 3 or code == 4:
                    match = d < eps
                    if window >= 0 and abs(TX[sx + i - 1] - TY[sy + j - 1]) > window:
                        match = False
                    if code == 3:
                        cur[j] = prev[j - 1] + 1.0 if match else max(prev[j], cur[j - 1])
                    else:
                        sub = prev[j - 1] + (0.0 if match else 1.0)
                        cur[j] = min(min(prev[j], cur[j - 1]) + 1.0, sub)
                else:
                    cur[j] = min(prev[j] + g0, cur[j - 1] + g1[j - 1], prev[j - 1] + d)
            prev, cur = cur, prev
        res = prev[m]
        if code == 1:
            return math.sqrt(res)
        if code == 3:
            return 1.0 - res / min(n, m)
        if code == 4:
            return res / max(n, m)
        return res

    @numba.njit(parallel=True, nogil=True, cache=True)
    def run(code, X, TX, ox, xi, Y, TY, oy, yi, GX, GY, sphere, eps, window, flag, g, out):
        """out[k] = distance between trajectory xi[k] of X and yi[k] of Y."""
        for k in numba.prange(len(xi)):
            a, b = xi[k], yi[k]
            out[k] = pair(code, X, TX, ox[a], ox[a + 1] - ox[a], Y, TY, oy[b],
                          oy[b + 1] - oy[b], GX, GY, sphere, eps, window, flag, g)

    return run


KERNELS = _build() if numba is not None else None


def enabled() -> bool:
    """Whether to use the compiled kernels: numba installed and ``ANONEVAL_JIT`` not ``0``."""
    return KERNELS is not None and os.environ.get("ANONEVAL_JIT", "1") != "0"


def segment_geometry(X: np.ndarray) -> np.ndarray:
    """Per point k of unit vectors X (N, 3), the segment X[k] → X[k+1]: the unit normal
    n̂ = (a×b)/|a×b| and the edge normals n×a and b×n, shape (N, 9). The foot of p on the great
    circle lies on the arc iff p·(n×a) ≥ 0 and p·(b×n) ≥ 0 (the along-track test of traj-dist,
    without trigonometry); a zero-length segment gets NaN edge normals, so the test fails and
    the endpoint distance applies. The last point's row (and a row across two trajectories)
    is never read."""
    a = X
    b = np.roll(X, -1, axis=0)
    n = np.cross(a, b)
    norm = np.sqrt(np.einsum("ij,ij->i", n, n))
    G = np.empty((len(X), 9))
    with np.errstate(invalid="ignore", divide="ignore"):
        G[:, 0:3] = n / norm[:, None]
    G[:, 3:6] = np.cross(n, a)
    G[:, 6:9] = np.cross(b, n)
    G[norm == 0, 3:9] = np.nan
    return G


def paired(code: int, X: np.ndarray, TX: np.ndarray, ox: np.ndarray, xi: np.ndarray,
           Y: np.ndarray, TY: np.ndarray, oy: np.ndarray, yi: np.ndarray, sphere: bool,
           eps: float = 0.0, window: float = -1.0, flag: int = 0,
           g: np.ndarray | None = None, threads: int | None = None,
           GX: np.ndarray | None = None, GY: np.ndarray | None = None) -> np.ndarray:
    """Distances of the pairs (xi[k], yi[k]) with the compiled kernel ``code``; ``GX``, ``GY``:
    the :func:`segment_geometry` of X and Y (needed by SSPD and SegmentHausdorff on the
    sphere)."""
    assert KERNELS is not None
    out = np.empty(len(xi))
    none = np.zeros((1, 9))
    GX = none if GX is None else GX
    GY = none if GY is None else GY
    gg = np.zeros(X.shape[1]) if g is None else np.asarray(g, dtype=np.float64)
    previous = numba.get_num_threads()
    if threads is not None:
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    try:
        KERNELS(code, X, TX, ox, np.ascontiguousarray(xi, dtype=np.int64), Y, TY, oy,
                np.ascontiguousarray(yi, dtype=np.int64), GX, GY, sphere, float(eps), float(window),
                int(flag), gg, out)
    finally:
        numba.set_num_threads(previous)
    return out
