"""Numeric risk and loss (sdcMicro's dRisk, dRiskRMD, dUtility, IL_correl, IL_variables)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from anoneval.core import evaluate
from anoneval.plugins.numeric._robust import mcd_covariance
from anoneval.plugins.numeric.eigenvalue_loss import relative_change


def run(name: str, x: pd.DataFrame, xm: pd.DataFrame, **params):
    entry = evaluate(x, xm, [{"name": name, "params": params}])[name]
    assert entry.error is None, entry.error
    return entry


# -- hand-worked tiny cases ----------------------------------------------------------------


def test_il1_by_hand_drops_zero_originals():
    x = pd.DataFrame({"a": [1.0, 4.0], "b": [2.0, 0.0]})
    xm = pd.DataFrame({"a": [2.0, 3.0], "b": [2.0, 1.0]})
    e = run("IL1", x, xm)
    # 100·1/1 + 100·1/4 + 0; the cell with x = 0 is an infinite term, left out
    assert e.value == pytest.approx(125.0)
    assert e.details["dropped_cells"] == 1
    assert e.details["per_column"] == {"a": pytest.approx(125.0), "b": 0.0}
    assert any("left out" in w for w in e.warnings)


def test_il1s_is_a_sum_and_details_give_the_mean():
    x = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [10.0, 20.0, 30.0]})
    xm = pd.DataFrame({"a": [1.0, 3.0, 2.0], "b": [12.0, 20.0, 30.0]})
    e = run("IL1s", x, xm)
    # sd(a) = 1, sd(b) = 10: (0 + 1 + 1)/√2 + (2/10)/√2
    expected = 2 / math.sqrt(2) + 0.2 / math.sqrt(2)
    assert e.value == pytest.approx(expected)
    assert e.details["mean_per_cell"] == pytest.approx(expected / 6)


def test_il1s_constant_column_is_an_error_naming_it():
    x = pd.DataFrame({"a": [1.0, 2.0, 3.0], "c": [5.0, 5.0, 5.0]})
    e = evaluate(x, x, ["IL1s"])["IL1s"]
    assert e.value is None and "'c'" in e.error and "variance" in e.error


def test_eigenvalue_loss_by_hand():
    # corr(a, b) = 0.8 in x: eigenvalues 1.8, 0.2; corr = -1 in xm: eigenvalues 2, 0
    x = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [1.0, 3, 2, 4]})
    xm = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [4.0, 3, 2, 1]})
    e = run("EigenvalueLoss", x, xm)
    assert e.value == pytest.approx(0.2 / 1.8 + 0.2 / 0.2)
    assert run("EigenvalueLoss", x, x).value == pytest.approx(0.0, abs=1e-12)


def test_eigenvalue_loss_singular_original_is_an_error():
    x = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [2.0, 4, 6, 8]})
    e = evaluate(x, x, ["EigenvalueLoss"])["EigenvalueLoss"]
    assert e.value is None and "collinear" in e.error


def test_correlation_loss_by_hand():
    # x: corr(a, b) = 0.8, c uncorrelated with both; xm: three uncorrelated columns
    x = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [1.0, 3, 2, 4], "c": [1.0, -1, -1, 1]})
    xm = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [1.0, -1, -1, 1], "c": [-1.0, 3, -3, 1]})
    d = np.array([1 / (1 - 0.64), 1 / (1 - 0.64), 1.0])
    dist = np.linalg.norm(d / np.linalg.norm(d) - np.ones(3) / math.sqrt(3))
    assert run("CorrelationLoss", x, xm).value == pytest.approx(dist / math.sqrt(2))
    assert run("CorrelationLoss", x, xm, scale="mlodak").value == pytest.approx(dist / 2)
    assert run("CorrelationLoss", x, x).value == pytest.approx(0.0, abs=1e-12)


def test_correlation_loss_singular_is_an_error():
    x = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [2.0, 4, 6, 8.0001], "c": [3.0, 6, 9, 12]})
    e = evaluate(x, x, ["CorrelationLoss"])["CorrelationLoss"]
    assert e.value is None and "singular" in e.error


def test_variable_distance_loss_by_hand():
    x = pd.DataFrame({"num": [0.0, 1.0, np.nan], "ord": ["lo", "hi", "mid"],
                      "nom": ["a", "b", None]})
    xm = pd.DataFrame({"num": [0.0, 2.0, 5.0], "ord": ["mid", "hi", None],
                       "nom": ["a", "c", None]})
    e = run("VariableDistanceLoss", x, xm, orders={"ord": ["lo", "mid", "hi"]})
    # numeric: 0, (2/π)atan 1 = 0.5, one side missing → (2/π)atan(max(|0−1|, |5−0|) = 5)
    num = (0.5 + 2 / math.pi * math.atan(5.0)) / 3
    ordinal = (0.5 + 0 + 1) / 3
    nominal = (0 + 1 + 0) / 3
    assert e.details["types"] == {"num": "numeric", "ord": "ordinal", "nom": "nominal"}
    assert e.details["per_column"]["num"] == pytest.approx(num)
    assert e.details["per_column"]["ord"] == pytest.approx(ordinal)
    assert e.details["per_column"]["nom"] == pytest.approx(nominal)
    assert e.value == pytest.approx((num + ordinal + nominal) / 3)


def test_variable_distance_loss_unknown_level_and_missing_orders():
    x = pd.DataFrame({"ord": ["lo", "hi"]})
    xm = pd.DataFrame({"ord": ["lo", "top"]})
    e = evaluate(x, xm, [{"name": "VariableDistanceLoss",
                          "params": {"orders": {"ord": ["lo", "hi"]}}}])["VariableDistanceLoss"]
    assert "'top'" in e.error and "row 2" in e.error
    e = evaluate(x, xm, [{"name": "VariableDistanceLoss",
                          "params": {"types": {"ord": "ordinal"}}}])["VariableDistanceLoss"]
    assert "orders" in e.error


def test_interval_disclosure_by_hand():
    x = pd.DataFrame({"a": [10.0, 20.0, 30.0, 40.0], "b": [5.0, 6.0, 7.0, np.nan]})
    xm = pd.DataFrame({"a": [10.1, 25.0, 30.0, 40.0], "b": [5.0, 6.0, 9.0, 8.0]})
    e = run("IntervalDisclosure", x, xm, k=0.1, per_record=True)
    # half-widths 0.1·sd(xm): a ≈ 1.25, b ≈ 0.17; row 1 within; row 2 out on a; row 3 out on
    # b; row 4 within on a and missing on b (a missing cell keeps the record within)
    assert e.value == pytest.approx(0.5)
    assert e.details["per_record"]["at_risk"].tolist() == [True, False, False, True]


def test_robust_interval_disclosure_identical_release_and_brute_force():
    rng = np.random.default_rng(3)
    x = pd.DataFrame(rng.normal(size=(300, 3)) @ [[1, 0.5, 0], [0, 1, 0.3], [0, 0, 1]],
                     columns=["a", "b", "c"])
    e = run("RobustIntervalDisclosure", x, x, per_record=True)
    assert e.value == 1.0  # z − k·RMD < z < z + k·RMD for every record with RMD > 0
    xm = x + rng.normal(scale=0.05, size=x.shape)
    e = run("RobustIntervalDisclosure", x, xm, per_record=True, k2=0.1)
    rec = pd.DataFrame(e.details["per_record"])
    z = ((xm - xm.mean()) / xm.std()).to_numpy()
    d = cdist(z, z)
    np.fill_diagonal(d, np.inf)
    brute = rec["risk1"].to_numpy() & (d.min(axis=1) > 0.1)
    assert (rec["risk2"].to_numpy() == brute).all()
    assert e.details["risk2"] == pytest.approx(brute.mean())
    w = rec["risk1"].to_numpy()
    assert e.details["wrisk1"] == pytest.approx(w.sum() * rec["rmd"][w].sum() / len(x))


def test_alignment_by_id_and_non_numeric_values():
    x = pd.DataFrame({"id": [1, 2, 3], "a": [1.0, 2.0, 4.0]})
    xm = pd.DataFrame({"id": [3, 1], "a": [5.0, 2.0]})
    e = run("IL1", x, xm, id="id")
    assert e.value == pytest.approx(100.0 + 25.0)
    assert any("not in the anonymized" in w for w in e.warnings)
    bad = pd.DataFrame({"a": [1.0, 2.0, 4.0], "b": ["1", "x", "3"]})
    e = evaluate(bad, bad, [{"name": "IL1", "params": {"columns": ["a", "b"]}}])["IL1"]
    assert "'b'" in e.error and "row 2" in e.error and "'x'" in e.error


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_invariants_bounds_and_row_order(seed):
    rng = np.random.default_rng(seed)
    x = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    xm = x + rng.normal(scale=0.3, size=x.shape)
    perm = rng.permutation(len(x))
    for name in ("IL1s", "EigenvalueLoss", "CorrelationLoss", "VariableDistanceLoss",
                 "IntervalDisclosure"):
        v = run(name, x, xm).value
        shuffled = run(name, x.iloc[perm].reset_index(drop=True),
                       xm.iloc[perm].reset_index(drop=True)).value
        assert v == pytest.approx(shuffled, rel=1e-9, abs=1e-12)
        assert v >= 0
    assert run("CorrelationLoss", x, xm).value <= 1
    assert run("VariableDistanceLoss", x, xm).value <= 1
    assert run("IntervalDisclosure", x, xm).value <= 1


# -- sdcMicro's own values (tests/data/sdcmicro_numeric/README.md) --------------------------

SDC = Path(__file__).resolve().parents[2] / "data" / "sdcmicro_numeric"


@pytest.fixture(scope="module")
def sdc() -> dict:
    return json.loads((SDC / "values.json").read_text())


def frames(stem: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    return (pd.read_csv(SDC / f"original{stem}.csv"), pd.read_csv(SDC / f"perturbed{stem}.csv"))


@pytest.mark.parametrize(("name", "key", "params"), [
    ("IL1", "IL1", {}), ("IL1s", "IL1s", {}), ("EigenvalueLoss", "eigen", {}),
    ("CorrelationLoss", "IL_correl", {}), ("IntervalDisclosure", "dRisk", {}),
    ("IntervalDisclosure", "dRisk_k02", {"k": 0.2}),
])
def test_matches_sdcmicro(sdc, name, key, params):
    x, xm = frames()
    assert run(name, x, xm, **params).value == pytest.approx(sdc["complete"][key], rel=1e-12)


@pytest.mark.parametrize(("name", "key"), [
    ("IL1", "IL1"), ("IL1s", "IL1s"), ("EigenvalueLoss", "eigen"),
    ("CorrelationLoss", "IL_correl"), ("IntervalDisclosure", "dRisk"),
])
def test_matches_sdcmicro_with_missing_values(sdc, name, key):
    x, xm = frames("_na")
    assert run(name, x, xm).value == pytest.approx(sdc["missing"][key], rel=1e-12)


def test_il1s_mean_per_cell_is_sdcmicros_il1old(sdc):
    x, xm = frames()
    assert run("IL1s", x, xm).details["mean_per_cell"] == pytest.approx(
        sdc["complete"]["IL1old"], rel=1e-12)


def test_variable_distance_loss_matches_sdcmicro(sdc):
    m = pd.read_csv(SDC / "mixed_original.csv")
    mm = pd.read_csv(SDC / "mixed_perturbed.csv")
    e = run("VariableDistanceLoss", m, mm, orders={"ord": ["low", "mid", "high"]})
    assert e.value == pytest.approx(sdc["IL_variables"]["value"], rel=1e-12)
    for col, loss in sdc["IL_variables"]["per_column"].items():
        assert e.details["per_column"][col] == pytest.approx(loss, rel=1e-12)


def test_mcd_is_close_to_robustbase_and_robeigen_formula_is_sdcmicros(sdc):
    x, xm = frames()
    for frame, key in ((x, "covMcd_scaled_original"), (xm, "covMcd_scaled_perturbed")):
        z = ((frame - frame.mean()) / frame.std()).to_numpy()
        ours = mcd_covariance(z, seed=0)
        theirs = np.array(sdc["complete"][key])
        # another support of the same estimator: entries of these unit-scale matrices within 0.05
        assert np.abs(ours - theirs).max() < 0.05
    e1 = np.linalg.eigvalsh(np.array(sdc["complete"]["covMcd_scaled_original"]))[::-1]
    e2 = np.linalg.eigvalsh(np.array(sdc["complete"]["covMcd_scaled_perturbed"]))[::-1]
    assert relative_change(e1, e2) == pytest.approx(sdc["complete"]["robeigen"], rel=1e-12)


def test_robust_interval_disclosure_matches_sdcmicro(sdc):
    x, xm = frames()
    ref = sdc["complete"]["dRiskRMD"]
    e = run("RobustIntervalDisclosure", x, xm, per_record=True)
    at_risk = np.flatnonzero(e.details["per_record"]["risk1"].to_numpy()) + 1
    assert at_risk.tolist() == ref["index_risk1"]
    assert e.value == ref["risk1"] and e.details["risk2"] == ref["risk2"]
    # RMD scales with the MCD covariance, which agrees with robustbase's to a few per cent
    assert e.details["wrisk1"] == pytest.approx(ref["wrisk1"], rel=0.01)
    ref = sdc["complete"]["dRiskRMD_k005_k2002"]
    e = run("RobustIntervalDisclosure", x, xm, k=0.05, k2=0.02)
    assert e.value == ref["risk1"] and e.details["risk2"] == ref["risk2"]
    assert e.details["wrisk2"] == pytest.approx(ref["wrisk2"], rel=0.01)
