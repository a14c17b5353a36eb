"""Stay-point detection (``visits: "stays"``) against scikit-mobility and hand-worked cases.

Independent checks: scikit-mobility 1.3.1's ``stay_locations`` output on a synthetic trace
(tests/data/mobility/skmob_stays_values.json, made in a pinned environment by
gen_skmob_stays.py), hand-worked traces (values derived in the comments), and the compiled and
numpy paths compared on random traces with hypothesis.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import evaluate
from anoneval.core.api import ConfigError, Trajectories
from anoneval.plugins.mobility._stays import StaySpec, detect_stays
from anoneval.plugins.mobility._tiles import TileSpec, make_grid, visit_table

DATA = Path(__file__).parents[2] / "data" / "mobility"
T0 = 1_300_000_000
DLAT = 0.0001  # ≈ 11.1 m of latitude


def traces(rows: list[tuple[str, int, int, float, float]]) -> Trajectories:
    """Rows (user, trajectory, time, lon, lat)."""
    return Trajectories.from_frame(pd.DataFrame(
        rows, columns=["user_id", "trajectory_id", "timestamp", "lon", "lat"]))


def both(data: Trajectories, **spec) -> list:
    """Stays by the compiled and the numpy path, which must agree exactly."""
    s = StaySpec(**spec)
    a, b = detect_stays(data, s, jit=True), detect_stays(data, s, jit=False)
    for f in ("traj", "lon", "lat", "arrive", "leave"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    return [(int(tr), round(float(lo), 9), round(float(la), 9), int(ar), int(le))
            for tr, lo, la, ar, le in zip(a.traj, a.lon, a.lat, a.arrive, a.leave, strict=True)]


@pytest.fixture(scope="module")
def skmob_trace() -> Trajectories:
    df = pd.read_csv(DATA / "skmob_stays.csv")
    return Trajectories.from_frame(pd.DataFrame({
        "user_id": df.uid, "trajectory_id": df.tid, "timestamp": df.t, "lon": df.lng,
        "lat": df.lat}))


@pytest.mark.parametrize("case", range(5))
@pytest.mark.parametrize("jit", [True, False])
def test_stays_equal_skmob_stay_locations(skmob_trace, case, jit):
    c = json.loads((DATA / "skmob_stays_values.json").read_text())["cases"][case]
    p = c["params"]
    gap = p["no_data_for_minutes"]
    spec = StaySpec(radius_m=p["spatial_radius_km"] * 1000,
                    min_duration_s=p["minutes_for_a_stop"] * 60,
                    max_gap_s=None if gap >= 1e12 else gap * 60,
                    scope="trajectory" if p["tid_column"] else "user")
    s = detect_stays(skmob_trace, spec, jit=jit)
    uid = skmob_trace.user_id[s.traj].astype(int)
    o = np.lexsort((s.arrive, uid))  # skmob's rows: by uid, then time
    assert len(s) == len(c["uid"]) > 20
    assert uid[o].tolist() == c["uid"]
    assert s.arrive[o].tolist() == c["arrive"] and s.leave[o].tolist() == c["leave"]
    np.testing.assert_allclose(s.lat[o], c["lat"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(s.lon[o], c["lng"], rtol=0, atol=1e-12)


def test_a_stay_ends_at_the_first_point_outside_the_radius():
    # four points within ≈ 33 m for 30 min, then 1.1 km away: one stay of the first four,
    # arriving at T0 and leaving at the far point's time; medians of lat (mean of the middle
    # two: 48.85 + 1.5·DLAT) and lon
    rows = [("u", 1, T0, 2.3000, 48.85), ("u", 1, T0 + 600, 2.3002, 48.85 + 3 * DLAT),
            ("u", 1, T0 + 1200, 2.3001, 48.85 + DLAT),
            ("u", 1, T0 + 1800, 2.3003, 48.85 + 2 * DLAT),
            ("u", 1, T0 + 2400, 2.3000, 48.86), ("u", 1, T0 + 3000, 2.3100, 48.87)]
    got = both(traces(rows), radius_m=200, min_duration_s=1200)
    assert got == [(0, 2.30015, round(48.85 + 1.5 * DLAT, 9), T0, T0 + 2400)]


def test_duration_is_strictly_longer_and_counts_to_the_leaving_point():
    rows = [("u", 1, T0, 2.30, 48.85), ("u", 1, T0 + 500, 2.30, 48.85 + DLAT),
            ("u", 1, T0 + 1200, 2.31, 48.86), ("u", 1, T0 + 1300, 2.32, 48.87)]
    # from the anchor to the leaving point: exactly 1200 s, not longer → no stay
    assert both(traces(rows), radius_m=200, min_duration_s=1200) == []
    # 1199 s suffices; the stay is the two points inside, leaving at T0 + 1200
    assert both(traces(rows), radius_m=200, min_duration_s=1199) == [
        (0, 2.3, round(48.85 + DLAT / 2, 9), T0, T0 + 1200)]


def test_last_point_closes_the_stay_but_is_not_in_its_median():
    # skmob: at the last point the open stay ends even inside the radius; the median is over
    # the earlier points only (48.85 and 48.85 + 2·DLAT → 48.85 + DLAT, not the 3-point median)
    rows = [("u", 1, T0, 2.30, 48.85), ("u", 1, T0 + 900, 2.30, 48.85 + 2 * DLAT),
            ("u", 1, T0 + 1800, 2.30, 48.85 + 3 * DLAT)]
    assert both(traces(rows), radius_m=200, min_duration_s=1200) == [
        (0, 2.3, round(48.85 + DLAT, 9), T0, T0 + 1800)]


def test_a_data_gap_discards_the_open_stay():
    rows = [("u", 1, T0, 2.30, 48.85), ("u", 1, T0 + 1500, 2.30, 48.85 + DLAT),
            ("u", 1, T0 + 9000, 2.30, 48.85 + DLAT), ("u", 1, T0 + 9100, 2.40, 48.90)]
    # without a gap limit: one stay of three points (t0..t0+9000 inside; leaves at 9100)
    assert both(traces(rows), radius_m=200, min_duration_s=1200) == [
        (0, 2.3, round(48.85 + DLAT, 9), T0, T0 + 9100)]
    # a 7500 s gap > max_gap_s: the stay of the first two points is dropped, and the point
    # after the gap starts a new anchor that ends at the last point after 100 s
    assert both(traces(rows), radius_m=200, min_duration_s=1200, max_gap_s=3600) == []
    # but a stay that ended before the gap is kept (leaving at the far point's time)
    rows2 = [*rows[:2], ("u", 1, T0 + 1600, 2.40, 48.90), ("u", 1, T0 + 9000, 2.40, 48.90),
             ("u", 1, T0 + 9100, 2.50, 48.95)]
    assert both(traces(rows2), radius_m=200, min_duration_s=1200, max_gap_s=3600) == [
        (0, 2.3, round(48.85 + DLAT / 2, 9), T0, T0 + 1600)]


def test_one_point_trajectories_have_no_stay_and_scope_user_joins_them():
    rows = [("u", 1, T0, 2.30, 48.85), ("u", 2, T0 + 3000, 2.30, 48.85),
            ("u", 3, T0 + 6000, 2.40, 48.90)]
    assert both(traces(rows), radius_m=200, min_duration_s=1200) == []
    # over the user's points in time order: stay at A from T0, leaving at T0 + 6000; the
    # stay's trajectory is that of its anchor (index 0)
    assert both(traces(rows), radius_m=200, min_duration_s=1200, scope="user") == [
        (0, 2.3, 48.85, T0, T0 + 6000)]


def test_stays_are_visits_cached_per_dataset_and_parameters():
    rows = [("u", 1, T0, 2.30, 48.85), ("u", 1, T0 + 1500, 2.30, 48.85 + DLAT),
            ("u", 1, T0 + 3000, 2.40, 48.90), ("u", 1, T0 + 4800, 2.40, 48.90),
            ("u", 1, T0 + 6000, 2.45, 48.91), ("v", 2, T0, 2.40, 48.90),
            ("v", 2, T0 + 1300, 2.40, 48.90), ("v", 2, T0 + 1400, 2.30, 48.85)]
    data = traces(rows)
    grid = make_grid(TileSpec(bbox=[2.20, 48.80, 2.50, 48.92]))
    table = visit_table(data, grid, "stays", StaySpec())
    # u: stays at A (T0) and C (T0 + 3000); v: at C (T0); tiles of the median points
    expect = grid.tile_of(np.array([2.30, 2.40, 2.40]),
                          np.array([48.85 + DLAT / 2, 48.90, 48.90]))
    assert table.tile.tolist() == expect.tolist()
    assert table.t.tolist() == [T0, T0 + 3000, T0] and table.starts.tolist() == [0, 2, 3]
    assert visit_table(data, grid, "stays", StaySpec()) is table
    other = visit_table(data, grid, "stays", StaySpec(min_duration_s=1450))
    assert other is not table and len(other) == 2  # v's stay lasts 1400 s, u's two 3000 s


def test_measures_run_on_stays():
    rows = [("u", 1, T0, 2.30, 48.85), ("u", 1, T0 + 1500, 2.30, 48.85),
            ("u", 1, T0 + 3000, 2.40, 48.90), ("u", 1, T0 + 4800, 2.40, 48.90),
            ("u", 1, T0 + 6000, 2.45, 48.91), ("v", 2, T0, 2.40, 48.90),
            ("v", 2, T0 + 1300, 2.40, 48.90), ("v", 2, T0 + 1400, 2.30, 48.85)]
    data = traces(rows)
    report = evaluate(data, data, [
        {"name": "LocationAttack", "params": {"visits": "stays", "knowledge_length": 1}},
        {"name": "IndividualMobility", "params": {"visits": "stays",
                                                  "measure": "number_of_visits"}},
        {"name": "VisitsPerLocation", "params": {"visits": "stays",
                                                 "stays": {"radius_m": 100.0}}}])
    attack, indiv, visits = report.measures
    assert attack.error is None and indiv.error is None and visits.error is None
    # stays: u at A and C, v at C. u's A is unique (risk 1); v's C is shared (1/2)
    assert attack.details["per_user"] == {"u": 1.0, "v": 0.5}
    assert indiv.details["per_user"] == {"u": [2.0, 2.0], "v": [1.0, 1.0]}
    assert visits.value == 1.0  # identical sides: common part of commuters 1


def test_bad_stay_params_name_the_field():
    data = traces([("u", 1, T0, 2.30, 48.85), ("u", 1, T0 + 60, 2.30, 48.85)])
    with pytest.raises(ConfigError, match=r"params\.stays\.radius: unknown key.*radius_m"):
        evaluate(data, data, [{"name": "LocationAttack", "params": {
            "visits": "stays", "stays": {"radius": 10}}}])
    with pytest.raises(ConfigError, match=r"stays\.min_duration_s"):
        evaluate(data, data, [{"name": "LocationAttack", "params": {
            "visits": "stays", "stays": {"min_duration_s": -1}}}])


@st.composite
def random_traces(draw):
    n = draw(st.integers(1, 60))
    users = draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n))
    traj = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    steps = draw(st.lists(st.integers(0, 900), min_size=n, max_size=n))
    moves = draw(st.lists(st.integers(-3, 3), min_size=2 * n, max_size=2 * n))
    rows = []
    lat, lon, t = 48.85, 2.30, T0
    for i in range(n):
        t += steps[i]
        lat += moves[2 * i] * 0.0005
        lon += moves[2 * i + 1] * 0.0007
        rows.append((users[i], traj[i] * 10 + "abc".index(users[i]), t, lon, lat))
    return traces(rows)


@settings(max_examples=60, deadline=None)
@given(data=random_traces(), radius=st.sampled_from([30.0, 80.0, 200.0]),
       minutes=st.sampled_from([0.0, 300.0, 1200.0]),
       gap=st.sampled_from([None, 600.0]), scope=st.sampled_from(["trajectory", "user"]))
def test_compiled_and_numpy_paths_agree_and_stays_are_sane(data, radius, minutes, gap, scope):
    got = both(data, radius_m=radius, min_duration_s=minutes, max_gap_s=gap, scope=scope)
    for _, _, _, arrive, leave in got:
        assert leave - arrive > minutes
    # stays of one sequence do not overlap in time
    s = detect_stays(data, StaySpec(radius_m=radius, min_duration_s=minutes, max_gap_s=gap,
                                    scope=scope))
    key = data.user_id[s.traj] if scope == "user" else s.traj
    for k in np.unique(key):
        a, b = s.arrive[key == k], s.leave[key == k]
        assert np.all(a[1:] >= b[:-1])
