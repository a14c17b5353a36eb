"""Compiled kernels of the traj-dist family (numba, the optional ``fast`` extra).

The same formulas as :mod:`anoneval.plugins.distances._geodp`, one pair at a time in compiled
loops, pairs spread over the cores (``prange``): the numpy kernels are vectorised over pairs of
equal lengths, which leaves them dominated by interpreter overhead when lengths vary (2,601
length pairs for trajectories of 10–60 points). SSPD and SegmentHausdorff use per-segment
geometry computed once per dataset; the exact Fréchet distance decides as few times as its
bounds allow (see ``docs/trajectory-distances.md``). ``KERNELS`` is None without numba, and
the numpy kernels run instead (same values up to rounding).
"""

from __future__ import annotations

import math
import os

import numpy as np

from anoneval.plugins.distances._geodp import FRECHET_SLACK

#: Relative gap below an (a)/(b) critical value within which type-(c) values are not searched:
#: when the decision fails at v·(1 − FRECHET_NEAR), no value below that succeeds and the answer
#: is v up to FRECHET_NEAR (4 × the decision's own slack).
FRECHET_NEAR = 4 * FRECHET_SLACK

try:
    import numba
except ImportError:  # pragma: no cover - the numpy kernels run instead
    numba = None

#: Algorithm codes of :func:`matrix`.
CODES = {"DTW": 0, "DTW-rms": 1, "DiscreteFrechet": 2, "LCSS": 3, "EDR": 4, "ERP": 5,
         "OWD": 6, "Hausdorff": 7, "SSPD": 8, "SegmentHausdorff": 9, "Frechet": 10}


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

    # --- continuous Fréchet (Alt & Godau 1995), the formulas of _geodp._Free --------------

    @jit
    def from_sq(c2, sphere):
        """The distance from its square (plane) or squared chord (sphere), as :func:`pdist`."""
        c = math.sqrt(c2)
        if sphere:
            return 2.0 * math.asin(min(c * 0.5, 1.0))
        return c

    @jit
    def interval(C, c, A, a, G, c2a, c2b, eps, e2, ceps, sphere):
        """(lo, hi) ⊂ [0, 1] of the free interval at ε of point C[c] on the segment A[a],
        A[a+1] (c2a, c2b: the squared distances or chords to its ends; G: the segment's
        geometry, :func:`segment_geometry`, on the sphere); empty: (inf, -inf). Computed on the
        fly from the coordinates, as _geodp._Free: a segment whose two ends are within ε is
        free whole (the ε-ball, a cap below π/2, is convex); on the sphere the half-width in
        haversine form, sin²(ω/2) = (sin²(ε/2) − sin²(h/2)) / cos h, h the distance to the
        great circle; on the plane the root of the quadratic |c − a − t(b − a)|² = ε²."""
        if max(c2a, c2b) <= e2:
            return 0.0, 1.0
        if sphere:
            theta = G[a, 15]
            if not theta > 0.0:
                return (0.0, 1.0) if from_sq(c2a, True) <= eps else (np.inf, -np.inf)
            dx, dy, dz = C[c, 0] - A[a, 0], C[c, 1] - A[a, 1], C[c, 2] - A[a, 2]
            sin_h = min(abs(dx * G[a, 12] + dy * G[a, 13] + dz * G[a, 14]), 1.0)
            cos_h = math.sqrt(1.0 - sin_h * sin_h)
            q = (ceps - sin_h * sin_h / (2.0 * (1.0 + cos_h))) / cos_h
            if not q >= 0.0:
                return np.inf, -np.inf
            ca = C[c, 0] * A[a, 0] + C[c, 1] * A[a, 1] + C[c, 2] * A[a, 2]
            ce = dx * G[a, 9] + dy * G[a, 10] + dz * G[a, 11]  # (c − a)·e = c·e
            phi = math.atan2(ce, ca)
            if phi < -0.5 * math.pi:
                phi += 2.0 * math.pi
            t0 = phi / theta
            w = 2.0 * math.asin(math.sqrt(min(q, 1.0))) / theta
        else:
            abx, aby = A[a + 1, 0] - A[a, 0], A[a + 1, 1] - A[a, 1]
            L2 = abx * abx + aby * aby
            if not L2 > 0.0:
                return (0.0, 1.0) if math.sqrt(c2a) <= eps else (np.inf, -np.inf)
            apx, apy = C[c, 0] - A[a, 0], C[c, 1] - A[a, 1]
            t0 = (apx * abx + apy * aby) / L2
            hx = C[c, 0] - (A[a, 0] + t0 * abx)
            hy = C[c, 1] - (A[a, 1] + t0 * aby)
            r = e2 - (hx * hx + hy * hy)
            if not r >= 0.0:
                return np.inf, -np.inf
            w = math.sqrt(r / L2)
        lo = max(t0 - w, 0.0)
        hi = min(t0 + w, 1.0)
        if lo <= hi:
            return lo, hi
        return np.inf, -np.inf

    @jit
    def seg_value(C, c, A, a, G, c2a, c2b, sphere):
        """Type-(b) critical value: the distance from C[c] to the segment A[a], A[a+1] (foot
        clamped to the segment; on the sphere the cross-track angle when the foot is on the
        arc, else the nearer end), as the numpy kernels (_geodp._arc_dist, seg_dist)."""
        if sphere:
            theta = G[a, 15]
            if not theta > 0.0:
                return from_sq(c2a, True)
            dx, dy, dz = C[c, 0] - A[a, 0], C[c, 1] - A[a, 1], C[c, 2] - A[a, 2]
            ca = C[c, 0] * A[a, 0] + C[c, 1] * A[a, 1] + C[c, 2] * A[a, 2]
            ce = dx * G[a, 9] + dy * G[a, 10] + dz * G[a, 11]
            phi = math.atan2(ce, ca)
            if phi < -0.5 * math.pi:
                phi += 2.0 * math.pi
            t0 = phi / theta
            if 0.0 <= t0 <= 1.0:
                return math.asin(min(abs(dx * G[a, 12] + dy * G[a, 13] + dz * G[a, 14]), 1.0))
            return from_sq(min(c2a, c2b), True)
        abx, aby = A[a + 1, 0] - A[a, 0], A[a + 1, 1] - A[a, 1]
        L2 = abx * abx + aby * aby
        if not L2 > 0.0:
            return math.sqrt(c2a)
        apx, apy = C[c, 0] - A[a, 0], C[c, 1] - A[a, 1]
        u = max(0.0, min(1.0, (apx * abx + apy * aby) / L2))
        fx = C[c, 0] - (A[a, 0] + u * abx)
        fy = C[c, 1] - (A[a, 1] + u * aby)
        return math.sqrt(fx * fx + fy * fy)

    @jit
    def decide(X, sx, n, Y, sy, m, GX, GY, D2, eps, sphere, r_lo, r_hi):
        """Alt & Godau's decision δF ≤ ε, as _geodp.frechet_decide, column by column: the
        reachable part of vertical edge j (X[i] against segment j of Y) of the current column
        in r_lo/r_hi, of the horizontal edge below the current cell (Y[j] against segment i of
        X) in b_lo/b_hi. A free interval is computed (:func:`interval`) only for a cell entered
        from a reachable edge; an unreachable column ends the search."""
        eps = eps * (1.0 + FRECHET_SLACK) + 1e-300
        if sphere:
            ceps = math.sin(eps * 0.5) ** 2
            e2 = 4.0 * ceps if eps < 0.5 * math.pi else -1.0  # the chord² of ε
        else:
            ceps = 0.0
            e2 = eps * eps
        chain = True
        any_r = False
        for j in range(m - 1):
            r_lo[j], r_hi[j] = np.inf, -np.inf
            if chain:
                lo, hi = interval(X, sx, Y, sy + j, GY, D2[0, j], D2[0, j + 1], eps, e2, ceps,
                                  sphere)
                if lo == 0.0:
                    r_lo[j], r_hi[j] = lo, hi
                    any_r = True
                    chain = hi == 1.0
                else:
                    chain = False
        b_chain = True
        b_lo, b_hi = np.inf, -np.inf
        for i in range(n - 1):
            b_lo, b_hi = np.inf, -np.inf
            if b_chain:
                lo, hi = interval(Y, sy, X, sx + i, GX, D2[i, 0], D2[i + 1, 0], eps, e2, ceps,
                                  sphere)
                if lo == 0.0:
                    b_lo, b_hi = lo, hi
                    b_chain = hi == 1.0
                else:
                    b_chain = False
            if not any_r and not b_lo <= b_hi:
                return False
            any_r = False
            for j in range(m - 1):
                left_ok = r_lo[j] <= r_hi[j]
                bot_ok = b_lo <= b_hi
                if left_ok or bot_ok:
                    flo, fhi = interval(X, sx + i + 1, Y, sy + j, GY, D2[i + 1, j],
                                        D2[i + 1, j + 1], eps, e2, ceps, sphere)
                    nlo = flo if bot_ok else max(r_lo[j], flo)
                    tlo, thi = interval(Y, sy + j + 1, X, sx + i, GX, D2[i, j + 1],
                                        D2[i + 1, j + 1], eps, e2, ceps, sphere)
                    b_lo = tlo if left_ok else max(b_lo, tlo)
                    b_hi = thi
                    r_lo[j], r_hi[j] = nlo, fhi
                    if nlo <= fhi:
                        any_r = True
                else:
                    r_lo[j], r_hi[j] = np.inf, -np.inf
                    b_lo, b_hi = np.inf, -np.inf
        return ((r_lo[m - 2] <= r_hi[m - 2] and r_hi[m - 2] == 1.0)
                or (b_lo <= b_hi and b_hi == 1.0))

    @jit
    def bisector(X, u, v, Y, a, sphere):
        """Type-(c) critical value: d(X[u], x) at the point x of segment Y[a], Y[a+1]
        equidistant from X[u] and X[v]; NaN off the segment (as _geodp._bisector_values)."""
        b = a + 1
        if sphere:
            theta = pdist(Y, a, Y, b, True)
            ab = Y[a, 0] * Y[b, 0] + Y[a, 1] * Y[b, 1] + Y[a, 2] * Y[b, 2]
            ex = Y[b, 0] - ab * Y[a, 0]
            ey = Y[b, 1] - ab * Y[a, 1]
            ez = Y[b, 2] - ab * Y[a, 2]
            en = math.sqrt(ex * ex + ey * ey + ez * ez)
            if not (theta > 0.0 and en > 0.0):
                return np.nan
            ex, ey, ez = ex / en, ey / en, ez / en
            nx, ny, nz = X[u, 0] - X[v, 0], X[u, 1] - X[v, 1], X[u, 2] - X[v, 2]
            x = math.atan2(-(Y[a, 0] * nx + Y[a, 1] * ny + Y[a, 2] * nz),
                           ex * nx + ey * ny + ez * nz)
            if x < 0.0:
                x += math.pi
            if not x <= theta:
                return np.nan
            cx, sx = math.cos(x), math.sin(x)
            dx = X[u, 0] - (Y[a, 0] * cx + ex * sx)
            dy = X[u, 1] - (Y[a, 1] * cx + ey * sx)
            dz = X[u, 2] - (Y[a, 2] * cx + ez * sx)
            return 2.0 * math.asin(min(math.sqrt(dx * dx + dy * dy + dz * dz) * 0.5, 1.0))
        abx, aby = Y[b, 0] - Y[a, 0], Y[b, 1] - Y[a, 1]
        nx, ny = X[u, 0] - X[v, 0], X[u, 1] - X[v, 1]
        mx = (X[u, 0] + X[v, 0]) * 0.5 - Y[a, 0]
        my = (X[u, 1] + X[v, 1]) * 0.5 - Y[a, 1]
        den = abx * nx + aby * ny
        if den == 0.0:
            return np.nan
        t = (mx * nx + my * ny) / den
        if not 0.0 <= t <= 1.0:
            return np.nan
        dx = X[u, 0] - (Y[a, 0] + t * abx)
        dy = X[u, 1] - (Y[a, 1] + t * aby)
        return math.sqrt(dx * dx + dy * dy)

    @jit
    def type_c(X, sx, n, Y, sy, m, T, transpose, lo, hi, margin, vals, k, sphere):
        """Append to vals[k:] the type-(c) values in (lo, hi) of pairs of vertices of X against
        the segments of Y; only vertices within hi + margin of a segment can give one (the
        value is ≥ both vertices' distances to the segment). Returns the new count."""
        idx = np.empty(n, np.int64)
        for a in range(m - 1):
            c = 0
            for u in range(n):
                tb = T[a, u] if transpose else T[u, a]
                if tb < hi + margin:
                    idx[c] = u
                    c += 1
            for p in range(c):
                for q in range(p + 1, c):
                    v = bisector(X, sx + idx[p], sx + idx[q], Y, sy + a, sphere)
                    if lo < v < hi:
                        if k == len(vals):
                            grown = np.empty(2 * len(vals))
                            grown[:k] = vals
                            vals = grown
                        vals[k] = v
                        k += 1
        return vals, k

    @jit
    def frechet(X, sx, n, Y, sy, m, GX, GY, sphere):
        """Exact continuous Fréchet distance (Alt & Godau 1995) of X[sx:sx+n], Y[sy:sy+m]: the
        smallest critical value at which :func:`decide` succeeds, as _geodp.frechet, found
        with few decisions: the upper bound UB = discrete Fréchet and the lower bound LB
        (endpoint distances, each vertex's distance to the other curve; a critical value), equal
        for most pairs; the decision just below UB (most other pairs end there: it fails); then
        the decision at LB, the sorted type-(a)/(b) values in (LB, UB), and only the type-(c)
        values strictly between the two consecutive (a)/(b) values that bracket the answer
        (none searched when the decision fails FRECHET_NEAR below the upper one)."""
        if n == 1 or m == 1:
            top = 0.0
            for i in range(n):
                for j in range(m):
                    top = max(top, pdist(X, sx + i, Y, sy + j, sphere))
            return top
        # upper bound: discrete Fréchet (Eiter & Mannila), on squared distances (monotone)
        D2 = np.empty((n, m))
        prev = np.empty(m)
        cur = np.empty(m)
        for i in range(n):
            for j in range(m):
                d = 0.0
                for q in range(X.shape[1]):
                    t = X[sx + i, q] - Y[sy + j, q]
                    d += t * t
                D2[i, j] = d
                if i == 0 and j == 0:
                    cur[j] = d
                elif i == 0:
                    cur[j] = max(d, cur[j - 1])
                elif j == 0:
                    cur[j] = max(d, prev[j])
                else:
                    cur[j] = max(d, min(prev[j - 1], prev[j], cur[j - 1]))
            prev, cur = cur, prev
        ub = from_sq(prev[m - 1], sphere)
        lb = from_sq(max(D2[0, 0], D2[n - 1, m - 1]), sphere)
        # cheap lower bound first (as SegmentHausdorff): most pairs end here, lb = ub
        low = lb
        for i in range(n):
            low = max(low, to_poly(X, sx + i, Y, GY, sy, m, sphere, False, low))
        for j in range(m):
            low = max(low, to_poly(Y, sy + j, X, GX, sx, n, sphere, False, low))
        if low >= ub:
            return ub
        r_lo = np.empty(m - 1)
        r_hi = np.empty(m - 1)
        if not decide(X, sx, n, Y, sy, m, GX, GY, D2, ub * (1.0 - FRECHET_NEAR), sphere, r_lo,
                      r_hi):
            return ub  # nothing below ub succeeds but within FRECHET_NEAR of it
        # the type-(b) critical values (vertex to segment), both ways; lb: the largest
        # vertex-to-curve distance (as ``low``, here from the same values as the candidates)
        TV = np.empty((n, m - 1))
        TH = np.empty((n - 1, m))
        for i in range(n):
            near = np.inf
            for j in range(m - 1):
                TV[i, j] = seg_value(X, sx + i, Y, sy + j, GY, D2[i, j], D2[i, j + 1], sphere)
                near = min(near, TV[i, j])
            lb = max(lb, near)
        for j in range(m):
            near = np.inf
            for i in range(n - 1):
                TH[i, j] = seg_value(Y, sy + j, X, sx + i, GX, D2[i, j], D2[i + 1, j], sphere)
                near = min(near, TH[i, j])
            lb = max(lb, near)
        if lb >= ub:
            return ub
        if decide(X, sx, n, Y, sy, m, GX, GY, D2, lb, sphere, r_lo, r_hi):
            return lb
        cand = np.empty(n * (m - 1) + (n - 1) * m + 1)
        k = 0
        for i in range(n):
            for j in range(m - 1):
                if lb < TV[i, j] < ub:
                    cand[k] = TV[i, j]
                    k += 1
        for i in range(n - 1):
            for j in range(m):
                if lb < TH[i, j] < ub:
                    cand[k] = TH[i, j]
                    k += 1
        cand[k] = ub
        c = np.sort(cand[:k + 1])
        lo, hi = 0, k  # c[k] = ub succeeds
        while lo < hi:
            mid = (lo + hi) // 2
            if decide(X, sx, n, Y, sy, m, GX, GY, D2, c[mid], sphere, r_lo, r_hi):
                hi = mid
            else:
                lo = mid + 1
        top = c[lo]
        bottom = c[lo - 1] if lo > 0 else lb
        if not decide(X, sx, n, Y, sy, m, GX, GY, D2, top * (1.0 - FRECHET_NEAR), sphere, r_lo,
                      r_hi):
            return top
        margin = 1e-6 * top + (1e-7 if sphere else 0.0)
        vals = np.empty(64)
        vals, k = type_c(X, sx, n, Y, sy, m, TV, False, bottom, top, margin, vals, 0, sphere)
        vals, k = type_c(Y, sy, m, X, sx, n, TH, True, bottom, top, margin, vals, k, sphere)
        if k == 0:
            return top
        c = np.sort(vals[:k])
        lo, hi = 0, k
        while lo < hi:
            mid = (lo + hi) // 2
            if decide(X, sx, n, Y, sy, m, GX, GY, D2, c[mid], sphere, r_lo, r_hi):
                hi = mid
            else:
                lo = mid + 1
        return c[lo] if lo < k else top

    @jit
    def pair(code, X, TX, sx, n, Y, TY, sy, m, GX, GY, sphere, eps, window, flag, g):
        if code == 10:
            return frechet(X, sx, n, Y, sy, m, GX, GY, sphere)
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
    """Per point k of unit vectors X (N, 3), the segment a = X[k] → b = X[k+1], shape (N, 16):
    the unit normal n̂ = (a×b)/|a×b| and the edge normals n×a and b×n (columns 0–8), the unit
    tangent e at a (e = b − (a·b)a normalised) and a×e (9–14), the arc's angle Θ (15). The
    foot of p on the great circle lies on the arc iff p·(n×a) ≥ 0 and p·(b×n) ≥ 0 (the
    along-track test of traj-dist, without trigonometry); a zero-length segment gets NaN edge
    normals, so the test fails and the endpoint distance applies. The Fréchet free intervals
    use e, a×e and Θ. The last point's row (and a row across two trajectories) is never
    read."""
    a = X
    b = np.roll(X, -1, axis=0)
    n = np.cross(a, b)
    norm = np.sqrt(np.einsum("ij,ij->i", n, n))
    G = np.empty((len(X), 16))
    with np.errstate(invalid="ignore", divide="ignore"):
        G[:, 0:3] = n / norm[:, None]
    G[:, 3:6] = np.cross(n, a)
    G[:, 6:9] = np.cross(b, n)
    G[norm == 0, 3:9] = np.nan
    ab = a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2]
    e = b - ab[:, None] * a
    en = np.sqrt(np.einsum("ij,ij->i", e, e))
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.where(en[:, None] > 0, e / en[:, None], np.nan)
    G[:, 9:12] = e
    G[:, 12:15] = np.cross(a, e)
    chord = np.sqrt(np.einsum("ij,ij->i", a - b, a - b))
    G[:, 15] = 2.0 * np.arcsin(np.minimum(chord * 0.5, 1.0))
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
    none = np.zeros((1, 16))
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
