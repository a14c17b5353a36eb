"""Tests of the microdata family: DM, DMStar, AECS, NonUniformEntropy, KAnonymity, LDiversity.

Oracles: hand computations on tiny tables (arithmetic in comments), ARX's own unit-test values
on adult (``TestUtilityMetrics``/``TestRiskMetrics``), the DM* example of El Emam et al. (2009),
pyCANON on random tables, brute-force loops written here.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _toy_plugins import compute_on_frames as run
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import Evaluator, evaluate
from anoneval.core.api import ConfigError
from anoneval.plugins.generalization.aecs import AECS
from anoneval.plugins.generalization.dm import DM
from anoneval.plugins.generalization.dmstar import DMStar
from anoneval.plugins.generalization.nonuniform_entropy import NonUniformEntropy
from anoneval.plugins.microdata.kanonymity import KAnonymity
from anoneval.plugins.microdata.ldiversity import LDiversity

#: pyCANON pins numpy 2.0.2, which has no Python 3.13 build: the test extra installs it on
#: 3.10-3.12 only, and its comparisons cannot run on 3.13.
PYCANON = sys.version_info < (3, 13)
if PYCANON:
    from pycanon import anonymity, metrics
needs_pycanon = pytest.mark.skipif(not PYCANON,
                                   reason="pycanon (the oracle) pins numpy 2.0.2, which has no "
                                          "Python 3.13 build")


HERE = Path(__file__).resolve().parents[2] / "data" / "microdata"
ADULT_QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
            "salary-class"]
SETTINGS = settings(max_examples=25, deadline=None)


def one(original, anonymized, name, **params):
    """Run one measure through the public API and return its report entry."""
    return evaluate(original, anonymized, [{"name": name, "params": params}]).measures[0]


# -- tiny hand-worked tables ---------------------------------------------------------------

# Classes over (a, b): (x,1)×3, (y,1)×2, (y,2)×1, and 2 suppressed records (*,*): n = 8.
TINY = pd.DataFrame({"a": ["x", "x", "x", "y", "y", "y", "*", "*"],
                     "b": [1, 1, 1, 1, 1, 2, "*", "*"]})


def test_kanonymity_hand():
    v, d, _ = run(KAnonymity(quasi_identifiers=["a", "b"], k=3, risk_threshold=0.4), TINY)
    assert v == pytest.approx(3 / 8)  # classes of size 2 and 1 violate: (2 + 1) / 8
    assert d["achieved_k"] == 1
    assert d["classes"] == 3 and d["suppressed_records"] == 2 and d["released_records"] == 6
    # ARX's sample risks are over the 6 released records (RiskModelHistogram skips suppressed
    # rows): 1 unique of 6.
    assert d["sample_uniques"] == 1 and d["sample_unique_share"] == pytest.approx(1 / 6)
    assert d["highest_risk"] == 1.0
    assert d["average_risk"] == pytest.approx(3 / 6)  # ARX: #classes / released records
    assert d["average_risk_per_class"] == pytest.approx((1 / 3 + 1 / 2 + 1) / 3)
    # 1/f > 0.4 for f = 2 (0.5) and f = 1 (1.0): 3 of the 6 released records; f = 3 gives
    # 0.333 (ARX's prosecutor "records at risk").
    assert d["records_above_threshold"] == 3
    assert d["share_above_threshold"] == pytest.approx(3 / 6)
    assert d["class_size_counts"] == {1: 1, 2: 1, 3: 1}
    assert all(type(k) is int for k in d["class_size_counts"])
    v, d, _ = run(KAnonymity(quasi_identifiers=["a", "b"], k=3, list_violations=5), TINY)
    assert d["violations"].to_dict("list") == {"a": ["y", "y"], "b": [2, 1], "size": [1, 2]}
    # k = 1: nothing violates; k = 4: all 6 released records do.
    assert run(KAnonymity(quasi_identifiers=["a", "b"], k=1), TINY)[0] == 0
    assert run(KAnonymity(quasi_identifiers=["a", "b"], k=4), TINY)[0] == pytest.approx(6 / 8)


def test_dm_dmstar_aecs_hand():
    qi = ["a", "b"]
    # DM, k=3: 3² + n·(2 + 1) for the small classes + n·2 suppressed = 9 + 24 + 16 = 49.
    v, d, _ = run(DM(quasi_identifiers=qi, k=3), TINY)
    assert v == 49 and d["records_in_small_classes"] == 3 and d["suppressed_records"] == 2
    assert d["normalized"] == pytest.approx(49 / 64)
    # DM, k=1: 9 + 4 + 1 + 8·2 = 30.
    assert run(DM(quasi_identifiers=qi), TINY)[0] == 30
    # DM*: 9 + 4 + 1 + 2² (the suppressed records are one class) = 18.
    assert run(DMStar(quasi_identifiers=qi), TINY)[0] == 18
    # AECS, k=1: 8 / (3 classes + 1 suppressed class) = 2; k=3: 8 / (1 + 1) = 4, /3 normalized.
    assert run(AECS(quasi_identifiers=qi), TINY)[0] == 2
    v, d, _ = run(AECS(quasi_identifiers=qi, k=3), TINY)
    assert v == 4 and d["normalized"] == pytest.approx(4 / 3) and d["released_mean"] == 3


def sizes_table(sizes):
    """A one-QI table whose classes have the given sizes."""
    return pd.DataFrame({"q": np.repeat([f"v{i}" for i in range(len(sizes))], sizes)})


def test_dm_dmstar_non_monotonic_example():
    # reference §4a (illustration consistent with El Emam's DM* = 16 and 28), n = 10, k = 3:
    # (a) classes (2,2,2,1,1,1,1): DM* = 4·3 + 4 = 16, DM = all suppressed = 10·10 = 100;
    # (b) (4,3,1,1,1): DM* = 16 + 9 + 3 = 28, DM = 16 + 9 + 3·10 = 55.
    a, b = sizes_table([2, 2, 2, 1, 1, 1, 1]), sizes_table([4, 3, 1, 1, 1])
    assert run(DMStar(quasi_identifiers=["q"]), a)[0] == 16
    assert run(DMStar(quasi_identifiers=["q"]), b)[0] == 28
    assert run(DM(quasi_identifiers=["q"], k=3), a)[0] == 100
    assert run(DM(quasi_identifiers=["q"], k=3), b)[0] == 55


# ARX's 7-row example (DataProvider.java) and its hierarchies (tests/data/microdata/arx7_*.csv).
ARX7 = pd.DataFrame({
    "age": [34, 45, 66, 70, 34, 70, 45],
    "gender": ["male", "female", "male", "female", "female", "male", "male"],
    "zipcode": [81667, 81675, 81925, 81931, 81931, 81931, 81931],
})
ARX7_H = {c: str(HERE / f"arx7_{c}.csv") for c in ARX7.columns}


def arx7_node(levels, k=None):
    """Apply the 7-row hierarchies at ``levels``; records of classes < k become '*'."""
    out = pd.DataFrame(index=ARX7.index)
    for c, lev in zip(ARX7.columns, levels, strict=True):
        h = pd.read_csv(ARX7_H[c], sep=";", header=None, dtype=str, keep_default_na=False)
        out[c] = ARX7[c].astype(str).map(dict(zip(h[0], h[lev], strict=True)))
    if k:
        small = out.groupby(list(out.columns))["age"].transform("size") < k
        out.loc[small, :] = "*"
    return out


def test_arx_seven_rows_node_112():
    # Classes (<50,*,816**)=2, (>=50,*,819**)=3, (<50,*,819**)=2: DM = DM* = 4+9+4 = 17.
    anon = arx7_node([1, 1, 2])
    qi = list(ARX7.columns)
    assert run(DM(quasi_identifiers=qi, k=2), ARX7, anon)[0] == 17
    assert run(DMStar(quasi_identifiers=qi), ARX7, anon)[0] == 17
    assert run(AECS(quasi_identifiers=qi, k=2), ARX7, anon)[0] == pytest.approx(7 / 3)
    v, d, _ = run(KAnonymity(quasi_identifiers=qi, k=2), ARX7, anon)
    assert v == 0 and d["highest_risk"] == 0.5  # ARX TestRiskMetrics: highest 0.5,
    assert d["average_risk"] == pytest.approx(0.42857142857142855)  # average 3/7
    v, d, _ = run(NonUniformEntropy(quasi_identifiers=qi, hierarchies=ARX7_H), ARX7, anon)
    per = d["per_column"]
    # age at level 1: counts 34:2 45:2 66:1 70:2, <50:4 >=50:3 →
    # −[2·2·log2(2/4) + log2(1/3) + 2·log2(2/3)] = 4 + 1.584963 + 1.169925 = 6.754888.
    assert per["age"]["loss"] == pytest.approx(6.754888, abs=1e-6)
    # gender at the root: −[4·log2(4/7) + 3·log2(3/7)] = 6.896597.
    assert per["gender"]["loss"] == pytest.approx(6.896597, abs=1e-6)
    assert per["zipcode"]["loss"] == pytest.approx(5.609640, abs=1e-6)
    assert v == pytest.approx(19.261125, abs=1e-6)
    assert [per[c]["normalized"] for c in qi] == pytest.approx([0.49481, 1.0, 0.481453], abs=1e-5)
    assert per["age"]["levels"] == {1: 7}
    v, _, _ = run(NonUniformEntropy(quasi_identifiers=qi, hierarchies=ARX7_H, normalized=True),
                  ARX7, anon)
    assert v == pytest.approx((0.49481 + 1.0 + 0.481453) / 3, abs=1e-5)


def test_arx_seven_rows_node_102_suppressed():
    # Only (>=50,male,819**) has 2 records; the other 5 are suppressed (k = 2).
    anon = arx7_node([1, 0, 2], k=2)
    qi = list(ARX7.columns)
    assert run(DM(quasi_identifiers=qi), ARX7, anon)[0] == 39  # 2² + 5·7
    assert run(AECS(quasi_identifiers=qi), ARX7, anon)[0] == 3.5  # 7 / (1 + 1)
    v, d, _ = run(NonUniformEntropy(quasi_identifiers=qi, hierarchies=ARX7_H), ARX7, anon)
    per = d["per_column"]
    # age: level-1 step on all 7 rows = 6.754888, then the 5 suppressed rows go <50 ×4,
    # >=50 ×1 → '*': −[4·log2(4/5) + log2(1/5)] = 1.287712 + 2.321928 → 10.364528.
    assert per["age"]["loss"] == pytest.approx(10.364528, abs=1e-6)
    assert per["age"]["levels"] == {1: 2, 2: 5}
    assert per["gender"]["loss"] == pytest.approx(4.854753, abs=1e-6)
    assert per["zipcode"]["loss"] == pytest.approx(10.464393, abs=1e-6)
    assert v == pytest.approx(25.683674, abs=1e-6)
    assert [per[c]["normalized"] for c in qi] == pytest.approx(
        [0.759224, 0.703935, 0.898117], abs=1e-6)


def test_nue_hierarchy_for_some_columns_only():
    # age through its hierarchy (6.754888, see above); gender without one: every released
    # value is '*', Pr(male|*) = 4/7, Pr(female|*) = 3/7 → 6.896597, the same as the root.
    v, d, _ = run(NonUniformEntropy(quasi_identifiers=["age", "gender"],
                                    hierarchies={"age": ARX7_H["age"]}), ARX7, arx7_node([1, 1, 2]))
    assert v == pytest.approx(6.754888 + 6.896597, abs=1e-6)
    assert "levels" in d["per_column"]["age"] and "levels" not in d["per_column"]["gender"]


def test_nue_joint_counts_hand():
    raw = pd.DataFrame({"x": [1, 2, 3, 3], "y": [1, 1, 2, 2]})
    # x released as A,A,B,B: Pr(1|A) = Pr(2|A) = 1/2, Pr(3|B) = 1 → 2 bits.
    # y released as 1,*,2,*: Pr(1|1) = 1, Pr(1|*) = 1/2, Pr(2|*) = 1/2, Pr(2|2) = 1 → 2 bits.
    anon = pd.DataFrame({"x": ["A", "A", "B", "B"], "y": ["1", "*", "2", "*"]})
    v, d, _ = run(NonUniformEntropy(quasi_identifiers=["x", "y"]), raw, anon)
    assert v == pytest.approx(4.0)
    # maxima: x −[log2(1/4)·2 + 2·log2(2/4)] = 6, y −[2·log2(1/2)·2] = 4.
    assert d["per_column"]["x"]["max"] == pytest.approx(6.0)
    assert d["per_column"]["y"]["max"] == pytest.approx(4.0)
    # eq. (4): 0.25·2 + 1·2 = 2.5; normalized: (0.25·2/6 + 1·2/4) / 1.25.
    p = {"quasi_identifiers": ["x", "y"], "weights": {"x": 0.25}}
    assert run(NonUniformEntropy(**p), raw, anon)[0] == pytest.approx(2.5)
    assert run(NonUniformEntropy(**p, normalized=True), raw, anon)[0] == pytest.approx(
        (0.25 * 2 / 6 + 0.5) / 1.25)


def test_ldiversity_hand():
    # reference §3 table: classes {flu, flu, cancer} (3 rows) and {flu, gastritis, cancer,
    # cancer} (4 rows).
    anon = pd.DataFrame({
        "age": ["<30"] * 3 + [">=30"] * 4, "zip": ["130**"] * 3 + ["148**"] * 4,
        "disease": ["flu", "flu", "cancer", "flu", "gastritis", "cancer", "cancer"]})
    qi = ["age", "zip"]

    def ld(**kw):
        return run(LDiversity(quasi_identifiers=qi, sensitive="disease", **kw), anon)

    v, d, _ = ld(l=2)
    assert v == 0 and d["per_attribute"]["disease"]["achieved_l"] == 2
    assert ld(l=3)[0] == pytest.approx(3 / 7)  # class 1 has 2 distinct values
    # entropy: H1 = −(2/3·ln 2/3 + 1/3·ln 1/3) = 0.636514 → exp = 1.889882 < 2 → violates;
    # H2 = −(2·1/4·ln 1/4 + 1/2·ln 1/2) = 1.039721 → exp = 2.828427.
    v, d, _ = ld(l=2, variant="entropy")
    assert v == pytest.approx(3 / 7)
    assert d["per_attribute"]["disease"]["achieved_entropy_l"] == pytest.approx(1.889882, abs=1e-6)
    assert ld(l=1.8, variant="entropy")[0] == 0
    assert ld(l=2.9, variant="entropy")[0] == 1.0
    # recursive (c,2): class 1 r = (2,1): 2 < c·1; class 2 r = (2,1,1): 2 < c·2.
    assert ld(l=2, variant="recursive", c=3)[0] == 0
    v, d, _ = ld(l=2, variant="recursive", c=2)  # 2 < 2 fails for class 1 only
    assert v == pytest.approx(3 / 7) and d["per_attribute"]["disease"]["required_c"] == 2
    # (3,3): class 1 has no r_3 (violates); class 2: 2 < 3·1 holds.
    assert ld(l=3, variant="recursive", c=3)[0] == pytest.approx(3 / 7)


@needs_pycanon
def test_ldiversity_equal_counts_are_not_rounded_away():
    # Two equal counts: H = ln 2 exactly in theory; exp(H) evaluates to 1.9999999999999998,
    # which pyCANON floors to 1. Entropy 2-diversity holds here (ties satisfy).
    anon = pd.DataFrame({"q": ["a"] * 4, "s": ["u", "v", "u", "v"]})
    v, d, _ = run(LDiversity(quasi_identifiers=["q"], sensitive="s", l=2, variant="entropy"),
                  anon)
    assert v == 0 and d["per_attribute"]["s"]["achieved_entropy_l"] == pytest.approx(2)
    assert anonymity.entropy_l_diversity(anon, ["q"], ["s"]) == 1  # pyCANON's deviation


def test_ldiversity_several_sensitive():
    anon = pd.DataFrame({"q": ["a", "a", "b", "b"], "s": [1, 2, 1, 2], "t": [1, 1, 1, 2]})
    v, d, _ = run(LDiversity(quasi_identifiers=["q"], sensitive=["s", "t"], l=2), anon)
    assert v == 0.5  # class a violates for t
    assert d["per_attribute"]["s"]["achieved_l"] == 2
    assert d["per_attribute"]["t"]["achieved_l"] == 1


# -- ARX's test values on adult ------------------------------------------------------------


@pytest.fixture(scope="module")
def adult(data_dir):
    return pd.read_csv(data_dir / "adult" / "adult.csv", sep=";")


@pytest.fixture(scope="module")
def adult_h(data_dir):
    return {c: str(data_dir / "adult" / f"adult_hierarchy_{c}.csv") for c in ADULT_QI}


def generalize(df, hierarchies, levels):
    """Apply ARX hierarchies (column 0 raw, column i level i) at ``levels`` to the QIs."""
    out = df.copy()
    for c, lev in zip(ADULT_QI, levels, strict=True):
        h = pd.read_csv(hierarchies[c], sep=";", header=None, dtype=str, keep_default_na=False)
        out[c] = df[c].astype(str).map(dict(zip(h[0], h[lev], strict=True)))
    assert not out[ADULT_QI].isna().any().any()
    return out


def suppress(df, k):
    """Replace the quasi-identifiers of the records of classes smaller than k by '*'."""
    out = df.astype({c: object for c in ADULT_QI})
    small = out.groupby(ADULT_QI)["sex"].transform("size") < k
    out.loc[small, ADULT_QI] = "*"
    return out


def test_arx_adult_raw(adult):
    rep = evaluate(None, adult, [
        {"name": "DM", "params": {"quasi_identifiers": ADULT_QI, "k": 5}},
        {"name": "DMStar", "params": {"quasi_identifiers": ADULT_QI}},
        {"name": "AECS", "params": {"quasi_identifiers": ADULT_QI, "k": 5}},
        {"name": "KAnonymity", "params": {"quasi_identifiers": ADULT_QI, "k": 5}},
    ])
    assert rep.ok
    assert rep["DM"].value == 463536157
    assert rep["DMStar"].value == 485542
    assert rep["AECS"].value == pytest.approx(29.113899613899616, rel=1e-12)  # 30162/1036
    k = rep["KAnonymity"]
    # 15,353 records in classes < 5 (ARX's NM-Precision at [0,…,0] = their share).
    assert k.value == pytest.approx(0.5090179696306611, rel=1e-12)
    assert k.details["classes"] == 12458 and k.details["records_in_violating_classes"] == 15353


def test_arx_adult_nue_suppressed_raw(adult, adult_h):
    anon = suppress(adult, 5)
    for params in ({}, {"hierarchies": adult_h}):
        v, _, _ = run(NonUniformEntropy(quasi_identifiers=ADULT_QI, **params), adult, anon)
        assert v == pytest.approx(268778.22471939825, rel=1e-9)
    # The suppressed records as such: DM with k = 1 counts them (n each), same as k = 5 raw.
    assert run(DM(quasi_identifiers=ADULT_QI), anon)[0] == 463536157
    assert run(AECS(quasi_identifiers=ADULT_QI), anon)[0] == pytest.approx(30162 / 1036)


def test_arx_adult_generalized(adult, adult_h):
    g = generalize(adult, adult_h, [1, 4, 1, 0, 3, 1, 2, 0])
    assert run(DM(quasi_identifiers=ADULT_QI, k=5), adult, g)[0] == 184929052
    g = suppress(generalize(adult, adult_h, [0, 2, 1, 2, 2, 0, 0, 0]), 5)
    v, d, _ = run(NonUniformEntropy(quasi_identifiers=ADULT_QI, hierarchies=adult_h), adult, g)
    assert v == pytest.approx(253206.5135958653, rel=1e-9)
    assert d["per_column"]["age"]["levels"].keys() == {2, 4}  # level 2 plus '*' at the top
    top = generalize(adult, adult_h, [1, 4, 1, 2, 3, 2, 2, 1])
    assert run(DM(quasi_identifiers=ADULT_QI, k=5), adult, top)[0] == 909746244  # 30162²
    v, _, _ = run(NonUniformEntropy(quasi_identifiers=ADULT_QI, hierarchies=adult_h), adult, top)
    assert v == pytest.approx(455884.9365769584, rel=1e-9)
    assert run(AECS(quasi_identifiers=ADULT_QI, k=5), adult, top)[0] == 30162
    g = generalize(adult, adult_h, [1, 1, 0, 1, 0, 2, 0, 0])
    assert run(DMStar(quasi_identifiers=ADULT_QI), adult, g)[0] == 4426432
    g = generalize(adult, adult_h, [0, 3, 1, 0, 0, 1, 1, 0])
    assert run(AECS(quasi_identifiers=ADULT_QI, k=5), adult, g)[0] == pytest.approx(
        53.38407079646018, rel=1e-12)


def test_arx_adult_risks_nine_qis(adult):
    # ARX TestRiskMetrics.testAverageRisk2 / uniqueness: all 9 attributes as QIs.
    v, d, _ = run(KAnonymity(quasi_identifiers=[*ADULT_QI, "occupation"], k=2), adult)
    assert d["classes"] == 19502
    assert d["average_risk"] == pytest.approx(0.6465751607983555, rel=1e-12)
    assert d["sample_unique_share"] == pytest.approx(0.5142895033485844, rel=1e-12)
    assert d["sample_uniques"] == 15512 and d["highest_risk"] == 1.0
    assert v == d["sample_unique_share"]  # k = 2: the violating records are the uniques


# -- pyCANON agreement ---------------------------------------------------------------------


def random_table(rng, n):
    return pd.DataFrame({
        "q1": rng.choice(["a", "b", "c"], n),
        "q2": rng.integers(0, 3, n),
        "q3": rng.choice(["u", "v"], n),
        "s": rng.choice(["flu", "cold", "hiv", "none"], n, p=[0.4, 0.3, 0.2, 0.1]),
        "t": rng.integers(0, 3, n),
    })


@needs_pycanon
def test_pycanon_agreement():
    """k, distinct l and entropy l agree with pyCANON 1.3.x on random tables.

    pyCANON's documented deviations: its entropy l is int(min exp H), so it floors, and an
    exp H that is an integer in exact arithmetic (equal counts) can come out one below (e.g.
    exp(ln 2) = 1.9999999999999998 → 1); its recursive c sorts counts ascending, so it is not
    compared.
    """
    rng = np.random.default_rng(7)
    qi = ["q1", "q2", "q3"]
    for _ in range(25):
        df = random_table(rng, int(rng.integers(5, 80)))
        _, d, _ = run(KAnonymity(quasi_identifiers=qi), df)
        assert d["achieved_k"] == anonymity.k_anonymity(df, qi)
        assert d["highest_risk"] == pytest.approx(metrics.max_rir(df, qi))
        assert d["average_risk_per_class"] == pytest.approx(metrics.average_rir(df, qi))
        _, d, _ = run(LDiversity(quasi_identifiers=qi, sensitive=["s", "t"]), df)
        per = d["per_attribute"]
        assert min(per["s"]["achieved_l"], per["t"]["achieved_l"]) == anonymity.l_diversity(
            df, qi, ["s", "t"])
        ent = per["s"]["achieved_entropy_l"]
        theirs = anonymity.entropy_l_diversity(df, qi, ["s"])
        if abs(ent - round(ent)) < 1e-9:  # the rounding deviation documented above
            assert theirs in (round(ent), round(ent) - 1)
        else:
            assert theirs == math.floor(ent)
        _, d, _ = run(AECS(quasi_identifiers=qi), df)
        assert d["pycanon_form"] == pytest.approx(metrics.average_ecsize(df, df, qi))


@needs_pycanon
def test_pycanon_dm_with_deleted_records():
    rng = np.random.default_rng(3)
    raw = random_table(rng, 60).assign(pid=np.arange(60))
    anon = raw.iloc[:45].reset_index(drop=True)  # 15 records deleted (pyCANON's suppression)
    qi = ["q1", "q2"]
    v, d, w = run(DM(quasi_identifiers=qi, id="pid"), raw, anon)
    assert v == metrics.discernability_metric(raw, anon, qi)
    assert d["deleted_records"] == 15 and any("15 records of the original" in m for m in w)
    # the deleted records are the ones whose id is missing, wherever they were
    shuffled = raw.iloc[np.random.default_rng(4).permutation(60)[:45]].reset_index(drop=True)
    v, d, _ = run(DM(quasi_identifiers=qi, id="pid"), raw, shuffled)
    assert v == metrics.discernability_metric(raw, shuffled, qi) and d["deleted_records"] == 15


def brute_classes(df, qi, token="*"):
    """Classes by a plain loop: {tuple: [row indices]}, suppressed (all-token) rows left out."""
    classes = {}
    for i, row in enumerate(df[qi].itertuples(index=False)):
        if all(str(v) == token for v in row):
            continue
        classes.setdefault(tuple(row), []).append(i)
    return classes


def test_k_and_l_values_brute_force():
    """The values (shares of records in violating classes) against loops written here."""
    rng = np.random.default_rng(11)
    qi = ["q1", "q2", "q3"]
    for _ in range(20):
        df = random_table(rng, int(rng.integers(5, 80))).astype({"q2": object})
        df.loc[rng.random(len(df)) < 0.15, qi] = "*"
        n = len(df)
        classes = brute_classes(df, qi)
        for k in (1, 2, 3, 5):
            expected = sum(len(rows) for rows in classes.values() if len(rows) < k) / n
            v = run(KAnonymity(quasi_identifiers=qi, k=k), df)[0]
            assert v == pytest.approx(expected, abs=1e-15)
            if PYCANON and not (df[qi] == "*").all(axis=1).any():
                # pyCANON knows no suppression
                assert (v == 0) == (k <= anonymity.k_anonymity(df, qi))
        for variant, l_, c in [("distinct", 2, None), ("distinct", 3, None),
                               ("entropy", 1.5, None), ("entropy", 2, None),
                               ("recursive", 2, 1.5), ("recursive", 3, 4)]:
            bad = 0
            for rows in classes.values():
                counts = sorted(df["s"].iloc[rows].value_counts().tolist(), reverse=True)
                f = sum(counts)
                if variant == "distinct":
                    violates = len(counts) < l_
                elif variant == "entropy":  # natural log; equality satisfies
                    h = -sum(r / f * math.log(r / f) for r in counts)
                    violates = h < math.log(l_) - 1e-9
                else:  # r_1 < c·(r_l + … + r_m)
                    violates = not counts[0] < c * sum(counts[l_ - 1:])
                bad += f if violates else 0
            m = LDiversity(quasi_identifiers=qi, sensitive="s", variant=variant, l=l_, c=c)
            assert run(m, df)[0] == pytest.approx(bad / n, abs=1e-15), (variant, l_, c)


# -- invariants (hypothesis) -----------------------------------------------------------------

tables = st.integers(0, 10_000).flatmap(
    lambda seed: st.integers(1, 60).map(lambda n: random_table(np.random.default_rng(seed), n)))


@SETTINGS
@given(tables, st.integers(0, 2**32 - 1))
def test_shuffle_invariance(df, seed):
    qi = ["q1", "q2", "q3"]
    coarse = df.assign(q2=df["q2"].map({0: "0-1", 1: "0-1", 2: "2"}))
    coarse.loc[coarse.index[::7], qi] = "*"
    perm = np.random.default_rng(seed).permutation(len(df))
    measures = [KAnonymity(quasi_identifiers=qi, k=3), DM(quasi_identifiers=qi, k=2),
                DMStar(quasi_identifiers=qi), AECS(quasi_identifiers=qi, k=2),
                LDiversity(quasi_identifiers=qi, sensitive="s", variant="entropy", l=1.5),
                LDiversity(quasi_identifiers=qi, sensitive="s", variant="recursive", c=2)]
    for m in measures:
        a = run(m, None, coarse)[0]
        b = run(m, None, coarse.iloc[perm].reset_index(drop=True))[0]
        assert a == pytest.approx(b, rel=1e-12), m.name
    nue = NonUniformEntropy(quasi_identifiers=qi)
    a = run(nue, df, coarse)[0]
    b = run(nue, df.iloc[perm].reset_index(drop=True),
            coarse.iloc[perm].reset_index(drop=True))[0]
    assert a == pytest.approx(b, rel=1e-12, abs=1e-9)


@SETTINGS
@given(tables)
def test_dmstar_at_least_n_and_dm_bounds(df):
    qi = ["q1", "q2", "q3"]
    n = len(df)
    assert run(DMStar(quasi_identifiers=qi), df)[0] >= n
    for k in (1, 2, 5):
        dm = run(DM(quasi_identifiers=qi, k=k), df)[0]
        assert n <= dm <= n * n
        # brute force: Σ over classes of f² if f ≥ k else n·f
        sizes = df.groupby(qi).size()
        assert dm == sum(f * f if f >= k else n * f for f in sizes)


@SETTINGS
@given(tables)
def test_nue_zero_when_released_equals_raw(df):
    qi = ["q1", "q2", "q3"]
    assert run(NonUniformEntropy(quasi_identifiers=qi), df, df.copy())[0] == 0


@SETTINGS
@given(tables, st.sampled_from(["q1", "q2", "q3"]))
def test_nue_grows_when_a_column_is_coarsened(df, col):
    qi = ["q1", "q2", "q3"]
    m = NonUniformEntropy(quasi_identifiers=qi)
    values = sorted(df[col].astype(str).unique())
    merged = df.assign(**{col: df[col].astype(str).replace(values[:2], "merged")})
    fully = df.assign(**{col: "*"})
    v0, v1, v2 = (run(m, df, x)[0] for x in (df, merged, fully))
    assert v0 <= v1 + 1e-9 and v1 <= v2 + 1e-9
    if len(values) >= 2:
        assert v1 > v0  # two raw values now share one released value
    if len(values) >= 2:
        # everything suppressed reaches the column's maximum, normalized 1
        d = run(m, df, fully)[1]["per_column"][col]
        assert d["loss"] == pytest.approx(d["max"]) and d["normalized"] == pytest.approx(1)


@SETTINGS
@given(st.lists(st.sampled_from([34, 45, 66, 70]), min_size=1, max_size=30))
def test_nue_hierarchy_levels_monotone(ages):
    raw = pd.DataFrame({"age": ages})
    m = NonUniformEntropy(quasi_identifiers=["age"], hierarchies={"age": ARX7_H["age"]})
    h = {"34": "<50", "45": "<50", "66": ">=50", "70": ">=50"}
    values = [run(m, raw, x)[0] for x in (raw.astype(str), raw.astype(str).replace(h),
                                          raw.assign(age="*"))]
    assert values[0] == 0
    assert values[0] <= values[1] + 1e-9 <= values[2] + 2e-9


ARX7_PATHS = {  # level → released value of each raw value (tests/data/microdata/arx7_*.csv)
    c: pd.read_csv(ARX7_H[c], sep=";", header=None, dtype=str).to_numpy() for c in ARX7.columns}


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 5), st.integers(0, 5),
                          st.integers(0, 5), st.booleans()), min_size=1, max_size=40))
def test_nue_hierarchy_local_recoding_bounds_and_row_order(cells):
    # Local recoding: every cell at its own level (clipped to the column's height), records
    # flagged True fully suppressed ('*'). Each column's normalized loss stays in [0, 1].
    raw = ARX7.iloc[[c[0] for c in cells]].reset_index(drop=True)
    rel = raw.astype(str)
    for j, col in enumerate(ARX7.columns):
        path = ARX7_PATHS[col]
        row_of = {v: i for i, v in enumerate(path[:, 0])}
        levels = [min(c[1 + j], path.shape[1] - 1) for c in cells]
        rel[col] = [path[row_of[v], lv] for v, lv in zip(rel[col], levels, strict=True)]
    rel.loc[[c[4] for c in cells], list(ARX7.columns)] = "*"
    m = NonUniformEntropy(quasi_identifiers=list(ARX7.columns), hierarchies=ARX7_H)
    v, d, _ = run(m, raw, rel)
    for col, entry in d["per_column"].items():
        assert -1e-9 <= entry["normalized"] <= 1 + 1e-9, (col, entry)
    perm = np.random.default_rng(len(cells)).permutation(len(cells))  # row order is irrelevant
    shuffled = run(m, raw.iloc[perm].reset_index(drop=True), rel.iloc[perm].reset_index(drop=True))
    assert shuffled[0] == pytest.approx(v, rel=1e-12, abs=1e-9)
    assert 0 <= run(NonUniformEntropy(quasi_identifiers=list(ARX7.columns), hierarchies=ARX7_H,
                                      normalized=True), raw, rel)[0] <= 1 + 1e-9


# -- bad input, missing values, alignment --------------------------------------------------


def test_unknown_quasi_identifier_is_named():
    rep = evaluate(None, TINY, [{"name": "KAnonymity", "params": {"quasi_identifiers": ["a",
                                                                                        "zip"]}}])
    err = rep.measures[0].error
    assert err and "'zip'" in err and "a, b" in err


@pytest.mark.parametrize("name, extra", [
    ("NonUniformEntropy", {}), ("DM", {}), ("DMStar", {}), ("AECS", {}), ("KAnonymity", {}),
    ("LDiversity", {"sensitive": "gender"})])
def test_row_counts_must_match_without_id(name, extra):
    err = one(ARX7, ARX7.iloc[:5], name, quasi_identifiers=["age"], **extra).error
    assert err and "7 rows" in err and "anonymized data 5" in err and "'id'" in err
    longer = pd.concat([ARX7, ARX7.iloc[:2]], ignore_index=True)
    err = one(ARX7, longer, name, quasi_identifiers=["age"], **extra).error
    assert err and "7 rows" in err and "anonymized data 9" in err
    # the released side alone needs no alignment (except NonUniformEntropy, which needs both)
    if name != "NonUniformEntropy":
        assert one(None, ARX7.iloc[:5], name, quasi_identifiers=["age"], **extra).error is None


@pytest.mark.parametrize("name, params, where", [
    ("NonUniformEntropy", {"quasi_identifiers": ["age"], "weights": {"age": 1.5}}, "weights"),
    ("NonUniformEntropy", {"quasi_identifiers": ["age"], "weights": {"age": -0.1}},
     "weights.age"),
    ("NonUniformEntropy", {"quasi_identifiers": ["age"], "weights": {"gender": 0.5}}, "gender"),
    ("KAnonymity", {"quasi_identifiers": ["age"], "k": 0}, "k"),
    ("DM", {"quasi_identifiers": ["age"], "k": 0}, "k"),
    ("LDiversity", {"quasi_identifiers": ["age"], "sensitive": "gender", "l": 0.5}, "l"),
    ("LDiversity", {"quasi_identifiers": ["age"], "sensitive": "gender", "variant": "recursive"},
     "needs c"),
    ("LDiversity", {"quasi_identifiers": ["age"], "sensitive": "age"}, "also quasi"),
    ("LDiversity", {"quasi_identifiers": ["age"], "sensitive": "gender", "c": 2}, "only by"),
    ("KAnonymity", {"quasi_identifiers": []}, "quasi_identifiers"),
    ("DM", {"quasi_identifiers": ["age", "zipcode"], "id": "age"}, "also a quasi"),
    ("KAnonymity", {"quasi_identifiers": ["age"], "risk_threshold": 0}, "risk_threshold"),
    ("KAnonymity", {"quasi_identifiers": ["age"], "kk": 2}, "kk"),
])
def test_validation_errors(name, params, where):
    with pytest.raises(ConfigError) as exc:
        evaluate(ARX7, ARX7, [{"name": name, "params": params}])
    assert where in str(exc.value)


def test_hierarchy_lacking_a_raw_value(tmp_path):
    path = tmp_path / "age.csv"
    path.write_text("34;<50;*\n45;<50;*\n66;>=50;*\n")  # no 70
    err = one(ARX7, ARX7, "NonUniformEntropy", quasi_identifiers=["age"],
              hierarchies={"age": str(path)}).error
    assert err and "'70'" in err and "age" in err


def test_hierarchy_comma_separated_and_missing_file(tmp_path):
    path = tmp_path / "age.csv"
    path.write_text("34,<50,*\n45,<50,*\n66,>=50,*\n70,>=50,*\n")  # ANJANA-style commas
    m = one(ARX7, arx7_node([1, 1, 2]), "NonUniformEntropy", quasi_identifiers=["age"],
            hierarchies={"age": str(path)})
    assert m.value == pytest.approx(6.754888, abs=1e-6)
    err = one(ARX7, ARX7, "NonUniformEntropy", quasi_identifiers=["age"],
              hierarchies={"age": str(tmp_path / "nope.csv")}).error
    assert err and "nope.csv" in err
    path.write_text("34;<50;*\n45;<50\n")
    err = one(ARX7, ARX7, "NonUniformEntropy", quasi_identifiers=["age"],
              hierarchies={"age": str(path)}).error
    assert err and "row 2 has 2 columns" in err


def test_released_value_outside_the_hierarchy_path():
    anon = arx7_node([1, 1, 2])
    anon.loc[2, "age"] = "<50"  # raw 66 is under >=50
    err = one(ARX7, anon, "NonUniformEntropy", quasi_identifiers=["age"],
              hierarchies={"age": ARX7_H["age"]}).error
    assert err and "data row 3 (1-based" in err and "'<50'" in err and "'66'" in err


def test_hierarchy_paths_relative_to_config():
    ev = Evaluator(ARX7, [{"name": "NonUniformEntropy",
                           "params": {"quasi_identifiers": ["age"],
                                      "hierarchies": {"age": "arx7_age.csv"}}}], base_dir=HERE)
    rep = ev.evaluate(arx7_node([1, 1, 2]))
    assert rep.ok and rep.measures[0].value == pytest.approx(6.754888, abs=1e-6)


def test_missing_values_value_or_suppressed():
    anon = pd.DataFrame({"a": ["x", "x", None, None, "y"], "b": [1, 1, None, None, 2]})
    m = one(None, anon, "KAnonymity", quasi_identifiers=["a", "b"], k=2)
    # NaN tuples form a class of 2: only class (y,2) violates → 1/5; a warning names 'a', 'b'.
    assert m.value == pytest.approx(1 / 5) and m.details["classes"] == 3
    assert any("'a' (2)" in w and "'b' (2)" in w for w in m.warnings)
    m = one(None, anon, "KAnonymity", quasi_identifiers=["a", "b"], k=2, missing="suppressed")
    assert m.value == pytest.approx(1 / 5) and m.details["suppressed_records"] == 2
    assert m.details["classes"] == 2
    # a missing cell next to a '*' cell: both are the token, so the record is suppressed.
    mixed = pd.DataFrame({"a": ["x", "*", None], "b": [1, None, "*"]})
    m = one(None, mixed, "DM", quasi_identifiers=["a", "b"], missing="suppressed")
    assert m.details["suppressed_records"] == 2 and m.value == 1 + 2 * 3
    # NUE: a missing released cell as suppressed equals writing '*' there.
    raw = pd.DataFrame({"a": ["x", "y", "y", "z"]})
    nan = pd.DataFrame({"a": ["x", None, "y", None]})
    star = pd.DataFrame({"a": ["x", "*", "y", "*"]})
    p = {"quasi_identifiers": ["a"], "missing": "suppressed"}
    assert one(raw, nan, "NonUniformEntropy", **p).value == pytest.approx(
        one(raw, star, "NonUniformEntropy", quasi_identifiers=["a"]).value)


def test_id_alignment():
    raw = ARX7.assign(pid=[f"p{i}" for i in range(7)])
    anon = arx7_node([1, 1, 2]).assign(pid=raw["pid"])
    qi = list(ARX7.columns)
    base = one(raw, anon, "NonUniformEntropy", quasi_identifiers=qi, hierarchies=ARX7_H).value
    shuffled = anon.iloc[[3, 0, 6, 1, 5, 2, 4]].reset_index(drop=True)
    v = one(raw, shuffled, "NonUniformEntropy", quasi_identifiers=qi, hierarchies=ARX7_H,
            id="pid").value
    assert v == pytest.approx(base)
    # deleting a record = suppressing it
    deleted = one(raw, anon.drop(index=[2]), "NonUniformEntropy", quasi_identifiers=qi, id="pid")
    starred = anon.copy()
    starred.loc[2, qi] = "*"
    assert deleted.value == pytest.approx(one(raw, starred, "NonUniformEntropy",
                                              quasi_identifiers=qi).value)
    assert any("not in the anonymized" in w for w in deleted.warnings)
    dup = anon.assign(pid=["p0"] * 7)
    err = one(raw, dup, "NonUniformEntropy", quasi_identifiers=qi, id="pid").error
    assert err and "duplicates" in err and "'p0'" in err


def test_public_api_all_measures_json_friendly(adult):
    small = adult.iloc[:500]
    rep = evaluate(small, small, [
        {"name": n, "params": {"quasi_identifiers": ["sex", "race", "salary-class"], **extra}}
        for n, extra in [("DM", {"k": 2}), ("DMStar", {}), ("AECS", {}), ("KAnonymity", {}),
                         ("LDiversity", {"sensitive": "occupation"}),
                         ("NonUniformEntropy", {})]])
    assert rep.ok, [m.error for m in rep.measures]
    assert rep["NonUniformEntropy"].value == 0
    assert isinstance(rep.to_json(), str)


@needs_pycanon
def test_pycanon_has_no_suppression():
    # pyCANON groups '*' records like any others (reference §3: k with 2 '*' rows kept = 2);
    # here they are suppressed, in no class, so the achieved k stays 3.
    df = pd.DataFrame({"q": ["a"] * 3 + ["b"] * 4 + ["*"] * 2, "s": list("xyxyzxyxy")})
    assert anonymity.k_anonymity(df, ["q"]) == 2
    _, d, _ = run(KAnonymity(quasi_identifiers=["q"], k=3), df)
    assert d["achieved_k"] == 3 and d["suppressed_records"] == 2


def test_empty_tables():
    empty = pd.DataFrame({"a": pd.Series([], dtype=object), "b": pd.Series([], dtype=object)})
    qi = ["a", "b"]
    for m in (KAnonymity(quasi_identifiers=qi), DM(quasi_identifiers=qi),
              DMStar(quasi_identifiers=qi), AECS(quasi_identifiers=qi),
              LDiversity(quasi_identifiers=["a"], sensitive="b")):
        assert run(m, None, empty)[0] == 0, m.name
    assert run(NonUniformEntropy(quasi_identifiers=qi), empty, empty)[0] == 0
