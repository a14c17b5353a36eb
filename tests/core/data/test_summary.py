"""Tests of the equivalence-class summaries and the measures that read them.

Oracles: the summary of the whole frame (for combined partials), the row path of each measure
(``per_record`` or ``id``, which read the records) for the same measure from a summary, and a
brute-force count for the documented example.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import Evaluator
from anoneval.core.api import (
    ClassSummary,
    Context,
    DataError,
    Microdata,
    PluginError,
    SummarySpec,
    dataset_summarizer,
)
from anoneval.core.data.partitioned import _summaries
from anoneval.plugins.generalization.aecs import AECS
from anoneval.plugins.generalization.dm import DM
from anoneval.plugins.generalization.dmstar import DMStar
from anoneval.plugins.microdata.kanonymity import KAnonymity
from anoneval.plugins.microdata.ldiversity import LDiversity
from anoneval.plugins.tabular.entropy_risk import EntropyRisk
from anoneval.plugins.tabular.sensitivity_rules import SensitivityRules
from anoneval.registry import build_registry

SETTINGS = settings(max_examples=30, deadline=None)
QI = ["a", "b", "c"]
DOCS = Path(__file__).resolve().parents[3] / "docs" / "writing-plugins.md"


@st.composite
def frames(draw: st.DrawFn, min_rows: int = 0) -> pd.DataFrame:
    """Small frames with NaN keys, suppressed rows ("*" in every key), mixed and categorical
    keys, a sensitive column with missing values and dyadic weights (exact sums)."""
    n = draw(st.integers(min_rows, 30))
    row = st.fixed_dictionaries({
        "a": st.sampled_from([0, 1, 2, "*", None]),
        "b": st.sampled_from(["x", "y", "*", None]),
        "c": st.sampled_from([1.0, 2.0, -0.0, np.nan]),
        "s": st.sampled_from([1, 2, 3, None]),
        "w": st.sampled_from([0.5, 1.0, 2.0, 3.25]),
        "suppressed": st.booleans(),
    })
    rows = draw(st.lists(row, min_size=n, max_size=n))
    frame = pd.DataFrame(rows, columns=["a", "b", "c", "s", "w", "suppressed"])
    sup = frame.pop("suppressed").to_numpy(bool)
    frame["a"] = frame["a"].astype(object)
    frame["c"] = frame["c"].astype(object)
    frame.loc[sup, ["a", "b", "c"]] = "*"
    frame["b"] = frame["b"].astype("category")
    frame["rid"] = np.arange(n)
    return frame


@st.composite
def partitionings(draw: st.DrawFn, n: int) -> list[slice]:
    """Blocks of rows (some empty) in a random order."""
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=5)))
    bounds = [0, *cuts, n]
    blocks = [slice(lo, hi) for lo, hi in itertools.pairwise(bounds)]
    return draw(st.permutations(blocks))


def partitioned(original: pd.DataFrame, anonymized: pd.DataFrame | None,
                blocks: list[slice]) -> Context:
    """A context whose summaries are combined from the partials of ``blocks`` of each side."""
    calls: list[SummarySpec] = []

    def summarize(spec: SummarySpec) -> ClassSummary:
        calls.append(spec)
        frame = original if spec.side == "original" else anonymized
        assert frame is not None
        n = len(frame)
        parts = [ClassSummary.of_frame(frame.iloc[b], spec) for b in blocks
                 if b.stop <= n] or [ClassSummary.of_frame(frame, spec)]
        covered = sum(p.n_records for p in parts)
        if covered != n:  # the sides differ in length: summarize the rest as one more block
            parts.append(ClassSummary.of_frame(frame.iloc[covered:], spec))
        return ClassSummary.combine(parts)

    return Context(summarize=summarize, extra={"calls": calls})


def same(a: object, b: object, path: str = "") -> None:
    """Equal details: integers and text exactly, floats to 1e-12 relative."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), path
        for k in a:
            same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-12)
    elif isinstance(a, float) and isinstance(b, float):
        assert b == pytest.approx(a, rel=1e-12, abs=1e-300), path
    else:
        assert a == b and type(a) is type(b), path


# -- the summary ---------------------------------------------------------------------------


SPEC = SummarySpec("anonymized", ("a", "b", "c"), "w", ("s", "b"))


@SETTINGS
@given(st.data())
def test_combined_partials_equal_the_whole(data):
    frame = data.draw(frames())
    blocks = data.draw(partitionings(len(frame)))
    whole = ClassSummary.of_frame(frame, SPEC)
    combined = ClassSummary.combine([ClassSummary.of_frame(frame.iloc[b], SPEC) for b in blocks])
    assert combined.equals(whole)  # exact: dyadic weights sum exactly in any order
    again = ClassSummary.combine([ClassSummary.combine([combined]), whole])
    assert np.array_equal(again.counts, 2 * whole.counts) and again.keys.equals(whole.keys)
    assert whole.n_records == len(frame)



@SETTINGS
@given(frames())
def test_specs_of_the_same_keys_share_one_grouping(frame):
    specs = (SPEC, SummarySpec("anonymized", SPEC.keys, None, ("s",)),
             SummarySpec("anonymized", ("a", "nope")))
    shared = _summaries(specs, frame)
    for spec, got in zip(specs[:2], shared, strict=False):
        assert got.equals(ClassSummary.of_frame(frame, spec))
    assert isinstance(shared[2], DataError) and "'nope'" in str(shared[2])
    assert ClassSummary.of_frame(frame, SPEC).__sizeof__() >= shared[0].counts.nbytes

def test_summary_keys_sorted_with_missing_last():
    frame = pd.DataFrame({"k": [2.0, np.nan, 1.0, 2.0, -0.0, 0.0],
                          "t": ["b", None, "a", "b", "a", "a"], "s": [1, 1, 2, 2, 3, 3]})
    s = ClassSummary.of_frame(frame, SummarySpec("original", ("k", "t"), sensitive=("s",)))
    assert s.keys["k"].tolist()[:3] == [0.0, 1.0, 2.0] and np.isnan(s.keys["k"].iloc[3])
    assert s.keys["t"].tolist()[:3] == ["a", "a", "b"]
    assert s.counts.tolist() == [2, 1, 2, 1]  # -0.0 and 0.0 are one key
    hist = s.histograms["s"]
    assert hist[["class", "value", "count"]].to_numpy().tolist() == [
        [0, 3, 2], [1, 2, 1], [2, 1, 1], [2, 2, 1], [3, 1, 1]]


def test_spec_and_context_errors():
    with pytest.raises(ValueError, match="side"):
        SummarySpec("released", ("a",))  # type: ignore[arg-type]
    with pytest.raises(PluginError, match="summarize"):
        Context().class_summary(SummarySpec("original", ("a",)))
    with pytest.raises(ValueError, match="cannot combine"):
        frame = pd.DataFrame({"a": [1], "b": [2]})
        ClassSummary.combine([ClassSummary.of_frame(frame, SummarySpec("original", ("a",))),
                              ClassSummary.of_frame(frame, SummarySpec("original", ("b",)))])
    with pytest.raises(Exception, match="'zz'"):
        ClassSummary.of_frame(pd.DataFrame({"a": [1]}), SummarySpec("original", ("zz",)))


# -- measures from combined partials equal their row path -----------------------------------


def row_path(measure, original, anonymized):
    """The measure computed from the records (its row path)."""
    ctx = Context()
    o = Microdata(original) if original is not None else None
    a = Microdata(anonymized) if anonymized is not None else None
    res = measure.compute(o, a, ctx)
    return res.value, res.details, ctx.warnings


def summary_path(measure, original, anonymized, blocks):
    assert measure.summaries() is not None
    ctx = partitioned(original, anonymized, blocks)
    o = Microdata(original) if original is not None else None
    a = Microdata(anonymized) if anonymized is not None else None
    res = measure.compute(o, a, ctx)
    assert {*ctx.extra["calls"]} <= set(measure.summaries())
    return res.value, res.details, ctx.warnings


def check(fast, slow, original, anonymized, blocks, drop=("per_record",)):
    v1, d1, w1 = summary_path(fast, original, anonymized, blocks)
    v2, d2, w2 = row_path(slow, original, anonymized)
    same(v1, v2)
    same({k: v for k, v in d1.items() if k not in drop},
         {k: v for k, v in d2.items() if k not in drop})
    assert w1 == w2


@SETTINGS
@given(st.data(), st.sampled_from(["value", "suppressed"]), st.booleans())
def test_kanonymity_from_summary(data, missing, weighted):
    frame = data.draw(frames(min_rows=1))
    blocks = data.draw(partitionings(len(frame)))
    k = data.draw(st.integers(1, 4))
    params = {"quasi_identifiers": QI, "k": k, "missing": missing,
              "weights": "w" if weighted else None}
    check(KAnonymity(**params), KAnonymity(**params, per_record=True), frame, None, blocks)
    check(KAnonymity(**params), KAnonymity(**params, per_record=True), frame, frame, blocks)


def test_kanonymity_violations_from_summary():
    frame = pd.DataFrame({"a": ["x", "x", "y", "y", "y", "z"], "b": [1, 1, 2, 1, 2, 3]})
    _, d, _ = summary_path(KAnonymity(quasi_identifiers=["a", "b"], k=3, list_violations=5),
                           frame, None, [slice(0, 3), slice(3, 6)])
    assert d["violations"].to_dict("list") == {"a": ["y", "z", "x", "y"], "b": [1, 3, 1, 2],
                                               "size": [1, 1, 2, 2]}


@SETTINGS
@given(st.data(), st.sampled_from(["distinct", "entropy", "recursive"]),
       st.sampled_from(["value", "suppressed"]), st.booleans())
def test_ldiversity_from_summary(data, variant, missing, weighted):
    frame = data.draw(frames(min_rows=1))
    blocks = data.draw(partitionings(len(frame)))
    params = {"quasi_identifiers": QI, "sensitive": ["s"], "variant": variant, "l": 2,
              "missing": missing, "weights": "w" if weighted else None,
              "c": 2.0 if variant == "recursive" else None}
    check(LDiversity(**params), LDiversity(**params, per_record=True), frame, None, blocks)


@settings(max_examples=12, deadline=None)
@given(st.data(), st.sampled_from(["value", "suppressed"]))
def test_class_loss_measures_from_summary(data, missing):
    original = data.draw(frames(min_rows=1))
    anonymized = data.draw(frames(min_rows=len(original))).iloc[:len(original)]
    blocks = data.draw(partitionings(len(original)))
    k = data.draw(st.integers(1, 3))
    base = {"quasi_identifiers": QI, "missing": missing}
    for cls, extra in ((DM, {"k": k}), (DMStar, {}),
                       (AECS, {"k": k, "suppressed": "one_class"}),
                       (AECS, {"k": k, "suppressed": "ignore"})):
        params = {**base, **extra}
        # with id the measures align the sides by the (here identical) ids: the row path
        check(cls(**params), cls(**params, id="rid"), original, anonymized, blocks)
        check(cls(**params), cls(**params, id="rid"), anonymized, None, blocks)


def test_row_counts_must_match_on_the_summary_path():
    frame = pd.DataFrame({"a": [1, 2, 3]})
    with pytest.raises(Exception, match="3 rows and the anonymized data 2"):
        summary_path(DM(quasi_identifiers=["a"]), frame, frame.iloc[:2], [slice(0, 3)])


def test_row_paths_opt_out():
    qi = {"quasi_identifiers": QI}
    assert KAnonymity(**qi, missing="wildcard").summaries() is None
    assert KAnonymity(**qi, id="rid").summaries() is None
    assert LDiversity(**qi, sensitive="s", per_record=True).summaries() is None
    assert DM(**qi, id="rid").summaries() is None


# -- one summary per dataset and spec per run ------------------------------------------------


def test_summary_computed_once_per_dataset_and_spec(monkeypatch):
    calls: list[tuple[int, SummarySpec]] = []
    of_frame = ClassSummary.of_frame.__func__

    def counting(cls, frame, spec):
        calls.append(spec)
        return of_frame(cls, frame, spec)

    monkeypatch.setattr(ClassSummary, "of_frame", classmethod(counting))
    rng = np.random.default_rng(0)

    def frame():
        return pd.DataFrame({"a": rng.integers(0, 3, 50), "b": rng.integers(0, 2, 50),
                             "s": rng.integers(0, 4, 50)})

    qi = ["a", "b"]
    measures = [{"name": "KAnonymity", "params": {"quasi_identifiers": qi}},
                {"name": "KAnonymity", "params": {"quasi_identifiers": qi, "k": 3}, "label": "k3"},
                {"name": "LDiversity", "params": {"quasi_identifiers": qi, "sensitive": "s"}},
                *({"name": n, "params": {"quasi_identifiers": qi}}
                  for n in ("DM", "DMStar", "AECS"))]
    ev = Evaluator(frame(), measures, registry=build_registry())
    for _ in range(2):
        report = ev.evaluate(frame())
        assert all(m.error is None for m in report.measures)
    anon_qi = SummarySpec("anonymized", ("a", "b"))
    anon_l = SummarySpec("anonymized", ("a", "b"), sensitive=("s",))
    assert calls.count(anon_qi) == 2 and calls.count(anon_l) == 2  # once per variant
    assert calls.count(SummarySpec("original", ())) == 1  # once per evaluator
    assert calls.count(SummarySpec("original", ("a", "b"))) == 1
    assert len(calls) == 6


def test_one_grouping_per_dataset_and_qi_set(monkeypatch):
    """Measures reading class summaries and measures reading row-level classes share one
    grouping of each dataset over the quasi-identifiers per run."""
    from anoneval.core.data import summary

    calls: list[tuple[int, tuple[str, ...]]] = []
    class_codes = summary.class_codes

    def counting(frame, keys, *args):
        calls.append((id(frame), tuple(keys)))
        return class_codes(frame, keys, *args)

    monkeypatch.setattr(summary, "class_codes", counting)
    old_path: list[tuple[str, ...]] = []
    group_ids = Microdata.group_ids

    def old_grouping(self, columns):
        old_path.append(tuple(columns))
        return group_ids(self, columns)

    monkeypatch.setattr(Microdata, "group_ids", old_grouping)
    rng = np.random.default_rng(1)

    def frame():
        return pd.DataFrame({"a": rng.integers(0, 3, 60), "b": rng.integers(0, 2, 60),
                             "s": rng.integers(0, 4, 60)})

    qi = {"quasi_identifiers": ["a", "b"]}
    sa = {**qi, "sensitive": ["s"]}
    measures = [
        {"name": "KAnonymity", "params": qi},
        {"name": "KAnonymity", "params": {**qi, "per_record": True}, "label": "k_rows"},
        {"name": "LDiversity", "params": {**qi, "sensitive": "s"}},
        {"name": "LDiversity", "params": {**qi, "sensitive": "s", "per_record": True},
         "label": "l_rows"},
        *({"name": n, "params": sa} for n in ("TCloseness", "DeltaDisclosure", "BetaLikeness",
                                              "AlphaKAnonymity")),
        {"name": "PopulationUniqueness", "params": {**qi, "sampling_fraction": 0.5}},
        *({"name": n, "params": qi} for n in (
            "DeltaPresence", "ReidentificationRisk", "IndividualRisk", "SUDA", "DM", "DMStar",
            "AECS", "Discernibility")),
    ]
    original = frame()  # the variants shuffle its rows: DeltaPresence needs them in it
    variants = {f"v{i}": original.sample(frac=1, random_state=i).reset_index(drop=True)
                for i in (1, 2)}
    report = Evaluator(original, measures, registry=build_registry()).evaluate_many(variants)
    errors = [(m.name, m.error) for r in report.variants for m in r.measures if m.error]
    assert not errors
    qi_calls = [frame_id for frame_id, keys in calls if keys == ("a", "b")]
    assert len(qi_calls) == 3  # the original and each variant, once each
    assert len(set(qi_calls)) == 3
    assert ("a", "b") not in old_path


# -- the documented example ------------------------------------------------------------------


def docs_example() -> dict[str, object]:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## Class-summary measures", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), str(DOCS), "exec"), namespace)
    return namespace


def test_docs_class_summary_example():
    cls = docs_example()["ClassUniques"]
    original = pd.DataFrame({"a": [1, 1, 2, 3, 3, 3, np.nan], "b": list("xxyzzzz")})
    anonymized = pd.DataFrame({"a": [1, 1, 1, 3, 3, 3, np.nan], "b": list("xxxzzzz")})
    measure = cls(quasi_identifiers=["a", "b"])
    brute = sum(1 for _, g in anonymized.groupby(["a", "b"], dropna=False) if len(g) == 1)
    report = Evaluator(original, [measure]).evaluate(anonymized)
    assert report.measures[0].error is None
    assert report.measures[0].value == brute / 7 and report.measures[0].details["uniques"] == 1
    ctx = Context(summarize=dataset_summarizer(Microdata(original), None))
    assert measure.compute(Microdata(original), None, ctx).value == 2 / 7  # (2,y), (nan,z)


# -- tabular rules and entropy risk from combined partials -----------------------------------


@st.composite
def magnitudes(draw: st.DrawFn, negative: bool) -> pd.DataFrame:
    """Microdata for cell tables: NaN spanning values, repeated magnitudes (ties), dyadic
    weights and contributor ids (some missing)."""
    n = draw(st.integers(1, 30))
    values = [0.0, 1.0, 2.5, 7.0, 40.0, 100.0] + ([-3.0, -50.0] if negative else [])
    row = st.fixed_dictionaries({
        "r": st.sampled_from(["n", "s", None]),
        "g": st.sampled_from([1, 2]),
        "v": st.sampled_from(values),
        "w": st.sampled_from([0.5, 1.0, 2.0, 3.25]),
        "h": st.sampled_from([1.0, 2.0, 3.0, np.nan]),
    })
    return pd.DataFrame(draw(st.lists(row, min_size=n, max_size=n)),
                        columns=["r", "g", "v", "w", "h"])


def by_keys(cells: pd.DataFrame) -> pd.DataFrame:
    """Cells sorted by their keys as text (every missing key as None: NaN and None alike)."""
    keys = [c for c in ("r", "g") if c in cells.columns]
    text = cells.assign(**{k: cells[k].astype(object).where(cells[k].notna(), None).astype(str)
                           for k in keys})
    return text.sort_values(keys, kind="stable").reset_index(drop=True)


def tabular_check(measure, frame, blocks):
    from anoneval.plugins.tabular import _cells

    fast = summary_path(measure, None, frame, blocks)
    with pytest.MonkeyPatch.context() as m:  # the row path: cells from the records
        m.setattr(_cells, "cell_specs", lambda p: None)
        slow = row_path(measure, None, frame)
    same(fast[0], slow[0])
    d1, d2 = dict(fast[1]), dict(slow[1])
    same(by_keys(d1.pop("cells")), by_keys(d2.pop("cells")))
    same(d1, d2)


@settings(max_examples=20, deadline=None)
@given(st.data(), st.sampled_from(["plain", "weight", "unweighted", "holding", "absolute"]),
       st.booleans())
def test_sensitivity_rules_from_summary(data, case, totals):
    frame = data.draw(magnitudes(negative=case == "absolute"))
    blocks = data.draw(partitionings(len(frame)))
    params = {"cells": ["r", "g"], "magnitude": "v", "totals": totals, "max_rows": None,
              "rules": [{"rule": "nk", "n": 2, "k": 80}, {"rule": "p", "p": 10},
                        {"rule": "pq", "p": 20, "q": 60, "n": 2},
                        {"rule": "freq", "min_contributors": 3}]}
    if case in ("weight", "unweighted"):
        params.update(weight="w", frequency="unweighted" if case == "unweighted" else "weighted")
    if case == "holding":
        params["contributor"] = "h"
        params["rules"].append({"rule": "nk", "n": 1, "k": 60, "level": "record"})
    if case == "absolute":
        params["negative"] = "absolute"
    tabular_check(SensitivityRules(params), frame, blocks)


@settings(max_examples=15, deadline=None)
@given(st.data(), st.sampled_from(["cells", "units"]), st.sampled_from(["product", "observed"]))
def test_entropy_risk_from_summary(data, normalize, grid):
    frame = data.draw(magnitudes(negative=False))
    frame["r"] = frame["r"].astype(pd.CategoricalDtype(["n", "s", "t"]))
    blocks = data.draw(partitionings(len(frame)))
    measure = EntropyRisk(cells=["r", "g"], normalize=normalize, grid=grid)
    fast, slow = summary_path(measure, None, frame, blocks), row_path(
        EntropyRisk(cells=["r", "g"], normalize=normalize, grid=grid, count_column=None),
        None, frame)
    same(fast[0], slow[0])
    same(fast[1], slow[1])


def test_weights_are_checked_from_the_weighted_summary_alone():
    from anoneval.plugins.microdata._common import positive_weights

    frame = pd.DataFrame({"a": [1, 1, 2, 2], "w": [1.5, 0.0, -2.0, 3.0]})
    spec = SummarySpec("original", ("a",), "w")
    halves = ClassSummary.combine([ClassSummary.of_frame(frame.iloc[:1], spec),
                                   ClassSummary.of_frame(frame.iloc[1:], spec)])
    assert halves.low_weights == ClassSummary.of_frame(frame, spec).low_weights == (-2.0, 2)
    with pytest.raises(DataError, match=r"'w': 2 value\(s\) are not numbers > 0 \(the "
                                        r"smallest is -2.0\)"):
        positive_weights(halves, "w")
    positive_weights(ClassSummary.of_frame(frame.iloc[:1], spec), "w")
    specs = KAnonymity(quasi_identifiers=["a"], k=2, weights="w").summaries()
    assert all(s.keys == ("a",) or s.keys == () for s in specs)  # no class per weight value


def test_each_column_is_coded_once_per_dataset(monkeypatch) -> None:
    """Groupings over different key sets (all quasi-identifiers for k-anonymity, each one for
    non-uniform entropy) and the content hash share each column's codes."""
    from anoneval.core.data import summary

    coded: list[int] = []
    codes = summary._codes

    def counting(values, objects=None):
        coded.append(len(values))
        return codes(values, objects)

    monkeypatch.setattr(summary, "_codes", counting)
    rng = np.random.default_rng(2)
    original = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 50), "b": rng.integers(0, 3, 50)})
    variant = original.assign(a=original["a"].where(original["b"] > 0, "*"))
    qi = {"quasi_identifiers": ["a", "b"]}
    report = Evaluator(original, [{"name": "KAnonymity", "params": qi},
                                  {"name": "NonUniformEntropy", "params": qi}],
                       registry=build_registry()).evaluate(variant)
    assert not [m.error for m in report.measures if m.error]
    assert len(coded) == 4  # two columns of two datasets
