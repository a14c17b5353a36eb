"""ScikitMeasures (the MobiDataLab anonymizer's skmob averages) on hand-worked cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from anoneval.core import evaluate
from anoneval.core.api import ConfigError, Trajectories

T0 = 1_300_000_000
P1, P2, P3 = (2.30, 48.85), (2.30, 48.86), (2.31, 48.86)  # > 250 m apart: distinct tiles
R = 6371.0


def traces(rows):
    """Rows (user, place, time); one trajectory per user."""
    return Trajectories.from_frame(pd.DataFrame({
        "user_id": [u for u, _, _ in rows], "trajectory_id": [u for u, _, _ in rows],
        "timestamp": [t for _, _, t in rows], "lon": [p[0] for _, p, _ in rows],
        "lat": [p[1] for _, p, _ in rows]}))


ORIG = [("a", P1, T0), ("a", P1, T0 + 600), ("a", P2, T0 + 1800), ("a", P3, T0 + 7200),
        ("b", P1, T0 + 100), ("b", P2, T0 + 200)]
D12 = R * math.radians(0.01)  # along a meridian
D23 = 2 * R * math.asin(math.cos(math.radians(48.86)) * math.sin(math.radians(0.01) / 2))


def run(orig, anon, **params):
    entry = evaluate(traces(orig), traces(anon),
                     [{"name": "ScikitMeasures", "params": params}]).measures[0]
    assert entry.error is None, entry.error
    return entry


@pytest.mark.parametrize(("measure", "expected"), [
    # tiles P1: a,a,b (3 points) · P2: a,b (2) · P3: a (1)
    ("visits_per_location", 6 / 3),
    ("random_location_entropy", (1 + 1 + 0) / 3),  # log2 of 2, 2 and 1 users
    # P1: shares 2/3, 1/3 → ln 3 − (2/3) ln 2; P2: ln 2; P3: 0
    ("uncorrelated_location_entropy", (math.log(3) - 2 / 3 * math.log(2) + math.log(2)) / 3),
    # a: 0 + d12 + d23, b: d12
    ("distance_straight_line", (2 * D12 + D23) / 2),
    # a: P1 → its last point within 1 h is P2 (t0+1800); b: P1 → P2
    ("mean_square_displacement", D12 ** 2),
])
def test_hand_values_identical_sides(measure, expected):
    entry = run(ORIG, ORIG, measure=measure)
    assert entry.details["original"] == pytest.approx(expected, rel=1e-12)
    assert entry.details["anonymized"] == pytest.approx(expected, rel=1e-12)
    assert entry.details[f"{measure}_original"] == round(entry.details["original"], 4)
    assert entry.value == 0.0


def test_difference_and_the_originals_tiles():
    # b removed and a point far outside the original's extent added: dropped from the tiles
    anon = [r for r in ORIG if r[0] == "a"] + [("c", (2.50, 48.95), T0)]
    entry = run(ORIG, anon, measure="visits_per_location")
    assert entry.details["anonymized"] == pytest.approx(4 / 3)  # P1: 2, P2: 1, P3: 1
    assert entry.value == pytest.approx(2 - 4 / 3)
    rel = run(ORIG, anon, measure="visits_per_location", compare="rel_diff")
    assert rel.value == pytest.approx((2 - 4 / 3) / 2)
    # the far point counts on the raw points: c has one point, straight line 0
    line = run(ORIG, anon, measure="distance_straight_line")
    assert line.details["anonymized"] == pytest.approx((D12 + D23 + 0.0) / 2)


def test_msd_window_and_ties():
    # a's first point at t0; with 30 min, the last point at or before t0 + 1800 is P2 itself
    # (inclusive); with 29 min it is P1 (t0 + 600): displacement 0
    assert run(ORIG, ORIG, measure="mean_square_displacement",
               msd_seconds=1800.0).details["original"] == pytest.approx(D12 ** 2)
    # b: P1 → P2 within 1740 s as well (100 s apart)
    assert run(ORIG, ORIG, measure="mean_square_displacement",
               msd_seconds=1740.0).details["original"] == pytest.approx(D12 ** 2 / 2)


def test_compat_mdl_rounds_coordinates_to_float32():
    f = np.float32
    lat1, lat2 = float(f(P1[1])), float(f(P2[1]))
    d12 = 2 * R * math.asin(math.sqrt(math.sin(math.radians(lat2 - lat1) / 2) ** 2))
    entry = run(ORIG[4:], ORIG[4:], measure="distance_straight_line", compat="mdl")
    assert entry.details["original"] == pytest.approx(d12, rel=1e-12)
    assert entry.details["original"] != pytest.approx(D12, rel=1e-9)  # float32 moved it


def test_bad_params():
    with pytest.raises(ConfigError, match="measure"):
        evaluate(traces(ORIG), traces(ORIG), [{"name": "ScikitMeasures",
                                               "params": {"measure": "radius"}}])
    zero = [("a", P1, T0), ("b", P1, T0)]
    entry = evaluate(traces(zero), traces(ORIG), [{"name": "ScikitMeasures", "params": {
        "measure": "distance_straight_line", "compare": "rel_diff"}}]).measures[0]
    assert entry.error is not None and "abs_diff" in str(entry.error)


@pytest.mark.parametrize("measure", ["visits_per_location", "uncorrelated_location_entropy",
                                     "distance_straight_line", "mean_square_displacement"])
def test_independent_of_row_order_and_inputs_untouched(measure):
    rows = [*ORIG, ("c", P3, T0 + 50), ("c", P2, T0 + 5000)]
    frame = traces(rows).to_frame(timestamp_format=None)
    shuffled = frame.sample(frac=1.0, random_state=1)
    before = shuffled.copy()
    a = evaluate(traces(rows), traces(ORIG), [{"name": "ScikitMeasures",
                                               "params": {"measure": measure}}]).measures[0]
    b = evaluate(Trajectories.from_frame(shuffled), traces(ORIG),
                 [{"name": "ScikitMeasures", "params": {"measure": measure}}]).measures[0]
    assert a.value == pytest.approx(b.value, rel=1e-12) and a.error is None
    pd.testing.assert_frame_equal(shuffled, before)
