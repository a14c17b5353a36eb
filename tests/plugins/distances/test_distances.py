"""Trajectory distances (Martinez2021, DTW, Hausdorff) and microdata distances
(Euclidean, Mahalanobis, Gower), each against values worked out independently."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import mahalanobis as scipy_mahalanobis

from anoneval.core import load
from anoneval.core.api import Context, DataError, Microdata, Trajectories
from anoneval.plugins.distances.dtw import DTW
from anoneval.plugins.distances.euclidean import Euclidean
from anoneval.plugins.distances.gower import Gower
from anoneval.plugins.distances.hausdorff import Hausdorff
from anoneval.plugins.distances.mahalanobis import Mahalanobis
from anoneval.plugins.distances.martinez2021 import Martinez2021, aligned_indices, sample_size

REL = 1e-9
R_KM = 6371.0088  # mean Earth radius of the `haversine` package


# -- independent, per-pair pure-Python oracles (math module, loops; written from the spec) --------

def hav_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, l1, p2, l2 = map(math.radians, (lat1, lon1, lat2, lon2))
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin((l2 - l1) / 2) ** 2
    return 2 * R_KM * math.asin(math.sqrt(a))


def traj_points(data: Trajectories, i: int) -> list[tuple[int, float, float]]:
    lon, lat, t = data.points(i)
    return [(int(a), float(b), float(c)) for a, b, c in zip(t, lon, lat, strict=True)]


def speed_kmh(pts: list[tuple[int, float, float]]) -> float:
    if len(pts) < 2:
        return 0.0
    total = 0.0
    for (t1, x1, y1), (t2, x2, y2) in itertools.pairwise(pts):
        if t2 != t1:
            total += hav_km(y1, x1, y2, x2) / abs(t2 - t1)
    return total / (len(pts) - 1) * 3600


def walk(n1: int, n2: int) -> list[tuple[int, int]]:
    """Upstream's index stepping: running sums rounded half-to-even, clamped."""
    h = round((n1 + n2) / 2)
    a = b = 0.0
    out = []
    for _ in range(h):
        out.append((min(round(a), n1 - 1), min(round(b), n2 - 1)))
        a += n1 / h
        b += n2 / h
    return out


def martinez_naive(p1: list, p2: list, lam: float) -> float:
    v = (speed_kmh(p1) + speed_kmh(p2)) / 2 / 3.6
    total = 0.0
    steps = walk(len(p1), len(p2))
    for i, j in steps:
        (t1, x1, y1), (t2, x2, y2) = p1[i], p2[j]
        total += (hav_km(y1, x1, y2, x2) * 1000 + lam * abs(t1 - t2) * v) ** 2
    return math.sqrt(total / len(steps))


def lambda_naive(trajs: list[list]) -> tuple[float, float]:
    sp_all, tp_all = [], []
    for p1 in trajs:
        for p2 in trajs:
            v = (speed_kmh(p1) + speed_kmh(p2)) / 2
            steps = walk(len(p1), len(p2))
            sp = sum(hav_km(p1[i][2], p1[i][1], p2[j][2], p2[j][1]) ** 2 for i, j in steps)
            tp = sum((abs(p1[i][0] - p2[j][0]) * v) ** 2 for i, j in steps)
            sp_all.append(1000 * math.sqrt(sp / len(steps)))
            tp_all.append(math.sqrt(tp / len(steps)))
    lam = (sum(sp_all) / len(sp_all)) / (sum(tp_all) / len(tp_all))
    return lam, max(sp_all) + lam * max(tp_all)


def dtw_naive(p1: list, p2: list) -> float:
    n, m = len(p1), len(p2)
    acc = [[math.inf] * (m + 1) for _ in range(n + 1)]
    acc[0][0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            c = 1000 * hav_km(p1[i - 1][2], p1[i - 1][1], p2[j - 1][2], p2[j - 1][1])
            acc[i][j] = c + min(acc[i - 1][j - 1], acc[i - 1][j], acc[i][j - 1])
    return acc[n][m]


def hausdorff_naive(p1: list, p2: list) -> float:
    def d(a: tuple, b: tuple) -> float:
        return 1000 * hav_km(a[2], a[1], b[2], b[1])

    return max(max(min(d(a, b) for b in p2) for a in p1),
               max(min(d(a, b) for a in p1) for b in p2))


def random_trajectories(seed: int, n: int, max_len: int = 9, zero_dt: bool = False
                        ) -> Trajectories:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, max_len + 1, n)
    offsets = np.r_[0, np.cumsum(lengths)]
    p = int(offsets[-1])
    lon = np.repeat(rng.uniform(2.0, 2.2, n), lengths) + rng.normal(0, 0.003, p)
    lat = np.repeat(rng.uniform(41.3, 41.5, n), lengths) + rng.normal(0, 0.003, p)
    steps = rng.integers(0 if zero_dt else 1, 300, p)
    t = np.repeat(rng.integers(1_600_000_000, 1_600_050_000, n), lengths) + (
        np.cumsum(steps) - np.repeat(np.cumsum(steps)[offsets[:-1]], lengths))
    return Trajectories(np.arange(n) + 1, np.arange(n) + 1, offsets, lon, lat, t)


@pytest.fixture(scope="module")
def mock(data_dir) -> Trajectories:
    return load(data_dir / "mobility" / "mock_dataset.csv", "trajectories")


def pos(data: Trajectories, *ids: int) -> list[int]:
    return [int(p) for p in data.index_of(list(ids))]


# -- Martinez2021: upstream's own test values -------------------------------------------------

def test_upstream_lambda_and_default_distance(mock):
    d = Martinez2021().fit(mock, Context())
    assert d.p_lambda == pytest.approx(0.16222117161739122, rel=REL)
    assert d.max_dist == pytest.approx(19865.579457036005, rel=REL)
    i, j = pos(mock, 1, 2)
    assert d.pairwise(mock, mock, [i], [j])[0, 0] == pytest.approx(937.0414983342348, rel=REL)


def test_upstream_given_lambda(mock):
    d = Martinez2021(p_lambda=0.16).fit(mock, Context())
    i, j = pos(mock, 3, 4)
    assert d.paired(mock, mock, [i], [j])[0] == pytest.approx(2168.2984763410896, rel=REL)


def test_upstream_normalized(mock):
    i, j = pos(mock, 1, 2)
    d = Martinez2021(normalized=True).fit(mock, Context())
    assert d.pairwise(mock, mock, [i], [j])[0, 0] == pytest.approx(0.04716909971646222, rel=REL)
    d = Martinez2021(p_lambda=0.16, max_dist=19865, normalized=True).fit(mock, Context())
    assert d.pairwise(mock, mock, [i], [j])[0, 0] == pytest.approx(0.047126622056823324,
                                                                   rel=REL)


def test_reference_note_values(mock):
    # λ = 0 (spatial part only) and the speeds of T1, T2
    i, j = pos(mock, 1, 2)
    d = Martinez2021(p_lambda=0.0).fit(mock, Context())
    assert d.pairwise(mock, mock, [i], [j])[0, 0] == pytest.approx(874.5103076333572, rel=REL)
    assert speed_kmh(traj_points(mock, i)) == pytest.approx(4.8636, abs=1e-4)
    assert speed_kmh(traj_points(mock, j)) == pytest.approx(6.9700, abs=1e-4)


def test_given_lambda_normalized_uses_bounding_box(mock):
    # upstream: half the longer bbox diagonal + λ · mean speed (m/s) · half the time span
    lon0, lon1, lat0, lat1 = mock.lon.min(), mock.lon.max(), mock.lat.min(), mock.lat.max()
    diag = max(hav_km(lat0, lon0, lat1, lon1), hav_km(lat0, lon1, lat1, lon0)) * 1000
    v = np.mean([speed_kmh(traj_points(mock, k)) for k in range(len(mock))]) / 3.6
    assert v == pytest.approx(1.2443998, rel=1e-6)
    expected = diag / 2 + 0.16 * v * (1669058195 - 1669043011) / 2
    d = Martinez2021(p_lambda=0.16, normalized=True).fit(mock, Context())
    assert d.max_dist == pytest.approx(expected, rel=REL)


def test_consistent_units_scale_lambda_by_3_6(mock):
    # fitting with m/s divides every Tp by 3.6, so λ grows by 3.6 and max_dist is unchanged
    up = Martinez2021().fit(mock, Context())
    fixed = Martinez2021(lambda_units="consistent").fit(mock, Context())
    assert fixed.p_lambda == pytest.approx(3.6 * up.p_lambda, rel=1e-12)
    assert fixed.max_dist == pytest.approx(up.max_dist, rel=1e-12)


def test_chord_form_differs_from_haversine_by_nanometres():
    # the documented bound of chord_haversine: < 2e-9 m absolute at any distance, hence the
    # 1e-9 relative agreement of Martinez2021 above ~2 m (oracle: hav_km, the haversine formula)
    rng = np.random.default_rng(12)
    lat = rng.uniform(-60, 60, 400)
    lon = rng.uniform(-170, 170, 400)
    dist_m = 10.0 ** rng.uniform(-2, 5, 400)
    bearing = rng.uniform(0, 2 * math.pi, 400)
    lat2 = lat + np.degrees(dist_m / (R_KM * 1000) * np.sin(bearing))
    lon2 = lon + np.degrees(dist_m / (R_KM * 1000) * np.cos(bearing) / np.cos(np.radians(lat)))
    n = len(lat)
    pts = Trajectories(np.arange(2 * n), np.arange(2 * n), np.arange(2 * n + 1),
                       np.r_[lon, lon2], np.r_[lat, lat2], np.zeros(2 * n, np.int64))
    d = Martinez2021(p_lambda=0.0).fit(pts, Context()).paired(
        pts, pts, np.arange(n), np.arange(n) + n)  # one point each: D = the point distance
    want = np.array([1000 * hav_km(a, b, c, e) for a, b, c, e in zip(lat, lon, lat2, lon2,
                                                                     strict=True)])
    assert np.abs(d - want).max() < 2e-9
    big = want > 2
    assert (np.abs(d - want)[big] / want[big]).max() < 1e-9


def test_aligned_indices_examples():
    # worked examples of the reference notes (half-to-even rounding of running sums)
    i, j = aligned_indices(8, 7)
    assert i.tolist() == list(range(8)) and j.tolist() == [0, 1, 2, 3, 4, 4, 5, 6]
    i, j = aligned_indices(7, 12)
    assert i.tolist() == [0, 1, 1, 2, 3, 4, 4, 5, 6, 6]
    assert j.tolist() == [0, 1, 2, 4, 5, 6, 7, 8, 10, 11]
    assert aligned_indices(1, 10)[1].tolist() == [0, 2, 3, 5, 7, 8]
    for n1 in range(1, 60):
        for n2 in range(1, 60):
            a, b = aligned_indices(n1, n2)
            assert list(zip(a.tolist(), b.tolist(), strict=True)) == walk(n1, n2)


def test_matches_naive_loops_on_random_data():
    data = random_trajectories(3, 25, zero_dt=True)
    pts = [traj_points(data, k) for k in range(len(data))]
    lam, max_dist = lambda_naive(pts)
    d = Martinez2021().fit(data, Context())
    assert d.p_lambda == pytest.approx(lam, rel=REL)
    assert d.max_dist == pytest.approx(max_dist, rel=REL)
    got = d.pairwise(data, data)
    want = np.array([[martinez_naive(a, b, lam) for b in pts] for a in pts])
    np.testing.assert_allclose(got, want, rtol=REL, atol=1e-9)
    xi = np.array([0, 3, 7, 7, 24])
    yi = np.array([5, 3, 1, 20, 0])
    np.testing.assert_allclose(d.paired(data, data, xi, yi), want[xi, yi], rtol=REL, atol=1e-9)


def test_euclidean_sp_type_uses_degrees():
    data = random_trajectories(4, 6)
    d = Martinez2021(p_lambda=0.0, sp_type="Euclidean").fit(data, Context())
    lon0, lat0, _ = data.points(0)
    lon1, lat1, _ = data.points(1)
    steps = walk(len(lon0), len(lon1))
    want = math.sqrt(sum((1000 * math.hypot(lon0[i] - lon1[j], lat0[i] - lat1[j])) ** 2
                         for i, j in steps) / len(steps))
    assert d.pairwise(data, data, [0], [1])[0, 0] == pytest.approx(want, rel=REL)


def test_lambda_needs_time_differences():
    data = random_trajectories(5, 4)
    frozen = Trajectories(data.trajectory_id, data.user_id, data.offsets, data.lon, data.lat,
                          np.full(data.n_points, 1_600_000_000))
    with pytest.raises(DataError, match="p_lambda"):
        Martinez2021().fit(frozen, Context())
    d = Martinez2021(p_lambda=0.1).fit(frozen, Context())  # given λ: fine
    assert np.isfinite(d.pairwise(frozen, frozen)).all()


def test_one_point_trajectories_have_speed_zero():
    one = Trajectories(np.array([1, 2]), np.array([1, 2]), np.array([0, 1, 3]),
                       np.array([2.0, 2.001, 2.002]), np.array([41.0, 41.0, 41.001]),
                       np.array([100, 100, 160]))
    d = Martinez2021(p_lambda=0.5).fit(one, Context())
    got = d.pairwise(one, one)
    p = [traj_points(one, 0), traj_points(one, 1)]
    assert got[0, 1] == pytest.approx(martinez_naive(p[0], p[1], 0.5), rel=REL)
    assert got[0, 0] == 0.0


def test_large_data_lambda_uses_seeded_sample(monkeypatch):
    import anoneval.plugins.distances.martinez2021 as mod

    data = random_trajectories(6, 40, max_len=4)
    monkeypatch.setattr(mod, "SAMPLE_ABOVE", 30)
    monkeypatch.setattr(mod, "sample_size", lambda n: 12)
    a = Martinez2021().fit(data, Context(seed=1))
    b = Martinez2021().fit(data, Context(seed=1))
    c = Martinez2021().fit(data, Context(seed=2))
    assert a.lambda_sample == 12 and a.p_lambda == b.p_lambda != c.p_lambda
    # n0 = 2.576²·0.25/0.03² = 1843.27; ⌊n0/(1 + n0/N)⌋: N = 10⁶ → 1839.88, N = 2·10⁴ → 1687.7
    assert sample_size(1_000_000) == 1839 and sample_size(20_000) == 1687


def test_unfitted_lambda_is_an_error(mock):
    with pytest.raises(RuntimeError, match="fitted"):
        Martinez2021().pairwise(mock, mock, [0], [1])


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_martinez_invariants(seed):
    data = random_trajectories(seed, 7, max_len=6)
    m = Martinez2021(p_lambda=0.2).fit(data, Context()).pairwise(data, data)
    assert (m >= 0).all() and np.allclose(np.diag(m), 0)
    np.testing.assert_allclose(m, m.T, rtol=1e-12)
    # row order of the inputs does not matter
    perm = np.random.default_rng(seed).permutation(len(data))
    sub = data.subset(perm)
    d2 = Martinez2021(p_lambda=0.2).fit(sub, Context()).pairwise(sub, sub)
    np.testing.assert_allclose(d2, m[np.ix_(perm, perm)], rtol=1e-12)


# -- DTW and Hausdorff ------------------------------------------------------------------------

@pytest.mark.parametrize(("cls", "naive"), [(DTW, dtw_naive), (Hausdorff, hausdorff_naive)])
def test_spatial_baselines_match_brute_force(cls, naive):
    data = random_trajectories(7, 14, max_len=8)
    other = random_trajectories(8, 9, max_len=11)
    pa = [traj_points(data, k) for k in range(len(data))]
    pb = [traj_points(other, k) for k in range(len(other))]
    want = np.array([[naive(a, b) for b in pb] for a in pa])
    np.testing.assert_allclose(cls().pairwise(data, other), want, rtol=1e-10)
    xi, yi = np.array([0, 5, 13, 2]), np.array([8, 0, 3, 3])
    np.testing.assert_allclose(cls().paired(data, other, xi, yi), want[xi, yi], rtol=1e-10)


def test_spatial_baselines_agree_with_traj_dist(mock):
    # traj-dist 1.15 (spherical, R = 6378137 m) on mock T1, T2 (reference notes §A9)
    i, j = pos(mock, 1, 2)
    scale = 6378137 / (R_KM * 1000)
    assert DTW().pairwise(mock, mock, [i], [j])[0, 0] * scale == pytest.approx(5138.8489,
                                                                               rel=1e-7)
    assert Hausdorff().pairwise(mock, mock, [i], [j])[0, 0] * scale == pytest.approx(
        982.19917, rel=1e-7)


def test_hausdorff_hand_example():
    # two points 0.001° apart in latitude vs one point: H = the farther one = 2·0.001° arc
    a = Trajectories(np.array([1, 2]), np.array([1, 2]), np.array([0, 2, 3]),
                     np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.001, -0.001]),
                     np.array([0, 1, 0]))
    arc = 2 * math.pi * R_KM * 1000 * 0.002 / 360
    assert Hausdorff().pairwise(a, a, [0], [1])[0, 0] == pytest.approx(arc, rel=1e-9)
    # DTW: both points of trajectory 1 are matched to the single point: 0.001° + 0.002° arcs
    assert DTW().pairwise(a, a, [0], [1])[0, 0] == pytest.approx(1.5 * arc, rel=1e-9)


# -- microdata distances ------------------------------------------------------------------------

@pytest.fixture
def numeric_pair() -> tuple[Microdata, Microdata]:
    rng = np.random.default_rng(0)
    x = pd.DataFrame(rng.normal(size=(30, 3)) * [1, 10, 100], columns=["a", "b", "c"])
    x["c"] += 0.5 * x["a"] * 100
    x["label"] = rng.choice(["u", "v"], 30)
    y = x.copy()
    y[["a", "b", "c"]] += rng.normal(size=(30, 3))
    return Microdata(x), Microdata(y)


def test_euclidean_standardizes_with_original_std(numeric_pair):
    x, y = numeric_pair
    d = Euclidean().fit(x, Context())
    assert d.columns_ == ["a", "b", "c"]
    s = x.frame[["a", "b", "c"]].std(ddof=1).to_numpy()
    xa, ya = x.frame[["a", "b", "c"]].to_numpy(), y.frame[["a", "b", "c"]].to_numpy()
    want = np.array([[math.sqrt(sum(((p - q) / sk) ** 2 for p, q, sk in zip(r1, r2, s,
                                                                               strict=True)))
                      for r2 in ya] for r1 in xa])
    np.testing.assert_allclose(d.pairwise(x, y), want, rtol=1e-12)
    rng = Euclidean(standardize="range", columns=["b"]).fit(x, Context())
    b = x.frame["b"].to_numpy()
    assert rng.pairwise(x, x, [0], [1])[0, 0] == pytest.approx(abs(b[0] - b[1]) / np.ptp(b))


def test_mahalanobis_matches_scipy(numeric_pair):
    x, y = numeric_pair
    cols = ["a", "b", "c"]
    vi = np.linalg.inv(np.cov(x.frame[cols].to_numpy(), rowvar=False))
    d = Mahalanobis().fit(x, Context()).pairwise(x, y, [0, 4, 9], [1, 2])
    for r, i in enumerate([0, 4, 9]):
        for c, j in enumerate([1, 2]):
            want = scipy_mahalanobis(x.frame[cols].iloc[i], y.frame[cols].iloc[j], vi)
            assert d[r, c] == pytest.approx(want, rel=1e-9)


def test_mahalanobis_singular_covariance_uses_pseudo_inverse():
    x = pd.DataFrame({"a": [1.0, 2.0, 4.0, 7.0], "b": [2.0, 4.0, 8.0, 14.0]})  # b = 2a
    d = Mahalanobis().fit(Microdata(x), Context())
    assert d.rank_ == 1
    # one direction left: (a, 2a)/√5, variance 5·var(a) = 5·7 → d = |Δa|·√5 / √(5·7)
    assert d.pairwise(Microdata(x), Microdata(x), [0], [3])[0, 0] == pytest.approx(
        6 / math.sqrt(7), rel=1e-9)


def test_numeric_distances_reject_text_and_missing(numeric_pair):
    x, _ = numeric_pair
    with pytest.raises(DataError, match="'label'"):
        Euclidean(columns=["a", "label"]).fit(x, Context())
    holes = Microdata(x.frame.assign(b=[np.nan, *list(x.frame["b"][1:])]))
    with pytest.raises(DataError, match=r"column 'b'.*data row 1 \(1-based"):
        Mahalanobis().fit(holes, Context())
    with pytest.raises(DataError, match="'zzz'"):
        Euclidean(columns=["zzz"]).fit(x, Context())


def test_gower_hand_worked_mixed_example():
    frame = pd.DataFrame({
        "age": [20.0, 30.0, 60.0, np.nan],
        "sex": ["m", "f", "m", "f"],
        "edu": pd.Categorical(["low", "high", "mid", "low"], categories=["low", "mid", "high"],
                              ordered=True),
        "smoker": [True, False, False, True],
    })
    data = Microdata(frame)
    d = Gower(ordinal=["edu"], weights={"smoker": 2.0}).fit(data, Context())
    got = d.pairwise(data, data)
    # age range 40; edu ranks low 0, mid 1, high 2 over M − 1 = 2; smoker weight 2
    # (0,1): age 10/40 = .25, sex 1, edu 2/2 = 1, smoker 1·2 → (.25+1+1+2)/5 = .85
    assert got[0, 1] == pytest.approx(0.85)
    # (0,2): age 40/40 = 1, sex 0, edu 1/2, smoker 1·2 → (1+0+.5+2)/5 = .7
    assert got[0, 2] == pytest.approx(0.7)
    # (0,3): age missing → skipped; sex 1, edu 0, smoker 0 → 1/4 = .25
    assert got[0, 3] == pytest.approx(0.25)
    # (2,3): sex 1, edu 1/2, smoker 2 → 3.5/4 = .875
    assert got[2, 3] == pytest.approx(0.875)
    np.testing.assert_allclose(got, got.T)
    assert np.all(np.diag(got) == 0)


def test_gower_levels_order_text_ordinals():
    # text read from a file has no order: levels gives it. edu ranks low 0, mid 1, high 2 (M − 1
    # = 2); v range 2. (0,1): edu |0 − 2|/2 = 1, v 1/2 → (1 + .5)/2 = .75;
    # (1,2): |2 − 1|/2 = .5, v .5 → .5. Alphabetical default (high 0, low 1, mid 2):
    # (0,1): |1 − 0|/2 = .5, v .5 → .5; (1,2): |0 − 2|/2 = 1 → .75
    x = Microdata(pd.DataFrame({"edu": ["low", "high", "mid"], "v": [0.0, 1.0, 2.0]}))
    got = Gower(levels={"edu": ["low", "mid", "high"]}).fit(x, Context()).pairwise(x, x)
    assert (got[0, 1], got[1, 2], got[0, 2]) == pytest.approx((0.75, 0.5, 0.75))
    alpha = Gower(ordinal=["edu"]).fit(x, Context()).pairwise(x, x)
    assert (alpha[0, 1], alpha[1, 2]) == pytest.approx((0.5, 0.75))
    with pytest.raises(DataError, match=r"'high'.*not one of its levels \['low', 'mid'\]"):
        Gower(levels={"edu": ["low", "mid"]}).fit(x, Context()).pairwise(x, x)
    with pytest.raises(DataError, match="distinct"):
        Gower(levels={"edu": ["low", "low"]}).fit(x, Context())
    with pytest.raises(DataError, match="levels names 'ed'"):
        Gower(levels={"ed": ["a"]}).fit(x, Context())
    with pytest.raises(DataError, match="both categorical and ordinal"):
        Gower(categorical=["edu"], levels={"edu": ["low", "mid", "high"]}).fit(x, Context())


def test_gower_categorical_codes_and_errors():
    x = Microdata(pd.DataFrame({"zip": [1000, 2000, 3000], "v": [0.0, 1.0, 2.0]}))
    d = Gower(categorical=["zip"]).fit(x, Context())
    # zip compared as a category: 1000 vs 3000 → 1; v: 2/2 = 1 → 1; 1000 vs 2000: (1 + .5)/2
    assert d.pairwise(x, x, [0], [1, 2]).tolist() == [[0.75, 1.0]]
    with pytest.raises(DataError, match="'nope'"):
        Gower(ordinal=["nope"]).fit(x, Context())
    y = Microdata(pd.DataFrame({"edu": ["a", "b"]}))
    g = Gower(ordinal=["edu"]).fit(y, Context())
    with pytest.raises(DataError, match=r"'c'.*levels"):
        g.pairwise(y, Microdata(pd.DataFrame({"edu": ["c"]})))


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.tuples(st.floats(-1e3, 1e3), st.sampled_from("xyz")), min_size=2,
                       max_size=12))
def test_gower_bounds_and_symmetry(values):
    frame = pd.DataFrame(values, columns=["num", "cat"])
    data = Microdata(frame)
    got = Gower().fit(data, Context()).pairwise(data, data)
    assert ((got >= 0) & (got <= 1 + 1e-12)).all()
    np.testing.assert_allclose(got, got.T)
    assert np.allclose(np.diag(got), 0)
