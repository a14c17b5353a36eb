"""ARX-side risk tests: ReidentificationRisk, PopulationUniqueness and the risk_census example.

Oracles: ARX's own risk estimator run on adult at fixed transformations and on generated data
(tests/data/arx/arx_risk.json, see the README there), ARX's unit-test values (reference notes
§4d), hand computations on tiny tables.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _toy_plugins import compute_on_frames as run
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from anoneval.core import evaluate
from anoneval.core.errors import DataError
from anoneval.plugins.microdata._hierarchy import generalize, read_hierarchy
from anoneval.plugins.reidentification._uniqueness import Histogram, snb, zayatz
from anoneval.plugins.reidentification.population_uniqueness import PopulationUniqueness
from anoneval.plugins.reidentification.reidentification_risk import ReidentificationRisk

ARX_DIR = Path(__file__).resolve().parents[2] / "data" / "arx"
ARX = json.loads((ARX_DIR / "arx_risk.json").read_text())
ADULT_DIR = Path(__file__).resolve().parents[3] / "examples" / "data" / "adult"
QI8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
       "salary-class"]
QI9 = [*QI8[:7], "occupation", *QI8[7:]]
H8 = {c: str(ADULT_DIR / f"adult_hierarchy_{c}.csv") for c in QI8}
NODES = {"0-0-0-0-0-0-0-0": [0] * 8, "1-2-0-1-1-1-1-0": [1, 2, 0, 1, 1, 1, 1, 0],
         "0-1-0-1-2-0-1-1": [0, 1, 0, 1, 2, 0, 1, 1]}


@pytest.fixture(scope="module")
def adult():
    return pd.read_csv(ADULT_DIR / "adult.csv", sep=";", dtype=str, keep_default_na=False)


def node(frame, levels, k=1):
    """Generalize the QIs of ``frame`` at ``levels`` (ARX's fixed transformation); records of
    classes smaller than k become '*' in every QI (ARX's suppression)."""
    out = frame.copy()
    for c, lev in zip(QI8, levels, strict=True):
        out[c] = generalize(read_hierarchy(H8[c]), frame[c].to_numpy(dtype=object), lev, c)
    if k > 1:
        small = out.groupby(QI8)["sex"].transform("size").to_numpy() < k
        out.loc[small, QI8] = "*"
    return out


# -- PopulationUniqueness against ARX -------------------------------------------------------

@pytest.mark.parametrize("f", [0.01, 0.05, 0.1, 0.2, 0.5, 0.9, 1.0])
def test_uniqueness_adult_nine_qis_arx(adult, f):
    ref = ARX[f"adult9_identity_f{f}"]
    for model in ("zayatz", "pitman"):
        v, d, _ = run(PopulationUniqueness(quasi_identifiers=QI9, model=model,
                                           sampling_fraction=f), adult)
        assert d["population_size"] == ref["population_size"]
        assert v == pytest.approx(ref[model], rel=1e-9, abs=1e-15)
    v, d, _ = run(PopulationUniqueness(quasi_identifiers=QI9, sampling_fraction=f,
                                       compat="arx"), adult)
    assert d["model_used"] == ref["dankar_model"]
    assert v == pytest.approx(ref["dankar"], rel=1e-5)
    assert d["estimate_shares"]["snb"] == pytest.approx(ref["snb"], rel=1e-5, abs=1e-12)


def test_uniqueness_arx_unit_test_values(adult):
    # ARX TestRiskMetrics.testDecisionRule2 (reference §4d): f = 0.01 → Pitman 0.1446083531...,
    # f = 0.1 → Pitman 0.2768499388..., f = 0.2 → Zayatz 0.3577099234829125.
    for f, expect, model in ((0.01, 0.1446083531167384, "pitman"),
                             (0.1, 0.27684993883653597, "pitman"),
                             (0.2, 0.3577099234829125, "zayatz")):
        v, d, _ = run(PopulationUniqueness(quasi_identifiers=QI9, sampling_fraction=f), adult)
        assert v == pytest.approx(expect, rel=1e-9)
        assert d["model_used"] == model


@pytest.mark.parametrize("name", list(NODES))
@pytest.mark.parametrize("k", [1, 5])
def test_uniqueness_and_prosecutor_adult_nodes_arx(adult, name, k):
    release = node(adult, NODES[name], k)
    for f in (0.01, 0.1, 0.3):
        ref = ARX[f"adult8_{name}_k{k}_f{f}"]
        v, d, _ = run(PopulationUniqueness(quasi_identifiers=QI8, sampling_fraction=f,
                                           compat="arx"), release)
        assert d["population_size"] == ref["population_size"]
        assert d["model_used"] == ref["dankar_model"]
        assert v == pytest.approx(ref["dankar"], rel=1e-6, abs=1e-15)
        for model in ("zayatz", "pitman"):
            assert d["estimate_shares"][model] == pytest.approx(ref[model], rel=1e-6, abs=1e-15)
    for key, t in ((f"adult8_{name}_k{k}_summary", 0.2), (f"adult8_{name}_k{k}_summary_t0.05",
                                                           0.05)):
        ref = ARX[key]["prosecutor"]
        v, d, _ = run(ReidentificationRisk(quasi_identifiers=QI8, risk_threshold=t), release)
        assert v == pytest.approx(ref["success_rate"], rel=1e-12)
        assert d["highest_risk"] == pytest.approx(ref["highest_risk"], rel=1e-12)
        assert d["records_at_risk"] == pytest.approx(ref["records_at_risk"], rel=1e-12)


@pytest.mark.parametrize("name", ["gen_uniform", "gen_zipf", "gen_small"])
def test_uniqueness_generated_arx(name):
    data = pd.read_csv(ARX_DIR / f"{name}.csv", dtype=str)
    qi = list(data.columns)
    for f in (0.01, 0.05, 0.1, 0.3, 0.6, 0.9):
        ref = ARX[f"{name}_f{f}"]
        v, d, _ = run(PopulationUniqueness(quasi_identifiers=qi, sampling_fraction=f,
                                           compat="arx"), data)
        assert d["model_used"] == ref["dankar_model"], f
        assert v == pytest.approx(ref["dankar"], rel=1e-5, abs=1e-12), f
        assert d["estimate_shares"]["zayatz"] == pytest.approx(ref["zayatz"], rel=1e-9)
    ref = ARX[f"{name}_summary"]["prosecutor"]
    v, d, _ = run(ReidentificationRisk(quasi_identifiers=qi), data)
    assert v == pytest.approx(ref["success_rate"])
    assert d["records_at_risk"] == pytest.approx(ref["records_at_risk"])


def test_uniqueness_default_snb_and_dankar(adult):
    # The published SNB converges on adult at f = 0.9; ARX's variant gives a different value.
    v, d, _ = run(PopulationUniqueness(quasi_identifiers=QI9, sampling_fraction=0.9,
                                       model="snb"), adult)
    assert v is not None and 0 < v <= 1
    assert d["model_used"] == "snb" and d["solver"]["snb"]["alpha"] > 0
    # default dankar at f > 0.1: the smaller of the available Zayatz and SNB
    v2, d2, _ = run(PopulationUniqueness(quasi_identifiers=QI9, sampling_fraction=0.9), adult)
    expect = min(x for x in (d2["estimates"]["zayatz"], d2["estimates"]["snb"]) if x is not None)
    assert v2 == pytest.approx(expect / d2["population_size"])


def test_uniqueness_hand_zayatz_tiny():
    # classes of sizes 1, 1, 2 (n = 4), N = 8 (f = 0.5). H(1; N=8, i, n=4):
    # i = 1: 4/8 = 0.5; i = 2: 2·C(6,3)/C(8,4) = 40/70 = 4/7.
    # P = (2/3·0.5) / (2/3·0.5 + 1/3·4/7) = (1/3) / (1/3 + 4/21) = 7/11; uniques = 2·7/11 / 0.5.
    h = Histogram(np.array([1, 2]), np.array([2, 1]), 8.0)
    assert zayatz(h).uniques == pytest.approx(28 / 11)
    data = pd.DataFrame({"q": ["a", "b", "c", "c"]})
    v, d, _ = run(PopulationUniqueness(quasi_identifiers=["q"], population_size=8,
                                       model="zayatz"), data)
    assert v == pytest.approx(28 / 11 / 8)
    assert d["sampling_fraction"] == 0.5


def test_uniqueness_per_record():
    # rows: c, a, b, c, *(suppressed), a. Released n = 5, N = 10 (f = ½): classes c (2), a (2),
    # b (1). H(1; 10, 1, 5) = ½; H(1; 10, 2, 5) = 2·C(8,4)/C(10,5) = 140/252 = 5/9.
    # Zayatz P = (⅓·½) / (⅓·½ + ⅔·5/9) = (1/6) / (1/6 + 10/27) = 9/29: the sample unique b is
    # population unique with probability 9/29 (= f·Û / c1, Û = 1·P / f); a and c: 0.
    data = pd.DataFrame({"id": [10, 11, 12, 13, 14, 15], "q": ["c", "a", "b", "c", "*", "a"]})
    v, d, _ = run(PopulationUniqueness(quasi_identifiers=["q"], population_size=10,
                                       model="zayatz", per_record=True, id="id"), data)
    assert v == pytest.approx(9 / 29 / 0.5 / 10)
    t = d["per_record"]
    assert t["id"].tolist() == [10, 11, 12, 13, 14, 15]
    assert t["class_size"].tolist() == [2, 2, 1, 2, pd.NA, 2]
    assert t["sample_unique"].tolist() == [False, False, True, False, pd.NA, False]
    np.testing.assert_allclose(t["population_unique_probability"],
                               [0, 0, 9 / 29, 0, np.nan, 0])
    assert t["class"].iloc[4] == -1
    # the expected population uniques among the sample: Σ probabilities = f·Û (Pitman on adult)
    adult = pd.read_csv(ADULT_DIR / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    _, d, _ = run(PopulationUniqueness(quasi_identifiers=QI8, sampling_fraction=0.05,
                                       per_record=True), adult)
    t = d["per_record"]
    assert d["model_used"] == "pitman" and len(t) == len(adult)
    assert t["sample_unique"].sum() == d["sample_uniques"]
    assert t["population_unique_probability"].sum() == pytest.approx(
        d["sampling_fraction"] * d["estimated_uniques"])
    # not available: every probability null, the table still there
    data = pd.DataFrame({"q": list("abcdeffgghhh")})
    v, d, _ = run(PopulationUniqueness(quasi_identifiers=["q"], sampling_fraction=0.05,
                                       model="pitman", max_iterations=1, total_iterations=1,
                                       per_record=True), data)
    assert v is None and d["per_record"]["population_unique_probability"].isna().all()
    assert d["per_record"]["sample_unique"].sum() == 5


def test_uniqueness_no_uniques_and_non_convergence():
    data = pd.DataFrame({"q": ["a", "a", "b", "b"]})
    v, d, _ = run(PopulationUniqueness(quasi_identifiers=["q"], sampling_fraction=0.5), data)
    assert v == 0 and d["model_used"] == "dankar"
    # a one-iteration budget cannot converge: value null with the reason, the others still run
    data = pd.DataFrame({"q": list("abcdeffgghhh")})
    v, d, w = run(PopulationUniqueness(quasi_identifiers=["q"], sampling_fraction=0.05,
                                       model="pitman", max_iterations=1, total_iterations=1),
                  data)
    assert v is None and "did not converge" in d["reason"]
    assert d["estimates"]["zayatz"] is not None and w


def test_uniqueness_bad_input():
    data = pd.DataFrame({"q": ["a", "b", "c"]})
    with pytest.raises(DataError, match="population size 2 is smaller than the sample"):
        run(PopulationUniqueness(quasi_identifiers=["q"], population_size=2), data)
    for f in (0, 1.5, -0.1):
        with pytest.raises(ValidationError, match="sampling_fraction"):
            PopulationUniqueness(quasi_identifiers=["q"], sampling_fraction=f)
    with pytest.raises(ValidationError, match="exactly one"):
        PopulationUniqueness(quasi_identifiers=["q"])
    with pytest.raises(ValidationError, match="exactly one"):
        PopulationUniqueness(quasi_identifiers=["q"], population_size=10, sampling_fraction=0.5)


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=2, max_size=40), st.floats(0.02, 1.0))
@example([1, 1, 6], 1.0)  # Pitman's start divided by zero in Python floats
def test_uniqueness_bounds(sizes, f):
    data = pd.DataFrame({"q": np.repeat(np.arange(len(sizes)), sizes)})
    for model in ("dankar", "zayatz", "pitman", "snb"):
        v, d, _ = run(PopulationUniqueness(quasi_identifiers=["q"], sampling_fraction=f,
                                           model=model), data)
        assert v is None or 0 <= v <= 1
        for e in d["estimates"].values():
            assert e is None or 0 <= e <= d["population_size"]


def test_snb_at_full_sample_is_sample_uniques():
    h = Histogram(np.array([1, 3]), np.array([5, 2]), 11.0)
    assert snb(h).uniques == 5


# -- ReidentificationRisk ---------------------------------------------------------------------

# Release (a) classes: x×2, y×1, and one suppressed record; population: x×4, y×1, z×3.
TINY_REL = pd.DataFrame({"q": ["x", "x", "y", "*"]})
TINY_POP = pd.DataFrame({"q": ["x", "x", "x", "x", "y", "z", "z", "z"]})


def test_attackers_hand():
    # n = 3 released (the suppressed record is left out), classes f = (2, 1), F = (4, 1).
    v, d, _ = run(ReidentificationRisk(quasi_identifiers=["q"], risk_threshold=0.4), TINY_REL)
    assert v == pytest.approx(2 / 3)  # prosecutor: #classes / n
    assert d["highest_risk"] == 1.0
    assert d["records_at_risk"] == pytest.approx(3 / 3)  # 1/2 and 1/1 > 0.4
    assert d["records_at_risk_count"] == 3
    v, d, _ = run(ReidentificationRisk(quasi_identifiers=["q"], attacker="marketer",
                                       risk_threshold=0.4), TINY_POP, TINY_REL)
    assert v == pytest.approx((2 / 4 + 1 / 1) / 3)  # Σ f/F / n = 0.5
    v, d, _ = run(ReidentificationRisk(quasi_identifiers=["q"], attacker="journalist",
                                       risk_threshold=0.4, per_record=True), TINY_POP, TINY_REL)
    # max(#classes/ΣF = 2/5, Σ f/F / n = 0.5) = 0.5; at risk: 1/F > 0.4 only for y (F = 1)
    assert v == pytest.approx(0.5)
    assert d["highest_risk"] == 1.0
    assert d["records_at_risk"] == pytest.approx(1 / 3) and d["records_at_risk_count"] == 1
    table = d["per_record"]
    assert table["class_size"].tolist()[:3] == [2, 2, 1] and pd.isna(table["class_size"][3])
    assert table["population_size"].tolist()[:3] == [4, 4, 1]
    assert table["risk"].tolist()[:3] == [0.25, 0.25, 1.0] and math.isnan(table["risk"][3])


@pytest.mark.parametrize("name", list(NODES))
def test_journalist_marketer_research_subset_arx(adult, name):
    # ARX: research subset = rows i % 10 == 0, population = all of adult, summary on the view.
    release = node(adult.iloc[::10].reset_index(drop=True), NODES[name])
    for t, key in ((0.2, f"adult8_{name}_subset10_summary"),
                   (0.05, f"adult8_{name}_subset10_summary_t0.05")):
        ref = ARX[key]
        for attacker in ("prosecutor", "journalist", "marketer"):
            v, d, _ = run(ReidentificationRisk(quasi_identifiers=QI8, attacker=attacker,
                                               risk_threshold=t, hierarchies=H8),
                          adult, release)
            assert v == pytest.approx(ref[attacker]["success_rate"], rel=1e-12), attacker
            if attacker != "marketer":
                assert d["highest_risk"] == pytest.approx(ref[attacker]["highest_risk"])
                assert d["records_at_risk"] == pytest.approx(ref[attacker]["records_at_risk"],
                                                             rel=1e-12)
        assert d["levels"] == dict(zip(QI8, NODES[name], strict=True))


def test_journalist_population_file_and_levels(tmp_path, adult):
    release = node(adult.iloc[::10].reset_index(drop=True), NODES["1-2-0-1-1-1-1-0"])
    path = tmp_path / "population.csv"
    adult.to_csv(path, index=False)
    levels = dict(zip(QI8, NODES["1-2-0-1-1-1-1-0"], strict=True))
    v, _d, _ = run(ReidentificationRisk(quasi_identifiers=QI8, attacker="journalist",
                                       hierarchies=H8, population=str(path), levels=levels),
                  None, release)
    ref = ARX["adult8_1-2-0-1-1-1-1-0_subset10_summary"]["journalist"]
    assert v == pytest.approx(ref["success_rate"], rel=1e-12)


def test_journalist_bad_input(adult, tmp_path):
    rel = pd.DataFrame({"q": ["x", "x", "x", "y"]})
    with pytest.raises(DataError, match=r"'q': 'x'.*3 records but the population only 2"):
        run(ReidentificationRisk(quasi_identifiers=["q"], attacker="journalist"),
            pd.DataFrame({"q": ["x", "x", "y", "y", "z"]}), rel)
    with pytest.raises(DataError, match="population has 2 records, fewer than the 4"):
        run(ReidentificationRisk(quasi_identifiers=["q"], attacker="journalist"),
            pd.DataFrame({"q": ["x", "y"]}), rel)
    with pytest.raises(DataError, match="needs a population"):
        run(ReidentificationRisk(quasi_identifiers=["q"], attacker="marketer"), None, rel)
    # a release value in no hierarchy level, and a population value missing from a hierarchy
    h = tmp_path / "h.csv"
    h.write_text("a;ab;*\nb;ab;*\nc;c;*\n")
    with pytest.raises(DataError, match=r"column 'q'.*'zz'.*no level"):
        run(ReidentificationRisk(quasi_identifiers=["q"], attacker="journalist",
                                 hierarchies={"q": str(h)}),
            pd.DataFrame({"q": list("aabc")}), pd.DataFrame({"q": ["ab", "zz"]}))
    with pytest.raises(DataError, match=r"column 'q'.*lacks the raw value.*'d'"):
        run(ReidentificationRisk(quasi_identifiers=["q"], attacker="journalist",
                                 hierarchies={"q": str(h)}),
            pd.DataFrame({"q": list("aabcd")}), pd.DataFrame({"q": ["ab", "c"]}))


def test_journalist_hierarchy_generalization_hand(tmp_path):
    h = tmp_path / "h.csv"
    h.write_text("a;ab;*\nb;ab;*\nc;c;*\n")
    pop = pd.DataFrame({"q": list("aabbbc")})  # at level 1: ab×5, c×1
    rel = pd.DataFrame({"q": ["ab", "ab", "c"]})
    v, d, _ = run(ReidentificationRisk(quasi_identifiers=["q"], attacker="marketer",
                                       hierarchies={"q": str(h)}), pop, rel)
    assert v == pytest.approx((2 / 5 + 1 / 1) / 3)
    assert d["levels"] == {"q": 1}


def test_reidentification_through_evaluate(adult):
    rep = evaluate(adult.iloc[:2000], None, [
        {"name": "ReidentificationRisk", "params": {"quasi_identifiers": QI8}},
        {"name": "PopulationUniqueness", "params": {"quasi_identifiers": QI8,
                                                    "sampling_fraction": 0.1}}])
    assert [m.value is not None for m in rep.measures] == [True, True]


def test_risk_census_example_runs():
    from anoneval.core.run.config import load_config
    from anoneval.core.run.runner import run_plan

    root = Path(__file__).resolve().parents[3]
    report = run_plan(load_config(root / "examples" / "risk_census.json"))
    entries = {m.label: m for m in report.measures}
    for label in ("prosecutor risk", "journalist risk", "marketer risk", "PopulationUniqueness",
                  "t-closeness (equal)", "t-closeness (hierarchical)", "DeltaDisclosure",
                  "BetaLikeness", "AlphaKAnonymity", "DeltaPresence"):
        assert entries[label].error is None, label
        assert entries[label].value is not None and 0 <= entries[label].value <= 1, label
    # the release is row-aligned with its population: the journalist's F equals f here
    assert entries["journalist risk"].value == pytest.approx(entries["prosecutor risk"].value)
