"""Trajectory loading, RecordLinkage, TrajectoryRMSE and TrajectoriesRemoved."""

from __future__ import annotations

import itertools
import json
import math
from bisect import bisect_left

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import Evaluator, evaluate, load
from anoneval.core.api import ConfigError, DataError, Microdata, Trajectories
from anoneval.core.cli.main import main
from anoneval.core.run.config import validate_params
from anoneval.plugins.linkage.record_linkage import RecordLinkage, window_bounds
from anoneval.registry import default_registry

R_KM = 6371.0088


@pytest.fixture(scope="module")
def mobility(data_dir):
    return data_dir / "mobility"


@pytest.fixture(scope="module")
def mock(mobility) -> Trajectories:
    return load(mobility / "mock_dataset.csv", "trajectories")


@pytest.fixture(scope="module")
def anon(mobility) -> Trajectories:
    return load(mobility / "mock_dataset_anonymized.csv", "trajectories")


def run(original, anonymized, name, params=None, **kw):
    report = evaluate(original, anonymized, [{"name": name, "params": params or {}}], **kw)
    entry = report.measures[0]
    assert entry.error is None, entry.error
    return entry


# -- loader -------------------------------------------------------------------------------------

def test_mock_files_load_as_upstream(mock, anon):
    assert (len(mock), mock.n_points, len(anon), anon.n_points) == (46, 383, 46, 387)
    assert (mock.t.min(), mock.t.max(), mock.lengths.max()) == (1669043011, 1669058195, 28)
    assert mock.trajectory_id.tolist() == list(range(1, 47))
    for i in range(len(mock)):
        assert np.all(np.diff(mock.points(i)[2]) >= 0)


def test_cabs_file_starts_with_lat(mobility):
    cabs = load(mobility / "cabs_dataset_20080608_0700_0715.csv", "trajectories")
    raw = pd.read_csv(mobility / "cabs_dataset_20080608_0700_0715.csv")
    assert raw.columns[0] == "lat" and len(cabs) == raw["trajectory_id"].nunique()
    assert cabs.n_points == len(raw) and cabs.dropped_points == 0
    first = raw[raw["trajectory_id"] == cabs.trajectory_id[0]]
    lon, lat, _ = cabs.points(0)
    assert sorted(lon) == sorted(first["lon"]) and sorted(lat) == sorted(first["lat"])


def test_cabs_counts_and_upstreams_371(mobility):
    """The raw file holds 643 trajectories (ids 1..643) of 382 cabs, 3,814 points. The "371
    trajectories" of the issue (and of upstream's README: "371 trajectories and 3120
    locations") count what upstream's example scripts keep: ``min_locations=5`` and
    ``filter_by_speed()`` (drops a trajectory with a step over 300 km/h or a step with Δt = 0),
    recomputed here with plain loops."""
    cabs = load(mobility / "cabs_dataset_20080608_0700_0715.csv", "trajectories")
    assert (len(cabs), len(set(cabs.user_id.tolist())), cabs.n_points) == (643, 382, 3814)
    assert cabs.trajectory_id.tolist() == list(range(1, 644))
    kept = points = 0
    for k in range(len(cabs)):
        p = _pts(cabs, k)
        if len(p) < 5:
            continue
        if any(b[0] == a[0] or _hav_km(a[2], a[1], b[2], b[1]) / (b[0] - a[0]) * 3600 > 300
               for a, b in itertools.pairwise(p)):
            continue
        kept, points = kept + 1, points + len(p)
    assert (kept, points) == (371, 3120)


def test_shuffled_rows_and_columns_give_the_same_data(mobility, mock, tmp_path):
    raw = pd.read_csv(mobility / "mock_dataset.csv")
    shuffled = raw.sample(frac=1, random_state=3)[["lat", "timestamp", "lon", "user_id",
                                                    "trajectory_id"]]
    assert shuffled["trajectory_id"].iloc[0] != 1  # upstream would add an empty trajectory
    path = tmp_path / "shuffled.csv"
    shuffled.to_csv(path, index=False)
    again = load(path, "trajectories")
    assert again.content_hash() == mock.content_hash()
    assert again.lengths.min() >= 1 and len(again) == 46


def test_renamed_columns_and_timestamp_format(mobility, mock, tmp_path):
    raw = pd.read_csv(mobility / "mock_dataset.csv")
    stamp = pd.to_datetime(raw["timestamp"], format="%Y/%m/%d %H:%M:%S")
    renamed = pd.DataFrame({"who": raw["user_id"], "trip": raw["trajectory_id"],
                            "when": stamp.dt.strftime("%d.%m.%Y %H:%M:%S"),
                            "x": raw["lon"], "y": raw["lat"]})
    path = tmp_path / "renamed.csv"
    renamed.to_csv(path, index=False)
    opts = {"columns": {"user_id": "who", "trajectory_id": "trip", "timestamp": "when",
                        "lon": "x", "lat": "y"}, "timestamp_format": "%d.%m.%Y %H:%M:%S"}
    assert load(path, "trajectories", options=opts).content_hash() == mock.content_hash()
    epoch = renamed.assign(when=mock.to_frame(None)["timestamp"].to_numpy()[
        np.argsort(np.lexsort((stamp.to_numpy(), raw["trajectory_id"])), kind="stable")])
    epoch.to_csv(path, index=False)
    opts["timestamp_format"] = "epoch"
    assert load(path, "trajectories", options=opts).content_hash() == mock.content_hash()


def test_parquet_with_string_or_datetime_timestamps(mobility, mock, tmp_path):
    raw = pd.read_csv(mobility / "mock_dataset.csv")
    raw.to_parquet(tmp_path / "mock.parquet")
    assert load(tmp_path / "mock.parquet", "trajectories").content_hash() == mock.content_hash()
    typed = raw.assign(timestamp=pd.to_datetime(raw["timestamp"], format="%Y/%m/%d %H:%M:%S"))
    typed.to_parquet(tmp_path / "typed.parquet")
    assert load(tmp_path / "typed.parquet", "trajectories").content_hash() == mock.content_hash()


def test_unknown_column_role_is_an_error(mobility):
    raw = pd.read_csv(mobility / "mock_dataset.csv")
    with pytest.raises(DataError, match=r"unknown trajectory column roles \['latitude'\]"):
        Trajectories.from_frame(raw, columns={"latitude": "lat"})


def test_missing_column_lists_what_was_found(mobility):
    raw = pd.read_csv(mobility / "mock_dataset.csv").drop(columns=["lat"])
    with pytest.raises(DataError, match=r"lat \(column 'lat'\).*columns found: user_id, "
                       r"trajectory_id, timestamp, lon"):
        Trajectories.from_frame(raw)


def test_unparseable_timestamp_names_first_row(mobility):
    raw = pd.read_csv(mobility / "mock_dataset.csv")
    raw.loc[5, "timestamp"] = "21/11/2022 15:00"
    raw.loc[9, "timestamp"] = "yesterday"
    with pytest.raises(DataError, match=r"data row 6 \(1-based.*'21/11/2022 15:00'.*2 rows"):
        Trajectories.from_frame(raw)


def test_invalid_coordinates_dropped_counted_or_errors(mobility):
    raw = pd.read_csv(mobility / "mock_dataset.csv")
    raw.loc[3, "lat"] = 95.0  # trajectory 1
    raw.loc[20, "lon"] = np.nan
    traj_of_20 = raw.loc[20, "trajectory_id"]
    data = Trajectories.from_frame(raw)
    assert (data.n_points, data.dropped_points, len(data)) == (381, 2, 46)
    assert data.describe()["dropped_points"] == 2
    whole = Trajectories.from_frame(raw, invalid="drop_trajectory")
    lost = (raw["trajectory_id"].isin([1, traj_of_20])).sum()
    assert (len(whole), whole.n_points, whole.dropped_trajectories) == (44, 383 - lost, 2)
    with pytest.raises(DataError, match=r"data row 4 \(1-based.*lat=95\.0"):
        Trajectories.from_frame(raw, invalid="error")


def test_trajectory_left_empty_is_dropped_and_counted():
    frame = pd.DataFrame({"user_id": [1, 1, 2], "trajectory_id": [7, 7, 8],
                          "timestamp": ["2022/01/01 00:00:00"] * 3,
                          "lon": [1.0, 1.0, 500.0], "lat": [2.0, 2.0, 2.0]})
    data = Trajectories.from_frame(frame)
    assert data.trajectory_id.tolist() == [7] and data.dropped_trajectories == 1


def test_one_point_trajectory_loads_and_links():
    frame = pd.DataFrame({"user_id": [1, 2, 2], "trajectory_id": [1, 2, 2],
                          "timestamp": ["2022/01/01 00:00:00", "2022/01/01 00:00:00",
                                        "2022/01/01 00:01:00"],
                          "lon": [2.0, 2.1, 2.1005], "lat": [41.0, 41.1, 41.1]})
    data = Trajectories.from_frame(frame)
    assert data.lengths.tolist() == [1, 2]
    entry = run(data, data, "RecordLinkage")
    assert entry.value == 1.0


def test_trajectory_with_several_users_is_counted():
    # ids repeated per user (trajectory 1 of users 1 and 2) would merge two people's points
    frame = pd.DataFrame({"user_id": [2, 1, 1, 3], "trajectory_id": [1, 1, 1, 2],
                          "timestamp": ["2022/01/01 00:00:05", "2022/01/01 00:00:00",
                                        "2022/01/01 00:00:09", "2022/01/01 00:00:00"],
                          "lon": [1.0] * 4, "lat": [2.0] * 4})
    data = Trajectories.from_frame(frame)
    assert data.user_id.tolist() == [1, 3]  # the user of the earliest point
    assert data.describe()["trajectories_with_several_users"] == 1
    assert Trajectories.from_frame(frame.assign(user_id=[1, 1, 1, 3])).several_users == 0


def test_missing_trajectory_id_is_an_error():
    frame = pd.DataFrame({"user_id": [1], "trajectory_id": [None],
                          "timestamp": ["2022/01/01 00:00:00"], "lon": [1.0], "lat": [2.0]})
    with pytest.raises(DataError, match=r"data row 1 \(1-based.*trajectory id"):
        Trajectories.from_frame(frame)


# -- an independent, per-pair implementation of upstream's record linkage (the oracle) ---------

def _hav_km(lat1, lon1, lat2, lon2):
    p1, l1, p2, l2 = map(math.radians, (lat1, lon1, lat2, lon2))
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin((l2 - l1) / 2) ** 2
    return 2 * R_KM * math.asin(math.sqrt(a))


def _speed(p):
    if len(p) < 2:
        return 0.0
    s = sum(_hav_km(a[2], a[1], b[2], b[1]) / (b[0] - a[0]) for a, b in itertools.pairwise(p)
            if b[0] != a[0])
    return s / (len(p) - 1) * 3600


def _dist(p1, p2, lam):
    v = (_speed(p1) + _speed(p2)) / 2 / 3.6
    h = round((len(p1) + len(p2)) / 2)
    a = b = 0.0
    total = 0.0
    for _ in range(h):
        i, j = min(round(a), len(p1) - 1), min(round(b), len(p2) - 1)
        total += (_hav_km(p1[i][2], p1[i][1], p2[j][2], p2[j][1]) * 1000
                  + lam * abs(p1[i][0] - p2[j][0]) * v) ** 2
        a += len(p1) / h
        b += len(p2) / h
    return math.sqrt(total / h)


def _pts(data, i):
    lon, lat, t = data.points(i)
    return [(int(c), float(a), float(b)) for a, b, c in zip(lon, lat, t, strict=True)]


def upstream_rl(orig: Trajectories, anon: Trajectories, lam: float, w: float) -> float:
    """RecordLinkage.get_fast_record_linkage, step by step, with Python lists and loops."""
    trajs = [(orig.trajectory_id[k], _pts(orig, k)) for k in range(len(orig))]
    ref = [(int(orig.t.min()), float(orig.lon.min()), float(orig.lat.min()))]
    groups: dict[tuple, list] = {}
    for tid, p in trajs:
        groups.setdefault(tuple(p), []).append(tid)
    trajs.sort(key=lambda x: _dist(x[1], ref, lam))
    r = [_dist(p, ref, lam) for _, p in trajs]
    total = 0.0
    for k in range(len(anon)):
        pa = _pts(anon, k)
        x = _dist(pa, ref, lam)
        pos = bisect_left(r, x)
        if 0 < pos < len(r) and not (r[pos] - x < x - r[pos - 1]):
            pos -= 1
        cut = int(w / 2)
        lo = pos - cut + (1 if w % 2 == 0 else 0)
        hi = pos + cut
        rest_before = -lo if lo < 0 else 0
        lo = max(lo, 0)
        rest_after = hi - (len(r) - 1) if hi > len(r) - 1 else 0
        hi = min(hi, len(r) - 1)
        best, best_p = math.inf, None
        for c in range(lo - rest_after, hi + rest_before + 1):
            d = _dist(trajs[c][1], pa, lam)
            if d < best:
                best, best_p = d, trajs[c][1]
        ids = groups[tuple(best_p)]
        if anon.trajectory_id[k] in ids:
            total += 1 / len(ids)
    return total / len(orig)


# -- RecordLinkage ------------------------------------------------------------------------------

def test_record_linkage_reproduces_upstream(mock, anon):
    report = evaluate(mock, anon, [{"name": "RecordLinkage", "params": {"per_record": True}}])
    as_json = json.loads(report.to_json())["measures"][0]
    assert as_json["details"]["percen_record_linkage"] == 28.26
    assert len(as_json["details"]["records"]) == 46
    entry = run(mock, anon, "RecordLinkage")
    assert entry.value == pytest.approx(13 / 46, rel=1e-12)
    d = entry.details
    assert d["percen_record_linkage"] == 28.26 and d["linked"] == 13
    assert d["search"] == "exhaustive" and d["window_size"] == 46
    assert d["distance"]["p_lambda"] == pytest.approx(0.16222117161739122, rel=1e-9)
    assert len(d["nearest_distance_linked"]) == 13
    assert len(d["nearest_distance_unlinked"]) == 33
    # D(orig 1, anon 1) = 429.2933309526612 (reference notes) and trajectory 1 is linked
    assert min(abs(x - 429.2933309526612) for x in d["nearest_distance_linked"]) < 1e-9
    assert run(mock, anon, "RecordLinkage", {"exact": True}).value == entry.value


@pytest.mark.parametrize(("percent", "expected"), [(10, 10 / 46), (25, 13 / 46), (50, 13 / 46)])
def test_windowed_record_linkage(mock, anon, percent, expected):
    entry = run(mock, anon, "RecordLinkage", {"percen_window_size": percent})
    assert entry.value == pytest.approx(expected, rel=1e-12)
    assert entry.details["search"] == "window"
    assert entry.details["window_size"] == pytest.approx(46 * percent / 100)


def test_windowed_matches_naive_upstream_on_random_data():
    rng = np.random.default_rng(11)
    lengths = rng.integers(1, 8, 30)
    offsets = np.r_[0, np.cumsum(lengths)]
    p = int(offsets[-1])
    steps = np.cumsum(rng.integers(1, 300, p))
    orig = Trajectories(np.arange(30) + 1, np.arange(30) + 1, offsets,
                        np.repeat(rng.uniform(2.0, 2.1, 30), lengths) + rng.normal(0, .003, p),
                        np.repeat(rng.uniform(41.3, 41.4, 30), lengths) + rng.normal(0, .003, p),
                        np.repeat(rng.integers(1_600_000_000, 1_600_020_000, 30), lengths)
                        + steps - np.repeat(steps[offsets[:-1]], lengths))
    moved = Trajectories(orig.trajectory_id, orig.user_id, orig.offsets,
                         orig.lon + rng.normal(0, 0.004, orig.n_points),
                         orig.lat + rng.normal(0, 0.004, orig.n_points),
                         orig.t + rng.integers(-200, 200, orig.n_points))
    lam = 0.3
    for percent in (7, 20, 33.3, 100):
        entry = run(orig, moved, "RecordLinkage", {
            "percen_window_size": percent,
            "distance": {"name": "Martinez2021", "params": {"p_lambda": lam}}})
        assert entry.value == pytest.approx(upstream_rl(orig, moved, lam, 30 * percent / 100),
                                            rel=1e-12)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 14), percent=st.floats(1, 100))
def test_windowed_linkage_equals_naive_upstream(seed, n, percent):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 6, n)
    offsets = np.r_[0, np.cumsum(lengths)]
    p = int(offsets[-1])
    t = np.repeat(rng.integers(0, 5000, n), lengths) + np.arange(p) * 60
    orig = Trajectories(np.arange(n), np.arange(n), offsets, rng.uniform(2, 2.05, p),
                        rng.uniform(41, 41.05, p), t)
    moved = Trajectories(orig.trajectory_id, orig.user_id, offsets,
                         orig.lon + rng.normal(0, 0.01, p), orig.lat + rng.normal(0, 0.01, p),
                         t + rng.integers(-600, 600, p))
    entry = run(orig, moved, "RecordLinkage", {
        "percen_window_size": percent,
        "distance": {"name": "Martinez2021", "params": {"p_lambda": 0.2}}})
    want = upstream_rl(orig, moved, 0.2, n * percent / 100)
    assert entry.value == pytest.approx(want, rel=1e-12)


def test_identical_originals_share_the_probability():
    # originals 1 and 2 are identical: linking anonymized 1 (and 2) to that content gives ½ each
    pts = pd.DataFrame({"user_id": [1, 1, 2, 2, 3, 3], "trajectory_id": [1, 1, 2, 2, 3, 3],
                        "timestamp": ["2022/01/01 00:00:00", "2022/01/01 00:05:00"] * 2
                        + ["2022/01/01 01:00:00", "2022/01/01 01:05:00"],
                        "lon": [2.0, 2.01, 2.0, 2.01, 2.5, 2.51],
                        "lat": [41.0, 41.0, 41.0, 41.0, 41.3, 41.3]})
    data = Trajectories.from_frame(pts)
    entry = run(data, data, "RecordLinkage", {"per_record": True})
    assert entry.value == pytest.approx((0.5 + 0.5 + 1) / 3)
    assert entry.details["linked"] == 3
    table = pd.DataFrame(entry.details["records"])
    assert table["probability"].tolist() == [0.5, 0.5, 1.0]
    assert table["nearest_original_id"].tolist() == [1, 1, 3]
    distance_ties = run(data, data, "RecordLinkage", {"ties": "distance"})
    assert distance_ties.value == pytest.approx((0.5 + 0.5 + 1) / 3)


def test_ties_by_distance_differ_from_identical_content():
    # anonymized trajectory 9 sits exactly between originals 1 and 2 (same distance, different
    # content): upstream's rule links to the first; ties="distance" shares between the two
    orig = pd.DataFrame({"user_id": [1, 2, 3], "trajectory_id": [1, 2, 3],
                         "timestamp": ["2022/01/01 00:00:00"] * 3,
                         "lon": [2.0, 2.002, 3.0], "lat": [41.0, 41.0, 41.0]})
    anonymized = orig.assign(lon=[2.001, 2.001, 3.0])
    o, a = Trajectories.from_frame(orig), Trajectories.from_frame(anonymized)
    dist = {"name": "Martinez2021", "params": {"p_lambda": 0.1}}
    first = run(o, a, "RecordLinkage", {"distance": dist, "exact": True, "per_record": True})
    assert first.value == pytest.approx(2 / 3)  # anon 1 → orig 1 (first), anon 2 → orig 1
    ties = run(o, a, "RecordLinkage", {"distance": dist, "exact": True, "ties": "distance",
                                       "tie_tolerance": 1e-6})
    assert ties.value == pytest.approx((0.5 + 0.5 + 1) / 3)


def test_anonymized_ids_absent_from_original_are_unlinked_and_reported(mock, anon):
    renamed = Trajectories(anon.trajectory_id + 1000 * (anon.trajectory_id > 40), anon.user_id,
                           anon.offsets, anon.lon, anon.lat, anon.t)
    entry = run(mock, renamed, "RecordLinkage", {"per_record": True})
    assert entry.details["absent_from_original"] == 6
    assert entry.details["absent_ids"] == [1041, 1042, 1043, 1044, 1045, 1046]
    assert any("6 anonymized records" in w for w in entry.warnings)
    table = pd.DataFrame(entry.details["records"])
    assert not table["true_original_found"].iloc[-6:].any()
    assert (table["probability"].iloc[-6:] == 0).all()
    linked_before = run(mock, anon, "RecordLinkage", {"per_record": True}).details["records"]
    lost = pd.DataFrame(linked_before)["probability"].iloc[-6:].sum()
    assert entry.value == pytest.approx(13 / 46 - lost / 46)


def test_record_linkage_bad_params():
    registry = default_registry()
    for params, path in [({"percen_window_size": 0}, "percen_window_size"),
                         ({"percen_window_size": -5}, "percen_window_size"),
                         ({"percen_window_size": 10, "exact": True}, "exact"),
                         ({"distance": {"name": "Nope"}}, "distance.name"),
                         ({"distance": {"name": "Martinez2021", "params": {"sp_type": "L1"}}},
                          "distance.params.sp_type")]:
        with pytest.raises(ConfigError, match=path):
            evaluate(None, None, [{"name": "RecordLinkage", "params": params}],
                     registry=registry)
        problems: list = []
        assert validate_params(RecordLinkage, params, "p", registry, problems) is None


def test_window_bounds_follow_upstream_rules():
    r = np.arange(10.0)
    # w = 4 (even): [pos − 1, pos + 2]; w = 5: [pos − 2, pos + 2]; shifted at the ends:
    # 5.0 → pos 5 → [4, 7]; 0.0 → pos 0 → [−1, 2] → [0, 3]; 99 → pos 10 (past the end) →
    # [9, 12] → [6, 9]
    assert [x.tolist() for x in window_bounds(r, np.array([5.0, 0.0, 99.0]), 4)] == [
        [4, 0, 6], [7, 3, 9]]
    assert [x.tolist() for x in window_bounds(r, np.array([5.0, 9.0]), 5)] == [[3, 5], [7, 9]]
    # ties between neighbours go to the lower one; past the end counts as position N
    assert window_bounds(r, np.array([4.5]), 1)[0].tolist() == [4]
    assert window_bounds(r, np.array([4.6]), 1)[0].tolist() == [5]
    assert window_bounds(r, np.array([1e9]), 1.5)[0].tolist() == [9]


def test_default_window_rule():
    m = RecordLinkage()
    assert [m.window_size(n) for n in (46, 999, 1000, 9999, 10_000, 123_456)] == [
        46, 999, 100, 999, 100, 123]
    assert RecordLinkage(percen_window_size=10).window_size(46) == pytest.approx(4.6)


def test_prepare_runs_once_for_many_variants(mock, anon, monkeypatch):
    from anoneval.plugins.distances.martinez2021 import Martinez2021

    calls = []
    original_fit = Martinez2021.fit
    monkeypatch.setattr(Martinez2021, "fit", lambda self, ref, ctx: calls.append(1) or
                        original_fit(self, ref, ctx))
    ev = Evaluator(mock, [{"name": "RecordLinkage"}, {"name": "TrajectoryRMSE"}])
    report = ev.evaluate_many({"a": anon, "same": mock})
    assert len(calls) == 2  # one fit per measure, not per variant
    assert report.variants[0].measures[0].value == pytest.approx(13 / 46)
    assert report.variants[1].measures[0].value == 1.0
    assert report.variants[1].measures[1].value == 0.0


# -- RecordLinkage on microdata -------------------------------------------------------------------

@pytest.fixture
def records():
    rng = np.random.default_rng(5)
    x = pd.DataFrame({"id": np.arange(40) + 100, "age": rng.integers(18, 90, 40).astype(float),
                      "income": rng.normal(3000, 800, 40), "sex": rng.choice(["f", "m"], 40)})
    y = x.copy()
    y["income"] += rng.normal(0, 400, 40)
    return x, y


def brute_force_linkage(x: np.ndarray, y: np.ndarray) -> float:
    """Share of rows of y whose nearest row of x (first on ties) is the same row."""
    hits = 0
    for j in range(len(y)):
        dists = [math.dist(x[i], y[j]) for i in range(len(x))]
        hits += int(int(np.argmin(dists)) == j)
    return hits / len(x)


def test_microdata_linkage_row_aligned_and_by_id(records):
    x, y = records
    cols = ["age", "income"]
    scale = x[cols].std(ddof=1).to_numpy()
    want = brute_force_linkage(x[cols].to_numpy() / scale, y[cols].to_numpy() / scale)
    params = {"distance": {"name": "Euclidean", "params": {"columns": cols}}}
    assert run(x, y, "RecordLinkage", params).value == pytest.approx(want)
    shuffled = y.sample(frac=1, random_state=1).iloc[:35]  # reordered, 5 records suppressed
    by_id = run(x, shuffled, "RecordLinkage", {**params, "id": "id", "per_record": True})
    keep = shuffled["id"].to_numpy() - 100
    hits = sum(int(np.argmin([math.dist(x[cols].to_numpy()[i] / scale,
                                        shuffled[cols].to_numpy()[j] / scale)
                              for i in range(40)]) == keep[j]) for j in range(35))
    assert by_id.value == pytest.approx(hits / 40)
    assert pd.DataFrame(by_id.details["records"])["anonymized_id"].tolist() == list(
        shuffled["id"])


def test_microdata_linkage_errors(records):
    x, y = records
    report = evaluate(x, y.iloc[:30], [{"name": "RecordLinkage",
                                        "params": {"distance": {"name": "Gower"}}}])
    assert "row position" in report.measures[0].error and "'id'" in report.measures[0].error
    report = evaluate(x, y, [{"name": "RecordLinkage"}])
    assert "Martinez2021 accepts trajectories" in report.measures[0].error
    report = evaluate(x, y, [{"name": "RecordLinkage", "params": {
        "distance": {"name": "Gower"}, "percen_window_size": 10}}])
    assert "trajectories only" in report.measures[0].error
    dup = x.assign(id=[1] * 40)
    report = evaluate(dup, y, [{"name": "RecordLinkage", "params": {
        "distance": {"name": "Gower"}, "id": "id"}}])
    assert "not unique" in report.measures[0].error


def test_gower_linkage_with_mixed_types(records):
    x, y = records
    entry = run(Microdata(x), Microdata(y), "RecordLinkage", {
        "distance": {"name": "Gower"}, "id": "id"})
    # brute force: Gower over age, income (ranges of the original) and sex (0/1), id excluded
    r_age, r_inc = np.ptp(x["age"]), np.ptp(x["income"])
    hits = 0
    for j in range(len(y)):
        d = [(abs(x["age"][i] - y["age"][j]) / r_age + abs(x["income"][i] - y["income"][j]) / r_inc
              + (x["sex"][i] != y["sex"][j])) / 3 for i in range(len(x))]
        hits += int(np.argmin(d)) == j
    assert entry.value == pytest.approx(hits / 40) and entry.details["n_original"] == 40
    assert 0 < hits < 40  # the case discriminates


def _nearest_share(d: np.ndarray, truth: np.ndarray, n_orig: int) -> float:
    """Share of originals whose anonymized record (rows of ``d``) has them first-nearest."""
    return sum(int(np.argmin(row) == t) for row, t in zip(d, truth, strict=True)) / n_orig


def test_microdata_linkage_through_a_config_file(tmp_path):
    # a JSON config with the three record distances, run by `anoneval run`; anonymized rows are
    # shuffled and 5 are suppressed, so the id column links them
    rng = np.random.default_rng(8)
    n = 60
    x = pd.DataFrame({"id": np.arange(n) + 500, "age": rng.integers(18, 90, n),
                      "income": rng.normal(3000, 800, n).round(2),
                      "sex": rng.choice(["f", "m"], n),
                      "edu": rng.choice(["low", "mid", "high"], n)})
    y = x.assign(income=(x["income"] + rng.normal(0, 500, n)).round(2),
                 age=x["age"] + rng.integers(-3, 4, n),
                 edu=np.where(rng.random(n) < 0.3, rng.choice(["low", "mid", "high"], n),
                              x["edu"]))
    y = y.sample(frac=1, random_state=4).iloc[:55]
    x.to_csv(tmp_path / "orig.csv", index=False)
    y.to_csv(tmp_path / "anon.csv", index=False)
    measures = [
        {"name": "RecordLinkage", "label": "euclidean", "params": {
            "id": "id", "distance": {"name": "Euclidean"}}},
        {"name": "RecordLinkage", "label": "mahalanobis", "params": {
            "id": "id", "distance": {"name": "Mahalanobis", "params": {"columns": ["age",
                                                                                 "income"]}}}},
        {"name": "RecordLinkage", "label": "gower", "params": {
            "id": "id", "distance": {"name": "Gower", "params": {
                "levels": {"edu": ["low", "mid", "high"]}, "weights": {"sex": 2}}}}}]
    config = {"original": {"path": str(tmp_path / "orig.csv")},
              "anonymized": {"path": str(tmp_path / "anon.csv")},
              "measures": measures, "output": str(tmp_path / "report.json")}
    (tmp_path / "cfg.json").write_text(json.dumps(config))
    assert main(["run", str(tmp_path / "cfg.json"), "-q"]) == 0
    got = {m["label"]: m for m in json.loads((tmp_path / "report.json").read_text())["measures"]}
    truth = y["id"].to_numpy() - 500
    num = ["age", "income"]
    X, Y = x[num].to_numpy(float), y[num].to_numpy(float)
    # Euclidean on columns scaled by the original's sample std (id dropped: age, income)
    s = X.std(axis=0, ddof=1)
    d_eu = np.array([[math.dist(a / s, b / s) for a in X] for b in Y])
    # Mahalanobis with the original's covariance, squared (same nearest): (a − b)ᵀ Σ⁻¹ (a − b)
    vi = np.linalg.inv(np.cov(X, rowvar=False))
    d_ma = np.array([[float((a - b) @ vi @ (a - b)) for a in X] for b in Y])
    # Gower: |Δage|/R + |Δincome|/R + 2·[sex differs] + |Δrank edu|/2, over weights 1+1+2+1
    rank = {"low": 0, "mid": 1, "high": 2}
    r = np.ptp(X, axis=0)
    d_go = np.array([[(abs(a[0] - b[0]) / r[0] + abs(a[1] - b[1]) / r[1]
                       + 2 * (xs != ys) + abs(rank[xe] - rank[ye]) / 2) / 5
                      for a, xs, xe in zip(X, x["sex"], x["edu"], strict=True)]
                     for b, ys, ye in zip(Y, y["sex"], y["edu"], strict=True)])
    for label, d in (("euclidean", d_eu), ("mahalanobis", d_ma), ("gower", d_go)):
        want = _nearest_share(d, truth, n)
        assert got[label]["error"] is None, got[label]["error"]
        assert got[label]["value"] == pytest.approx(want, rel=1e-12), label
        assert got[label]["details"]["percen_record_linkage"] == round(100 * want, 2)
        assert got[label]["details"]["n_original"] == n
        assert got[label]["details"]["n_anonymized"] == 55
    assert len({got[k]["value"] for k in got}) > 1  # the distances disagree: the test can fail


def test_microdata_ids_must_be_unique_and_present(records):
    x, y = records
    gower = {"name": "Gower"}
    twice = pd.concat([y, y.iloc[:2]])  # two anonymized records claim originals 100 and 101
    report = evaluate(x, twice, [{"name": "RecordLinkage", "params": {
        "distance": gower, "id": "id"}}])
    assert "not unique in the anonymized: [100, 101]" in report.measures[0].error
    holes = x.assign(id=x["id"].astype(float).where(x.index != 3))
    report = evaluate(holes, y, [{"name": "RecordLinkage", "params": {
        "distance": gower, "id": "id"}}])
    assert "missing value at data row 4 (1-based" in report.measures[0].error
    unknown = y.assign(id=y["id"].astype(float).where(y.index >= 4))  # 4 ids missing
    entry = run(x, unknown, "RecordLinkage", {"distance": gower, "id": "id"})
    assert entry.details["absent_from_original"] == 4 and entry.value <= 36 / 40
    assert any("4 anonymized records have no original" in w for w in entry.warnings)
    # issue 23: no id in common links nothing; an error, not "0 % ok"
    foreign = y.assign(id=y["id"] + 10_000)
    report = evaluate(x, foreign, [{"name": "RecordLinkage", "params": {
        "distance": gower, "id": "id"}}])
    assert report.measures[0].value is None
    assert "no anonymized record's id column 'id' is in the original" in report.measures[0].error


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 1000))
def test_linkage_is_a_share_and_ignores_row_order(seed):
    rng = np.random.default_rng(seed)
    x = pd.DataFrame({"id": np.arange(12), "a": rng.normal(size=12), "b": rng.normal(size=12)})
    y = x.assign(a=x["a"] + rng.normal(0, 0.5, 12))
    p = {"distance": {"name": "Mahalanobis", "params": {"columns": ["a", "b"]}}, "id": "id"}
    v1 = run(x, y, "RecordLinkage", p).value
    v2 = run(x, y.sample(frac=1, random_state=seed), "RecordLinkage", p).value
    assert 0 <= v1 <= 1 and v1 == pytest.approx(v2)


# -- TrajectoryRMSE and TrajectoriesRemoved -------------------------------------------------------

def test_trajectory_rmse_reproduces_upstream(mock, anon):
    entry = run(mock, anon, "TrajectoryRMSE")
    assert round(entry.value, 4) == 684.7026
    assert entry.details["rmse_upstream"] == 684.7026 and entry.details["matched"] == 46


def test_trajectory_rmse_counts_only_matched_pairs(mock, anon):
    full = run(mock, anon, "TrajectoryRMSE", {"distance": {"name": "Hausdorff"}})
    keep = np.flatnonzero(anon.trajectory_id <= 23)
    part = run(mock, anon.subset(keep), "TrajectoryRMSE", {"distance": {"name": "Hausdorff"}})
    from anoneval.plugins.distances.hausdorff import Hausdorff

    d = Hausdorff().paired(mock, anon, mock.index_of(list(range(1, 24))),
                           anon.index_of(list(range(1, 24))))
    assert part.value == pytest.approx(math.sqrt(np.mean(d**2)), rel=1e-12)
    assert part.details["original_missing_in_anonymized"] == 23 and part.warnings
    assert part.details["rmse_upstream"] == round(math.sqrt(np.sum(d**2) / 23), 4)
    assert full.details["matched"] == 46


def test_trajectories_removed(mock, anon):
    entry = run(mock, anon, "TrajectoriesRemoved")
    assert entry.value == 0.0
    assert entry.details["percen_traj_removed"] == 0.0
    assert entry.details["percen_loc_removed"] == -1.04  # (383 − 387)/383
    fewer = anon.subset(np.arange(0, 46, 2))  # 23 trajectories left
    entry = run(mock, fewer, "TrajectoriesRemoved")
    assert entry.value == 0.5 and entry.details["removed_trajectories"] == 23
    assert entry.details["percen_loc_removed"] == round(100 * (383 - fewer.n_points) / 383, 2)


def test_distance_measures_give_metres_only_for_lengths_on_the_sphere() -> None:
    from anoneval.plugins.mobility.trajectory_distortion import TrajectoryDistortion
    from anoneval.plugins.mobility.trajectory_rmse import TrajectoryRMSE

    for cls in (TrajectoryRMSE, TrajectoryDistortion):
        assert cls.unit_for({"distance": {"name": "SSPD"}}) == "metres"
        assert cls.unit_for({"distance": {"name": "DTW", "params": {"space": "plane"}}}) is None
        assert cls.unit_for({"distance": {"name": "LCSS"}}) is None  # a share
    assert TrajectoryRMSE.unit_for({}) == "metres"  # Martinez2021
