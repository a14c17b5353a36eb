"""Batched kernels of the traj-dist family: point and point-to-segment distances, the DPs.

Every kernel takes a batch of B trajectory pairs of fixed lengths: ``P`` of shape (B, n, k) and
``Q`` of shape (B, m, k), with k = 3 (unit vectors, ``space="sphere"``: distances are angles,
the caller multiplies by the Earth radius) or k = 2 (``space="plane"``: the coordinates as
given). The dynamic programs run by anti-diagonals: each step is vectorised over the cells of a
diagonal and over the B pairs, so the Python loop has n + m steps per batch.
"""

from __future__ import annotations

import numpy as np

#: Relative slack of the Fréchet decision (floating-point ties at a critical value).
FRECHET_SLACK = 1e-11


def unit_vectors(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Cartesian unit vectors of (lon, lat) degrees, last axis (x, y, z)."""
    la, lo = np.radians(lat), np.radians(lon)
    c = np.cos(la)
    return np.stack([c * np.cos(lo), c * np.sin(lo), np.sin(la)], axis=-1)


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("...k,...k->...", a, b)


def point_dist(u: np.ndarray, v: np.ndarray, sphere: bool) -> np.ndarray:
    """Euclidean distance (plane) or central angle 2·asin(chord/2) (sphere), last axis."""
    d = u - v
    c = np.sqrt(_dot(d, d))
    if sphere:
        return 2.0 * np.arcsin(np.minimum(c * 0.5, 1.0))
    return c


def cost_matrix(P: np.ndarray, Q: np.ndarray, sphere: bool) -> np.ndarray:
    """Point distances, shape (n, m, B) (the layout of the DPs)."""
    c = point_dist(P[:, :, None, :], Q[:, None, :, :], sphere)
    return np.ascontiguousarray(np.moveaxis(c, 0, -1))


def seg_dist(p: np.ndarray, a: np.ndarray, b: np.ndarray, sphere: bool,
             tdist_rule: bool = False) -> np.ndarray:
    """Distance from points ``p`` to segments ``[a, b]`` (arrays broadcast on all but the last
    axis).

    Plane, textbook: the clamped projection ``u = clip((p−a)·(b−a)/|b−a|², 0, 1)``; a
    zero-length segment gives |p−a|. Plane, ``tdist_rule`` (traj-dist ``point_to_seg``): the
    endpoint distance min(|p−a|, |p−b|) when u < 1e-5 or u > 1, else the perpendicular
    distance. Sphere (traj-dist ``point_to_path``): the cross-track angle crt = asin(p·n̂) with
    n̂ = a×b/|a×b|; the along-track angles acos(cos d13 / cos crt) and acos(cos d23 / cos crt);
    if either exceeds the segment's angle d12, min(d13, d23), else |crt|; d12 = 0 gives d13.
    """
    if sphere:
        d13 = point_dist(p, a, True)
        d23 = point_dist(p, b, True)
        d12 = point_dist(a, b, True)
        n = np.cross(a, b)
        norm = np.sqrt(_dot(n, n))
        with np.errstate(invalid="ignore", divide="ignore"):
            s = _dot(p, n) / norm
            crt = np.arcsin(np.clip(s, -1.0, 1.0))
            cc = np.cos(crt)
            at13 = np.arccos(np.clip(np.cos(d13) / cc, -1.0, 1.0))
            at23 = np.arccos(np.clip(np.cos(d23) / cc, -1.0, 1.0))
        out = np.where((at13 > d12) | (at23 > d12), np.minimum(d13, d23), np.abs(crt))
        return np.where((norm == 0) | ~np.isfinite(out), np.minimum(d13, d23), out)
    ab = b - a
    ap = p - a
    den = _dot(ab, ab)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = _dot(ap, ab) / den
    d_a = np.sqrt(_dot(ap, ap))
    if tdist_rule:
        proj = a + np.nan_to_num(u)[..., None] * ab
        perp = point_dist(p, proj, False)
        bp = p - b
        ends = np.minimum(d_a, np.sqrt(_dot(bp, bp)))
        out = np.where((u < 1e-5) | (u > 1), ends, perp)
        return np.where(den == 0, d_a, out)
    u = np.clip(np.nan_to_num(u), 0.0, 1.0)
    out = point_dist(p, a + u[..., None] * ab, False)
    return np.where(den == 0, d_a, out)


def vertex_to_polyline(P: np.ndarray, Q: np.ndarray, sphere: bool,
                       tdist_rule: bool = False) -> np.ndarray:
    """min over the segments of Q of the distance from each vertex of P: shape (B, n)."""
    if Q.shape[1] == 1:
        return point_dist(P, Q[:, :1, :], sphere)
    a = Q[:, None, :-1, :]
    b = Q[:, None, 1:, :]
    return seg_dist(P[:, :, None, :], a, b, sphere, tdist_rule).min(axis=2)


def _diagonals(n: int, m: int):
    """For s = 2..n+m: the DP cells (i, j), 1 ≤ i ≤ n, 1 ≤ j ≤ m, with i + j = s."""
    for s in range(2, n + m + 1):
        i = np.arange(max(1, s - m), min(n, s - 1) + 1)
        yield i, s - i


def _warping(cost: np.ndarray, combine: np.ufunc) -> np.ndarray:
    """The warping-path DP of DTW and the discrete Fréchet distance: C[i][j] = combine(c_ij,
    min(C[i−1][j−1], C[i−1][j], C[i][j−1])), C[0][0] = 0, borders ∞; cost (n, m, B)."""
    n, m = cost.shape[:2]
    acc = np.full((n + 1, m + 1, *cost.shape[2:]), np.inf)
    acc[0, 0] = 0.0
    for i, j in _diagonals(n, m):
        best = np.minimum(np.minimum(acc[i - 1, j - 1], acc[i - 1, j]), acc[i, j - 1])
        acc[i, j] = combine(cost[i - 1, j - 1], best)
    return acc[n, m]


def dtw(cost: np.ndarray) -> np.ndarray:
    """Σ of cost along the cheapest warping path (C[0][0]=0, borders ∞); cost (n, m, B)."""
    return _warping(cost, np.add)


def discrete_frechet(cost: np.ndarray) -> np.ndarray:
    """Eiter & Mannila: C[i][j] = max(c_ij, min(C[i−1][j], C[i][j−1], C[i−1][j−1]))."""
    return _warping(cost, np.maximum)


def lcss_length(match: np.ndarray) -> np.ndarray:
    """Longest common subsequence length from the boolean match matrix (n, m, B)."""
    n, m = match.shape[:2]
    acc = np.zeros((n + 1, m + 1, *match.shape[2:]))
    for i, j in _diagonals(n, m):
        acc[i, j] = np.where(match[i - 1, j - 1], acc[i - 1, j - 1] + 1,
                             np.maximum(acc[i - 1, j], acc[i, j - 1]))
    return acc[n, m]


def edr(match: np.ndarray, zero_init: bool) -> np.ndarray:
    """Edit count: textbook borders C[i][0] = i, C[0][j] = j, or traj-dist's all-zero borders."""
    n, m = match.shape[:2]
    acc = np.zeros((n + 1, m + 1, *match.shape[2:]))
    if not zero_init:
        acc[:, 0] = np.arange(n + 1).reshape((n + 1,) + (1,) * (acc.ndim - 2))
        acc[0, :] = np.arange(m + 1).reshape((m + 1,) + (1,) * (acc.ndim - 2))
    for i, j in _diagonals(n, m):
        sub = acc[i - 1, j - 1] + np.where(match[i - 1, j - 1], 0.0, 1.0)
        acc[i, j] = np.minimum(np.minimum(acc[i - 1, j], acc[i, j - 1]) + 1.0, sub)
    return acc[n, m]


def erp(cost: np.ndarray, g0: np.ndarray, g1: np.ndarray, whole_sum: bool) -> np.ndarray:
    """ERP: cost (n, m, B), gap costs g0 (n, B) and g1 (m, B); borders are the cumulative gap
    sums (textbook) or, with ``whole_sum``, the whole-trajectory sum (traj-dist)."""
    n, m = cost.shape[:2]
    acc = np.zeros((n + 1, m + 1, *cost.shape[2:]))
    if whole_sum:
        acc[1:, 0] = g0.sum(axis=0)
        acc[0, 1:] = g1.sum(axis=0)
    else:
        acc[1:, 0] = np.cumsum(g0, axis=0)
        acc[0, 1:] = np.cumsum(g1, axis=0)
    for i, j in _diagonals(n, m):
        acc[i, j] = np.minimum(np.minimum(acc[i - 1, j] + g0[i - 1], acc[i, j - 1] + g1[j - 1]),
                               acc[i - 1, j - 1] + cost[i - 1, j - 1])
    return acc[n, m]


# --- continuous Fréchet (Alt & Godau 1995) -------------------------------------------------

class _Free:
    """Free-space geometry of points ``c`` against segments ``[a, b]``, independent of ε.

    The set of segment parameters t ∈ [0, 1] within ε of c is [t0 − w(ε), t0 + w(ε)] ∩ [0, 1]:
    plane, t0 the projection parameter and w = √(ε² − h²)/|b−a| (h the distance to the line);
    sphere, the great circle through a, b is X(θ) = a cos θ + e sin θ, c·X(θ) = cos h cos(θ − φ)
    (h the angle from c to the great circle, sin h = |c·n̂|, n̂ = a × e), t0 = φ/Θ (Θ the
    segment's angle) and, by spherical Pythagoras, w = ω/Θ with
    sin²(ω/2) = (sin²(ε/2) − sin²(h/2)) / cos h: the haversine form, which resolves ε to the
    last bits where acos(cos ε / cos h) loses half of them (valid for ε < π/2).
    """

    def __init__(self, c: np.ndarray, a: np.ndarray, b: np.ndarray, sphere: bool) -> None:
        self.sphere = sphere
        self.d_a = point_dist(c, a, sphere)
        with np.errstate(invalid="ignore", divide="ignore"):
            if sphere:
                theta = point_dist(a, b, True)
                e = b - _dot(a, b)[..., None] * a
                e = e / np.sqrt(_dot(e, e))[..., None]
                # c·e = (c − a)·e and c·n̂ = (c − a)·n̂ (a ⟂ e, n̂): small differences, so the
                # foot's angle and the distance to the circle keep their relative precision
                ca = c - a
                A, Bc = _dot(c, a), _dot(ca, e)
                phi = np.arctan2(Bc, A)
                phi = np.where(phi < -np.pi / 2, phi + 2 * np.pi, phi)
                sin_h = np.minimum(np.abs(_dot(ca, np.cross(a, e))), 1.0)
                cos_h = np.sqrt(1.0 - sin_h * sin_h)
                self.sin_h = sin_h
                self.cos_h = cos_h
                self.hav_h = sin_h * sin_h / (2.0 * (1.0 + cos_h))  # sin²(h/2)
                self.d_b = point_dist(c, b, True)
                self.t0 = phi / theta
                self.scale = theta
            else:
                ab = b - a
                L2 = _dot(ab, ab)
                t0 = _dot(c - a, ab) / L2
                foot = a + np.nan_to_num(t0)[..., None] * ab
                self.h2 = _dot(c - foot, c - foot)
                self.t0 = t0
                self.scale = np.sqrt(L2)
        self.degenerate = ~(self.scale > 0)

    def interval(self, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) of the free interval for ε (broadcast); empty: lo = +∞, hi = −∞."""
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.sphere:
                q = (np.sin(eps * 0.5) ** 2 - self.hav_h) / self.cos_h
                ok = q >= 0.0
                w = 2.0 * np.arcsin(np.sqrt(np.clip(q, 0.0, 1.0))) / self.scale
            else:
                r = eps * eps - self.h2
                ok = r >= 0
                w = np.sqrt(np.maximum(r, 0.0)) / self.scale
            lo = np.maximum(self.t0 - w, 0.0)
            hi = np.minimum(self.t0 + w, 1.0)
        ok = ok & (lo <= hi)
        full = self.degenerate & (self.d_a <= eps)
        lo = np.where(full, 0.0, np.where(ok & ~self.degenerate, lo, np.inf))
        hi = np.where(full, 1.0, np.where(ok & ~self.degenerate, hi, -np.inf))
        return lo, hi


def frechet_decide(vert: _Free, horz: _Free, eps: np.ndarray) -> np.ndarray:
    """Alt & Godau's decision δF(P, Q) ≤ ε for a batch, ε of shape (B,).

    ``vert``: vertices of P against segments of Q, shape (B, n, m−1) (the vertical edges of the
    free-space diagram); ``horz``: segments of P against vertices of Q, (B, n−1, m). Reachable
    intervals propagate monotonically, cell by cell along anti-diagonals: from the left edge the
    right edge is reachable on [max(lo_left_reach, lo_right), hi_right], from the bottom edge
    all of its free interval (and symmetrically for the top edge).
    """
    e3 = eps[:, None, None]
    vlo, vhi = vert.interval(e3)
    hlo, hhi = horz.interval(e3)
    B, n, m1 = vlo.shape
    m = m1 + 1
    rlo, rhi = np.full_like(vlo, np.inf), np.full_like(vhi, -np.inf)  # reachable, vertical
    blo, bhi = np.full_like(hlo, np.inf), np.full_like(hhi, -np.inf)  # reachable, horizontal
    # left border (i = 0): along Q from the start while the free intervals chain
    chain = np.ones(B, bool)
    for j in range(m1):
        chain = chain & (vlo[:, 0, j] == 0.0)
        rlo[:, 0, j] = np.where(chain, vlo[:, 0, j], np.inf)
        rhi[:, 0, j] = np.where(chain, vhi[:, 0, j], -np.inf)
        chain = chain & (vhi[:, 0, j] == 1.0)
    chain = np.ones(B, bool)
    for i in range(n - 1):
        chain = chain & (hlo[:, i, 0] == 0.0)
        blo[:, i, 0] = np.where(chain, hlo[:, i, 0], np.inf)
        bhi[:, i, 0] = np.where(chain, hhi[:, i, 0], -np.inf)
        chain = chain & (hhi[:, i, 0] == 1.0)
    for s in range(n - 1 + m1 - 1):
        i = np.arange(max(0, s - (m1 - 1)), min(n - 2, s) + 1)
        j = s - i
        left_ok = rlo[:, i, j] <= rhi[:, i, j]
        bot_ok = blo[:, i, j] <= bhi[:, i, j]
        # right edge: vertical edge i+1 of segment j
        flo, fhi = vlo[:, i + 1, j], vhi[:, i + 1, j]
        lo = np.where(bot_ok, flo, np.where(left_ok, np.maximum(rlo[:, i, j], flo), np.inf))
        rlo[:, i + 1, j] = lo
        rhi[:, i + 1, j] = np.where(bot_ok | left_ok, fhi, -np.inf)
        # top edge: horizontal edge j+1 of segment i
        flo, fhi = hlo[:, i, j + 1], hhi[:, i, j + 1]
        lo = np.where(left_ok, flo, np.where(bot_ok, np.maximum(blo[:, i, j], flo), np.inf))
        blo[:, i, j + 1] = lo
        bhi[:, i, j + 1] = np.where(bot_ok | left_ok, fhi, -np.inf)
    end_r = (rlo[:, n - 1, m1 - 1] <= rhi[:, n - 1, m1 - 1]) & (rhi[:, n - 1, m1 - 1] == 1.0)
    end_t = (blo[:, n - 2, m - 1] <= bhi[:, n - 2, m - 1]) & (bhi[:, n - 2, m - 1] == 1.0)
    return end_r | end_t


def _bisector_values(U: np.ndarray, V: np.ndarray, a: np.ndarray, b: np.ndarray,
                     sphere: bool) -> np.ndarray:
    """Type-(c) critical values: the distance from u to the point of segment [a, b] equidistant
    from u and v (NaN where that point is off the segment). U, V (B, K, 1, k); a, b (B, 1, S, k).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        if sphere:
            theta = point_dist(a, b, True)
            e = b - _dot(a, b)[..., None] * a
            e = e / np.sqrt(_dot(e, e))[..., None]
            nrm = U - V
            x = np.arctan2(-_dot(a, nrm), _dot(e, nrm))
            x = np.where(x < 0, x + np.pi, x)
            ok = x <= theta
            X = a * np.cos(x)[..., None] + e * np.sin(x)[..., None]
        else:
            ab = b - a
            nrm = U - V
            t = _dot((U + V) * 0.5 - a, nrm) / _dot(ab, nrm)
            ok = (t >= 0) & (t <= 1)
            X = a + t[..., None] * ab
        val = point_dist(U, X, sphere)
    return np.where(ok, val, np.nan)


def frechet(P: np.ndarray, Q: np.ndarray, sphere: bool) -> np.ndarray:
    """Exact continuous Fréchet distance of the polylines, batch of B pairs with n, m ≥ 2.

    The value is the smallest critical value at which :func:`frechet_decide` succeeds: (a)
    max(d(p1, q1), d(pn, qm)); (b) vertex-to-segment distances both ways; (c) for each segment of
    one curve and each pair of vertices u, v of the other, d(u, x) with x the point of the
    segment equidistant from u and v. Candidates are clipped to [(a), discrete Fréchet] (the
    discrete Fréchet bounds the continuous one from above and succeeds) and binary-searched.
    """
    B = P.shape[0]
    lb = np.maximum(point_dist(P[:, 0], Q[:, 0], sphere), point_dist(P[:, -1], Q[:, -1], sphere))
    ub = discrete_frechet(cost_matrix(P, Q, sphere))
    vert = _Free(P[:, :, None, :], Q[:, None, :-1, :], Q[:, None, 1:, :], sphere)
    horz = _Free(Q[:, None, :, :], P[:, :-1, None, :], P[:, 1:, None, :], sphere)
    if sphere:
        type_b = [_arc_dist(vert), _arc_dist(horz)]
    else:
        type_b = [seg_dist(P[:, :, None, :], Q[:, None, :-1, :], Q[:, None, 1:, :], False),
                  seg_dist(Q[:, None, :, :], P[:, :-1, None, :], P[:, 1:, None, :], False)]
    parts = [lb[:, None], ub[:, None], *(v.reshape(B, -1) for v in type_b)]
    for X, Y in ((P, Q), (Q, P)):
        k = X.shape[1]
        if k >= 2:
            iu, ju = np.triu_indices(k, 1)
            vals = _bisector_values(X[:, iu, None, :], X[:, ju, None, :], Y[:, None, :-1, :],
                                    Y[:, None, 1:, :], sphere)
            parts.append(vals.reshape(B, -1))
    cand = np.concatenate(parts, axis=1)
    cand = np.where(np.isnan(cand), ub[:, None], cand)
    cand = np.clip(cand, lb[:, None], ub[:, None])
    cand.sort(axis=1)
    lo = np.zeros(B, np.int64)
    hi = np.full(B, cand.shape[1] - 1)
    rows = np.arange(B)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        eps = cand[rows, mid]
        ok = frechet_decide(vert, horz, eps * (1 + FRECHET_SLACK) + 1e-300)
        hi = np.where(ok, mid, hi)
        lo = np.where(ok | (lo >= hi), lo, mid + 1)
    return cand[rows, lo]


def _arc_dist(free: _Free) -> np.ndarray:
    """Angle from the point to the arc in the same parametrisation as the free intervals:
    h = asin(|c·n̂|) if the foot φ lies on the arc, else the nearer endpoint (sphere, type b)."""
    inside = (free.t0 >= 0) & (free.t0 <= 1) & ~free.degenerate
    with np.errstate(invalid="ignore"):
        foot = np.arcsin(free.sin_h)
    ends = np.minimum(free.d_a, np.where(free.degenerate, free.d_a, free.d_b))
    return np.where(inside, foot, ends)
