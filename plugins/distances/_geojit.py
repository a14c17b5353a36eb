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
    def segdist(X, i, Y, a, sphere, tdist):
        """Distance from point i of X to the segment Y[a], Y[a+1] (see _geodp.seg_dist)."""
        b = a + 1
        if sphere:
            # the foot of p on the great circle lies on the arc iff (a×p)·n ≥ 0 and
            # (p×b)·n ≥ 0 (n = a×b): the along-track test of traj-dist without trigonometry
            nx = Y[a, 1] * Y[b, 2] - Y[a, 2] * Y[b, 1]
            ny = Y[a, 2] * Y[b, 0] - Y[a, 0] * Y[b, 2]
            nz = Y[a, 0] * Y[b, 1] - Y[a, 1] * Y[b, 0]
            norm = math.sqrt(nx * nx + ny * ny + nz * nz)
            px, py, pz = X[i, 0], X[i, 1], X[i, 2]
            if norm > 0.0:
                apx = Y[a, 1] * pz - Y[a, 2] * py
                apy = Y[a, 2] * px - Y[a, 0] * pz
                apz = Y[a, 0] * py - Y[a, 1] * px
                pbx = py * Y[b, 2] - pz * Y[b, 1]
                pby = pz * Y[b, 0] - px * Y[b, 2]
                pbz = px * Y[b, 1] - py * Y[b, 0]
                if (apx * nx + apy * ny + apz * nz >= 0.0
                        and pbx * nx + pby * ny + pbz * nz >= 0.0):
                    s = (px * nx + py * ny + pz * nz) / norm
                    return math.asin(min(abs(s), 1.0))
            return min(pdist(X, i, Y, a, True), pdist(X, i, Y, b, True))
        abx = Y[b, 0] - Y[a, 0]
        aby = Y[b, 1] - Y[a, 1]
        apx = X[i, 0] - Y[a, 0]
        apy = X[i, 1] - Y[a, 1]
        den = abx * abx + aby * aby
        da = math.sqrt(apx * apx + apy * apy)
        if den == 0.0:
            return da
        u = (apx * abx + apy * aby) / den
        if tdist:
            if u < 1e-5 or u > 1.0:
                bpx = X[i, 0] - Y[b, 0]
                bpy = X[i, 1] - Y[b, 1]
                return min(da, math.sqrt(bpx * bpx + bpy * bpy))
        else:
            u = max(0.0, min(1.0, u))
        dx = apx - u * abx
        dy = apy - u * aby
        return math.sqrt(dx * dx + dy * dy)

    @jit
    def to_poly(X, i, Y, s, m, sphere, tdist):
        if m == 1:
            return pdist(X, i, Y, s, sphere)
        best = np.inf
        for k in range(s, s + m - 1):
            d = segdist(X, i, Y, k, sphere, tdist)
            if d < best:
                best = d
        return best

    @jit
    def pair(code, X, TX, sx, n, Y, TY, sy, m, sphere, eps, window, flag, g):
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
            a_sum = 0.0
            a_max = 0.0
            for i in range(n):
                d = to_poly(X, sx + i, Y, sy, m, sphere, tdist)
                a_sum += d
                a_max = max(a_max, d)
            b_sum = 0.0
            b_max = 0.0
            for j in range(m):
                d = to_poly(Y, sy + j, X, sx, n, sphere, tdist)
                b_sum += d
                b_max = max(b_max, d)
            if code == 9:
                return max(a_max, b_max)
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
    def run(code, X, TX, ox, xi, Y, TY, oy, yi, sphere, eps, window, flag, g, out):
        """out[k] = distance between trajectory xi[k] of X and yi[k] of Y."""
        for k in numba.prange(len(xi)):
            a, b = xi[k], yi[k]
            out[k] = pair(code, X, TX, ox[a], ox[a + 1] - ox[a], Y, TY, oy[b],
                          oy[b + 1] - oy[b], sphere, eps, window, flag, g)

    return run


KERNELS = _build() if numba is not None else None


def enabled() -> bool:
    """Whether to use the compiled kernels: numba installed and ``ANONEVAL_JIT`` not ``0``."""
    return KERNELS is not None and os.environ.get("ANONEVAL_JIT", "1") != "0"


def paired(code: int, X: np.ndarray, TX: np.ndarray, ox: np.ndarray, xi: np.ndarray,
           Y: np.ndarray, TY: np.ndarray, oy: np.ndarray, yi: np.ndarray, sphere: bool,
           eps: float = 0.0, window: float = -1.0, flag: int = 0,
           g: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """Distances of the pairs (xi[k], yi[k]) with the compiled kernel ``code``."""
    assert KERNELS is not None
    out = np.empty(len(xi))
    gg = np.zeros(X.shape[1]) if g is None else np.asarray(g, dtype=np.float64)
    previous = numba.get_num_threads()
    if threads is not None:
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    try:
        KERNELS(code, X, TX, ox, np.ascontiguousarray(xi, dtype=np.int64), Y, TY, oy,
                np.ascontiguousarray(yi, dtype=np.int64), sphere, float(eps), float(window),
                int(flag), gg, out)
    finally:
        numba.set_num_threads(previous)
    return out
