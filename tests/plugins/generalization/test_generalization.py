"""Tests of ARX's quality models (plugins/generalization) and AECS's two definitions.

Oracles: ARX itself (tests/data/arx_quality, see its README: StatisticsQuality getters and
optimisation-metric scores on adult and on generated data), ARX's unit-test values
(TestUtilityMetrics on adult), and hand computations on ARX's seven-row example (arithmetic in
comments).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import Microdata, evaluate
from anoneval.core.api import ConfigError, Context, DataError
from anoneval.core.report.model import build_risk_utility
from anoneval.core.run.config import load_config
from anoneval.core.run.runner import run_plan
from anoneval.plugins.generalization.granularity import Granularity

HERE = Path(__file__).resolve().parents[2] / "data"
FIX = HERE / "arx_quality"
ARX7_H = {c: str(HERE / "microdata" / f"arx7_{c}.csv") for c in ("age", "gender", "zipcode")}
ARX7 = pd.DataFrame({
    "age": [34, 45, 66, 70, 34, 70, 45],
    "gender": ["male", "female", "male", "female", "female", "male", "male"],
    "zipcode": [81667, 81675, 81925, 81931, 81931, 81931, 81931],
})
QI7 = ["age", "gender", "zipcode"]
#: fixture key → (plugin, takes ``types``)
COLUMN_MODELS = {"granularity": ("Granularity", False),
                 "generalization_intensity": ("GeneralizationIntensity", False),
                 "attribute_squared_error": ("AttributeSquaredError", True),
                 "missings": ("Missings", False)}
ROW_MODELS = {"ambiguity": ("Ambiguity", False), "discernibility": ("Discernibility", False),
              "record_squared_error": ("RecordSquaredError", True),
              "ssesst": ("SSESST", True)}


def release(original: pd.DataFrame, qi, hierarchies, levels, k) -> pd.DataFrame:
    """Generalize ``qi`` to ``levels``, then set the QIs of classes smaller than k to '*'."""
    out = original.astype({c: object for c in qi})
    for c, lev in zip(qi, levels, strict=True):
        h = pd.read_csv(hierarchies[c], sep=";", header=None, dtype=str, keep_default_na=False)
        out[c] = original[c].astype(str).map(dict(zip(h[0], h[lev], strict=True)))
    small = out.groupby(qi)[qi[0]].transform("size") < k
    out.loc[small, qi] = "*"
    return out


def fit(name, params):
    """``params`` without ``hierarchies`` for Discernibility, which takes none."""
    return {k: v for k, v in params.items()
            if not (name == "Discernibility" and k == "hierarchies")}


def run(name, original, anonymized, **params):
    """One measure through the public API; returns its report entry."""
    return evaluate(original, anonymized,
                    [{"name": name, "params": fit(name, params)}]).measures[0]


def arx_loss(quality):
    return None if quality is None else 1.0 - quality


def check_against_arx(original: pd.DataFrame, hierarchies: dict, case: dict) -> None:
    qi, types = case["quasi_identifiers"], case["types"]
    anon = release(original, qi, hierarchies, case["levels"], case["k"])
    all_suppressed = case["outliers"] == len(original)
    base = {"quasi_identifiers": qi, "hierarchies": hierarchies}
    specs = [{"name": name, "params": {**base, **({"types": types} if typed else {})}}
             for name, typed in [*COLUMN_MODELS.values(), *ROW_MODELS.values()]
             if name != "Discernibility"]
    specs.append({"name": "Discernibility", "params": {"quasi_identifiers": qi}})
    specs += [
        {"name": "Granularity", "label": "loss", "params": {**base, "aggregate": "geometric"}},
        {"name": "Height", "params": base}, {"name": "HierarchyKLDivergence", "params": base},
        {"name": "NonUniformEntropy", "params": base},
        {"name": "AECS", "label": "aecs_quality", "params": {"quasi_identifiers": qi,
                                                             "suppressed": "ignore"}},
        {"name": "AECS", "params": {"quasi_identifiers": qi}},
        {"name": "DM", "params": {"quasi_identifiers": qi}},
    ]
    rep = evaluate(original, anon, specs)
    assert rep.ok, [(m.label, m.error) for m in rep.measures if m.error]
    q = case["quality"]
    for key, (name, _) in COLUMN_MODELS.items():
        m, want = rep[name], q[key]
        # Missings: ARX's getters already return the share (the loss)
        conv = (lambda v: v) if key == "missings" else arx_loss
        assert m.value == pytest.approx(conv(want["arithmetic"]), abs=1e-9), (case["name"], key)
        assert m.details["quality"] == pytest.approx(want["arithmetic"], abs=1e-9)
        for agg in ("arithmetic", "geometric", "max"):
            assert m.details["aggregates"][agg] == pytest.approx(conv(want[agg]), abs=1e-9)
        for c, v in want["per_attribute"].items():
            assert m.details["per_attribute"][c] == pytest.approx(conv(v), abs=1e-9)
    for key, (name, _) in ROW_MODELS.items():
        m, want = rep[name], q[key]
        if want is None:  # ARX: NaN when every record is suppressed (no class to iterate)
            assert all_suppressed and key == "discernibility"
            assert m.value == 1.0  # DM = n·n = its maximum
            continue
        assert m.value == pytest.approx(1.0 - want, abs=1e-9), (case["name"], key)
        assert m.details["quality"] == pytest.approx(want, abs=1e-9)
    nue = rep["NonUniformEntropy"].details["per_column"]
    for c, v in q["non_uniform_entropy"]["per_attribute"].items():
        assert nue[c]["normalized"] == pytest.approx(1.0 - v, abs=1e-9)
    if q["aecs"] is not None:
        assert rep["aecs_quality"].details["quality"] == pytest.approx(q["aecs"], abs=1e-12)
    met = case["metrics"]
    assert rep["loss"].value == pytest.approx(met["loss"], abs=1e-9)
    if case["name"].startswith("adult"):  # ARX's metric uses the lattice height: it equals
        # the quality model's only when each hierarchy ends in one root (small's income has two)
        assert rep["GeneralizationIntensity"].value == pytest.approx(met["precision"],
                                                                     abs=1e-12)
    assert rep["HierarchyKLDivergence"].value == pytest.approx(met["kl_divergence"], rel=1e-10)
    assert rep["Ambiguity"].details["raw"] == pytest.approx(met["ambiguity"], rel=1e-12)
    assert rep["AECS"].value == pytest.approx(met["aecs"], rel=1e-12)
    assert rep["DM"].value == met["discernibility"]
    if all_suppressed:  # the release no longer shows the levels: every column is at its top
        assert rep["Height"].details["raw"] == rep["Height"].details["max"]
    else:
        assert rep["Height"].details["raw"] == met["height"]


def fixture_cases(name):
    return json.loads((FIX / f"{name}.json").read_text())["cases"]


@pytest.fixture(scope="module")
def adult(data_dir):
    return pd.read_csv(data_dir / "adult" / "adult.csv", sep=";")


@pytest.mark.parametrize("case", fixture_cases("adult"), ids=lambda c: c["name"])
def test_arx_adult(adult, data_dir, case):
    h = {c: str(data_dir / "adult" / f"adult_hierarchy_{c}.csv")
         for c in case["quasi_identifiers"]}
    check_against_arx(adult, h, case)


@pytest.mark.parametrize("case", fixture_cases("small"), ids=lambda c: c["name"])
def test_arx_generated(case):
    # read as text: ARX's hierarchies hold incomes like "21.0", which a float column loses
    small = pd.read_csv(FIX / "small.csv", sep=";", dtype=str)
    h = {c: str(FIX / f"small_hierarchy_{c}.csv") for c in case["quasi_identifiers"]}
    check_against_arx(small, h, case)


def test_arx_unit_test_values(adult, data_dir):
    # ARX TestUtilityMetrics (KAnonymity(5), suppression limit 0 there: classes < 5 scored as
    # suppressed, which the release below shows as '*').
    qi = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
          "salary-class"]
    h = {c: str(data_dir / "adult" / f"adult_hierarchy_{c}.csv") for c in qi}
    anon = release(adult, qi, h, [0, 3, 1, 1, 1, 1, 0, 0], 5)
    m = run("Granularity", adult, anon, quasi_identifiers=qi, hierarchies=h)
    got = sorted(m.details["per_attribute"].values(), reverse=True)  # Loss, RANK aggregate
    assert got == pytest.approx([1.0, 0.4535066198, 0.299545786, 0.220264444, 0.2196339765,
                                 0.0350772495, 0.0350772495, 0.0350772495], abs=1e-9)
    anon = release(adult, qi, h, [0, 0, 0, 2, 1, 2, 0, 0], 5)
    m = run("GeneralizationIntensity", adult, anon, quasi_identifiers=qi, hierarchies=h)
    assert m.value == pytest.approx(0.45063186570298164, abs=1e-12)  # NM-Precision
    anon = release(adult, qi, h, [0, 3, 0, 1, 3, 2, 1, 0], 5)
    assert run("Height", adult, anon, quasi_identifiers=qi, hierarchies=h).details["raw"] == 10


# -- hand-worked: ARX's seven rows at node [1, 1, 2] (age <50/>=50, gender *, zip 816**/819**) --


@pytest.fixture(scope="module")
def arx7_112():
    return release(ARX7, QI7, ARX7_H, [1, 1, 2], 1)


def test_hand_granularity_intensity_missings(arx7_112):
    p = {"quasi_identifiers": QI7, "hierarchies": ARX7_H}
    m = run("Granularity", ARX7, arx7_112, **p)
    # D = 4, 2, 4; shares: <50 and >=50 2/4, '*' 1, 816**/819** 2/4 → raw 0.5, 1, 0.5;
    # per attribute (raw − 1/D)/(1 − 1/D) = 1/3, 1, 1/3 (reference notes §4c)
    assert m.details["per_attribute"] == pytest.approx({"age": 1 / 3, "gender": 1.0,
                                                        "zipcode": 1 / 3})
    # ARX's arithmetic mean: (2/3 − 1/3)/(1 − 1/3) = 0.5
    assert m.value == pytest.approx(0.5)
    assert m.details["quality"] == pytest.approx(0.5)
    # createLossMetric: ((4/3)·2·(4/3))^(1/3) − 1
    geo = run("Granularity", ARX7, arx7_112, aggregate="geometric", **p)
    assert geo.value == pytest.approx((32 / 9) ** (1 / 3) - 1)
    assert run("Granularity", ARX7, arx7_112, aggregate="max", **p).value == 1.0
    # levels 1/2, 1/1, 2/5 → mean 0.63333 (reference notes §4c, NM-Precision)
    m = run("GeneralizationIntensity", ARX7, arx7_112, **p)
    assert m.value == pytest.approx((0.5 + 1 + 0.4) / 3)
    # gender is the root everywhere: shares 0, 1, 0
    m = run("Missings", ARX7, arx7_112, **p)
    assert m.value == pytest.approx(1 / 3)
    assert m.details["per_attribute"] == {"age": 0.0, "gender": 1.0, "zipcode": 0.0}
    assert m.details["aggregates"]["max"] == 0.0  # ARX's getMax(): 1 − max(1 − share)


def test_hand_row_models(arx7_112):
    p = {"quasi_identifiers": QI7, "hierarchies": ARX7_H}
    # Ambiguity: every record 2·2·2 = 8 raw tuples → 56; min 7, max 7·4·2·4 = 224
    m = run("Ambiguity", ARX7, arx7_112, **p)
    assert (m.details["raw"], m.details["min"], m.details["max"]) == (56, 7, 224)
    assert m.value == pytest.approx(49 / 217)
    # Discernibility: classes 2, 3, 2 → 17; the original's 7 distinct rows → min 7; max 49
    m = run("Discernibility", ARX7, arx7_112, quasi_identifiers=QI7)
    assert (m.details["raw"], m.details["min"], m.details["max"]) == (17, 7, 49)
    assert m.value == pytest.approx(10 / 42)
    # KL: p = 1/7 per row, q = (f/7)/8 → (1/7)·[4·log2(8/2) + 3·log2(8/3)]
    m = run("HierarchyKLDivergence", ARX7, arx7_112, **p)
    assert m.value == pytest.approx((8 + 3 * math.log2(8 / 3)) / 7)
    # Height: 1 + 1 + 2 of 2 + 1 + 5
    m = run("Height", ARX7, arx7_112, **p)
    assert m.details["raw"] == 4 and m.details["max"] == 8 and m.value == 0.5
    assert m.details["levels"] == {"age": 1, "gender": 1, "zipcode": 2}


def test_hand_squared_errors(arx7_112):
    p = {"quasi_identifiers": QI7, "hierarchies": ARX7_H}
    # age as integer: <50 spans the original ages released as it, [34, 45]; >=50 [66, 70].
    # Rows 34,45,66,70,34,70,45: max((x−lo)², (x−hi)²) = 121,121,16,16,121,16,121 = 532;
    # d_max = max((x−34)², (x−70)²) = 1296,625,1024,1296,1296,1296,625 = 7458.
    m = run("AttributeSquaredError", ARX7, arx7_112, types={"age": "integer"}, **p)
    assert m.details["raw"]["age"] == 532 and m.details["max"]["age"] == 7458
    assert m.details["types"]["age"] == "integer"
    # age as string: hierarchy rows 0..3, <50 = rows [0, 1], >=50 = [2, 3]: every row 1 → 7;
    # d_max = 9,4,4,9,9,9,4 = 48
    m = run("AttributeSquaredError", ARX7, arx7_112, types={"age": "string"}, **p)
    assert m.details["raw"]["age"] == 7 and m.details["max"]["age"] == 48
    one = {"quasi_identifiers": ["age"], "hierarchies": {"age": ARX7_H["age"]}}
    orig, anon = ARX7.iloc[:4], arx7_112.iloc[:4]
    # SSE: mids 39.5 (<50), 68 (>=50): 5.5² + 5.5² + 2² + 2² = 68.5; centroid 53.75;
    # SST = 2·14.25² + 2·14.25² = 812.25
    m = run("SSESST", orig, anon, **one)
    assert (m.details["sse"], m.details["sst"]) == (68.5, 812.25)
    assert m.value == pytest.approx(68.5 / 812.25)
    # Record level: farther ends 45, 34, 70, 66 → 11 + 11 + 4 + 4 = 30 (÷σ); worst ends over
    # [34, 70]: 70, 70, 34, 34 → 36 + 25 + 32 + 36 = 129; σ cancels
    m = run("RecordSquaredError", orig, anon, **one)
    sd = float(np.std([34, 45, 66, 70]))
    assert m.details["raw"] == pytest.approx(30 / sd / 4)
    assert m.value == pytest.approx(30 / 129)


def test_suppressed_records_and_arx_compat():
    # node [1,0,2], k = 2: only (>=50, male, 819**) ×2 stays; 5 records suppressed
    anon = release(ARX7, QI7, ARX7_H, [1, 0, 2], 2)
    p = {"quasi_identifiers": QI7, "hierarchies": ARX7_H}
    m = run("Granularity", ARX7, anon, **p)
    # per attribute (2·share + 5)/7: age (2·0.5 + 5)/7 = 6/7 → (6/7 − 1/4)/(3/4) = 0.809524
    assert list(m.details["per_attribute"].values()) == pytest.approx(
        [0.809524, 0.714286, 0.809524], abs=1e-6)  # reference notes §4c
    assert m.details["suppressed_records"] == 5
    assert run("GeneralizationIntensity", ARX7, anon, **p).value == pytest.approx(0.8)
    amb = run("Ambiguity", ARX7, anon, **p)
    assert amb.details["raw"] == 2 * 2 * 1 * 2 + 5 * 32  # 168
    # ARX's quirk: with one quasi-identifier every row counts as suppressed
    one = {"quasi_identifiers": ["age"], "hierarchies": {"age": ARX7_H["age"]}}
    assert run("Granularity", ARX7, ARX7, **one).value == 0.0
    assert run("Granularity", ARX7, ARX7, compat="arx", **one).value == 1.0


def test_fallback_domain_without_hierarchy():
    # no hierarchy: the original's distinct values plus '*' (ARX's trivial hierarchy);
    # gender D = 2: one of 7 records suppressed → (6/2 + 1)/7 = 4/7 → (4/7 − 1/2)/(1/2) = 1/7
    anon = ARX7.astype(object)
    anon.loc[0, QI7] = "*"
    m = run("Granularity", ARX7, anon, quasi_identifiers=QI7)
    assert m.details["domain_sizes"] == {"age": 4, "gender": 2, "zipcode": 4}
    assert m.details["per_attribute"]["gender"] == pytest.approx(1 / 7)
    with pytest.raises(Exception, match="give its hierarchy"):
        bad = ARX7.astype(object)
        bad.loc[0, "age"] = "<50"
        Granularity(quasi_identifiers=QI7).compute(Microdata(ARX7), Microdata(bad), Context())


def test_aecs_two_definitions(arx7_112):
    anon = release(ARX7, QI7, ARX7_H, [1, 0, 2], 2)
    one = run("AECS", ARX7, anon, quasi_identifiers=QI7)
    assert one.value == 3.5 and one.details["suppressed"] == "one_class"  # 7 / (1 + 1)
    ign = run("AECS", ARX7, anon, quasi_identifiers=QI7, suppressed="ignore")
    assert ign.value == 2.0  # the one class of 2
    # ARX's quality: min = the original's mean class size 1, max = n = 7
    assert ign.details["quality"] == pytest.approx(1 - (2 - 1) / (7 - 1))


def test_id_alignment_deleted_records_count_as_suppressed():
    orig = ARX7.assign(id=range(7))
    anon = release(ARX7, QI7, ARX7_H, [1, 1, 2], 1).assign(id=range(7))
    kept = anon.iloc[[6, 1, 2, 3, 4, 5]]  # record 0 deleted, rows shuffled
    star = anon.astype(object)
    star.loc[0, QI7] = "*"
    p = {"quasi_identifiers": QI7, "hierarchies": ARX7_H}
    for name in ("Granularity", "Ambiguity", "Discernibility", "HierarchyKLDivergence",
                 "AttributeSquaredError", "SSESST", "Missings"):
        a = run(name, orig, kept, id="id", **p)
        b = run(name, orig, star, **p)
        assert a.value == pytest.approx(b.value), name
        assert any("not in the anonymized" in w for w in a.warnings)


# -- bad input -----------------------------------------------------------------------------


def test_hierarchy_lacking_an_original_value(tmp_path):
    h = tmp_path / "age.csv"
    h.write_text("34;<50;*\n45;<50;*\n66;>=50;*\n")
    anon = release(ARX7, QI7, ARX7_H, [1, 1, 2], 1)
    m = run("Granularity", ARX7, anon, quasi_identifiers=QI7, hierarchies={**ARX7_H, "age": str(h)})
    assert "'age'" in m.error and "'70'" in m.error


def test_released_value_outside_the_hierarchy():
    anon = release(ARX7, QI7, ARX7_H, [1, 1, 2], 1)
    anon.loc[2, "age"] = "60-69"
    for name in ("Granularity", "Ambiguity", "SSESST"):
        m = run(name, ARX7, anon, quasi_identifiers=QI7, hierarchies=ARX7_H)
        assert "column 'age'" in m.error and "'60-69'" in m.error
    anon = release(ARX7, QI7, ARX7_H, [1, 1, 2], 1)
    anon.loc[0, "age"] = ">=50"  # in the hierarchy, but not above 34
    m = run("Height", ARX7, anon, quasi_identifiers=QI7, hierarchies=ARX7_H)
    assert "column 'age'" in m.error and "'34'" in m.error


def test_inconsistent_hierarchy_depth_names_the_column(tmp_path):
    h = tmp_path / "age.csv"
    h.write_text("34;<50;*\n45;<50\n66;>=50;*\n70;>=50;*\n")
    m = run("Granularity", ARX7, ARX7, quasi_identifiers=QI7, hierarchies={**ARX7_H, "age": str(h)})
    assert "column 'age'" in m.error and "row 2" in m.error


def test_non_numeric_value_with_a_numeric_type():
    orig = ARX7.astype(object)
    orig.loc[3, "zipcode"] = "81 931"
    anon = orig.copy()
    m = run("SSESST", orig, anon, quasi_identifiers=["zipcode"], types={"zipcode": "integer"})
    assert "'zipcode'" in m.error and "'81 931'" in m.error and "data row 4 (1-based" in m.error
    assert m.value is None


def test_params_name_unknown_columns():
    with pytest.raises(ConfigError, match="types given for"):
        evaluate(ARX7, ARX7, [{"name": "SSESST", "params": {"quasi_identifiers": ["age"],
                                                            "types": {"sex": "string"}}}])
    with pytest.raises(ConfigError, match="hierarchies given for"):
        evaluate(ARX7, ARX7, [{"name": "Ambiguity", "params": {"quasi_identifiers": ["age"],
                                                               "hierarchies": {"x": "h.csv"}}}])
    with pytest.raises(ConfigError):
        evaluate(ARX7, ARX7, [{"name": "Granularity", "params": {"quasi_identifiers": ["age"],
                                                                 "aggregate": "median"}}])


def test_needs_both_sides_and_records():
    m = evaluate(None, ARX7, [{"name": "Granularity",
                               "params": {"quasi_identifiers": QI7}}]).measures[0]
    assert m.error and m.value is None
    with pytest.raises(DataError, match="no records"):
        run("Granularity", ARX7.iloc[:0], ARX7.iloc[:0], quasi_identifiers=QI7)


# -- invariants ----------------------------------------------------------------------------

NAMES = ["Granularity", "GeneralizationIntensity", "AttributeSquaredError", "Missings",
         "Ambiguity", "Discernibility", "RecordSquaredError", "SSESST", "HierarchyKLDivergence",
         "Height"]


@settings(max_examples=10, deadline=None)
@given(levels=st.tuples(st.integers(0, 2), st.integers(0, 1), st.integers(0, 5)),
       k=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_bounds_and_row_order(levels, k, seed):
    rng = np.random.default_rng(seed)
    orig = ARX7.iloc[rng.integers(0, 7, 30)].reset_index(drop=True)
    anon = release(orig, QI7, ARX7_H, list(levels), k)
    perm = rng.permutation(len(orig))
    specs = [{"name": n, "params": fit(n, {"quasi_identifiers": QI7, "hierarchies": ARX7_H})}
             for n in NAMES]
    a = evaluate(orig, anon, specs)
    b = evaluate(orig.iloc[perm], anon.iloc[perm], specs)
    for x, y in zip(a.measures, b.measures, strict=True):
        assert x.error is None, x.error
        assert x.value == pytest.approx(y.value, abs=1e-12), x.name
        # KL has no upper bound (ARX's "max", everything suppressed, can be exceeded)
        assert -1e-9 <= x.value <= (1 + 1e-12 if x.name != "HierarchyKLDivergence" else np.inf)


def test_identity_release_has_no_loss():
    p = {"quasi_identifiers": QI7, "hierarchies": ARX7_H}
    for name in NAMES:
        m = run(name, ARX7, ARX7, **p)
        assert m.value == pytest.approx(0.0, abs=1e-12), name


# -- the example: ARX's models across the adult variants, any of them on the R-U map ----------


def test_example_runs_and_every_model_can_be_the_ru_loss_axis(root, tmp_path, monkeypatch):
    # the shipped config unchanged, from another working folder: every path in it (data and
    # hierarchies alike) resolves once, relative to the config file (issue 23: the hierarchies
    # were joined to the config's folder twice, 50 of 65 results failed)
    examples = root / "examples"
    monkeypatch.chdir(tmp_path)
    report = run_plan(load_config(Path(os.path.relpath(examples / "arx_quality_adult.json"))))
    assert report.ok, [(m.label, m.error) for v in report.variants for m in v.measures
                       if m.error]
    assert report.risk_utility.loss == "Granularity"
    manifest = json.loads((examples / "data" / "adult_variants" / "variants.json").read_text())
    for v in report.variants:
        # the variants' levels (make_adult_variants.py) are what Height detects
        assert v["Height"].details["levels"] == manifest[v.variant]["levels"]
        assert v["Height"].details["raw"] == sum(manifest[v.variant]["levels"].values())
        assert v["Missings"].details["suppressed_records"] == (
            manifest[v.variant]["suppressed_records"])
    labels = [m.label for m in report.variants[0].measures if m.kind == "loss_measure"]
    assert len(labels) == 12
    for label in labels:
        ru = build_risk_utility(report.variants, "KAnonymity", label)
        assert ru.loss == label and ru.loss_direction == "higher = more loss"
        assert all(p.loss is not None for p in ru.points)
        assert any(p.pareto for p in ru.points)


def test_missing_released_values_count_as_suppressed_cells():
    anon = release(ARX7, QI7, ARX7_H, [1, 1, 2], 1)
    anon.loc[0, "age"] = None
    p = {"quasi_identifiers": QI7, "hierarchies": ARX7_H}
    m = run("Missings", ARX7, anon, **p)
    assert m.details["per_attribute"]["age"] == pytest.approx(1 / 7)
    assert any("missing values" in w for w in m.warnings)
    # granularity of age: six cells 2/4, one cell 1 → (3 + 1)/7; (4/7 − 1/4)/(3/4) = 3/7
    m = run("Granularity", ARX7, anon, **p)
    assert m.details["per_attribute"]["age"] == pytest.approx(3 / 7)
    same = anon.astype(object)
    same.loc[0, "age"] = "*"
    for name in ("Granularity", "GeneralizationIntensity", "Ambiguity", "SSESST"):
        assert run(name, ARX7, anon, **p).value == pytest.approx(
            run(name, ARX7, same, **p).value), name


def test_record_squared_error_brute_force_on_many_distinct_values():
    # 1,500 distinct decimals released rounded (numbers, not ranges): the per-row lookup takes
    # its search path (1,500 × ~1,000 value pairs). Brute force: ARX's loop, row by row.
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 100, 1500).round(3)
    y = x.round(1)
    s = rng.choice(["a", "b"], 1500)
    orig = pd.DataFrame({"x": x, "s": s})
    anon = pd.DataFrame({"x": y, "s": np.where(rng.random(1500) < 0.1, "*", s)})
    m = run("RecordSquaredError", orig, anon, quasi_identifiers=["x", "s"])
    assert m.details["types"] == {"x": "decimal", "s": "string"}
    sx = float(np.std(x))
    pos = {"a": 0.0, "b": 1.0}
    s_in = np.array([pos[v] for v in s])
    lo = np.array([pos.get(v, 0.0) for v in anon["s"]])
    hi = np.array([pos.get(v, 1.0) for v in anon["s"]])
    ss = float(np.std(s_in))
    real = worst = 0.0
    for i in range(1500):
        far_s = hi[i] if hi[i] - s_in[i] > s_in[i] - lo[i] else lo[i]
        real += math.sqrt(((x[i] - y[i]) / sx) ** 2 + ((s_in[i] - far_s) / ss) ** 2)
        ex = max(x.max(), y.max()) if max(x.max(), y.max()) - x[i] > x[i] - min(
            x.min(), y.min()) else min(x.min(), y.min())
        es = 1.0 if 1.0 - s_in[i] > s_in[i] else 0.0
        worst += math.sqrt(((x[i] - ex) / sx) ** 2 + ((s_in[i] - es) / ss) ** 2)
    assert m.details["raw"] == pytest.approx(real / 3000, rel=1e-12)
    assert m.details["max"] == pytest.approx(worst / 3000, rel=1e-12)
