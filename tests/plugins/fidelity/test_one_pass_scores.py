"""The fidelity fast paths give the reference packages' numbers: KSDistance (each sample
sorted once) equals scipy's ks_2samp, RangeCoverage and CategoryCoverage equal SDMetrics'."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import __version__ as scipy_version
from scipy import stats

from anoneval.core import evaluate
from anoneval.plugins.fidelity.ks_distance import (
    EXACT_UP_TO,
    FALLBACK,
    ks_two_sample,
    largest_gap,
    smirnov_pvalue,
)


@pytest.mark.parametrize("seed", range(6))
def test_ks_of_large_samples_equals_scipy_ties_and_location_included(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n1, n2 = (int(v) for v in rng.integers(EXACT_UP_TO + 1, 3 * EXACT_UP_TO, 2))
    digits = int(rng.integers(0, 3))  # few decimals: many ties within and across samples
    x = np.round(rng.normal(size=n1), digits)
    y = np.round(rng.normal(rng.uniform(-0.05, 0.05), 1.0, n2), digits)
    for a, b in ((x, y), (y, x)):  # either sign of the largest gap
        r = stats.ks_2samp(a, b)
        # equal to rounding: scipy's own arithmetic changed between 1.15 and 1.18
        assert ks_two_sample(a, b, "scipy") == {
            "statistic": pytest.approx(float(r.statistic), rel=1e-12),
            "pvalue": pytest.approx(float(r.pvalue), rel=1e-9),
            "location": float(r.statistic_location), "pvalue_method": "asymptotic"}
        fast = ks_two_sample(a, b)  # the default: scipy's, or within the bound in the tail
        d, n = fast["statistic"], round(len(a) * len(b) / (len(a) + len(b)))
        assert -1e-9 <= fast["pvalue"] / float(r.pvalue) - 1 <= 0.5 * n * d**4 + 1e-9


def _gap_at(x, y, at: float) -> float:
    """|F_n − G_m| at ``at``, brute force."""
    x, y = np.asarray(x), np.asarray(y)
    return abs(int((x <= at).sum()) / len(x) - int((y <= at).sum()) / len(y))


FAILING = pd.DataFrame({"a": [0.0, -0.4, 0.3, 0.7, -1.1, -2.4, 0.5], "b": np.arange(7.0)})
OTHER = pd.DataFrame({"a": [-1.2, -0.4, 0.7, -0.0, -1.1, 0.4, 0.9], "b": np.arange(7.0) + 3})


def test_a_failed_exact_p_value_is_named_in_the_report() -> None:
    """scipy falls back to the asymptotic p-value when its exact computation fails (here
    D = 1/7 on 7 + 7 values, exact p-value 1) and says so only on stderr: the column's
    ``pvalue_method`` and the measure's warning say it."""
    with pytest.warns(RuntimeWarning, match="Exact calculation unsuccessful"):
        expected = stats.ks_2samp(FAILING["a"], OTHER["a"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing on stderr: the report says it
        m = evaluate(FAILING, OTHER, ["KSDistance"]).measures[0]
    columns = m.details["columns"]
    assert columns["a"]["pvalue_method"] == FALLBACK
    assert columns["a"]["pvalue"] == float(expected.pvalue)
    assert columns["a"]["statistic"] == pytest.approx(float(expected.statistic), rel=1e-15)
    assert _gap_at(FAILING["a"], OTHER["a"], columns["a"]["location"]) == pytest.approx(
        float(expected.statistic), rel=1e-12)
    assert columns["b"]["pvalue_method"] == "exact"
    assert columns["b"]["pvalue"] == float(stats.ks_2samp(FAILING["b"], OTHER["b"]).pvalue)
    assert [w for w in m.warnings if "exact p-value failed" in w] == [
        "the exact p-value failed for 'a': scipy's asymptotic one is reported"]


def test_the_exact_p_value_leaves_the_warning_filters_alone(monkeypatch) -> None:
    # catch_warnings changes the process's filters, which threads running other measures
    # may be changing too: the fallback is found by scipy's own check instead
    import anoneval.plugins.fidelity.ks_distance as ks

    def forbidden(*args, **kwargs):
        raise AssertionError("the warning filters changed")

    expected = {c: ks_two_sample(FAILING[c].to_numpy(), OTHER[c].to_numpy()) for c in "ab"}
    monkeypatch.setattr(ks, "warnings", SimpleNamespace(catch_warnings=forbidden,
                                                        simplefilter=forbidden))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and scipy warns of nothing
        for c in "ab":
            assert ks_two_sample(FAILING[c].to_numpy(), OTHER[c].to_numpy()) == expected[c]
    assert expected["a"]["pvalue_method"] == FALLBACK


def test_without_scipys_check_the_warning_tells_the_fallback(monkeypatch) -> None:
    # a scipy without the private function: its warning is caught instead, same results
    import anoneval.plugins.fidelity.ks_distance as ks

    rng = np.random.default_rng(3)
    pairs = [(FAILING[c].to_numpy(), OTHER[c].to_numpy()) for c in "ab"] + [
        (rng.integers(0, 5, n).astype(float), rng.integers(0, 6, 40).astype(float))
        for n in (1, 9, 300)]
    checked = [ks_two_sample(x, y) for x, y in pairs]
    monkeypatch.setattr(ks, "_attempt_exact_2kssamp", None)
    for (x, y), ours in zip(pairs, checked, strict=True):
        caught = ks_two_sample(x, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the failing pair's
            r = stats.ks_2samp(x, y)
        assert caught == {"statistic": float(r.statistic), "pvalue": float(r.pvalue),
                          "location": float(r.statistic_location),
                          "pvalue_method": ours["pvalue_method"]}
        assert ours["pvalue"] == float(r.pvalue)
        assert ours["statistic"] == pytest.approx(float(r.statistic), rel=1e-15)
        # where the gap is that large (with scipy < 1.16 the same place; later versions
        # choose among equal gaps by rounding)
        assert _gap_at(x, y, ours["location"]) == pytest.approx(float(r.statistic), rel=1e-12)
        if np.lib.NumpyVersion(scipy_version) < "1.16.0":
            assert ours == caught
    assert [c["pvalue_method"] for c in checked] == [FALLBACK] + ["exact"] * 4


@pytest.mark.parametrize("n", [10_000, 30_000, 100_000, 500_000])
def test_the_tail_p_value_is_within_its_bound_of_scipys(n: int) -> None:
    """Maag & Dicaire's tail (n·d² ≥ 2.2) against scipy's kstwo.sf on a grid: above it by a
    relative error below 0.5·n·d⁴ (while n·d⁴ ≤ 0.5); below the tail, scipy's own value."""
    grid = [2.2, 2.5, 3, 5, 10, 20, 40, 70] if n <= 100_000 else [2.2, 10]
    for nd2 in grid:
        d = float(np.sqrt(nd2 / n))
        assert n * d**4 <= 0.5
        exact = float(stats.kstwo.sf(d, n))
        assert smirnov_pvalue(d, n, "scipy") == exact
        assert 0 < smirnov_pvalue(d, n) / exact - 1 <= 0.5 * n * d**4
    body = float(np.sqrt(2.0 / n))  # below the tail: scipy's value
    assert smirnov_pvalue(body, n) == float(stats.kstwo.sf(body, n))
    small = 9_999  # below ASYMPTOTIC_FROM: scipy's value
    assert smirnov_pvalue(0.05, small) == float(stats.kstwo.sf(0.05, small))


def test_ks_distance_keeps_scipys_p_value_on_request() -> None:
    rng = np.random.default_rng(2)
    a = pd.DataFrame({"u": rng.normal(size=40_000)})
    b = pd.DataFrame({"u": rng.normal(0.05, 1, 40_000)})
    r = stats.ks_2samp(a["u"], b["u"])
    exact = evaluate(a, b, [{"name": "KSDistance", "params": {"pvalue": "scipy"}}]).measures[0]
    fast = evaluate(a, b, ["KSDistance"]).measures[0]
    assert exact.details["columns"]["u"]["pvalue"] == pytest.approx(float(r.pvalue), rel=1e-9)
    assert 20_000 * r.statistic**2 >= 2.2  # in the tail: the approximation
    assert fast.details["columns"]["u"]["pvalue"] != exact.details["columns"]["u"]["pvalue"]
    assert fast.details["columns"]["u"]["pvalue"] == pytest.approx(float(r.pvalue), rel=1e-3)
    assert fast.value == exact.value


def test_ks_distance_through_evaluate_equals_scipy_per_column() -> None:
    rng = np.random.default_rng(7)
    a = pd.DataFrame({"u": rng.normal(size=12_000), "v": np.round(rng.exponential(size=12_000))})
    b = pd.DataFrame({"u": rng.normal(0.1, 1, 15_000), "v": np.round(rng.exponential(size=15_000))})
    m = evaluate(a, b, ["KSDistance"]).measures[0]
    for c in ("u", "v"):
        r = stats.ks_2samp(a[c], b[c])
        assert m.details["columns"][c]["statistic"] == pytest.approx(float(r.statistic),
                                                                     rel=1e-12)
        assert m.details["columns"][c]["pvalue"] == pytest.approx(float(r.pvalue), rel=1e-9)


def test_ks_distance_reads_untransformed_columns_in_place_with_the_same_results() -> None:
    # the default reads each column as it lies; a transform goes through the n × d arrays of
    # the other continuous measures: D does not change on a monotone scale, nor the errors
    rng = np.random.default_rng(8)
    a = pd.DataFrame({"u": rng.exponential(size=30_000), "k": rng.integers(1, 9, 30_000)})
    b = pd.DataFrame({"u": rng.exponential(1.1, 25_000), "k": rng.integers(1, 10, 25_000)})
    plain = evaluate(a, b, ["KSDistance"]).measures[0]
    mapped = evaluate(a, b, [{"name": "KSDistance",
                              "params": {"transform": {"u": "identity"}}}]).measures[0]
    assert mapped.details == plain.details and mapped.value == plain.value
    logged = evaluate(a, b, [{"name": "KSDistance", "params": {"transform": "log"}}]).measures[0]
    for c in ("u", "k"):  # the location is on the log scale
        for key in ("statistic", "pvalue"):
            assert logged.details["columns"][c][key] == plain.details["columns"][c][key]
    b.loc[7, "u"] = np.nan
    errors = {evaluate(a, b, [{"name": "KSDistance", "params": {"transform": t}}]
                       ).measures[0].error for t in ("identity", {"u": "identity"})}
    assert len(errors) == 1
    assert "anonymized data: column 'u' has 1 missing or infinite values" in errors.pop()


def test_coverage_scores_equal_sdmetrics() -> None:
    sd = pytest.importorskip("sdmetrics.single_column")
    rng = np.random.default_rng(3)
    n = 5_000
    ori = pd.DataFrame({"x": rng.normal(size=n), "y": rng.uniform(0, 10, n),
                        "c": rng.choice(["a", "b", "c", "d", None], n).astype(object)})
    syn = pd.DataFrame({"x": rng.normal(0.2, 0.5, n), "y": rng.uniform(2, 12, n),
                        "c": rng.choice(["a", "b", np.nan], n).astype(object)})
    ori.loc[5, "x"] = np.nan
    rng_m = evaluate(ori, syn, [{"name": "RangeCoverageLoss"}]).measures[0]
    want = [sd.RangeCoverage.compute(ori[c], syn[c]) for c in ("x", "y")]
    assert rng_m.details["score"] == pytest.approx(np.mean(want), abs=1e-12)
    cat_m = evaluate(ori, syn, [{"name": "CategoryCoverageLoss"}]).measures[0]
    assert cat_m.details["score"] == pytest.approx(sd.CategoryCoverage.compute(ori["c"], syn["c"]))
    assert cat_m.details["columns"][0]["missing"] == ["c", "d"]


def test_an_infinite_value_is_named_once_found_by_its_extremes() -> None:
    ori = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    syn = pd.DataFrame({"x": [0.5, -np.inf, 1.0, 2.0]})
    m = evaluate(ori, syn, [{"name": "RangeCoverageLoss"}]).measures[0]
    assert "column 'x' of the anonymized data holds 1 infinite value(s), the first at data " \
           "row 2" in m.error


@pytest.mark.parametrize("values", ["continuous", "four values"])
def test_ks_at_distinct_values_only_equals_scipy_without_and_with_heavy_ties(values) -> None:
    """No tie at all (every value a run of one) and four values (runs of thousands): the
    statistic is scipy's bit for bit in its asymptotic mode, the location too."""
    rng = np.random.default_rng(11)
    n1, n2 = 3 * EXACT_UP_TO, 2 * EXACT_UP_TO + 7
    if values == "continuous":
        x, y = rng.normal(size=n1), rng.normal(0.03, 1, n2)
    else:
        x, y = rng.integers(0, 4, n1).astype(float), rng.integers(0, 4, n2).astype(float)
    for a, b in ((x, y), (y, x)):
        r = stats.ks_2samp(a, b, method="asymp")
        got = ks_two_sample(a, b)
        assert got["statistic"] == float(r.statistic)
        assert got["location"] == float(r.statistic_location)


samples = st.lists(st.sampled_from([-2.0, -0.5, 0.0, 0.25, 1.0, 3.0]) | st.floats(-5, 5),
                   min_size=1, max_size=40)


@given(samples, samples)
@settings(max_examples=300, deadline=None)
def test_largest_gap_equals_scipys_statistic_and_location(x, y) -> None:
    """The merge of both samples' distinct values gives scipy's statistic (to rounding:
    scipy 1.18 takes the CDF's steps from linspace(0, 1, n + 1), 3 × 0.2 for 3/5, where 1.15
    divided the counts as here) at a value where the gap is that large, brute force; with
    scipy < 1.16, its location too (ties within and across the samples, either sign)."""
    a, b = np.array(x), np.array(y)
    with np.errstate(divide="ignore"):  # scipy's p-value of one-value samples
        r = stats.ks_2samp(a, b, method="asymp")
    d, location = largest_gap(a, b)
    kept = a.copy(), b.copy()
    # sorted in buffers, one too long, one of another dtype (a new array then): the same
    assert largest_gap(a, b, (np.empty(len(a) + 3), np.empty(len(b), dtype=np.float32))
                       ) == (d, location)
    assert np.array_equal(a, kept[0]) and np.array_equal(b, kept[1])
    assert d == pytest.approx(float(r.statistic), rel=1e-12, abs=1e-15)
    for at in (location, float(r.statistic_location)):
        assert _gap_at(a, b, at) == pytest.approx(d, rel=1e-12, abs=1e-15)
    if d == float(r.statistic) and np.lib.NumpyVersion(scipy_version) < "1.16.0":
        assert location == float(r.statistic_location)


def test_ks_columns_on_both_cores_equal_one_by_one() -> None:
    from anoneval.plugins.fidelity.ks_distance import per_column

    rng = np.random.default_rng(5)
    X, Y = np.round(rng.normal(size=(30_000, 3)), 2), np.round(rng.normal(size=(25_000, 3)), 2)
    assert per_column(list(X.T), list(Y.T)) == [ks_two_sample(X[:, j], Y[:, j])
                                               for j in range(3)]
    with pytest.raises(ValueError, match="3 columns of one sample against 2"):
        per_column(list(X.T), list(Y.T)[:2])


def test_sorting_in_a_buffer_equals_np_sort_and_leaves_the_values() -> None:
    from anoneval.plugins.fidelity.ks_distance import sorted_into

    values = np.array([3.0, -1.0, 2.5, -1.0, 0.0])
    buffer = np.full(7, 9.0)
    out = sorted_into(values, buffer)
    assert np.shares_memory(out, buffer) and out.tolist() == [-1.0, -1.0, 0.0, 2.5, 3.0]
    assert values.tolist() == [3.0, -1.0, 2.5, -1.0, 0.0]
    for small_or_other in (np.empty(4), np.empty(5, dtype=np.float32)):
        out = sorted_into(values, small_or_other)
        assert not np.shares_memory(out, small_or_other)
        assert out.tolist() == sorted(values.tolist())


@given(st.lists(st.sampled_from(["aa", "bb", "cc", "dd", None, 1, 1.5, np.nan]), min_size=1,
                max_size=60),
       st.booleans())
@settings(max_examples=150, deadline=None)
def test_categories_of_a_dataset_equal_one_pass_over_its_column(values, copies) -> None:
    """The dataset's distinct values (read from the column's distinct objects) are those of a
    pass over every cell, whether the cells share their objects or each holds its own."""
    from anoneval.core.api import Microdata
    from anoneval.plugins.fidelity.category_coverage import distinct

    cells = [("".join(list(v)) if copies and isinstance(v, str) else v) for v in values]
    column = pd.Series(np.array(cells, dtype=object))
    got = Microdata(pd.DataFrame({"c": column})).distinct("c")
    assert frozenset(got.tolist()) == distinct(column)
    assert len(got) == len(frozenset(got.tolist()))
