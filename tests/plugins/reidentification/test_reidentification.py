"""Tests of IndividualRisk, SUDA and the sdcMicro variants of KAnonymity.

Oracles: sdcMicro 5.8.1's own outputs (fixtures in ``data/sdcmicro``, see its README), the
values of sdcMicro's unit tests (``test_freqCalc.R``, ``test_indivRisk.R``, the SUDA examples of
``test_suda2.R``), hand computations on tiny tables (arithmetic in comments), the negative
binomial series summed term by term, and a brute-force MSU search written here.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from anoneval.core import evaluate
from anoneval.core.api import ConfigError, Context, Microdata
from anoneval.core.errors import DataError
from anoneval.plugins.microdata.kanonymity import KAnonymity
from anoneval.plugins.microdata.ldiversity import LDiversity
from anoneval.plugins.reidentification.individual_risk import (
    IndividualRisk,
    class_risk,
    mu_argus_threshold,
)
from anoneval.plugins.reidentification.suda import SUDA

SDC = Path(__file__).resolve().parents[2] / "data" / "sdcmicro"
KEYS = ["k1", "k2", "k3", "k4", "k5"]
K5 = ["sex", "age", "race", "marital-status", "education"]
K7 = [*K5, "native-country", "workclass"]


def run(cls, frame: pd.DataFrame, **params):
    ctx = Context()
    result = cls(**params).compute(None, Microdata(frame), ctx)
    return result, ctx.warnings


def records(cls, frame: pd.DataFrame, **params) -> pd.DataFrame:
    return run(cls, frame, per_record=True, **params)[0].details["per_record"]


@pytest.fixture(scope="module")
def generated():
    frame = pd.read_csv(SDC / "generated.csv")
    return frame, json.loads((SDC / "generated_expected.json").read_text())


@pytest.fixture(scope="module")
def adult(data_dir):
    frame = pd.read_csv(data_dir / "adult" / "adult.csv", sep=";")
    i = np.arange(len(frame))
    frame["w"] = 1 + (i * 37) % 101
    frame["hh"] = i // 3
    return (frame, json.loads((SDC / "adult_expected.json").read_text()),
            pd.read_csv(SDC / "adult_expected_records.csv.gz"))


def nb_series(f: float, p: float, terms: int = 20000) -> float:
    """E[1/F | f] = Σ_h C(f+h−1, h) p^f q^h / (f+h), summed term by term (in logs)."""
    h = np.arange(terms, dtype=np.float64)
    log_terms = (special.gammaln(f + h) - special.gammaln(h + 1) - special.gammaln(f)
                 + f * np.log(p) + h * np.log1p(-p) - np.log(f + h))
    return float(np.exp(log_terms).sum())


# -- sdcMicro's unit-test values --------------------------------------------------------------

FREQ = pd.DataFrame({"A": [2, 3, 2, 2, 3, 3, 1, 2], "B": [3, 3, 3, 3, 3, 3, 4, 3],
                     "C": [1, 3, 1, 2, 1, 1, 1, 1],
                     "w": [18, 45.5, 39, 17, 92, 8, 123.5, 51]})


def test_freqcalc_unit_test_values():
    t = records(IndividualRisk, FREQ, quasi_identifiers=["A", "B", "C"], weights="w")
    assert t.fk.tolist() == [3, 1, 3, 1, 2, 2, 1, 3]
    assert t.Fk.tolist() == [108, 45.5, 108, 17, 100, 100, 123.5, 108]
    na = FREQ.assign(C=[1, 3, np.nan, 2, 1, 1, np.nan, 1])
    t = records(IndividualRisk, na, quasi_identifiers=["A", "B", "C"], weights="w",
                missing="wildcard")
    assert t.fk.tolist() == [3, 1, 4, 2, 2, 2, 1, 3]
    assert t.Fk.tolist() == [108, 45.5, 125, 56, 100, 100, 123.5, 108]


@pytest.mark.parametrize(("method", "expected"), [
    ("approx", [0.01369863, 0.08579129, 0.01369863, 0.17707583, 0.01877883, 0.01877883,
                0.03931625, 0.01369863]),
    ("exact", [0.01355297, 0.08579129, 0.01355297, 0.17707583, 0.01877883, 0.01877883,
               0.03931625, 0.01355297]),
])
def test_indivrisk_unit_test_values(method, expected):
    t = records(IndividualRisk, FREQ, quasi_identifiers=["A", "B", "C"], weights="w",
                method=method)
    np.testing.assert_allclose(t.risk, expected, atol=5e-9)
    # without weights: 1/fk
    t = records(IndividualRisk, FREQ, quasi_identifiers=["A", "B", "C"], method=method)
    np.testing.assert_allclose(t.risk, 1 / t.fk)


# -- hand computations ------------------------------------------------------------------------


def test_individual_risk_hand():
    # keys: (a,x) twice with weights 3 and 5, (b,x) once with weight 4, (b,y) once weight 1.
    df = pd.DataFrame({"q1": ["a", "a", "b", "b"], "q2": ["x", "x", "x", "y"],
                       "w": [3.0, 5.0, 4.0, 1.0]})
    res, _ = run(IndividualRisk, df, quasi_identifiers=["q1", "q2"], weights="w",
                 per_record=True, risk_threshold=0.3)
    t = res.details["per_record"]
    # (a,x): f=2, F=8, p=1/4, p/q=1/3 → 1/3 − (1/9)·ln 4
    r_ax = 1 / 3 - math.log(4) / 9
    # (b,x): f=1, F=4, p=1/4 → (1/3)·ln 4 ; (b,y): f = F = 1 → 1
    r_bx = math.log(4) / 3
    np.testing.assert_allclose(t.risk, [r_ax, r_ax, r_bx, 1.0])
    assert res.value == pytest.approx((2 * r_ax + r_bx + 1) / 4)
    assert res.details["expected_reidentifications"] == pytest.approx(2 * r_ax + r_bx + 1)
    assert res.details["records_above_threshold"] == 2  # r_bx = 0.462, 1 > 0.3 > r_ax


def test_household_risk_hand():
    # unweighted risks 1/2, 1/2, 1, 1/3, 1/3, 1/3; households {0,1}, {2,3}, {4,5}
    df = pd.DataFrame({"q": ["a", "a", "b", "c", "c", "c"], "hh": [1, 1, 2, 2, 3, 3]})
    res, _ = run(IndividualRisk, df, quasi_identifiers=["q"], household="hh", per_record=True)
    t = res.details["per_record"]
    # 1 − (1/2)(1/2) = 3/4; 1 − 0·(2/3) = 1; 1 − (2/3)² = 5/9
    np.testing.assert_allclose(t.household_risk, [0.75, 0.75, 1, 1, 5 / 9, 5 / 9])
    assert res.details["household_expected_reidentifications"] == pytest.approx(
        1.5 + 2 + 10 / 9)


def test_mu_argus_threshold_hand():
    # n=4, level 0.25 → target 1. Σr = 1.9 ≥ 1. Levels after 0.9: 0.5 (index 1):
    # 0.5+0.3+0.2 + 0.5·1 = 1.5 ≥ 1; 0.3 (index 2): 0.3+0.2 + 0.3·2 = 1.1 ≥ 1;
    # 0.2 (index 3): 0.2 + 0.2·3 = 0.8 < 1 → threshold 0.2
    assert mu_argus_threshold(np.array([0.9, 0.5, 0.3, 0.2]), 0.25) == 0.2
    assert mu_argus_threshold(np.array([0.1, 0.1]), 0.25) is None  # 0.2 < 0.5: safe file
    assert mu_argus_threshold(np.array([1.0, 1.0]), 0.25) == 0.0  # one level only


def test_suppressed_records_have_no_risk():
    df = pd.DataFrame({"q1": ["a", "a", "*", "b"], "q2": ["x", "x", "*", "y"]})
    res, _ = run(IndividualRisk, df, quasi_identifiers=["q1", "q2"], per_record=True)
    t = res.details["per_record"]
    assert t.risk.tolist() == [0.5, 0.5, 0.0, 1.0]
    assert np.isnan(t.fk[2])
    assert res.value == pytest.approx(2 / 4)
    assert res.details["suppressed_records"] == 1


def test_exact_risk_is_the_negative_binomial_mean():
    for f, p in [(1, 0.3), (2, 0.05), (3, 0.2), (7, 0.01), (1.5, 0.4), (40, 0.5)]:
        got = class_risk(np.array([float(f)]), np.array([f / p]), True, "exact", None)[0]
        assert got == pytest.approx(nb_series(f, p), rel=1e-9)


# -- sdcMicro on generated data ---------------------------------------------------------------


@pytest.mark.parametrize("alpha", [1, 0.5])
def test_wildcard_frequencies_match_sdcmicro(generated, alpha):
    frame, expected = generated
    t = records(IndividualRisk, frame, quasi_identifiers=KEYS, weights="w",
                missing="wildcard", alpha=alpha)
    np.testing.assert_allclose(t.fk, expected[f"freqcalc_alpha_{alpha}"]["fk"], rtol=1e-13)
    np.testing.assert_allclose(t.Fk, expected[f"freqcalc_alpha_{alpha}"]["Fk"], rtol=1e-13)


@pytest.mark.parametrize("method", ["approx", "exact"])
@pytest.mark.parametrize("alpha", [1, 0.5])
def test_compat_risk_matches_sdcmicro(generated, method, alpha):
    frame, expected = generated
    t = records(IndividualRisk, frame, quasi_identifiers=KEYS, weights="w", missing="wildcard",
                alpha=alpha, method=method, compat="sdcmicro")
    sdc = np.array(expected[f"indivrisk_{method}_alpha_{alpha}"], dtype=float)  # null → NaN
    # the alternating series loses digits with fk; NaN where sdcMicro's is NaN
    np.testing.assert_allclose(t.risk, sdc, rtol=1e-10, atol=1e-15)


def test_default_fixes_non_integer_fk(generated):
    frame, expected = generated
    fk = np.array(expected["freqcalc_alpha_0.5"]["fk"])
    sdc = np.array(expected["measure_risk_w_alpha_05"]["risk"])
    odd = (fk < 2) & (fk != np.round(fk))
    assert odd.sum() > 10 and (sdc[odd] == 0).all()  # sdcMicro's defect
    t = records(IndividualRisk, frame, quasi_identifiers=KEYS, weights="w",
                missing="wildcard", alpha=0.5)
    np.testing.assert_allclose(t.risk[~odd], sdc[~odd], rtol=1e-12)
    for i in np.flatnonzero(odd)[:10]:
        assert t.risk[i] == pytest.approx(nb_series(t.fk[i], t.fk[i] / t.Fk[i]), rel=1e-9)


def test_measure_risk_with_households_matches_sdcmicro(generated):
    frame, expected = generated
    e = expected["measure_risk_w_hh"]
    res, _ = run(IndividualRisk, frame, quasi_identifiers=KEYS, weights="w",
                 missing="wildcard", household="hh", per_record=True)
    t = res.details["per_record"]
    np.testing.assert_allclose(t.risk, e["risk"], rtol=1e-12)
    np.testing.assert_allclose(t.household_risk, e["hier_risk"], rtol=1e-12)
    assert res.value == pytest.approx(e["global_risk"], rel=1e-12)
    assert res.details["expected_reidentifications"] == pytest.approx(e["global_risk_ER"],
                                                                     rel=1e-12)
    assert res.details["household_expected_reidentifications"] == pytest.approx(
        e["hier_risk_ER"], rel=1e-12)
    assert res.details["mu_argus_threshold"] == pytest.approx(e["global_threshold"], rel=1e-12)
    res, _ = run(IndividualRisk, frame, quasi_identifiers=KEYS, weights="w",
                 missing="wildcard", global_risk_level=0.05)
    assert res.details["mu_argus_threshold"] == pytest.approx(
        expected["measure_risk_w_level_005"]["global_threshold"], rel=1e-12)


def test_unweighted_measure_risk_matches_sdcmicro(generated):
    frame, expected = generated
    e = expected["measure_risk_unweighted"]
    res, _ = run(IndividualRisk, frame, quasi_identifiers=KEYS, missing="wildcard",
                 per_record=True)
    np.testing.assert_allclose(res.details["per_record"].risk, e["risk"], rtol=1e-12)
    assert res.value == pytest.approx(e["global_risk"], rel=1e-12)
    assert res.details["mu_argus_threshold"] == pytest.approx(e["global_threshold"])


def test_large_classes_exact_series(data_dir):
    frame = pd.read_csv(SDC / "large_classes.csv")
    e = json.loads((SDC / "large_classes_expected.json").read_text())
    sdc_exact = np.array(e["exact"], dtype=float)
    compat, warnings = run(IndividualRisk, frame, quasi_identifiers=["a", "b", "c"],
                           weights="w", method="exact", compat="sdcmicro", per_record=True)
    t = compat.details["per_record"]
    assert np.isnan(sdc_exact).sum() == 600
    np.testing.assert_array_equal(np.isnan(t.risk), np.isnan(sdc_exact))
    ok = ~np.isnan(sdc_exact)
    np.testing.assert_allclose(t.risk[ok], sdc_exact[ok], rtol=1e-10)  # series rounding
    assert any("NaN" in w for w in warnings)
    fixed = records(IndividualRisk, frame, quasi_identifiers=["a", "b", "c"], weights="w",
                    method="exact")
    assert np.isfinite(fixed.risk).all()
    f0, p0 = fixed.fk[0], fixed.fk[0] / fixed.Fk[0]
    assert fixed.risk[0] == pytest.approx(nb_series(f0, p0), rel=1e-9)
    np.testing.assert_allclose(fixed.risk[ok], sdc_exact[ok], rtol=1e-10)  # where it is finite
    np.testing.assert_allclose(fixed.risk[~ok], np.array(e["approx"])[~ok], rtol=1e-6)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_kanonymity_violations_match_sdcmicro(generated, k):
    frame, expected = generated
    e = expected["kanon"][f"k{k}"]
    res, _ = run(KAnonymity, frame, quasi_identifiers=KEYS, k=k, missing="wildcard")
    assert res.details["records_below_k"] == e["fk"]
    assert res.value == pytest.approx(e["fk"] / len(frame))
    res, _ = run(KAnonymity, frame, quasi_identifiers=KEYS, k=k, missing="wildcard",
                 weights="w")
    assert res.details["records_below_k"] == e["Fk"]


def test_kanonymity_weights_hand():
    # classes (a): weights 1+1 → F=2; (b): 5 → F=5; (c): 1 → F=1. k=3: a and c violate.
    df = pd.DataFrame({"q": ["a", "a", "b", "c"], "w": [1.0, 1.0, 5.0, 1.0]})
    res, _ = run(KAnonymity, df, quasi_identifiers=["q"], k=3, weights="w", per_record=True)
    assert res.details["records_below_k"] == 3
    assert res.value == pytest.approx(3 / 4)
    assert res.details["per_record"].violates.tolist() == [True, True, False, True]


def test_ldiversity_weights_hand():
    # class a: sensitive {1, 2} (2-diverse); class b: {1, 1} violates. Weights 1, 1, 3, 5.
    df = pd.DataFrame({"q": ["a", "a", "b", "b"], "s": [1, 2, 1, 1], "w": [1, 1, 3, 5.0]})
    res, _ = run(LDiversity, df, quasi_identifiers=["q"], sensitive="s", l=2, weights="w")
    assert res.value == pytest.approx(8 / 10)
    assert res.details["records_in_violating_classes"] == 2


@pytest.mark.parametrize("orig", [True, False])
@pytest.mark.parametrize("fraction", [0.01, 0.1])
def test_suda_matches_sdcmicro(generated, orig, fraction):
    frame, expected = generated
    e = expected[f"suda2_{str(orig).lower()}_{fraction}"]
    res, _ = run(SUDA, frame, quasi_identifiers=KEYS, dis_fraction=fraction,
                 original_scores=orig, per_record=True)
    t = res.details["per_record"]
    np.testing.assert_allclose(t.score, e["score"], rtol=1e-14)
    if orig:
        np.testing.assert_array_equal(t.score, e["score"])
    np.testing.assert_allclose(t.dis_score, e["dis"], rtol=1e-6, atol=0)
    np.testing.assert_allclose(t[[f"contribution_{k}" for k in KEYS]], e["contribution"],
                               atol=1e-12)
    np.testing.assert_allclose(list(res.details["attribute_contributions"].values()),
                               e["attribute_contributions"], rtol=1e-12)
    assert res.value == pytest.approx(np.mean(e["dis"]), rel=1e-6)


def test_suda_two_keys_compat(generated):
    frame, expected = generated
    e = expected["suda2_two_keys"]
    t = records(SUDA, frame, quasi_identifiers=["k1", "k3"], compat="sdcmicro")
    np.testing.assert_array_equal(t.score, e["score"])
    np.testing.assert_allclose(t.dis_score, e["dis"], rtol=1e-6)


# -- sdcMicro on adult -----------------------------------------------------------------------


def test_individual_risk_adult_matches_sdcmicro(adult):
    frame, summary, per = adult
    res, _ = run(IndividualRisk, frame, quasi_identifiers=K5, per_record=True)
    np.testing.assert_allclose(res.details["per_record"].risk, per.risk_k5, rtol=1e-12)
    e = summary["unweighted_k5"]
    assert res.details["expected_reidentifications"] == pytest.approx(e["global_risk_ER"])
    assert res.details["mu_argus_threshold"] == pytest.approx(e["global_threshold"])
    res, _ = run(IndividualRisk, frame, quasi_identifiers=K5, weights="w", household="hh",
                 per_record=True)
    t, e = res.details["per_record"], summary["weighted_hh_k5"]
    np.testing.assert_allclose(t.risk, per.wrisk_k5, rtol=1e-12)
    np.testing.assert_allclose(t.household_risk, per.hier_k5, rtol=1e-12)
    assert res.value == pytest.approx(e["global_risk"], rel=1e-12)
    assert res.details["household_expected_reidentifications"] == pytest.approx(
        e["hier_risk_ER"], rel=1e-12)
    assert res.details["mu_argus_threshold"] == pytest.approx(e["global_threshold"], rel=1e-12)
    res, _ = run(IndividualRisk, frame, quasi_identifiers=K7, weights="w", per_record=True)
    np.testing.assert_allclose(res.details["per_record"].risk, per.wrisk_k7, rtol=1e-12)
    assert res.details["mu_argus_threshold"] == pytest.approx(
        summary["weighted_k7"]["global_threshold"], rel=1e-12)


def test_suda_adult_matches_sdcmicro(adult):
    frame, summary, per = adult
    res, _ = run(SUDA, frame, quasi_identifiers=K7, per_record=True)
    t, e = res.details["per_record"], summary["suda2_k7"]
    np.testing.assert_array_equal(t.score, per.suda_score)
    np.testing.assert_allclose(t.dis_score, per.suda_dis, rtol=1e-6)
    assert res.details["score_sum"] == e["score_sum"]
    assert res.value * len(frame) == pytest.approx(e["dis_sum"], rel=1e-6)
    np.testing.assert_allclose(list(res.details["attribute_contributions"].values()),
                               e["attribute_contributions"], rtol=1e-12)
    alt = records(SUDA, frame, quasi_identifiers=K7, original_scores=False)
    np.testing.assert_allclose(alt.score, per.suda_score_alt, rtol=1e-12)


# -- SUDA: published examples, hand computations, brute force -------------------------------


def test_suda_sdc_guideline_example():
    # IHSN SDC guidelines (Benschop, Machingauta & Welch), sdcMicro's test_suda2.R
    df = pd.DataFrame({
        "Residence": ["Urban"] * 4 + ["Rural"] + ["Urban"] * 5,
        "Gender": ["Female", "Female", "Female", "Male", "Female", "Male", "Female", "Male",
                   "Female", "Female"],
        "Education": ["Secondary incomplete", "Secondary incomplete", "Primary incomplete",
                      "Secondary complete", "Secondary complete", "Secondary complete",
                      "Primary complete", "Post-secondary", "Secondary incomplete",
                      "Secondary incomplete"],
        "Labor": ["Employed", "Employed", "Non-LF", "Employed", "Unemployed", "Employed",
                  "Non-LF", "Unemployed", "Non-LF", "Non-LF"]})
    t = records(SUDA, df, quasi_identifiers=list(df.columns))
    assert t.score.tolist() == [0, 0, 6, 0, 12, 0, 6, 10, 0, 0]
    # the MSUs behind the scores (M = 4, weights (M − k)!: 6 for k = 1, 2 for k = 2), by hand:
    # record 3 {Primary incomplete}; record 5 {Rural}, {Female, Secondary complete},
    # {Female, Unemployed}, {Secondary complete, Unemployed}; record 7 {Primary complete};
    # record 8 {Post-secondary}, {Male, Unemployed}, {Urban, Unemployed}.
    assert t.msus.tolist() == [0, 0, 1, 0, 4, 0, 1, 3, 0, 0]
    assert t.min_msu_size.tolist() == [0, 0, 1, 0, 1, 0, 1, 1, 0, 0]
    res, _ = run(SUDA, df, quasi_identifiers=list(df.columns))
    assert res.details["msu_counts"] == {1: 4, 2: 5}


def test_suda_book_example_and_contributions():
    # Templ (2017), sdcMicro's test_suda2.R "book example": records 5–8 score 4, 2, 6, 8
    tab = pd.DataFrame({"age": ["20s"] * 7 + ["60s"],
                        "gender": ["male"] * 4 + ["female"] * 3 + ["male"],
                        "income": ["50k+"] * 2 + ["50k-"] * 6,
                        "education": ["highschool"] * 4 + ["university", "highschool",
                                                           "middleschool", "university"]})
    t = records(SUDA, tab, quasi_identifiers=list(tab.columns))
    assert t.score.tolist() == [0, 0, 0, 0, 4, 2, 6, 8]
    # a=(2,1,1), b=(0,3,0), c=(0,6,0): MSUs {a=2} (weight 2!) for record 1, {b=3}, {c=6}
    # (2! each) for record 2, {a=1,b=0}, {a=1,c=0} (1! each) for record 3 → contributions
    # 50, 37.5, 37.5
    d = pd.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]})
    res, _ = run(SUDA, d, quasi_identifiers=["a", "b", "c"], per_record=True)
    assert res.details["attribute_contributions"] == {"a": 50.0, "b": 37.5, "c": 37.5}
    assert res.details["per_record"].score.tolist() == [2, 4, 2]
    assert res.details["per_record"].msus.tolist() == [1, 2, 2]
    assert res.details["per_record"].min_msu_size.tolist() == [1, 1, 2]
    assert res.details["msu_counts"] == {1: 3, 2: 2}


def test_dis_suda_hand():
    # keys: r0=(a,x), r1=(a,y), r2=(b,y), r3=(b,y). M=2: weights (M−k)! = 1 (k=1), 1 (k=2).
    # r0: {q2=x} unique → score 1; r1: {q1=a,q2=y} minimal (a twice, y three times) → 1;
    # r2, r3 share their key → 0. P = 2 (one pair). Q = 1 + 6/20 = 1.3 (float32).
    # f = 0.1: num = 2·0.9/0.1 = 18; Σ s^−Q = 2; dis = 1/(1 + 18/(1·2)) = 0.1
    df = pd.DataFrame({"q1": ["a", "a", "b", "b"], "q2": ["x", "y", "y", "y"]})
    res, _ = run(SUDA, df, quasi_identifiers=["q1", "q2"], dis_fraction=0.1, per_record=True)
    t = res.details["per_record"]
    assert t.score.tolist() == [1, 1, 0, 0]
    f = float(np.float32(0.1))
    np.testing.assert_allclose(t.dis_score, [1 / (1 + 2 * (1 - f) / f / 2)] * 2 + [0, 0])
    assert res.value == pytest.approx(2 * 0.1 / 4, rel=1e-6)
    # f as float32 is 0.1000000015, so dis = 0.1000000015 falls in sdcMicro's (0.1, 0.2] bin
    assert res.details["dis_table"]["(0.1, 0.2]"] == 2
    assert res.details["dis_table"]["== 0"] == 2


def brute_suda(frame: pd.DataFrame, cols: list[str]) -> list[float]:
    """SUDA scores by checking every attribute subset of every record (NaN never an item)."""
    rows = frame[cols].astype(object).where(frame[cols].notna(), None).values.tolist()
    m, n = len(cols), len(rows)
    scores = []
    for r in rows:
        score = 0.0
        unique_sets = []
        for k in range(1, m + 1):
            for s in itertools.combinations(range(m), k):
                if any(r[j] is None for j in s):
                    continue
                if any(all(o[j] == r[j] for o in rows) for j in s) and n > 0:
                    continue  # a value every record has is never an item
                if sum(all(o[j] == r[j] for j in s) for o in rows) != 1:
                    continue
                if any(set(u) < set(s) for u in unique_sets):
                    continue
                unique_sets.append(s)
                score += math.factorial(m - k)
        scores.append(score)
    return scores


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_suda_brute_force_and_row_order(data):
    n = data.draw(st.integers(2, 14))
    m = data.draw(st.integers(1, 4))
    values = st.one_of(st.sampled_from(["a", "b", "c"]), st.none())
    cols = [f"c{j}" for j in range(m)]
    frame = pd.DataFrame({c: data.draw(st.lists(values, min_size=n, max_size=n)) for c in cols})
    t = records(SUDA, frame, quasi_identifiers=cols)
    assert t.score.tolist() == brute_suda(frame, cols)
    perm = np.random.default_rng(n * 31 + m).permutation(n)
    shuffled = records(SUDA, frame.iloc[perm].reset_index(drop=True), quasi_identifiers=cols)
    np.testing.assert_allclose(shuffled.score, t.score.to_numpy()[perm])
    np.testing.assert_allclose(shuffled.dis_score, t.dis_score.to_numpy()[perm], rtol=1e-12)
    assert ((t.dis_score >= 0) & (t.dis_score <= 1)).all()


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_individual_risk_bounds_and_row_order(data):
    n = data.draw(st.integers(1, 20))
    q = data.draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    w = data.draw(st.lists(st.floats(1, 100), min_size=n, max_size=n))
    frame = pd.DataFrame({"q": q, "w": w})
    t = records(IndividualRisk, frame, quasi_identifiers=["q"], weights="w", method="exact")
    assert ((t.risk > 0) & (t.risk <= 1 / t.fk + 1e-12)).all()  # E[1/F] ≤ 1/f as F ≥ f
    perm = np.random.default_rng(n).permutation(n)
    s = records(IndividualRisk, frame.iloc[perm].reset_index(drop=True), quasi_identifiers=["q"],
                weights="w", method="exact")
    np.testing.assert_allclose(s.risk, t.risk.to_numpy()[perm], rtol=1e-12)


def test_max_msu_size_bounds_the_search():
    tab = pd.DataFrame({"a": [1, 1, 2, 2], "b": [1, 2, 1, 2], "c": [1, 1, 1, 2]})
    full = records(SUDA, tab, quasi_identifiers=["a", "b", "c"])
    # 2-MSUs (weight 1! = 1): r0 {a=1,b=1}; r1 {a=1,b=2}, {b=2,c=1}; r2 {a=2,b=1}, {a=2,c=1};
    # r3 {a=2,b=2}; and r3's 1-MSU {c=2} (weight 2! = 2)
    assert full.score.tolist() == [1, 2, 2, 3]
    cut = records(SUDA, tab, quasi_identifiers=["a", "b", "c"], max_msu_size=1)
    # only record 3 has a 1-MSU (c=2, weight 2! = 2); its 2-MSUs are not searched
    assert cut.score.tolist() == [0, 0, 0, 2]
    assert (full.score >= cut.score).all()


# -- per-record output, bad input ------------------------------------------------------------


def test_per_record_table_has_the_id():
    df = pd.DataFrame({"pid": [10, 11, 12], "q": ["a", "a", "b"], "w": [2.0, 2.0, 3.0]})
    for cls in (IndividualRisk, SUDA):
        t = records(cls, df, quasi_identifiers=["q"], id="pid")
        assert t.pid.tolist() == [10, 11, 12] and len(t) == 3


@pytest.mark.parametrize(("weights", "message"), [
    ([1.0, -2.0, 1.0], "data row 2 (1-based, header not counted) is negative"),
    ([1.0, 2.0, 0.0], "data row 3 (1-based, header not counted) is zero"),
    ([np.nan, 2.0, 1.0], "data row 1 (1-based, header not counted) is missing"),
    (["1", "x", "2"], "data row 2 (1-based, header not counted) is not a number"),
])
def test_bad_weights_name_column_and_row(weights, message):
    df = pd.DataFrame({"q": ["a", "a", "b"], "wt": weights})
    for cls in (IndividualRisk, KAnonymity):
        with pytest.raises(DataError, match=re.escape(f"weight column 'wt': {message}")):
            run(cls, df, quasi_identifiers=["q"], weights="wt")
    with pytest.raises(DataError, match="weight column 'nope'"):
        run(IndividualRisk, df, quasi_identifiers=["q"], weights="nope")


def test_bad_params_are_rejected():
    with pytest.raises(ValueError, match="alpha applies only"):
        IndividualRisk(quasi_identifiers=["q"], alpha=0.5)
    with pytest.raises(ValueError, match="also a quasi-identifier"):
        IndividualRisk(quasi_identifiers=["q"], weights="q")
    with pytest.raises(ValueError):
        SUDA(quasi_identifiers=["q"], dis_fraction=1.5)
    df = pd.DataFrame({"q": ["a", "b"], "hh": [1, None]})
    with pytest.raises(DataError, match=r"household column 'hh': data row 2 \(1-based"):
        run(IndividualRisk, df, quasi_identifiers=["q"], household="hh")


def test_empty_data_is_an_error():
    df = pd.DataFrame({"q": pd.Series([], dtype=object)})
    for cls in (IndividualRisk, SUDA):
        with pytest.raises(DataError, match="no records"):
            run(cls, df, quasi_identifiers=["q"])


# -- example config and HTML report ----------------------------------------------------------


def test_risk_census_example_runs_with_histograms(root, tmp_path):
    from anoneval.core.cli.main import main

    out, page = tmp_path / "report.json", tmp_path / "report.html"
    assert main(["run", str(root / "examples" / "risk_census.json"), "-o", str(out),
                 "--html", str(page), "-q"]) == 0
    report = json.loads(out.read_text())
    by_name = {m["name"]: m for m in report["measures"]}
    assert {"IndividualRisk", "SUDA"} <= set(by_name)
    for name in ("IndividualRisk", "SUDA"):
        assert by_name[name]["error"] is None and 0 <= by_name[name]["value"] <= 1
    hist = by_name["IndividualRisk"]["details"]["risk_histogram"]
    assert sum(hist["counts"]) == by_name["IndividualRisk"]["details"]["records"]
    text = page.read_text()
    assert "IndividualRisk: histogram of individual re-identification risk" in text
    assert "SUDA: histogram of DIS-SUDA score" in text


def brute_wildcard(rows: list[tuple], w: list[float], alpha: float) -> tuple[list, list]:
    """freqCalc's wildcard fk and Fk, record by record (pairs of records, no grouping)."""
    n, m = len(rows), len(rows[0])
    out_f, out_w = [], []
    for r in rows:
        na_r = [v is None for v in r]
        if all(na_r):
            out_f.append(float(n))
            out_w.append(float(sum(w)))
            continue
        f = fw = 0.0
        for o, wo in zip(rows, w, strict=True):
            na_o = [v is None for v in o]
            if any(r[j] != o[j] for j in range(m) if not na_r[j] and not na_o[j]):
                continue  # incompatible
            if list(o) == list(r):
                share = 1.0  # the same key, itself included
            elif m == 1:
                share = alpha if not any(na_r) else 1.0
            elif not any(na_r):  # complete: partly missing ones count alpha, all-missing 0
                share = 0.0 if all(na_o) else alpha
            else:  # partly missing: complete ones count 1, others with a missing value alpha
                share = 1.0 if not any(na_o) else alpha
            f += share
            fw += share * wo
        out_f.append(f)
        out_w.append(fw)
    return out_f, out_w


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_wildcard_frequencies_brute_force(data):
    n = data.draw(st.integers(1, 15))
    m = data.draw(st.integers(1, 3))
    values = st.one_of(st.sampled_from(["a", "b"]), st.none())
    cols = [f"c{j}" for j in range(m)]
    frame = pd.DataFrame({c: data.draw(st.lists(values, min_size=n, max_size=n)) for c in cols})
    frame["w"] = data.draw(st.lists(st.floats(1, 50), min_size=n, max_size=n))
    alpha = data.draw(st.sampled_from([1.0, 0.5, 0.0]))
    t = records(IndividualRisk, frame, quasi_identifiers=cols, weights="w", missing="wildcard",
                alpha=alpha)
    rows = [tuple(None if pd.isna(v) else v for v in r) for r in frame[cols].values.tolist()]
    fk, Fk = brute_wildcard(rows, frame["w"].tolist(), alpha)
    np.testing.assert_allclose(t.fk, fk, rtol=1e-12)
    np.testing.assert_allclose(t.Fk, Fk, rtol=1e-12)


def test_ldiversity_per_record_aligned_with_rows():
    df = pd.DataFrame({"pid": [5, 6, 7, 8, 9], "q": ["a", "a", "b", "b", "*"],
                       "s": [1, 2, 1, 1, 3]})
    res, _ = run(LDiversity, df, quasi_identifiers=["q"], sensitive="s", l=2, id="pid",
                 per_record=True)
    t = res.details["per_record"]
    assert t.pid.tolist() == [5, 6, 7, 8, 9]
    assert t.violates.tolist() == [False, False, True, True, False]  # row 4 is suppressed
    assert t.fk.tolist()[:4] == [2, 2, 2, 2] and np.isnan(t.fk[4])


def test_wildcard_warning_says_wildcard():
    df = pd.DataFrame({"a": ["x", None, "y"], "b": ["u", "u", "v"]})
    for cls in (IndividualRisk, KAnonymity):
        _, warnings = run(cls, df, quasi_identifiers=["a", "b"], missing="wildcard")
        assert any("'a' (1); treated as wildcards" in w for w in warnings), warnings


def _mp_risk(f: float, p: float) -> float:
    """(p/f)·₂F₁(1, 1; f+1; 1−p) at 50 digits (mpmath), independent of the quadrature."""
    import mpmath

    with mpmath.workdps(50):
        f_, p_ = mpmath.mpf(f), mpmath.mpf(p)
        return float(p_ / f_ * mpmath.hyp2f1(1, 1, f_ + 1, 1 - p_))


def test_exact_risk_finite_for_large_fk_issue_23():
    # sdcMicro 5.8.1: fk = 107, Fk = 1187.263 → 0.000849 (scipy's hyp2f1 gave NaN here)
    fk, Fk = np.array([107.0]), np.array([1187.263])
    for compat in (None, "sdcmicro"):
        got = class_risk(fk, Fk, True, "exact", compat)[0]
        assert got == pytest.approx(0.000849, abs=5e-7)
    assert class_risk(fk, Fk, True, "exact", None)[0] == pytest.approx(
        _mp_risk(107, 107 / 1187.263), rel=1e-10)


def test_exact_risk_against_high_precision_grid():
    fks = [0.01, 0.25, 0.5, 1, 1.5, 2, 2.5, 3, 7.5, 20, 99, 107, 150, 400, 1000, 10_000]
    ps = [1e-6, 1e-4, 0.01, 0.05, 0.0901, 0.3, 0.5, 0.9, 0.999]
    f, p = (np.array(x, dtype=float).ravel() for x in np.meshgrid(fks, ps))
    got = class_risk(f, f / p, True, "exact", None)
    want = np.array([_mp_risk(a, b) for a, b in zip(f, p, strict=True)])
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_compat_exact_nan_only_where_sdcmicro_overflows():
    """sdcMicro's series (R/indivRisk.R) is NaN once p^(1−fk) overflows a double (Inf/Inf in
    its B terms): at p = 0.0901, (fk − 2)·ln(1/p) > 709.78 from fk ≈ 297. Below that its
    value is finite; the default is finite throughout."""
    p = 0.0901
    fk = np.arange(3.0, 600.0)
    compat = class_risk(fk, fk / p, True, "exact", "sdcmicro")
    default = class_risk(fk, fk / p, True, "exact", None)
    assert np.isfinite(default).all()
    overflow = (fk - 2) * np.log(1 / p) > np.log(np.finfo(float).max)
    assert np.isnan(compat[overflow]).all()
    assert not np.isnan(compat[fk <= 250]).any()
    small = fk <= 60  # where the alternating series still holds its digits
    np.testing.assert_allclose(compat[small], default[small], rtol=1e-8)


# --- population_size: journalist and marketer risk without a population file (issue 29) ---

def _generalized_pair():
    original = pd.DataFrame({"age": [31, 32, 45, 46, 47, 60], "sex": list("mfmfmf")})
    released = original.assign(age=["30-39", "30-39", "40-49", "40-49", "40-49", "60-69"])
    return original, released


@pytest.mark.parametrize("attacker", ["journalist", "marketer"])
def test_population_size_estimates_class_sizes_from_the_sampling_fraction(attacker):
    original, released = _generalized_pair()
    report = evaluate(original, released, [{"name": "ReidentificationRisk", "params": {
        "quasi_identifiers": ["age"], "attacker": attacker, "population_size": 60,
        "per_record": True}}])
    m = report.measures[0]
    # by hand: pi = 6/60; classes of 2, 3, 1 records -> F = 20, 30, 10; sum f/F = 3 * 0.1
    assert m.value == pytest.approx(3 * 0.1 / 6)
    assert m.details["highest_risk"] == pytest.approx(1 / 10)
    assert m.details["sampling_fraction"] == pytest.approx(0.1)
    table = m.details["per_record"]
    assert list(table["population_size"]) == pytest.approx([20, 20, 30, 30, 30, 10])


def test_population_size_equals_a_population_of_that_many_copies():
    # a population made of 10 copies of the data has exactly F = f * N / n in every class
    original, released = _generalized_pair()
    spec = {"quasi_identifiers": ["age"], "attacker": "journalist"}
    estimated = evaluate(original, released, [{"name": "ReidentificationRisk", "params": {
        **spec, "population_size": 60}}]).measures[0]
    copies = pd.concat([released] * 10, ignore_index=True)
    counted = evaluate(copies, released, [{"name": "ReidentificationRisk", "params": spec}]
                       ).measures[0]
    assert estimated.value == pytest.approx(counted.value)
    assert estimated.details["highest_risk"] == pytest.approx(counted.details["highest_risk"])


def test_population_size_problems_are_clear():
    original, released = _generalized_pair()
    report = evaluate(original, released, [{"name": "ReidentificationRisk", "params": {
        "quasi_identifiers": ["age"], "attacker": "journalist", "population_size": 3}}])
    assert "smaller than the 6 records" in report.measures[0].error
    for extra in ({"attacker": "prosecutor"}, {"attacker": "journalist", "population": "p.csv"}):
        with pytest.raises(ConfigError, match="population_size"):
            evaluate(original, released, [{"name": "ReidentificationRisk", "params": {
                "quasi_identifiers": ["age"], "population_size": 60, **extra}}])


def test_no_population_match_says_what_to_give():
    original, released = _generalized_pair()
    report = evaluate(original, released, [{"name": "ReidentificationRisk", "params": {
        "quasi_identifiers": ["age"], "attacker": "journalist"}}])
    error = report.measures[0].error
    assert "population only 0" not in error
    assert "'hierarchies'" in error and "population_size" in error and "(age)" in error
