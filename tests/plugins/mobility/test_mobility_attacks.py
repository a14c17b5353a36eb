"""The tile/visit layer and the eight skmob re-identification attacks.

Three independent checks: hand-worked cases (values derived in the comments), skmob's own test
fixtures (``skmob/privacy/tests/test_privacy.py`` of scikit-mobility, re-stated below: the same
20 visits of 6 users and the match counts its tests assert), and a brute force written here from
the definitions of reference/mobility_semantics.md §3 (skmob's loop: every k-combination of rows,
one match test per user), compared on random data with hypothesis.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import evaluate
from anoneval.core.api import Trajectories
from anoneval.plugins.mobility._tiles import TileSpec, make_grid, visit_table
from anoneval.plugins.mobility.location_time_attack import time_keys

ATTACKS = ["LocationAttack", "LocationSequenceAttack", "LocationTimeAttack",
           "UniqueLocationAttack", "LocationFrequencyAttack", "LocationProbabilityAttack",
           "LocationProportionAttack", "HomeWorkAttack"]

# three places far apart (distinct 500 m tiles), lat(A) < lat(B) < lat(C)
PLACES = {"A": (2.25, 48.81), "B": (2.30, 48.85), "C": (2.40, 48.90), "D": (2.35, 48.83)}
T0 = 1_300_000_000 - 1_300_000_000 % 86400  # a UTC midnight
H = 3600


def trajectories(rows: list[tuple[str, str, int]]) -> Trajectories:
    """One single-point trajectory per (user, place, time): each point is one visit."""
    frame = pd.DataFrame({
        "user_id": [u for u, _, _ in rows],
        "trajectory_id": np.arange(len(rows)),
        "timestamp": [t for _, _, t in rows],
        "lon": [PLACES[p][0] if p in PLACES else p[0] for _, p, _ in rows],
        "lat": [PLACES[p][1] if p in PLACES else p[1] for _, p, _ in rows],
    })
    return Trajectories.from_frame(frame)


def seq(user: str, places: str, start: int = T0) -> list[tuple[str, str, int]]:
    return [(user, p, start + i * H) for i, p in enumerate(places)]


def run(original, anonymized, name, **params):
    entry = evaluate(original, anonymized, [{"name": name, "params": params}]).measures[0]
    assert entry.error is None, entry.error
    return entry


def risks(entry) -> list[float]:
    per = entry.details["per_user"]
    return [per[u] for u in sorted(per)]


# -- tiles ---------------------------------------------------------------------------------------

def test_reference_grid_and_tile_ids():
    # reference §1: bbox lon [2.20, 2.45] × lat [48.80, 48.92], 500 units → 56 × 41 = 2296 tiles
    grid = make_grid(TileSpec(bbox=[2.20, 48.80, 2.45, 48.92]))
    assert (grid.nx, grid.ny, grid.n_tiles) == (56, 41, 2296)
    # the first tile's centre is 250 units east and north of the corner; its id is 0
    lon, lat = grid.centroid(np.array([0, 1, 41]))
    assert grid.tile_of(lon, lat).tolist() == [0, 1, 41]  # id = i·ny + j
    x, y = grid.project(lon, lat)
    assert np.allclose(x - grid.x0, [250, 250, 750]) and np.allclose(y - grid.y0, [250, 750, 250])
    assert grid.tile_of(np.array([2.1, 2.3]), np.array([48.85, 48.95])).tolist() == [-1, -1]


def test_ground_tiles_are_true_metres():
    web = make_grid(TileSpec(bbox=[2.20, 48.80, 2.45, 48.92]))
    ground = make_grid(TileSpec(bbox=[2.20, 48.80, 2.45, 48.92], projection="ground"))
    # one ground metre is 1/cos(48.86°) ≈ 1.52 Web Mercator units (a 500-unit tile is ≈ 329 m):
    # more, smaller tiles in EPSG:3857
    assert web.nx > ground.nx and 1.45 < web.nx / ground.nx < 1.6


def test_a_web_mercator_unit_is_cos_phi_ground_metres():
    # the east-west side of a 500-unit tile, measured on the ground (haversine along its
    # centre's parallel), is 500·cos φ ≈ 329 m at 48.86° N, not 500/cos φ ≈ 760 m
    grid = make_grid(TileSpec(bbox=[2.20, 48.80, 2.45, 48.92]))
    tile = np.array([20 * grid.ny + 20])
    _, lat_c = grid.centroid(tile)
    x0 = grid.x0 + 20 * grid.size
    lon_w, lon_e = np.degrees(np.array([x0, x0 + grid.size]) / 6_378_137.0)
    phi = np.radians(lat_c[0])
    ground = 2 * 6_378_137.0 * np.arcsin(np.cos(phi) * np.sin(np.radians(lon_e - lon_w) / 2))
    assert ground == pytest.approx(500 * np.cos(phi), rel=1e-6)
    assert 328 < ground < 330


def test_visit_table_is_the_arrival_of_each_trajectory():
    frame = pd.DataFrame({"user_id": ["u", "u", "u", "v"], "trajectory_id": [1, 1, 2, 3],
                          "timestamp": [T0, T0 + 60, T0 + 30, T0],
                          "lon": [2.25, 2.30, 2.40, 2.25], "lat": [48.81, 48.85, 48.90, 48.81]})
    data = Trajectories.from_frame(frame)
    grid = make_grid(TileSpec(bbox=[2.20, 48.80, 2.45, 48.92]))
    last = visit_table(data, grid, "last_point")
    # u: trajectory 2 arrives at T0+30 (C), trajectory 1 at T0+60 (B): sorted by time
    expect = grid.tile_of(np.array([2.40, 2.30, 2.25]), np.array([48.90, 48.85, 48.81]))
    assert last.tile.tolist() == expect.tolist() and last.t.tolist() == [T0 + 30, T0 + 60, T0]
    assert visit_table(data, grid, "points").tile.size == 4
    assert visit_table(data, grid, "last_point") is last  # cached per dataset


def test_time_keys_intended_and_skmob():
    t = np.array([T0 + 10 * H + 5 * 60, T0 + 11 * H + 5 * 60])  # same day, two hours
    assert len(set(time_keys(t, "hour", None))) == 2
    assert len(set(time_keys(t, "hour", "skmob"))) == 1  # skmob's "hour" is the day
    jan11 = int(pd.Timestamp("2011-01-11", tz="UTC").timestamp())
    nov1 = int(pd.Timestamp("2011-11-01", tz="UTC").timestamp())
    both = np.array([jan11, nov1])
    assert time_keys(both, "day", "skmob").tolist() == [2011111, 2011111]  # its collision
    assert len(set(time_keys(both, "day", None))) == 2


# -- hand-worked cases ---------------------------------------------------------------------------

# u1: A, B   u2: A, B   u3: B, A, C   (time order)
BASIC = seq("u1", "AB") + seq("u2", "AB") + seq("u3", "BAC")


@pytest.mark.parametrize("name, expected", [
    # k=2. u1, u2: one instance {A,B}, matched by u1, u2, u3 → 1/3. u3: {A,B} 1/3, {A,C} 1, → 1
    ("LocationAttack", [1 / 3, 1 / 3, 1.0]),
    ("UniqueLocationAttack", [1 / 3, 1 / 3, 1.0]),
    # (A, B) in time order: u1, u2 (u3 has A after B) → 1/2; u3's (B, A) only u3 → 1
    ("LocationSequenceAttack", [0.5, 0.5, 1.0]),
])
def test_hand_worked_basic(name, expected):
    data = trajectories(BASIC)
    entry = run(None, data, name, knowledge_length=2)
    assert risks(entry) == pytest.approx(expected)
    assert entry.value == pytest.approx(np.mean(expected))


# u1: A, B   u2: A, A, B, C   u3: B, C  → frequency vectors u1 {A1 B1}, u2 {A2 B1 C1}, u3 {B1 C1}
FREQ = seq("u1", "AB") + seq("u2", "AABC") + seq("u3", "BC")


@pytest.mark.parametrize("name, params, expected", [
    # k=1, τ=0: u1 (A,1) only u1 → 1; u2 (A,2) → 1; u3 (B,1) u1 u2 u3, (C,1) u2 u3 → 1/2
    ("LocationFrequencyAttack", {"knowledge_length": 1}, [1.0, 1.0, 0.5]),
    # τ=1 (0 ≤ f ≤ 2 f_v): u1 (A,1) u1 u2 → 1/2; u2 (A,2) u1 u2 → 1/2, (C,1) u2 u3 → 1/2; u3 1/2
    ("LocationFrequencyAttack", {"knowledge_length": 1, "tolerance": 1.0}, [0.5, 0.5, 0.5]),
    # p: u1 {A .5 B .5}, u2 {A .5 B .25 C .25}, u3 {B .5 C .5}: u1 → 1/2, u2 (B,.25) → 1,
    # u3 (C,.5) → 1
    ("LocationProbabilityAttack", {"knowledge_length": 1}, [0.5, 1.0, 1.0]),
    # k=2, proportions over the instance: u1 (A1,B1) → (1,1): u2 has (1,.5) → only u1 → 1;
    # u2 (A2,B1) → (1,.5) only u2 → 1; u3 (B1,C1) → (1,1): u2 (B1,C1) and u3 → 1/2
    ("LocationProportionAttack", {"knowledge_length": 2}, [1.0, 1.0, 0.5]),
    # intended home/work = two most frequent, ties by (lat, lng): u1 {A,B}, u2 {A,B}, u3 {B,C}
    ("HomeWorkAttack", {}, [0.5, 0.5, 1.0]),
    # skmob: the two LEAST frequent (ascending sort): u1 {A,B}, u2 {B,C}, u3 {B,C}
    ("HomeWorkAttack", {"compat": "skmob"}, [1.0, 0.5, 0.5]),
])
def test_hand_worked_frequency(name, params, expected):
    entry = run(None, trajectories(FREQ), name, **params)
    assert risks(entry) == pytest.approx(expected)


# u1: A d1 10:00, B d1 11:00   u2: A d1 10:30, B d2 11:00   u3: B d1 09:00, A d1 10:15, C d1 12:00
TIMED = [("u1", "A", T0 + 10 * H), ("u1", "B", T0 + 11 * H),
         ("u2", "A", T0 + 10 * H + 1800), ("u2", "B", T0 + 86400 + 11 * H),
         ("u3", "B", T0 + 9 * H), ("u3", "A", T0 + 10 * H + 900), ("u3", "C", T0 + 12 * H)]


@pytest.mark.parametrize("precision, compat, expected", [
    # hour: u1 (B, d1 11h) only u1 → 1; u2 (B, d2 11h) → 1; u3 (B, d1 9h) → 1
    ("hour", None, [1.0, 1.0, 1.0]),
    # day: u1 (A,d1) u1 u2 u3, (B,d1) u1 u3 → 1/2; u2 (B,d2) → 1; u3 (C,d1) → 1
    ("day", None, [0.5, 1.0, 1.0]),
    ("hour", "skmob", [0.5, 1.0, 1.0]),  # skmob's "hour" key is the day
])
def test_hand_worked_time(precision, compat, expected):
    entry = run(None, trajectories(TIMED), "LocationTimeAttack", knowledge_length=1,
                time_precision=precision, compat=compat)
    assert risks(entry) == pytest.approx(expected)


def test_hand_worked_original_to_anonymized():
    # original BASIC; release u1: A, C  u2: A, B  u3: B, A, C. k=2 LocationAttack:
    # u1 knows {A,B}: released u2, u3 match, u1 not → 0; u2 {A,B} → 1/2;
    # u3 {A,B} 1/2, {A,C} (u1, u3) 1/2, {B,C} only u3 → 1
    release = trajectories(seq("u1", "AC") + seq("u2", "AB") + seq("u3", "BAC"))
    entry = run(trajectories(BASIC), release, "LocationAttack", knowledge_length=2,
                target="original_to_anonymized")
    assert risks(entry) == pytest.approx([0.0, 0.5, 1.0])
    assert entry.value == pytest.approx(0.5)


def test_unreleased_user_has_risk_zero():
    release = trajectories(seq("u2", "AB") + seq("u3", "BAC"))
    entry = run(trajectories(BASIC), release, "LocationAttack", knowledge_length=1,
                target="original_to_anonymized")
    assert entry.details["per_user"]["u1"] == 0.0 and entry.details["users_not_released"] == 1


# -- skmob's own fixtures ------------------------------------------------------------------------
# skmob/privacy/tests/test_privacy.py (scikit-mobility): 20 visits of 6 users at 4 places, given
# as (lat, lng) and datetimes; its tests assert 1/#matches of fixed instances. Re-stated here.
SKMOB_LATLNG = [(43.8430139, 10.5079940), (43.5442700, 10.3261500), (43.7085300, 10.4036000),
                (43.7792500, 11.2462600), (43.8430139, 10.5079940), (43.7085300, 10.4036000),
                (43.8430139, 10.5079940), (43.5442700, 10.3261500), (43.5442700, 10.3261500),
                (43.7085300, 10.4036000), (43.8430139, 10.5079940), (43.7792500, 11.2462600),
                (43.7085300, 10.4036000), (43.5442700, 10.3261500), (43.7792500, 11.2462600),
                (43.7085300, 10.4036000), (43.7792500, 11.2462600), (43.8430139, 10.5079940),
                (43.8430139, 10.5079940), (43.5442700, 10.3261500)]
SKMOB_TIMES = ["20110203 8:34:04", "20110203 9:34:04", "20110203 10:34:04", "20110204 10:34:04",
               "20110203 8:34:04", "20110203 9:34:04", "20110204 10:34:04", "20110204 11:34:04",
               "20110203 8:34:04", "20110203 9:34:04", "20110204 10:34:04", "20110204 11:34:04",
               "20110204 10:34:04", "20110204 11:34:04", "20110204 12:34:04",
               "20110204 10:34:04", "20110204 11:34:04", "20110205 12:34:04",
               "20110204 10:34:04", "20110204 11:34:04"]
SKMOB_USERS = [1] * 4 + [2] * 4 + [3] * 4 + [4] * 3 + [5] * 3 + [6] * 2


@pytest.fixture(scope="module")
def skmob_data() -> Trajectories:
    frame = pd.DataFrame({
        "user_id": SKMOB_USERS, "trajectory_id": np.arange(20),
        "timestamp": pd.to_datetime(SKMOB_TIMES, format="%Y%m%d %H:%M:%S"),
        "lon": [p[1] for p in SKMOB_LATLNG], "lat": [p[0] for p in SKMOB_LATLNG]})
    return Trajectories.from_frame(frame)


def _matches(data: Trajectories, name: str, instance, **params) -> int:
    """#users matching one instance, through the engine (the instance's owner is added as a
    user "q" holding exactly the instance, so that its risk is 1/#matches)."""
    from anoneval.plugins.mobility import _attacks  # noqa: F401  (the engine under test)

    frame = data.to_frame(timestamp_format=None)
    extra = pd.DataFrame({"user_id": "q", "trajectory_id": -1 - np.arange(len(instance)),
                          "timestamp": [t for _, _, t in instance],
                          "lon": [ll[1] for ll, _, _ in instance],
                          "lat": [ll[0] for ll, _, _ in instance]})
    both = Trajectories.from_frame(pd.concat([frame.astype({"user_id": str}), extra]))
    entry = run(None, both, name, knowledge_length=len(instance), **params)
    return round(1 / entry.details["per_user"]["q"]) - 1  # q itself matches too


def _t(s: str) -> int:
    return int(pd.Timestamp(s).tz_localize("UTC").timestamp())


def test_skmob_fixture_location_and_sequence(skmob_data):
    p = SKMOB_LATLNG
    first = [(p[0], 0, _t("2011-02-03 08:34:04")), (p[1], 0, _t("2011-02-03 09:34:04"))]
    second = [(p[0], 0, _t("2011-02-03 08:34:04")), (p[3], 0, _t("2011-02-04 10:34:04"))]
    # test_location_match: 1/4 and 1/3; test_location_sequence_match: 1/3 and 1/2
    assert _matches(skmob_data, "LocationAttack", first) == 4
    assert _matches(skmob_data, "LocationAttack", second) == 3
    assert _matches(skmob_data, "LocationSequenceAttack", first) == 3
    assert _matches(skmob_data, "LocationSequenceAttack", second) == 2


@pytest.mark.parametrize("precision, matches", [("day", 1)])
def test_skmob_fixture_location_time(skmob_data, precision, matches):
    # test_location_time_match: user 1's first two visits, 1/1 at "day". Its "month" case
    # asserts 1/3, but users 1, 2, 3 and 6 all visit both places in February 2011: skmob's own
    # _match (multiset inclusion on lat, lng, time key) and the brute force below give 1/4, as
    # the privacy_toy risks below do (LocationTimeAttack at "month" agrees there)
    p = SKMOB_LATLNG
    first = [(p[0], 0, _t("2011-02-03 08:34:04")), (p[1], 0, _t("2011-02-03 09:34:04"))]
    assert _matches(skmob_data, "LocationTimeAttack", first, time_precision=precision) == matches
    assert _matches(skmob_data, "LocationTimeAttack", first, time_precision=precision,
                    compat="skmob") == matches


def test_skmob_fixture_frequency_vector_risks(skmob_data):
    # skmob's test_location_frequency_match / _probability_match take rows 4 and 6 of its
    # frequency vector (user 2's rows: (43.54, 1) and user 2's (43.84, 2)): 1 match at τ = 0
    # and 4 at τ = 1. Through the whole attack (k=2) user 2's risk is therefore 1 at τ = 0.
    entry = run(None, skmob_data, "LocationFrequencyAttack", knowledge_length=2)
    assert entry.details["per_user"]["2"] == 1.0
    assert entry.value == pytest.approx(np.mean(list(brute(skmob_visits(), "LocationFrequency",
                                                           2).values())))


def test_skmob_docstring_risks(mobility_fixtures):
    """Every per-user risk scikit-mobility's attack docstrings print for its privacy_toy.csv."""
    import json

    raw = pd.read_csv(mobility_fixtures / "skmob_privacy_toy.csv")
    data = Trajectories.from_frame(pd.DataFrame({
        "user_id": raw["uid"], "trajectory_id": np.arange(len(raw)),
        "timestamp": pd.to_datetime(raw["datetime"]), "lon": raw["lng"], "lat": raw["lat"]}))
    cases = json.loads((mobility_fixtures / "skmob_attack_risks.json").read_text())["cases"]
    assert {c["attack"] for c in cases} == set(ATTACKS)
    for case in cases:
        entry = run(None, data, case["attack"], **case["params"])
        got = [entry.details["per_user"][str(u)] for u in range(1, 8)]
        assert got == pytest.approx(case["risk"], abs=5e-7), case


@pytest.fixture(scope="module")
def mobility_fixtures():
    return Path(__file__).resolve().parents[2] / "data" / "mobility"


def skmob_visits() -> dict[str, list[tuple[tuple[float, float], int]]]:
    out: dict[str, list] = {}
    order = sorted(range(20), key=lambda i: (str(SKMOB_USERS[i]),
                                            pd.Timestamp(SKMOB_TIMES[i]), i))
    for i in order:
        t = int(pd.Timestamp(SKMOB_TIMES[i]).tz_localize("UTC").timestamp())
        out.setdefault(str(SKMOB_USERS[i]), []).append((SKMOB_LATLNG[i], t))
    return out


# -- brute force: skmob's loop, from the definitions ---------------------------------------------

def _tmp(t: int, precision: str, compat: str | None) -> str:
    d = pd.Timestamp(t, unit="s")
    if compat == "skmob":
        parts = {"year": "y", "month": "ym", "day": "ymd", "hour": "ymdm", "minute": "ymdmM",
                 "second": "ymdmMs"}[precision]
        names = {"y": "year", "m": "month", "d": "day", "M": "minute", "s": "second"}
        return "".join(str(getattr(d, names[c])) for c in parts)
    fmt = {"year": "%Y", "month": "%Y-%m", "day": "%Y-%m-%d", "hour": "%Y-%m-%d %H",
           "minute": "%Y-%m-%d %H:%M", "second": "%Y-%m-%d %H:%M:%S"}[precision]
    return d.strftime(fmt)


def _freq(rows, order="ascending"):
    counts = Counter(loc for loc, _ in rows)
    items = sorted(counts.items())  # (lat, lng) ascending
    sign = 1 if order == "ascending" else -1
    return sorted(items, key=lambda kv: sign * kv[1])  # stable: ties keep (lat, lng) order


def brute(know, kind, k, pop=None, tol=0.0, precision="hour", compat=None):
    """Per-user risk by skmob's loop: every k-combination of rows, one match test per user."""
    pop = know if pop is None else pop
    cross = pop is not know

    def rows_of(user_rows, population=False):
        if kind in ("Location", "LocationSequence"):
            return [loc for loc, _ in user_rows]
        if kind == "LocationTime":
            return [(loc, _tmp(t, precision, compat)) for loc, t in user_rows]
        if kind == "LocationProbability":
            n = len(user_rows)
            return [(loc, f / n) for loc, f in _freq(user_rows)]
        if kind == "HomeWork":
            order = "ascending" if compat == "skmob" else "descending"
            return [loc for loc, _ in _freq(user_rows, order)[:2]]
        return _freq(user_rows)

    def match(v_rows, inst):
        if kind in ("Location", "LocationTime"):
            have = Counter(v_rows)
            return all(have[x] >= c for x, c in Counter(inst).items())
        if kind == "LocationSequence":
            it = iter(v_rows)
            return all(any(x == y for y in it) for x in inst)
        if kind == "HomeWork":
            return set(inst) <= set(v_rows)
        fv = dict(v_rows)
        if any(loc not in fv for loc, _ in inst):
            return False
        if kind == "UniqueLocation":
            return True
        if kind == "LocationProportion":
            mi = max(f for _, f in inst)
            mv = max(fv[loc] for loc, _ in inst)
            return all(fv[loc] / mv - fv[loc] / mv * tol <= f / mi
                       <= fv[loc] / mv + fv[loc] / mv * tol for loc, f in inst)
        return all(fv[loc] - fv[loc] * tol <= f <= fv[loc] + fv[loc] * tol for loc, f in inst)

    prows = {v: rows_of(r) for v, r in pop.items()}
    out = {}
    for u, urows in know.items():
        rows = rows_of(urows)
        kk = 2 if kind == "HomeWork" else k
        insts = [rows] if kk >= len(rows) else itertools.combinations(rows, kk)
        best = 0.0
        for inst in insts:
            matched = [v for v, r in prows.items() if match(r, list(inst))]
            hit = (u in matched) if cross else True
            if matched and hit:
                best = max(best, 1 / len(matched))
        out[u] = best
    return out


def as_trajectories(visits) -> Trajectories:
    rows = [(u, loc, t) for u, vs in visits.items() for loc, t in vs]
    frame = pd.DataFrame({"user_id": [u for u, _, _ in rows],
                          "trajectory_id": np.arange(len(rows)),
                          "timestamp": [t for _, _, t in rows],
                          "lon": [loc[1] for _, loc, _ in rows],
                          "lat": [loc[0] for _, loc, _ in rows]})
    return Trajectories.from_frame(frame)


# a 3 × 3 lattice of places ~2 km apart: distinct tiles, (lat, lng) order = tile-centre order
LATTICE = [(48.81 + 0.02 * a, 2.25 + 0.03 * b) for a in range(3) for b in range(3)]


@st.composite
def visit_sets(draw, max_users=5, max_visits=6, n_places=4):
    n = draw(st.integers(2, max_users))
    out = {}
    for u in range(n):
        m = draw(st.integers(1, max_visits))
        places = draw(st.lists(st.integers(0, n_places - 1), min_size=m, max_size=m))
        hours = draw(st.lists(st.integers(0, 40), min_size=m, max_size=m, unique=True))
        out[f"u{u}"] = sorted(((LATTICE[p], T0 + h * 1800) for p, h in
                               zip(places, hours, strict=True)), key=lambda r: r[1])
    return out


KINDS = [("LocationAttack", {}), ("LocationSequenceAttack", {}),
         ("LocationTimeAttack", {"time_precision": "hour"}),
         ("LocationTimeAttack", {"time_precision": "hour", "compat": "skmob"}),
         ("UniqueLocationAttack", {}), ("LocationFrequencyAttack", {}),
         ("LocationFrequencyAttack", {"tolerance": 0.5}), ("LocationProbabilityAttack", {}),
         ("LocationProportionAttack", {}), ("LocationProportionAttack", {"tolerance": 0.3}),
         ("HomeWorkAttack", {}), ("HomeWorkAttack", {"compat": "skmob"})]


def _brute_for(name, params, know, k, pop=None):
    return brute(know, name.removesuffix("Attack"), k, pop=pop,
                 tol=params.get("tolerance", 0.0), precision=params.get("time_precision", "hour"),
                 compat=params.get("compat"))


@pytest.mark.parametrize("name, params", KINDS)
@settings(max_examples=25, deadline=None)
@given(visits=visit_sets(), k=st.integers(1, 3))
def test_matches_brute_force(name, params, visits, k):
    entry = run(None, as_trajectories(visits), name, knowledge_length=k, **params)
    assert entry.details["per_user"] == pytest.approx(_brute_for(name, params, visits, k))


@pytest.mark.parametrize("name, params", KINDS)
@settings(max_examples=15, deadline=None)
@given(orig=visit_sets(), anon=visit_sets(), k=st.integers(1, 3))
def test_original_to_anonymized_matches_brute_force(name, params, orig, anon, k):
    entry = run(as_trajectories(orig), as_trajectories(anon), name, knowledge_length=k,
                target="original_to_anonymized", **params)
    assert entry.details["per_user"] == pytest.approx(
        _brute_for(name, params, orig, k, pop=anon))


# -- invariants ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ATTACKS)
@settings(max_examples=10, deadline=None)
@given(visits=visit_sets(), k=st.integers(1, 3))
def test_release_equal_to_original(name, visits, k):
    # a release equal to the original: the intruder's real knowledge finds at least the risk of
    # the attack on the release (here exactly: the same knowledge, the same population)
    data = as_trajectories(visits)
    alone = run(None, data, name, knowledge_length=k)
    cross = run(data, data, name, knowledge_length=k, target="original_to_anonymized")
    for u, r in alone.details["per_user"].items():
        assert cross.details["per_user"][u] >= r - 1e-12


@settings(max_examples=20, deadline=None)
@given(visits=visit_sets(n_places=9, max_visits=5), k=st.integers(1, 3))
def test_coarser_tiles_never_lower_matches(visits, k):
    # nested grids (same corner, 2× side): each coarse instance is the image of a fine one
    # with at least its matches, so no user's risk rises (= matches never fall)
    data = as_trajectories(visits)
    box = [2.2, 48.8, 2.4, 48.9]
    fine = run(None, data, "LocationAttack", knowledge_length=k, tiles={"size": 1500.0,
                                                                         "bbox": box})
    coarse = run(None, data, "LocationAttack", knowledge_length=k, tiles={"size": 3000.0,
                                                                           "bbox": box})
    for u, r in fine.details["per_user"].items():
        assert coarse.details["per_user"][u] <= r + 1e-12


# -- sampling, errors ----------------------------------------------------------------------------

def test_sampling_is_seeded_and_a_lower_bound():
    rng = np.random.default_rng(1)
    rows = [(f"u{u}", (48.8 + rng.integers(0, 2) * 0.02, 2.25), T0 + i * H)
            for u in range(6) for i in range(12)]  # two places: sequences are shared
    data = Trajectories.from_frame(pd.DataFrame({
        "user_id": [r[0] for r in rows], "trajectory_id": np.arange(len(rows)),
        "timestamp": [r[2] for r in rows], "lon": [r[1][1] for r in rows],
        "lat": [r[1][0] for r in rows]}))
    exact = run(None, data, "LocationSequenceAttack", knowledge_length=3)
    a = run(None, data, "LocationSequenceAttack", knowledge_length=3, max_instances=5)
    b = run(None, data, "LocationSequenceAttack", knowledge_length=3, max_instances=5)
    # a sampled user who reached risk 1 has its exact risk; the others are lower bounds
    below = sum(r < 1 for r in a.details["per_user"].values())
    assert a.details["sampled_users"] == below > 0 and "sampled_note" in a.details
    assert a.details["per_user"] == b.details["per_user"]  # seeded
    for u, r in a.details["per_user"].items():
        assert r <= exact.details["per_user"][u] + 1e-12
    lo, hi = a.details["interval"]
    assert a.ci == [lo, hi] and exact.ci is None
    assert lo == a.value and lo <= exact.value <= hi


def test_needs_both_sides_for_original_to_anonymized():
    data = trajectories(BASIC)
    entry = evaluate(None, data, [{"name": "LocationAttack",
                                   "params": {"target": "original_to_anonymized"}}]).measures[0]
    assert entry.error and "original_to_anonymized" in entry.error


def test_no_visit_in_the_grid_is_an_error():
    data = trajectories(BASIC)
    entry = evaluate(None, data, [{"name": "LocationAttack", "params": {
        "tiles": {"bbox": [10.0, 40.0, 10.1, 40.1]}}}]).measures[0]
    assert entry.error and "grid" in entry.error


# -- unicity -------------------------------------------------------------------------------------

# points (tile, hour): a = (A, h0), b = (B, h0), c = (C, h1), d = (D, h1)
# u1 {a, b, c}, u2 {a, b}, u3 {c, d}
UNI = [("u1", "A", T0), ("u1", "B", T0 + 60), ("u1", "C", T0 + H),
       ("u2", "A", T0 + 120), ("u2", "B", T0 + 180),
       ("u3", "C", T0 + H + 60), ("u3", "D", T0 + H + 120)]


@pytest.mark.parametrize("points, expected", [
    # p=2: u1 {a,b} in u2 → not unique, {a,c} {b,c} unique → 2/3; u2 {a,b} in u1 → 0; u3 → 1
    (2, [2 / 3, 0.0, 1.0]),
    # p=1: u1 a, b in u2, c in u3 → 0; u2 → 0; u3 c in u1, d unique → 1/2
    (1, [0.0, 0.0, 0.5]),
])
def test_unicity_hand_worked(points, expected):
    entry = run(None, trajectories(UNI), "Unicity", points=points, method="exact")
    assert risks(entry) == pytest.approx(expected)
    assert entry.value == pytest.approx(np.mean(expected))


def test_unicity_users_with_fewer_points_are_left_out():
    entry = run(None, trajectories(UNI), "Unicity", points=3, method="exact")
    # only u1 has 3 points: its one subset {a,b,c} is unique
    assert entry.details["per_user"] == {"u1": 1.0}
    assert entry.details["users_with_fewer_points"] == 2


def brute_unicity(visits, p):
    sets = {u: {(loc, t // 3600) for loc, t in vs} for u, vs in visits.items()}
    out = {}
    for u, s in sets.items():
        if len(s) < p:
            continue
        subs = list(itertools.combinations(sorted(s), p))
        out[u] = sum(not any(set(c) <= sets[v] for v in sets if v != u) for c in subs) / len(subs)
    return out


@settings(max_examples=25, deadline=None)
@given(visits=visit_sets(max_users=6, max_visits=7), p=st.integers(1, 3))
def test_unicity_exact_matches_brute_force(visits, p):
    expected = brute_unicity(visits, p)
    if not expected:
        return
    entry = run(None, as_trajectories(visits), "Unicity", points=p, method="exact")
    assert entry.details["per_user"] == pytest.approx(expected)


def test_unicity_monte_carlo_is_within_its_interval():
    rng = np.random.default_rng(3)
    visits = {f"u{u}": [(LATTICE[int(rng.integers(0, 9))], T0 + int(h) * 3600)
                        for h in rng.choice(12, 8, replace=False)] for u in range(30)}
    data = as_trajectories(visits)
    exact = run(None, data, "Unicity", points=2, method="exact")
    mc = run(None, data, "Unicity", points=2, method="monte_carlo", samples=400)
    se = mc.details["standard_error"]
    assert 0 < se < 0.05 and abs(mc.value - exact.value) < 4 * se + 1e-9
    assert exact.ci is None  # the exact method has no sampling error
    assert mc.ci == pytest.approx([mc.value - 1.959963985 * se, mc.value + 1.959963985 * se])
    narrow = run(None, data, "Unicity", points=2, method="monte_carlo", samples=400,
                 confidence_level=0.5)
    assert narrow.ci == pytest.approx([mc.value - 0.6744897502 * se, mc.value + 0.6744897502 * se])
    assert run(None, data, "Unicity", points=2, method="monte_carlo",
               samples=400).value == mc.value  # seeded


def test_html_report_draws_heat_maps_and_histogram(tmp_path):
    import json

    from anoneval.core.cli.main import main

    root = Path(__file__).resolve().parents[3] / "examples"
    config = json.loads((root / "mobility_attacks.json").read_text())
    for side in ("original", "anonymized"):
        config[side]["path"] = str(root / config[side]["path"])
    config["measures"] = config["measures"][:2]
    (tmp_path / "c.json").write_text(json.dumps(config))
    html = tmp_path / "r.html"
    assert main(["run", str(tmp_path / "c.json"), "-q", "-o", str(tmp_path / "r.json"),
                 "--html", str(html)]) == 0
    text = html.read_text()
    assert text.count("visits per tile") >= 2 and text.count("per-user risk") >= 2
    assert text.count("data:image/png") >= 4


# -- collective utility measures ------------------------------------------------------------------

ORIG_C = seq("u1", "AB") + seq("u2", "AABC") + seq("u3", "BC")  # A3 B3 C2
ANON_C = seq("u1", "AC") + seq("u2", "AB") + seq("u3", "BAC")  # A3 B2 C2


def test_visits_per_location_hand_worked():
    from scipy.spatial.distance import jensenshannon
    from scipy.stats import pearsonr

    o, a = trajectories(ORIG_C), trajectories(ANON_C)
    entry = run(o, a, "VisitsPerLocation")
    assert entry.value == pytest.approx(2 * (3 + 2 + 2) / (8 + 7))  # cpc
    d = entry.details
    assert d["rmse"] == pytest.approx(np.sqrt(1 / 3))
    assert d["pearson"] == pytest.approx(pearsonr([3, 3, 2], [3, 2, 2]).statistic)
    assert d["jsd"] == pytest.approx(jensenshannon([3, 3, 2], [3, 2, 2], base=2) ** 2)
    assert run(o, a, "VisitsPerLocation", metric="jsd").value == pytest.approx(d["jsd"])
    assert entry.direction == "higher = less loss"
    assert run(o, a, "VisitsPerLocation", metric="rmse").direction == "higher = more loss"


def test_homes_per_location_hand_worked():
    # every visit is between 00:00 and 03:00 (night). Original homes: u1 {A1 B1} tie → A
    # (smaller lat), u2 → A, u3 {B1 C1} → B: A2 B1. Anonymized: u1 {A,C} → A, u2 → A,
    # u3 {B,A,C} → A: A3. cpc = 2·(2 + 0) / (3 + 3)
    entry = run(trajectories(ORIG_C), trajectories(ANON_C), "HomesPerLocation")
    assert entry.value == pytest.approx(2 / 3)
    assert entry.details["totals"] == {"original": 3.0, "anonymized": 3.0}


def test_home_is_the_night_location():
    from anoneval.plugins.mobility._collective import home_tiles

    # u: A at 12:00, 13:00, 14:00 and B at 23:00 → home B; v: only day visits → its most
    # frequent, C; 07:00:00 and 22:00:00 count as night (both ends included)
    rows = [("u", "A", T0 + 12 * H), ("u", "A", T0 + 13 * H), ("u", "A", T0 + 14 * H),
            ("u", "B", T0 + 23 * H), ("v", "C", T0 + 12 * H), ("v", "C", T0 + 13 * H),
            ("v", "D", T0 + 14 * H), ("w", "A", T0 + 12 * H), ("w", "D", T0 + 7 * H),
            ("w", "A", T0 + 13 * H), ("w", "C", T0 + 22 * H)]
    data = trajectories(rows)
    grid = make_grid(TileSpec(), data)
    table = visit_table(data, grid)
    users, home = home_tiles(table, grid)
    tile = {p: int(grid.tile_of(np.array([PLACES[p][0]]), np.array([PLACES[p][1]]))[0])
            for p in "ABCD"}
    got = dict(zip(table.users[users], home, strict=True))
    # w: night visits D (07:00) and C (22:00), tie → smaller lat: D (48.83) before C (48.90)
    assert got == {"u": tile["B"], "v": tile["C"], "w": tile["D"]}


def test_od_flows_hand_worked():
    def trips(spec):
        rows = []
        for tid, (o, d) in enumerate(spec):
            for i, p in enumerate((o, d)):
                rows.append({"user_id": f"u{tid}", "trajectory_id": tid,
                             "timestamp": T0 + i * 60, "lon": PLACES[p][0],
                             "lat": PLACES[p][1]})
        return Trajectories.from_frame(pd.DataFrame(rows))

    # original A→B ×2, B→C; anonymized A→B, B→C ×2: cpc = 2·(1 + 1)/(3 + 3) = 2/3
    o = trips([("A", "B"), ("A", "B"), ("B", "C")])
    a = trips([("A", "B"), ("B", "C"), ("B", "C")])
    entry = run(o, a, "ODFlows")
    assert entry.value == pytest.approx(2 / 3)
    assert entry.details["keys"] == {"original": 2, "anonymized": 2, "common": 2}
    assert entry.details["top_original"][0][1] == 2.0


def test_tile_coverage_hand_worked():
    o = trajectories(seq("u1", "AB") + seq("u2", "C"))
    a = trajectories(seq("u1", "AB") + seq("u2", "D"))
    entry = run(o, a, "TileCoverage", tiles={"bbox": [2.2, 48.8, 2.45, 48.92]})
    assert entry.value == pytest.approx(2 / 3)  # A, B of A, B, C
    assert entry.details["jaccard"] == pytest.approx(2 / 4)
    assert entry.details["share_tiles_covered"]["original"] == pytest.approx(3 / 2296)


# -- individual mobility ---------------------------------------------------------------------------

def _hav(p, q):
    """Haversine in km with R = 6371.0, written with math (skmob's gislib form)."""
    import math

    (la1, lo1), (la2, lo2) = p, q
    a = (math.sin(math.radians(la2 - la1) / 2) ** 2 + math.cos(math.radians(la1))
         * math.cos(math.radians(la2)) * math.sin(math.radians(lo2 - lo1) / 2) ** 2)
    return 6371.0 * 2 * math.atan2(math.sqrt(a), math.sqrt(1 - a))


def test_lz_entropy_hand_worked():
    from anoneval.plugins.mobility.individual_mobility import lz_entropy

    # A B A B: S = 3 + 1 (i=1: "B" not in "A") + 3 (i=2: "AB" runs to the end, j = n+1) = 7
    assert lz_entropy(np.array([0, 1, 0, 1])) == pytest.approx(4 * 2 / 7)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=25), min_size=1, max_size=5))
def test_compiled_lz_entropies_equal_the_python_estimator(users):
    from anoneval.plugins.mobility.individual_mobility import lz_entropies, lz_entropy

    codes = np.array([c for u in users for c in u], dtype=np.int64)
    starts = np.r_[0, np.cumsum([len(u) for u in users])]
    expect = [lz_entropy(np.array(u, dtype=np.int64)) for u in users]
    assert lz_entropies(codes, starts).tolist() == expect


@pytest.mark.parametrize("measure, expected", [
    ("number_of_visits", [3.0, 2.0]),
    ("number_of_locations", [2.0, 2.0]),
    ("random_entropy", [1.0, 1.0]),
    # u1 visits A, A, B: p = (2/3, 1/3)
    ("uncorrelated_entropy", [-(2 / 3) * np.log2(2 / 3) - (1 / 3) * np.log2(1 / 3), 1.0]),
])
def test_individual_counts_hand_worked(measure, expected):
    data = trajectories(seq("u1", "AAB") + seq("u2", "CD"))
    entry = run(data, data, "IndividualMobility", measure=measure)
    assert [entry.details["per_user"][u][0] for u in ("u1", "u2")] == pytest.approx(expected)
    assert entry.value == 0.0  # the same data on both sides


def test_individual_distances_against_math():
    # two-visit user A → B: one jump between the tile centres; radius of gyration around the
    # midpoint in degrees; distance_straight_line = maximum_distance = the jump
    data = trajectories(seq("u1", "AB") + seq("u2", "CCD"))
    grid = make_grid(TileSpec(), data)
    table = visit_table(data, grid)
    lng, lat = grid.centroid(table.tile)
    a, b = (lat[0], lng[0]), (lat[1], lng[1])
    centre = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    rg = np.sqrt((_hav(a, centre) ** 2 + _hav(b, centre) ** 2) / 2)
    for measure, want in [("radius_of_gyration", rg), ("distance_straight_line", _hav(a, b)),
                          ("maximum_distance", _hav(a, b))]:
        entry = run(data, data, "IndividualMobility", measure=measure)
        assert entry.details["per_user"]["u1"][0] == pytest.approx(want, rel=1e-9)
    # u2: C, C, D: k=1 radius of the most visited location alone is 0; k=2 weights C twice
    c, d = (lat[2], lng[2]), (lat[4], lng[4])
    wc = ((2 * c[0] + d[0]) / 3, (2 * c[1] + d[1]) / 3)
    k2 = np.sqrt((2 * _hav(c, wc) ** 2 + _hav(d, wc) ** 2) / 3)
    e1 = run(data, data, "IndividualMobility", measure="k_radius_of_gyration", k=1)
    e2 = run(data, data, "IndividualMobility", measure="k_radius_of_gyration", k=2)
    assert e1.details["per_user"]["u2"][0] == 0.0
    assert e2.details["per_user"]["u2"][0] == pytest.approx(k2, rel=1e-9)


def test_individual_comparisons():
    from scipy import stats

    o = trajectories(seq("u1", "AB") + seq("u2", "ABC") + seq("u3", "A"))
    a = trajectories(seq("u1", "AB") + seq("u2", "A") + seq("u3", "ABCD"))
    # number_of_locations: o (2, 3, 1), a (2, 1, 4)
    def value(compare):
        return run(o, a, "IndividualMobility", measure="number_of_locations",
                   compare=compare).value
    assert value("mean_abs_diff") == pytest.approx((0 + 2 + 3) / 3)
    assert value("mean_rel_diff") == pytest.approx((0 + 2 / 3 + 3) / 3)
    assert value("ks") == pytest.approx(stats.ks_2samp([2, 3, 1], [2, 1, 4]).statistic)
    assert value("wasserstein") == pytest.approx(stats.wasserstein_distance([2, 3, 1],
                                                                            [2, 1, 4]))
    jumps = run(o, a, "IndividualMobility", measure="waiting_times")
    assert jumps.details["per_user"]["u2"] == [[3600.0, 3600.0], []]


# -- trip distributions --------------------------------------------------------------------------

def test_trip_distribution_against_scipy_and_by_hand():
    from scipy.spatial.distance import jensenshannon

    from anoneval.plugins.mobility.trip_distribution import trip_features

    def trips(spec):
        rows = []
        for tid, (places, dt) in enumerate(spec):
            for i, p in enumerate(places):
                rows.append({"user_id": "u", "trajectory_id": tid, "timestamp": T0 + i * dt,
                             "lon": PLACES[p][0], "lat": PLACES[p][1]})
        return Trajectories.from_frame(pd.DataFrame(rows))

    o = trips([("AB", 60), ("ABA", 60), ("C", 60)])
    a = trips([("AB", 600), ("AC", 60)])
    f = trip_features(o)
    ab = _hav(PLACES["A"][::-1], PLACES["B"][::-1]) * 1000 * 6371008.8 / 6371000.0
    # lengths AB, ABA = 2·AB, C = 0; diameters AB, AB, 0; durations 60, 120, 0
    assert f["length"] == pytest.approx([ab, 2 * ab, 0.0])
    assert f["diameter"] == pytest.approx([ab, ab, 0.0])
    assert f["duration"].tolist() == [60.0, 120.0, 0.0]
    entry = run(o, a, "TripDistribution", attribute="duration", bins=4)
    # durations o (60, 120, 0), a (600, 60) on 4 bins of [0, 600]: o (3, 0, 0, 0), a (1, 0, 0, 1)
    assert entry.value == pytest.approx(jensenshannon([3, 0, 0, 0], [1, 0, 0, 1], base=2) ** 2)
    same = run(o, o, "TripDistribution")
    assert same.details == {"bins": 20, "length": 0.0, "duration": 0.0, "diameter": 0.0}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.tuples(st.floats(2.2, 2.5), st.floats(48.7, 49.0)), min_size=1,
                         max_size=8), min_size=1, max_size=5))
def test_trip_diameter_is_the_largest_pairwise_haversine(paths):
    from anoneval.plugins.mobility.trip_distribution import diameters

    rows = [{"user_id": "u", "trajectory_id": i, "timestamp": T0 + j, "lon": lon, "lat": lat}
            for i, path in enumerate(paths) for j, (lon, lat) in enumerate(path)]
    data = Trajectories.from_frame(pd.DataFrame(rows))
    want = [max((_hav((la1, lo1), (la2, lo2)) for lo1, la1 in p for lo2, la2 in p), default=0)
            * 1000 * 6371008.8 / 6371000.0 for p in paths]
    assert diameters(data) == pytest.approx(want, rel=1e-9, abs=0.1)  # ≤ 0.1 m: see diameters


# skmob/measures/tests/test_individual.py (scikit-mobility), class TestIndividualMetrics: the
# same 20 visits of 6 users as the privacy fixture above, on the raw (lat, lng); the values its
# tests assert, re-stated (per uid 1..6; math.isclose there, to the digits given)
SKMOB_INDIVIDUAL = {
    ("radius_of_gyration", 2): [31.964885737, 14.988909726, 31.964885737, 35.241089869,
                                30.727237693, 18.146860183],
    ("k_radius_of_gyration", 2): [18.14686018, 8.0811433, 9.64969996, 9.64969996,
                                  34.07360735, 18.14686018],
    ("k_radius_of_gyration", 1): [0.0] * 6,
    ("random_entropy", 2): [2, 1.5849625, 2, 1.5849625, 1.5849625, 1],
    ("uncorrelated_entropy", 2): [2, 1.5, 2, 1.5849625, 1.5849625, 1],
    ("real_entropy", 2): [1.6, 1.14285714285, 1.6, 1.1887218755, 1.1887218755, 0.6666666666],
    ("maximum_distance", 2): [68.14698568, 36.29370121, 59.66188292, 78.4910639, 68.14698568,
                              36.29370121],
    ("distance_straight_line", 2): [123.74008488, 70.57908362, 96.10397212, 97.79046189,
                                    127.8088686, 36.29370121],
    ("number_of_locations", 2): [4, 3, 4, 3, 3, 2],
}


@pytest.mark.parametrize("which, k", list(SKMOB_INDIVIDUAL))
def test_skmob_individual_fixture(which, k):
    from anoneval.plugins.mobility.individual_mobility import user_values

    visits = skmob_visits()
    users = sorted(visits, key=int)
    lat = np.array([ll[0] for u in users for ll, _ in visits[u]])
    lng = np.array([ll[1] for u in users for ll, _ in visits[u]])
    t = np.array([tt for u in users for _, tt in visits[u]])
    loc = pd.factorize(pd.Series(list(zip(lat, lng, strict=True))))[0]
    starts = np.r_[0, np.cumsum([len(visits[u]) for u in users])]
    got = user_values(which, starts, lat, lng, t, loc, k)
    assert got == pytest.approx(SKMOB_INDIVIDUAL[(which, k)], rel=1e-7, abs=1e-7)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.integers(0, 6), st.integers(1, 9), min_size=1),
       st.dictionaries(st.integers(0, 6), st.integers(1, 9), min_size=1))
def test_comparison_bounds_and_symmetry(a, b):
    from anoneval.plugins.mobility._collective import compare

    for metric in ("cpc", "jsd", "rmse"):
        x, y = compare(a, b, metric), compare(b, a, metric)
        assert x == pytest.approx(y, abs=1e-12)
        assert x >= -1e-12 and (metric == "rmse" or x <= 1 + 1e-12)
    assert compare(a, a, "cpc") == pytest.approx(1.0) and compare(a, a, "jsd") == 0.0


@settings(max_examples=10, deadline=None)
@given(visits=visit_sets(), seed=st.integers(0, 99))
def test_measures_invariant_to_trajectory_order(visits, seed):
    data = as_trajectories(visits)
    perm = np.random.default_rng(seed).permutation(len(data))
    shuffled = data.subset(perm)
    for name, params in [("LocationAttack", {"knowledge_length": 2}),
                         ("VisitsPerLocation", {}), ("Unicity", {"points": 1})]:
        first = run(data, data, name, **params).details["per_user" if name != "VisitsPerLocation"
                                                        else "cpc"]
        again = run(shuffled, shuffled, name, **params).details[
            "per_user" if name != "VisitsPerLocation" else "cpc"]
        assert first == again


# -- values computed by scikit-mobility 1.3.1 itself ----------------------------------------------
# tests/data/mobility/skmob_random_values.json: generated with skmob 1.3.1 in a pinned Python 3.9
# venv (pandas 1.5.3, numpy 1.23.5; never a dependency) on skmob_random.csv (see its _note)

def _skmob_random():
    import json

    folder = Path(__file__).resolve().parents[2] / "data" / "mobility"
    raw = pd.read_csv(folder / "skmob_random.csv")
    values = json.loads((folder / "skmob_random_values.json").read_text())
    return raw, values


def test_attacks_equal_skmob_on_random_data():
    raw, values = _skmob_random()
    data = Trajectories.from_frame(pd.DataFrame({
        "user_id": raw["uid"], "trajectory_id": np.arange(len(raw)),
        "timestamp": pd.to_datetime(raw["datetime"]), "lon": raw["lng"], "lat": raw["lat"]}))
    for case in values["attacks"]:
        params = dict(case["params"])
        if case["attack"] == "LocationTimeAttack":
            params["time_precision"] = params["time_precision"].lower()
            params["compat"] = "skmob"
        if case["attack"] == "HomeWorkAttack":
            params["compat"] = "skmob"
        entry = run(None, data, case["attack"], **params)
        assert entry.details["per_user"] == pytest.approx(case["risk"]), case


def test_individual_measures_equal_skmob_on_random_data():
    from anoneval.plugins.mobility.individual_mobility import user_values

    raw, values = _skmob_random()
    raw = raw.assign(t=pd.to_datetime(raw["datetime"]).astype("int64") // 10**9)
    raw = raw.sort_values(["uid", "t"], kind="stable")
    users = sorted(raw["uid"].unique())
    starts = np.r_[0, np.cumsum(raw.groupby("uid").size().loc[users].to_numpy())]
    lat, lng, t = raw["lat"].to_numpy(), raw["lng"].to_numpy(), raw["t"].to_numpy()
    loc = pd.factorize(pd.Series(list(zip(lat, lng, strict=True))))[0]
    home = np.array([values["individual"]["home_location"][str(u)] for u in users])
    for which, expected in values["individual"].items():
        if which == "home_location":
            continue
        got = user_values(which, starts, lat, lng, t, loc, 2, home)
        want = [expected[str(u)] for u in users]
        assert [None if np.isnan(g) else g for g in got] == pytest.approx(want, rel=1e-9), which


def test_home_equals_skmob_on_random_data():
    from anoneval.plugins.mobility._collective import home_tiles

    raw, values = _skmob_random()
    data = Trajectories.from_frame(pd.DataFrame({
        "user_id": raw["uid"], "trajectory_id": np.arange(len(raw)),
        "timestamp": pd.to_datetime(raw["datetime"]), "lon": raw["lng"], "lat": raw["lat"]}))
    grid = make_grid(TileSpec(), data)
    table = visit_table(data, grid)
    users, home = home_tiles(table, grid)
    for u, h in zip(table.users[users], home, strict=True):
        lat, lng = values["individual"]["home_location"][str(u)]
        assert grid.tile_of(np.array([lng]), np.array([lat]))[0] == h, u
