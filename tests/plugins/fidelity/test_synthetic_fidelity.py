"""Fidelity measures: SDMetrics' compute() on the same data, pMSE's null and closed forms,
MLEfficacy, and the error naming the extra when scikit-learn is missing."""

from __future__ import annotations

import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import evaluate

sdmetrics = pytest.importorskip("sdmetrics")
from sdmetrics.column_pairs import ContingencySimilarity, CorrelationSimilarity  # noqa: E402
from sdmetrics.single_column import (  # noqa: E402
    CategoryCoverage,
    RangeCoverage,
    StatisticSimilarity,
    TVComplement,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "synthetic"
NUMERIC = ["age", "income", "hours"]
CATEGORICAL = ["job", "region", "smoker"]


@pytest.fixture(scope="module")
def shared():
    ori, syn = (pd.read_csv(DATA / f"{n}.csv") for n in ("original", "released"))
    syn.loc[::29, "income"] = np.nan
    ori.loc[::31, "hours"] = np.nan
    syn.loc[::23, "region"] = np.nan
    ori.loc[::43, "job"] = np.nan
    syn = syn[syn.job != "teacher"].reset_index(drop=True)  # a category the release lacks
    return ori, syn


def measure(ori, syn, name, **params):
    rep = evaluate(ori, syn, [{"name": name, "params": params}])
    m = rep.measures[0]
    assert m.error is None, m.error
    return m


def test_tv_distance(shared):
    ori, syn = shared
    m = measure(ori, syn, "TVDistance")
    assert [r["column"] for r in m.details["columns"]] == CATEGORICAL
    for row in m.details["columns"]:
        c = row["column"]
        assert row["score"] == pytest.approx(TVComplement.compute(ori[c], syn[c]), abs=1e-9)
    assert m.details["score"] == pytest.approx(
        np.mean([TVComplement.compute(ori[c], syn[c]) for c in CATEGORICAL]), abs=1e-9)
    assert m.value == pytest.approx(1 - m.details["score"], abs=1e-12)


def test_tv_distance_by_hand():
    ori = pd.DataFrame({"c": ["a", "a", "b", None]})
    syn = pd.DataFrame({"c": ["a", "b", "b", "c"]})
    # p = (2/3, 1/3, 0), q = (1/4, 2/4, 1/4): TV = ½(5/12 + 2/12 + 3/12) = 5/12
    assert measure(ori, syn, "TVDistance").value == pytest.approx(5 / 12)


@pytest.mark.parametrize("bins", [10, 4])
def test_contingency_distance(shared, bins):
    ori, syn = shared
    m = measure(ori, syn, "ContingencyDistance", num_discrete_bins=bins)
    pairs = list(combinations(list(ori.columns), 2))
    assert len(m.details["pairs"]) == len(pairs)
    scores = []
    for row, (a, b) in zip(m.details["pairs"], pairs, strict=True):
        cont = [c for c in (a, b) if c in NUMERIC]
        s = ContingencySimilarity.compute(ori[[a, b]], syn[[a, b]],
                                          continuous_column_names=cont or None,
                                          num_discrete_bins=bins)
        assert row["score"] == pytest.approx(s, abs=1e-9), (a, b)
        scores.append(s)
    assert m.details["score"] == pytest.approx(np.mean(scores), abs=1e-9)


@pytest.mark.parametrize("coefficient", ["Pearson", "Spearman"])
@pytest.mark.parametrize("threshold", [0.0, 0.1])
def test_correlation_difference(shared, coefficient, threshold):
    ori, syn = shared
    m = measure(ori, syn, "CorrelationDifference", coefficient=coefficient,
                real_correlation_threshold=threshold)
    for row in m.details["pairs"]:
        a, b = row["column_1"], row["column_2"]
        s = CorrelationSimilarity.compute(ori[[a, b]], syn[[a, b]], coefficient=coefficient,
                                          real_correlation_threshold=threshold)
        if np.isnan(s):
            assert row["score"] is None
        else:
            assert row["score"] == pytest.approx(s, abs=1e-9)
    if threshold:  # the rule leaves out the weak pair hours–income
        assert any(r["score"] is None for r in m.details["pairs"])


@pytest.mark.parametrize("statistic", ["mean", "std", "median"])
def test_statistic_difference(shared, statistic):
    ori, syn = shared
    m = measure(ori, syn, "StatisticDifference", statistic=statistic)
    for row in m.details["columns"]:
        c = row["column"]
        s = StatisticSimilarity.compute(ori[c], syn[c], statistic=statistic)
        assert row["score"] == pytest.approx(s, abs=1e-9)


def test_range_and_category_coverage(shared):
    ori, syn = shared
    syn = syn.assign(age=syn.age.clip(25, 70))
    m = measure(ori, syn, "RangeCoverageLoss")
    for row in m.details["columns"]:
        c = row["column"]
        assert row["score"] == pytest.approx(RangeCoverage.compute(ori[c], syn[c]), abs=1e-9)
    assert m.value > 0
    m = measure(ori, syn, "CategoryCoverageLoss")
    for row in m.details["columns"]:
        c = row["column"]
        assert row["score"] == pytest.approx(CategoryCoverage.compute(ori[c], syn[c]), abs=1e-9)
    job = next(r for r in m.details["columns"] if r["column"] == "job")
    assert job["score"] == pytest.approx(4 / 5) and job["missing"] == ["teacher"]


def test_constant_and_all_missing_columns_have_no_score():
    ori = pd.DataFrame({"x": [1.0, 1.0, 1.0], "y": [1.0, 2.0, 3.0], "c": [None, None, None]})
    syn = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [1.0, 2.0, 2.0], "c": ["a", "b", "b"]})
    m = measure(ori, syn, "StatisticDifference")
    assert m.details["columns"][0]["score"] is None
    assert any("'x'" in w for w in m.warnings)
    assert m.value == pytest.approx(1 - max(1 - (2 - 5 / 3) / 2, 0))
    m = measure(ori, syn, "CategoryCoverageLoss", columns=["c"])
    assert m.value is None and m.details["columns"][0]["score"] is None
    rep = evaluate(ori, syn, [{"name": "CorrelationDifference"}])
    assert rep.measures[0].value is None  # the only pair has a constant column
    assert any("undefined" in w for w in rep.measures[0].warnings)


# -- pMSE -----------------------------------------------------------------------------------


def draw(n, rng, shift=0.0):
    x = rng.normal(size=n)
    return pd.DataFrame({"x": x + shift, "y": x + rng.normal(size=n),
                         "c": rng.choice(list("abc"), size=n, p=[0.5, 0.3, 0.2])})


def test_pmse_exact_copy_is_zero():
    ori = draw(1000, np.random.default_rng(0))
    for model in ("logistic", "cart"):
        m = measure(ori, ori, "PropensityMSE", model=model)
        assert m.value == pytest.approx(0, abs=1e-6)


@pytest.mark.parametrize("model", ["logistic", "cart"])
def test_pmse_ratio_near_one_for_two_samples_of_one_distribution(model):
    ratios = []
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)
        m = measure(draw(1500, rng), draw(1500, rng), "PropensityMSE", model=model,
                    n_permutations=5)
        ratios.append(m.details["ratio"])
        assert m.details["null"].startswith("logistic closed form" if model == "logistic"
                                            else "permutation")
    # logistic: N·pMSE / (c(1−c)) ~ χ²_{k−1}, k − 1 = 4: the mean of 8 ratios has sd ≈ 0.25
    assert np.mean(ratios) == pytest.approx(1.0, abs=0.3)


def test_pmse_poor_release_is_high():
    rng = np.random.default_rng(7)
    ori, poor = draw(1000, rng), draw(1000, rng, shift=1.5)
    m = measure(ori, poor, "PropensityMSE")
    assert m.details["ratio"] > 50
    assert m.value > 0.05  # at most c(1 − c) = 0.25


def test_pmse_logistic_closed_form_by_hand():
    rng = np.random.default_rng(1)
    ori, syn = draw(300, rng), draw(100, rng)
    m = measure(ori, syn, "PropensityMSE")
    c, n = 0.25, 400
    assert m.details["k"] == 5  # intercept, x, y, c=b, c=c
    assert m.details["null_pmse"] == pytest.approx(4 * c * (1 - c) / n)


# -- ML efficacy ----------------------------------------------------------------------------


def test_ml_efficacy_copy_and_noise():
    rng = np.random.default_rng(3)

    def frame(n, noise=False):
        x = rng.normal(size=(n, 3))
        label = np.where(x[:, 0] + x[:, 1] > 0, "yes", "no")
        if noise:
            label = rng.choice(["yes", "no"], size=n)
        return pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "c": x[:, 2], "t": label,
                             "r": 2 * x[:, 0] - x[:, 2] + 0.1 * rng.normal(size=n)})

    ori, ctl = frame(2000), frame(1000)
    for model in ("linear", "tree", "forest"):
        rep = evaluate(ori, ori, [{"name": "MLEfficacy", "params": {
            "target": "t", "model": model, "features": ["a", "b", "c"]}}], control=ctl)
        m = rep.measures[0]
        assert m.error is None, m.error
        assert m.value == pytest.approx(0, abs=1e-9)  # the same training data
        assert m.details["test_set"] == "control" and m.details["score"] > 0.8
    m = evaluate(ori, frame(2000, noise=True), [{"name": "MLEfficacy", "params": {
        "target": "t", "features": ["a", "b", "c"], "metric": "accuracy", "model": "tree"}}],
        control=ctl).measures[0]
    assert m.value > 0.3  # random labels train a coin
    m = evaluate(ori, ori, [{"name": "MLEfficacy", "params": {
        "target": "r", "features": ["a", "b", "c"], "model": "linear", "metric": "rmse"}}]
        ).measures[0]
    assert m.details["task"] == "regression" and m.details["score"] < 0.2
    assert m.details["test_set"].startswith("held-out")
    m = evaluate(ori, ori, [{"name": "MLEfficacy", "params": {
        "target": "t", "metric": "r2"}}]).measures[0]
    assert "does not fit classification" in m.error


def test_missing_sklearn_names_the_extra(monkeypatch):
    for mod in [m for m in sys.modules if m == "sklearn" or m.startswith("sklearn.")]:
        monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setitem(sys.modules, "sklearn", None)
    ori = draw(50, np.random.default_rng(0))
    for spec in ({"name": "PropensityMSE"}, {"name": "MLEfficacy", "params": {"target": "c"}}):
        m = evaluate(ori, ori, [spec]).measures[0]
        assert "pip install 'anoneval[synthetic]'" in m.error


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("xy"),
                          st.floats(-5, 5, allow_nan=False)), min_size=2, max_size=30),
       st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from("xy"),
                          st.floats(-5, 5, allow_nan=False)), min_size=1, max_size=30),
       st.randoms(use_true_random=False))
def test_fidelity_bounds_and_row_order_invariance(real, released, rnd):
    ori = pd.DataFrame(real, columns=["c", "d", "v"])
    syn = pd.DataFrame(released, columns=["c", "d", "v"])
    shuffled = syn.sample(frac=1, random_state=rnd.randint(0, 1000))
    for name in ("TVDistance", "ContingencyDistance", "CategoryCoverageLoss"):
        a = evaluate(ori, syn, [name]).measures[0]
        b = evaluate(ori, shuffled, [name]).measures[0]
        assert a.error is None and 0 <= a.value <= 1
        assert a.value == pytest.approx(b.value, abs=1e-12)


def test_model_measures_subsample_above_max_rows_and_say_so():
    rng = np.random.default_rng(12)
    ori, syn = draw(3000, rng), draw(2000, rng)
    m = measure(ori, syn, "PropensityMSE", max_rows=1000)
    assert m.details["model_rows"] == {"original": 1000, "anonymized": 1000}
    assert m.details["c"] == 0.5
    assert any("1,000 of the 3,000 original records" in w for w in m.warnings)
    assert measure(ori, syn, "PropensityMSE", max_rows=1000).value == m.value  # seeded
    full = measure(ori, syn, "PropensityMSE")
    assert full.details["model_rows"] == {"original": 3000, "anonymized": 2000}
    assert not full.warnings
    ml = measure(ori, syn, "MLEfficacy", target="c", max_rows=500)
    assert (ml.details["n_train_release"], ml.details["n_train_original"]) == (500, 500)
    assert ml.details["n_test"] == 500
    assert len(ml.warnings) == 3
