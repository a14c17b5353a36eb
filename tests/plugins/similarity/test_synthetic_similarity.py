"""Record similarity (NNDR, CopiedRows, DistanceToClosestRecord's modes): SDMetrics parity,
hand-worked cases and the exact-copy regression."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anoneval.core import ConfigError, evaluate
from anoneval.plugins._shared.mixed import encode, nearest, nearest_distances
from anoneval.plugins.similarity.distance_to_closest_record import sdm_dcr

sdmetrics = pytest.importorskip("sdmetrics")
from sdmetrics.single_table import (  # noqa: E402
    DCRBaselineProtection,
    DCROverfittingProtection,
    NewRowSynthesis,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "synthetic"
META = {"columns": {"age": {"sdtype": "numerical"}, "income": {"sdtype": "numerical"},
                    "hours": {"sdtype": "numerical"}, "job": {"sdtype": "categorical"},
                    "region": {"sdtype": "categorical"}, "smoker": {"sdtype": "categorical"}}}


@pytest.fixture(scope="module")
def shared():
    ori, syn, ctl = (pd.read_csv(DATA / f"{n}.csv") for n in ("original", "released", "control"))
    # missing values on both sides exercise the NaN rules
    syn.loc[::37, "income"] = np.nan
    ori.loc[::53, "income"] = np.nan
    syn.loc[::41, "job"] = np.nan
    ori.loc[::59, "job"] = np.nan
    return ori.iloc[:400], syn.iloc[:300], ctl.iloc[:350]


def value(ori, syn, spec, control=None):
    rep = evaluate(ori, syn, [spec], control=control)
    assert rep.measures[0].error is None, rep.measures[0].error
    return rep.measures[0]


def test_sdm_dcr_equals_sdmetrics_distances(shared):
    ori, syn, _ = shared
    from sdmetrics.single_table.privacy.dcr_utils import calculate_dcr

    ours = sdm_dcr(syn, ori, list(ori.columns))
    theirs = calculate_dcr(syn, ori, META).to_numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-12)


def test_dcr_overfitting_equals_sdmetrics(shared):
    ori, syn, ctl = shared
    m = value(ori, syn, {"name": "DistanceToClosestRecord",
                         "params": {"mode": "overfitting"}}, control=ctl)
    theirs = DCROverfittingProtection.compute_breakdown(ori, syn, ctl, META, None)
    assert m.details["score"] == pytest.approx(theirs["score"], abs=1e-9)
    assert m.value == pytest.approx(1 - theirs["score"], abs=1e-9)


def test_dcr_baseline_median_equals_sdmetrics(shared, monkeypatch):
    ori, syn, _ = shared
    m = value(ori, syn, {"name": "DistanceToClosestRecord", "params": {"mode": "baseline"}})
    med = m.details["median_DCR_to_real_data"]
    # SDMetrics draws its random table unseeded unless told; one draw varies by about 10 %
    # (and by version), so ours is compared with the mean of five seeded draws
    baselines = []
    for seed in range(5):
        monkeypatch.setattr(DCRBaselineProtection, "_seed", seed)
        theirs = DCRBaselineProtection.compute_breakdown(ori, syn, META, None)
        assert med["synthetic_data"] == pytest.approx(
            theirs["median_DCR_to_real_data"]["synthetic_data"], abs=1e-12)
        baselines.append(theirs["median_DCR_to_real_data"]["random_data_baseline"])
    assert med["random_data_baseline"] == pytest.approx(np.mean(baselines), rel=0.1), baselines


def test_dcr_overfitting_is_not_fooled_by_subsampling(shared):
    # SDMetrics#934: subsampling the reference lets an exact copy score > 0; here it scores 0
    ori, _, ctl = shared
    copy = ori.dropna().drop_duplicates()
    m = value(copy, copy, {"name": "DistanceToClosestRecord",
                           "params": {"mode": "overfitting"}}, control=ctl)
    assert m.details["score"] == 0
    assert m.value == 1


def test_dcr_share_counts_exact_copies_with_duplicated_originals():
    # every original row is duplicated: the 5th percentile of actual-to-actual NN distances
    # is 0, and the strict rule DCR < 0 would count nothing. Half the release copies rows.
    rng = np.random.default_rng(0)
    base = pd.DataFrame({"x": rng.normal(size=200), "y": rng.normal(size=200)})
    ori = pd.concat([base, base], ignore_index=True)
    fresh = pd.DataFrame({"x": rng.normal(size=100), "y": rng.normal(size=100)})
    release = pd.concat([base.iloc[:100], fresh], ignore_index=True)
    m = value(ori, release, {"name": "DistanceToClosestRecord"})
    assert m.details["threshold"] == 0
    assert m.value == pytest.approx(0.5)
    assert m.details["exact_copies"] == 100
    assert m.details["expected_share"] == 1.0  # every original row has a twin


def test_dcr_share_without_copies_is_near_percentile():
    rng = np.random.default_rng(2)
    ori = pd.DataFrame(rng.normal(size=(2000, 3)), columns=list("abc"))
    rel = pd.DataFrame(rng.normal(size=(2000, 3)), columns=list("abc"))
    m = value(ori, rel, {"name": "DistanceToClosestRecord"})
    assert m.value == pytest.approx(0.05, abs=0.03)
    assert m.details["expected_share"] == pytest.approx(0.05, abs=0.001)


def test_dcr_overfitting_needs_control(shared):
    ori, syn, _ = shared
    with pytest.raises(ConfigError, match="DistanceToClosestRecord needs the control"):
        evaluate(ori, syn, [{"name": "DistanceToClosestRecord",
                             "params": {"mode": "overfitting"}}])


@pytest.mark.parametrize("tolerance", [0.0, 0.01, 0.2])
def test_copied_rows_equals_new_row_synthesis(shared, tolerance):
    ori, syn, _ = shared
    # sdmetrics matches row by row: 120 released rows (NaNs included), 20 of them exact copies
    syn = pd.concat([syn.iloc[:100], ori.iloc[:20]], ignore_index=True)
    m = value(ori, syn, {"name": "CopiedRows", "params": {"tolerance": tolerance}})
    theirs = NewRowSynthesis.compute_breakdown(ori, syn, META,
                                               numerical_match_tolerance=tolerance)
    assert m.details["score"] == pytest.approx(theirs["score"], abs=1e-9)
    assert m.details["num_matched_rows"] == theirs["num_matched_rows"]
    assert m.value == pytest.approx(1 - theirs["score"], abs=1e-9)


def test_copied_rows_by_hand():
    ori = pd.DataFrame({"x": [1.0, 2.0, np.nan], "c": ["a", "b", "c"]})
    rel = pd.DataFrame({"x": [1.0, 2.05, np.nan, np.nan, 1.0], "c": ["a", "b", "c", "a", "b"]})
    # exact: rows 0 and 2 copy; with 5 %: also row 1 (|2 − 2.05| <= 0.1025)
    assert value(ori, rel, {"name": "CopiedRows", "params": {"tolerance": 0}}).value == 0.4
    assert value(ori, rel, {"name": "CopiedRows", "params": {"tolerance": 0.05}}).value == 0.6


def test_nndr_by_hand():
    ori = pd.DataFrame({"x": [0.0, 1.0, 10.0]})
    rel = pd.DataFrame({"x": [0.0, 0.2, 5.0, 9.0]})
    # Euclidean on x: 0 → (0, 1) → 0; 0.2 → (0.2, 0.8) → 0.25; 5 → (4, 5) → 0.8; 9 → (1, 8)
    m = value(ori, rel, {"name": "NNDR", "params": {"distance": {"name": "Euclidean"}}},
              control=pd.DataFrame({"x": [0.5, 20.0]}))
    assert m.value == pytest.approx(3 / 4)
    assert m.details["quantiles"]["p50"] == pytest.approx((0.25 + 0.125) / 2)
    # control: 0.5 → (0.5, 0.5) → 1; 20 → (10, 19) → 10/19
    assert m.details["control"]["share_below"] == 0
    assert m.details["control"]["mean"] == pytest.approx((1 + 10 / 19) / 2)


def test_nndr_copy_vs_independent():
    rng = np.random.default_rng(4)
    ori = pd.DataFrame(rng.normal(size=(500, 3)), columns=list("abc"))
    other = pd.DataFrame(rng.normal(size=(500, 3)), columns=list("abc"))
    assert value(ori, ori, {"name": "NNDR"}).value == 1
    assert value(ori, other, {"name": "NNDR"}).value < 0.3


def test_nearest_breaks_ties_by_order_and_matches_brute_force():
    rng = np.random.default_rng(3)
    a = pd.DataFrame({"x": rng.integers(0, 3, 50).astype(float), "c": rng.choice(list("ab"), 50)})
    b = pd.DataFrame({"x": rng.integers(0, 3, 80).astype(float), "c": rng.choice(list("ab"), 80)})
    (ea, eb), num, cat = encode([a, b], ["x", "c"])
    assert (num, cat) == (["x"], ["c"])
    full = np.abs(a.x.to_numpy()[:, None] - b.x.to_numpy()[None, :]) / 2 + \
        (a.c.to_numpy()[:, None] != b.c.to_numpy()[None, :])
    idx, dist = nearest(ea, eb, 3)
    np.testing.assert_allclose(dist, np.sort(full, axis=1)[:, :3])
    expected = np.argsort(full, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(idx, expected)
    np.testing.assert_allclose(nearest_distances(ea, eb, 2), np.sort(full, axis=1)[:, :2])
    order = rng.permutation(80)
    idx2, dist2 = nearest(ea, eb, 3, order=order)
    np.testing.assert_allclose(dist2, dist)
    np.testing.assert_allclose(np.take_along_axis(full, idx2, axis=1), dist)


@pytest.mark.parametrize("cap", [False, True])
def test_nearest_equals_the_float64_search(cap):
    # missing values on both sides, values far from 0 with a small range (large rounding in
    # single precision), near-ties 1e-9 apart, exact duplicates and a high-cardinality column
    from anoneval.plugins._shared.mixed import Encoded, distances

    rng = np.random.default_rng(11)

    def records(n):
        num = 1e6 + rng.integers(0, 20, size=(n, 3)) / 7
        num[:, 2] += rng.choice([0, 1e-9], size=n)
        num[rng.random((n, 3)) < 0.1] = np.nan
        cat = np.column_stack([rng.integers(-1, 3, n), rng.integers(0, 300, n)])
        return Encoded(num, cat)

    query, reference = records(300), records(900)
    reference = Encoded(np.r_[reference.num, query.num[:50]], np.r_[reference.cat, query.cat[:50]])
    order = rng.permutation(len(reference))
    full = distances(query, reference, cap)
    for k in (1, 4):
        idx, dist = nearest(query, reference, k, cap=cap, order=order)
        rank = np.argsort(order)
        expected = np.lexsort((np.broadcast_to(rank, full.shape), full), axis=1)[:, :k]
        np.testing.assert_array_equal(idx, expected)
        np.testing.assert_array_equal(dist, np.take_along_axis(full, expected, axis=1))
