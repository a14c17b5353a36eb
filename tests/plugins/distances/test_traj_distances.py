"""The traj-dist family (SSPD, OWD, SegmentHausdorff, DiscreteFrechet, Frechet, LCSS, EDR, ERP,
DTW conventions): the reference's hand cases, brute force on tiny cases, the reference
packages (traj-dist-rs, tslearn, similaritymeasures, dtaidistance), metric properties, the
public functions and bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anoneval
from anoneval.core.api import ConfigError, DataError, Trajectories
from anoneval.core.run.trajectory_distance import trajectory_distance as td

R_TD = 6378137.0  # traj-dist's spherical radius


def plane(name, a, b, **kw):
    return td(name, a, b, space="plane", **kw)


# -- the reference's hand cases and defects ------------------------------------------------------

def test_frechet_hand_case_is_exact_where_traj_dist_rs_is_not():
    P, Q = [[0, 0], [10, 0]], [[0, 1], [8, 1], [2, 1], [10, 1]]
    assert plane("Frechet", P, Q) == pytest.approx(math.sqrt(10), rel=1e-10)
    assert plane("Frechet", Q, P) == pytest.approx(math.sqrt(10), rel=1e-10)
    tdr = pytest.importorskip("traj_dist_rs")
    assert tdr.frechet(np.array(P, float), np.array(Q, float)) == pytest.approx(1.0)


def test_frechet_type_c_critical_value():
    # P goes to (2,0), Q passes over both vertices: the bisector of (0,0),(4,0) ... exact value
    # of a type-(c) configuration, checked against dense resampling below (brute force).
    P = [[0, 0], [4, 0], [0, 0.5], [4, 0.5]]
    Q = [[0, 0.2], [4, 0.2]]
    val = plane("Frechet", P, Q)
    assert val <= plane("DiscreteFrechet", P, Q) + 1e-12
    lo, hi = resampled_bounds(np.array(P, float), np.array(Q, float), 0.02)
    assert lo - 1e-9 <= val <= hi + 1e-9


def test_edr_hand_case_and_zero_init_defect():
    P, Q = [[5, 5], [0, 0]], [[0, 0]]
    assert plane("EDR", P, Q, eps_m=0.5) == 0.5
    assert plane("EDR", P, Q, eps_m=0.5, variant="traj-dist") == 0.0
    tdr = pytest.importorskip("traj_dist_rs")
    assert tdr.edr(P, Q, "euclidean", 0.5).distance == 0.0


def test_erp_hand_case_and_whole_sum_defect():
    P, Q = [[1, 0], [5, 0]], [[5, 0]]
    assert plane("ERP", P, Q, g=[0, 0]) == 1.0
    assert plane("ERP", P, Q, g=[0, 0], variant="traj-dist") == 6.0
    tdr = pytest.importorskip("traj_dist_rs")
    assert tdr.erp_compat_traj_dist(P, Q, "euclidean", [0, 0]).distance == 6.0
    assert tdr.erp_standard(P, Q, "euclidean", [0, 0]).distance == 0.0  # off by one
    assert tdr.erp_standard(P, Q, "euclidean", [0, 0], use_full_matrix=True).distance == 1.0


def test_spherical_sspd_traj_dist_variant_is_the_sum():
    P = [[2.30, 48.80], [2.31, 48.81], [2.33, 48.80]]
    Q = [[2.30, 48.801], [2.32, 48.82]]
    mean = td("SSPD", P, Q, earth_radius_m=R_TD)
    assert td("SSPD", P, Q, earth_radius_m=R_TD, variant="traj-dist") == pytest.approx(2 * mean)
    tdr = pytest.importorskip("traj_dist_rs")
    assert tdr.sspd(P, Q, "spherical") == pytest.approx(2 * mean, rel=1e-9)


def test_lcss_strict_match_and_time_window():
    P, Q = [[0, 0], [1, 0]], [[0, 0.5], [1, 0]]
    assert plane("LCSS", P, Q, eps_m=0.5) == 0.5  # d = 0.5 is not < 0.5
    assert plane("LCSS", P, Q, eps_m=0.5000001) == 0.0
    Pt, Qt = [[0, 0, 0], [1, 0, 10]], [[0, 0, 100], [1, 0, 12]]
    assert plane("LCSS", Pt, Qt, eps_m=0.1, delta_s=5) == 0.5
    assert plane("LCSS", Pt, Qt, eps_m=0.1, delta_s=100) == 0.0


def test_edr_axes_match_is_l_infinity():
    P, Q = [[0, 0]], [[0.4, 0.4]]  # L2 0.566 > 0.5, L∞ 0.4 ≤ 0.5
    assert plane("EDR", P, Q, eps_m=0.5) == 1.0
    assert plane("EDR", P, Q, eps_m=0.5, match="axes") == 0.0


def test_dtw_conventions():
    P, Q = [[0, 0], [1, 0], [2, 0]], [[0, 1], [2, 1]]
    # path (0,0),(1,0)|(1,1)... brute force below; here: sum = 1 + √2 + 1, rms = √(1 + 2 + 1)
    assert plane("DTW", P, Q) == pytest.approx(2 + math.sqrt(2))
    assert plane("DTW", P, Q, convention="rms") == pytest.approx(2.0)


# -- brute force over tiny cases ----------------------------------------------------------------

def paths(n, m):
    """Every monotone warping path from (0,0) to (n−1,m−1)."""
    def rec(i, j):
        if (i, j) == (n - 1, m - 1):
            yield [(i, j)]
            return
        for di, dj in ((1, 0), (0, 1), (1, 1)):
            if i + di < n and j + dj < m:
                for rest in rec(i + di, j + dj):
                    yield [(i, j), *rest]
    yield from rec(0, 0)


def dseg(p, a, b):
    ab, ap = b - a, p - a
    den = ab @ ab
    u = 0.0 if den == 0 else min(max((ap @ ab) / den, 0.0), 1.0)
    return float(np.linalg.norm(p - (a + u * ab)))


def to_poly(p, Q):
    if len(Q) == 1:
        return float(np.linalg.norm(p - Q[0]))
    return min(dseg(p, Q[k], Q[k + 1]) for k in range(len(Q) - 1))


def lcss_brute(P, Q, eps):
    best = 0
    for k in range(1, min(len(P), len(Q)) + 1):
        for ii in itertools.combinations(range(len(P)), k):
            for jj in itertools.combinations(range(len(Q)), k):
                if all(np.linalg.norm(P[i] - Q[j]) < eps for i, j in zip(ii, jj, strict=True)):
                    best = k
    return 1 - best / min(len(P), len(Q))


def edit_brute(P, Q, sub, gap_p, gap_q):
    """Min cost over all alignments (recursion over the three moves, no table)."""
    def rec(i, j):
        if i == 0 and j == 0:
            return 0.0
        options = []
        if i > 0:
            options.append(rec(i - 1, j) + gap_p(i - 1))
        if j > 0:
            options.append(rec(i, j - 1) + gap_q(j - 1))
        if i > 0 and j > 0:
            options.append(rec(i - 1, j - 1) + sub(i - 1, j - 1))
        return min(options)
    return rec(len(P), len(Q))


def resampled(P, step):
    out = [P[0]]
    for a, b in itertools.pairwise(P):
        k = max(int(np.ceil(np.linalg.norm(b - a) / step)), 1)
        out.extend(a + (b - a) * t for t in np.arange(1, k + 1) / k)
    return np.array(out)


def discrete_frechet_naive(P, Q):
    n, m = len(P), len(Q)
    C = np.full((n, m), np.inf)
    for i in range(n):
        for j in range(m):
            d = np.linalg.norm(P[i] - Q[j])
            if i == 0 and j == 0:
                C[i, j] = d
                continue
            prev = min(C[i - 1, j] if i else np.inf, C[i, j - 1] if j else np.inf,
                       C[i - 1, j - 1] if i and j else np.inf)
            C[i, j] = max(d, prev)
    return C[-1, -1]


def resampled_bounds(P, Q, step):
    """F ≤ DF(resampled) ≤ F + step: the continuous Fréchet from dense vertices."""
    df = discrete_frechet_naive(resampled(P, step), resampled(Q, step))
    return df - step, df


small = st.lists(st.tuples(st.integers(-4, 4), st.integers(-4, 4)), min_size=1, max_size=4)


@settings(max_examples=40, deadline=None)
@given(small, small)
def test_dp_distances_equal_brute_force(p, q):
    P, Q = np.array(p, float), np.array(q, float)
    d = lambda i, j: float(np.linalg.norm(P[i] - Q[j]))  # noqa: E731
    all_paths = list(paths(len(P), len(Q)))
    assert plane("DTW", p, q) == pytest.approx(min(sum(d(i, j) for i, j in w) for w in all_paths))
    assert plane("DTW", p, q, convention="rms") == pytest.approx(
        min(math.sqrt(sum(d(i, j) ** 2 for i, j in w)) for w in all_paths))
    assert plane("DiscreteFrechet", p, q) == pytest.approx(
        min(max(d(i, j) for i, j in w) for w in all_paths))
    assert plane("LCSS", p, q, eps_m=1.5) == pytest.approx(lcss_brute(P, Q, 1.5))
    edits = edit_brute(P, Q, lambda i, j: 0.0 if d(i, j) < 1.5 else 1.0,
                       lambda i: 1.0, lambda j: 1.0)
    assert plane("EDR", p, q, eps_m=1.5) == pytest.approx(edits / max(len(P), len(Q)))
    g = np.array([1.0, -2.0])
    erp = edit_brute(P, Q, d, lambda i: float(np.linalg.norm(P[i] - g)),
                     lambda j: float(np.linalg.norm(Q[j] - g)))
    assert plane("ERP", p, q, g=g.tolist()) == pytest.approx(erp)
    vp = [to_poly(x, Q) for x in P]
    vq = [to_poly(x, P) for x in Q]
    assert plane("SSPD", p, q) == pytest.approx((np.mean(vp) + np.mean(vq)) / 2)
    assert plane("SegmentHausdorff", p, q) == pytest.approx(max(max(vp), max(vq)))
    owd = lambda A, B: np.mean([min(np.linalg.norm(a - b) for b in B) for a in A])  # noqa: E731
    assert plane("OWD", p, q) == pytest.approx((owd(P, Q) + owd(Q, P)) / 2)


@settings(max_examples=25, deadline=None)
@given(small, small)
def test_frechet_within_dense_resampling_bounds(p, q):
    P, Q = np.array(p, float), np.array(q, float)
    lo, hi = resampled_bounds(P, Q, 0.05)
    assert lo - 1e-9 <= plane("Frechet", p, q) <= hi + 1e-9


# -- reference packages --------------------------------------------------------------------------

def random_pair(rng, n, m, scale=1.0):
    origin = np.array([2.3, 48.85])
    P = np.cumsum(rng.normal(0, 0.01 * scale, (n, 2)), axis=0) + origin
    Q = np.cumsum(rng.normal(0, 0.01 * scale, (m, 2)), axis=0) + origin
    return P, Q


CASES = [(n, m, s) for s, (n, m) in enumerate([(2, 2), (3, 7), (8, 5), (12, 12), (20, 9)])]


@pytest.mark.parametrize(("n", "m", "seed"), CASES)
def test_against_traj_dist_rs(n, m, seed):
    tdr = pytest.importorskip("traj_dist_rs")
    P, Q = random_pair(np.random.default_rng(seed), n, m)
    e = "euclidean"
    assert plane("SSPD", P, Q, variant="traj-dist") == pytest.approx(tdr.sspd(P, Q, e), rel=1e-9)
    assert plane("SSPD", P, Q) == pytest.approx(tdr.sspd(P, Q, e), rel=1e-3)  # 1e-5 sliver
    assert plane("DTW", P, Q) == pytest.approx(tdr.dtw(P, Q, e).distance, rel=1e-9)
    assert plane("SegmentHausdorff", P, Q) == pytest.approx(tdr.hausdorff(P, Q, e), rel=1e-6)
    assert plane("DiscreteFrechet", P, Q) == pytest.approx(
        tdr.discret_frechet(P, Q, e).distance, rel=1e-9)
    eps = 0.01
    assert plane("LCSS", P, Q, eps_m=eps) == pytest.approx(tdr.lcss(P, Q, e, eps).distance)
    assert plane("EDR", P, Q, eps_m=eps, variant="traj-dist") == pytest.approx(
        tdr.edr(P, Q, e, eps).distance)
    g = [2.3, 48.85]
    assert plane("ERP", P, Q, g=g, variant="traj-dist") == pytest.approx(
        tdr.erp_compat_traj_dist(P, Q, e, g).distance, rel=1e-9)
    assert plane("ERP", P, Q, g=g) == pytest.approx(
        tdr.erp_standard(P, Q, e, g, use_full_matrix=True).distance, rel=1e-9)
    # sphere, at traj-dist's radius
    s = "spherical"
    kw = {"earth_radius_m": R_TD}
    assert td("DTW", P, Q, **kw) == pytest.approx(tdr.dtw(P, Q, s).distance, rel=1e-9)
    assert td("SSPD", P, Q, variant="traj-dist", **kw) == pytest.approx(
        tdr.sspd(P, Q, s), rel=1e-7)
    assert td("SegmentHausdorff", P, Q, **kw) == pytest.approx(tdr.hausdorff(P, Q, s), rel=1e-7)
    eps_m = 800.0
    assert td("LCSS", P, Q, eps_m=eps_m, **kw) == pytest.approx(
        tdr.lcss(P, Q, s, eps_m).distance)
    assert td("EDR", P, Q, eps_m=eps_m, variant="traj-dist", **kw) == pytest.approx(
        tdr.edr(P, Q, s, eps_m).distance)


@pytest.mark.parametrize(("n", "m", "seed"), CASES)
def test_against_tslearn_similaritymeasures_dtaidistance(n, m, seed):
    P, Q = random_pair(np.random.default_rng(seed), n, m)
    tsm = pytest.importorskip("tslearn.metrics")
    assert plane("DTW", P, Q, convention="rms") == pytest.approx(tsm.dtw(P, Q), rel=1e-9)
    assert plane("DiscreteFrechet", P, Q) == pytest.approx(tsm.frechet(P, Q), rel=1e-9)
    assert plane("LCSS", P, Q, eps_m=0.01) == pytest.approx(1 - tsm.lcss(P, Q, eps=0.01))
    sm = pytest.importorskip("similaritymeasures")
    assert plane("DTW", P, Q) == pytest.approx(sm.dtw(P, Q)[0], rel=1e-9)
    assert plane("DiscreteFrechet", P, Q) == pytest.approx(sm.frechet_dist(P, Q), rel=1e-9)
    dtai = pytest.importorskip("dtaidistance.dtw_ndim")
    assert plane("DTW", P, Q, convention="rms") == pytest.approx(dtai.distance(P, Q), rel=1e-9)


# -- properties ---------------------------------------------------------------------------------

coords = st.lists(st.tuples(st.floats(-5, 5), st.floats(-5, 5)), min_size=1, max_size=5)


@settings(max_examples=30, deadline=None)
@given(coords, coords, coords)
def test_metric_properties(a, b, c):
    for name, kw in (("Frechet", {}), ("DiscreteFrechet", {}), ("Hausdorff", {}),
                     ("ERP", {"g": [0.0, 0.0]})):
        ab, ba = plane(name, a, b, **kw), plane(name, b, a, **kw)
        assert ab == pytest.approx(ba, rel=1e-9, abs=1e-9)
        assert plane(name, a, a, **kw) == pytest.approx(0.0, abs=1e-9)
        bc, ac = plane(name, b, c, **kw), plane(name, a, c, **kw)
        assert ac <= ab + bc + 1e-7 * (1 + ac)
    assert plane("Frechet", a, b) <= plane("DiscreteFrechet", a, b) * (1 + 1e-10) + 1e-12


@settings(max_examples=15, deadline=None)
@given(coords, coords)
def test_sphere_properties(a, b):
    a = [(2.3 + x / 100, 48.8 + y / 100) for x, y in a]
    b = [(2.3 + x / 100, 48.8 + y / 100) for x, y in b]
    for name in ("Frechet", "DiscreteFrechet", "SSPD", "SegmentHausdorff", "OWD", "DTW"):
        assert td(name, a, b) == pytest.approx(td(name, b, a), rel=1e-9, abs=1e-6)
    assert td("Frechet", a, b) <= td("DiscreteFrechet", a, b) * (1 + 1e-9) + 1e-6
    assert td("SegmentHausdorff", a, b) <= td("Hausdorff", a, b) + 1e-6


def test_sphere_frechet_close_to_plane_at_small_scale():
    # near the equator over ~1 km, great-circle arcs ≈ straight lines in degrees × R·π/180
    rng = np.random.default_rng(3)
    P, Q = rng.normal(0, 0.003, (6, 2)), rng.normal(0, 0.003, (5, 2))
    scale = 6371008.8 * math.pi / 180
    assert td("Frechet", P, Q) == pytest.approx(plane("Frechet", P, Q) * scale, rel=2e-3)


def test_antimeridian_on_the_sphere():
    a, b = [[179.999, 0.0], [179.9995, 0.0]], [[-179.999, 0.0]]
    for name in ("DTW", "Frechet", "Hausdorff", "SSPD"):
        assert td(name, a, b) < 400  # DTW ≈ 222 + 167 m; not half the globe


# -- public functions and plugins ---------------------------------------------------------------

def sample_trajectories(seed, n, max_len=8):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, max_len + 1, n)
    offsets = np.r_[0, np.cumsum(lengths)]
    p = int(offsets[-1])
    lon = np.repeat(rng.uniform(2.2, 2.4, n), lengths) + rng.normal(0, 0.003, p)
    lat = np.repeat(rng.uniform(48.8, 48.9, n), lengths) + rng.normal(0, 0.003, p)
    t = np.arange(p) * 10
    return Trajectories(np.arange(n), np.arange(n), offsets, lon, lat, t)


NAMES = [("SSPD", {}), ("OWD", {}), ("SegmentHausdorff", {}), ("DiscreteFrechet", {}),
         ("Frechet", {}), ("LCSS", {"eps_m": 300}), ("EDR", {"eps_m": 300}),
         ("ERP", {"g": [2.3, 48.85]}), ("DTW", {"convention": "rms"}), ("Hausdorff", {})]


@pytest.mark.parametrize(("name", "params"), NAMES)
def test_matrix_matches_pairs_and_blocks(name, params):
    A, B = sample_trajectories(1, 13), sample_trajectories(2, 7)
    full = anoneval.trajectory_distances(name, A, B, **params)
    assert full.shape == (13, 7)
    np.testing.assert_allclose(anoneval.trajectory_distances(name, A, B, block_rows=3, **params),
                               full, rtol=1e-12)
    for i, j in [(0, 0), (5, 3), (12, 6)]:
        a = np.column_stack(A.points(i)[:2])
        b = np.column_stack(B.points(j)[:2])
        assert anoneval.trajectory_distance(name, a, b, **params) == pytest.approx(
            full[i, j], rel=1e-9, abs=1e-9)


@pytest.mark.parametrize(("name", "params"), NAMES)
def test_record_linkage_accepts_every_distance(name, params):
    A = sample_trajectories(4, 12)
    report = anoneval.evaluate(A, A, [{"name": "RecordLinkage", "params": {
        "distance": {"name": name, "params": params}, "exact": True}}])
    entry = report.measures[0]
    assert entry.error is None, entry.error
    assert entry.value == 1.0  # identical releases link every trajectory


def test_one_point_trajectories_are_defined():
    a, b = [[0, 0]], [[3, 4], [0, 0]]
    assert plane("Frechet", a, b) == 5.0
    assert plane("DiscreteFrechet", a, b) == 5.0
    assert plane("SSPD", a, b) == pytest.approx((0 + (5 + 0) / 2) / 2)
    assert plane("LCSS", a, b, eps_m=1) == 0.0


def test_bad_input():
    with pytest.raises(DataError, match="point 1"):
        td("DTW", [[0, 0], [np.nan, 1]], [[0, 0]])
    with pytest.raises(DataError, match="out of range"):
        td("DTW", [[0, 0], [200, 1]], [[0, 0]])
    assert plane("DTW", [[0, 0], [200, 1]], [[0, 0]]) > 0  # allowed on the plane
    with pytest.raises(DataError, match="needs timestamps"):
        td("LCSS", [[0, 0]], [[0, 0]], eps_m=10, delta_s=5)
    with pytest.raises(ConfigError):
        td("LCSS", [[0, 0]], [[0, 0]], eps_m=0)
    with pytest.raises(ConfigError):
        td("ERP", [[0, 0]], [[0, 0]])  # g is required
    with pytest.raises(DataError, match="no points"):
        td("DTW", np.empty((0, 2)), [[0, 0]])
    # a gap point far outside the data is allowed
    assert plane("ERP", [[0, 0]], [[1, 0]], g=[1e6, 1e6]) == 1.0


@pytest.mark.parametrize(("name", "params"), [*NAMES, ("SSPD", {"variant": "traj-dist"}),
                                              ("EDR", {"eps_m": 300, "variant": "traj-dist"}),
                                              ("ERP", {"g": [2.3, 48.85], "variant": "traj-dist"}),
                                              ("LCSS", {"eps_m": 300, "delta_s": 20})])
@pytest.mark.parametrize("space", ["sphere", "plane"])
def test_compiled_kernels_equal_the_numpy_kernels(name, params, space, monkeypatch):
    pytest.importorskip("numba", reason="the compiled kernels need the 'fast' extra (numba)")
    if space == "plane" and "eps_m" in params:
        params = {**params, "eps_m": 0.003}
    A, B = sample_trajectories(5, 11), sample_trajectories(6, 9)
    compiled = anoneval.trajectory_distances(name, A, B, space=space, **params)
    monkeypatch.setenv("ANONEVAL_JIT", "0")
    plain = anoneval.trajectory_distances(name, A, B, space=space, **params)
    np.testing.assert_allclose(compiled, plain, rtol=1e-9, atol=1e-9)


# -- the compiled exact Fréchet against the straightforward decision procedure ------------------

def _free(c, a, b, eps):
    """Free interval [lo, hi] ⊂ [0, 1] of point c on segment a→b at eps (the quadratic
    |a + t(b − a) − c|² ≤ eps² solved for t), None when empty."""
    d, f = b - a, a - c
    A, B, C = d @ d, 2 * (d @ f), f @ f - eps * eps
    if A == 0:
        return (0.0, 1.0) if C <= 0 else None
    disc = B * B - 4 * A * C
    if disc < 0:
        return None
    r = math.sqrt(disc)
    lo, hi = max((-B - r) / (2 * A), 0.0), min((-B + r) / (2 * A), 1.0)
    return (lo, hi) if lo <= hi else None


def _decide(P, Q, eps):
    """Alt & Godau's free-space reachability, cell by cell (plane)."""
    n, m = len(P), len(Q)
    if np.linalg.norm(P[0] - Q[0]) > eps or np.linalg.norm(P[-1] - Q[-1]) > eps:
        return False
    V = [[_free(P[i], Q[j], Q[j + 1], eps) for j in range(m - 1)] for i in range(n)]
    H = [[_free(Q[j], P[i], P[i + 1], eps) for j in range(m)] for i in range(n - 1)]
    RV = [[None] * (m - 1) for _ in range(n)]
    RH = [[None] * m for _ in range(n - 1)]
    for j in range(m - 1):  # up the left side while the free edges chain from the start
        if V[0][j] is None or V[0][j][0] > 0 or (j and (RV[0][j - 1] is None
                                                        or RV[0][j - 1][1] < 1)):
            break
        RV[0][j] = V[0][j]
    for i in range(n - 1):
        if H[i][0] is None or H[i][0][0] > 0 or (i and (RH[i - 1][0] is None
                                                        or RH[i - 1][0][1] < 1)):
            break
        RH[i][0] = H[i][0]
    for i in range(n - 1):
        for j in range(m - 1):
            left, bottom = RV[i][j], RH[i][j]
            right, top = V[i + 1][j], H[i][j + 1]
            if right is not None and (bottom is not None or left is not None):
                lo = right[0] if bottom is not None else max(left[0], right[0])
                RV[i + 1][j] = (lo, right[1]) if lo <= right[1] else None
            if top is not None and (left is not None or bottom is not None):
                lo = top[0] if left is not None else max(bottom[0], top[0])
                RH[i][j + 1] = (lo, top[1]) if lo <= top[1] else None
    end_v, end_h = RV[n - 1][m - 2], RH[n - 2][m - 1]
    return (end_v is not None and end_v[1] == 1.0) or (end_h is not None and end_h[1] == 1.0)


def _bisectors(P, Q):
    """Type-(c) critical values: d(P[u], x) for x on a segment of Q equidistant from P[u], P[v]."""
    out = []
    for k in range(len(Q) - 1):
        a, d = Q[k], Q[k + 1] - Q[k]
        for u, v in itertools.combinations(range(len(P)), 2):
            nrm = P[u] - P[v]
            den = d @ nrm
            if den != 0:
                t = ((P[u] + P[v]) / 2 - a) @ nrm / den
                if 0 <= t <= 1:
                    out.append(float(np.linalg.norm(P[u] - (a + t * d))))
    return out


def frechet_reference(P, Q):
    """The smallest critical value (all three kinds) at which the decision succeeds."""
    P, Q = np.asarray(P, float), np.asarray(Q, float)
    if len(P) == 1 or len(Q) == 1:
        return max(float(np.linalg.norm(p - q)) for p in P for q in Q)
    crit = {float(np.linalg.norm(P[0] - Q[0])), float(np.linalg.norm(P[-1] - Q[-1]))}
    crit |= {dseg(p, Q[k], Q[k + 1]) for p in P for k in range(len(Q) - 1)}
    crit |= {dseg(q, P[k], P[k + 1]) for q in Q for k in range(len(P) - 1)}
    crit |= set(_bisectors(P, Q)) | set(_bisectors(Q, P))
    return next(c for c in sorted(crit) if _decide(P, Q, c * (1 + 1e-10)))


def overlapping_trajectories(seed, n, lon0=2.3, lat0=48.85, spread=0.002):
    """Trajectories of 1–7 points around one place (so that continuous and discrete Fréchet
    differ and the decision and the searches run), with repeated points."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 8, n)
    lengths[:2] = 1, 2
    offsets = np.r_[0, np.cumsum(lengths)]
    p = int(offsets[-1])
    lon = lon0 + rng.normal(0, spread / max(math.cos(math.radians(lat0)), 1e-3), p)
    lat = lat0 + rng.normal(0, spread, p)
    rep = rng.random(p) < 0.15  # repeat the previous point (zero-length segments)
    rep[offsets[:-1]] = False
    for k in np.flatnonzero(rep):
        lon[k], lat[k] = lon[k - 1], lat[k - 1]
    lon = (lon + 180) % 360 - 180
    return Trajectories(np.arange(n), np.arange(n), offsets, lon, lat, np.arange(p) * 10)


def test_compiled_frechet_equals_the_straightforward_procedure_on_the_plane():
    pytest.importorskip("numba", reason="the compiled kernels need the 'fast' extra (numba)")
    hand = [[0, 0], [10, 0]], [[0, 1], [8, 1], [2, 1], [10, 1]]  # the reference's hand case
    assert frechet_reference(*hand) == pytest.approx(math.sqrt(10), rel=1e-12)
    A, B = overlapping_trajectories(1, 14), overlapping_trajectories(2, 14)
    got = anoneval.trajectory_distances("Frechet", A, B, space="plane")
    discrete = anoneval.trajectory_distances("DiscreteFrechet", A, B, space="plane")
    want = np.array([[frechet_reference(np.column_stack(A.points(i)[:2]),
                                        np.column_stack(B.points(j)[:2]))
                      for j in range(len(B))] for i in range(len(A))])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)
    assert (got < discrete * (1 - 1e-6)).sum() >= 10  # the decisions and searches did run


@pytest.mark.parametrize(("lon0", "lat0"), [(2.3, 48.85), (180.0, -20.0), (-60.0, 89.9)])
def test_compiled_frechet_equals_the_numpy_kernel_on_the_sphere(lon0, lat0, monkeypatch):
    """Random overlapping pairs (one-point trajectories, repeated points; across the
    antimeridian, near the pole) against the numpy kernel, which searches all the sorted
    critical values."""
    pytest.importorskip("numba", reason="the compiled kernels need the 'fast' extra (numba)")
    A = overlapping_trajectories(3, 14, lon0, lat0)
    B = overlapping_trajectories(4, 14, lon0, lat0)
    if lon0 == 180.0:
        assert (A.lon > 179).any() and (A.lon < -179).any()
    got = anoneval.trajectory_distances("Frechet", A, B)
    discrete = anoneval.trajectory_distances("DiscreteFrechet", A, B)
    monkeypatch.setenv("ANONEVAL_JIT", "0")
    want = anoneval.trajectory_distances("Frechet", A, B)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)
    assert (got < discrete * (1 - 1e-6)).sum() >= 10
    assert got.max() < 2_000  # metres: no pair went round the globe
