"""NewRowSynthesis (SDMetrics 0.32's values on the same data, copy and independent releases,
the seeded sample) and IdentifiabilityScore (hand-worked cases, an independent brute force and
synthcity 0.2.12's values committed as a fixture, ``data/synthetic/run_synthcity_privacy.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from anoneval.core import ConfigError, evaluate
from anoneval.core.api import Context, Microdata, wilson_interval
from anoneval.registry import build_registry

sdmetrics = pytest.importorskip("sdmetrics")
from sdmetrics.single_table import NewRowSynthesis as SDMNewRows  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data" / "synthetic"
META = {"columns": {"age": {"sdtype": "numerical"}, "income": {"sdtype": "numerical"},
                    "hours": {"sdtype": "numerical"}, "job": {"sdtype": "categorical"},
                    "region": {"sdtype": "categorical"}, "smoker": {"sdtype": "categorical"}}}
REG = build_registry(entry_points=False)


def compute(name: str, ori: pd.DataFrame, syn: pd.DataFrame, params: dict | None = None,
            seed: int = 0):
    measure = REG.create("risk_measure", name, params or {})
    return measure.compute(Microdata(ori), Microdata(syn), Context(seed=seed))


@pytest.fixture(scope="module")
def shared():
    ori, syn = (pd.read_csv(DATA / f"{n}.csv") for n in ("original", "released"))
    syn.loc[::37, "income"] = np.nan
    ori.loc[::53, "income"] = np.nan
    syn.loc[::41, "job"] = np.nan
    ori.loc[::59, "job"] = np.nan
    # a release with 20 copies (two near copies within 1 %) among its 120 records
    released = pd.concat([syn.iloc[:100], ori.iloc[:20]], ignore_index=True)
    released.loc[100, "income"] *= 1.005
    released.loc[101, "age"] *= 0.995
    return ori.iloc[:400], released


# -- NewRowSynthesis ------------------------------------------------------------------------


@pytest.mark.parametrize("tolerance", [0.0, 0.01, 0.2])
def test_new_row_synthesis_equals_sdmetrics(shared, tolerance):
    ori, syn = shared
    res = compute("NewRowSynthesis", ori, syn, {"tolerance": tolerance})
    theirs = SDMNewRows.compute_breakdown(ori, syn, META, numerical_match_tolerance=tolerance)
    assert res.value == pytest.approx(theirs["score"], abs=1e-9)
    assert res.details["num_new_rows"] == theirs["num_new_rows"]
    assert res.details["num_matched_rows"] == theirs["num_matched_rows"]
    assert res.ci == pytest.approx(list(wilson_interval(theirs["num_new_rows"], len(syn))))


def test_new_row_synthesis_copy_and_independent():
    rng = np.random.default_rng(0)

    def draw() -> pd.DataFrame:
        return pd.DataFrame({"x": rng.normal(size=500), "y": rng.normal(size=500),
                             "z": rng.normal(size=500), "g": rng.choice(list("ab"), 500)})

    ori, other = draw(), draw()
    assert compute("NewRowSynthesis", ori, ori.copy()).value == 0.0
    assert compute("NewRowSynthesis", ori, other, {"tolerance": 0.0}).value == 1.0
    # three numbers each within 1 % of the same original record: rare
    assert compute("NewRowSynthesis", ori, other).value > 0.95


def test_new_row_synthesis_sample_is_seeded_and_bounded(shared):
    ori, syn = shared
    params = {"synthetic_sample_size": 50}
    a, b = compute("NewRowSynthesis", ori, syn, params), compute("NewRowSynthesis", ori, syn,
                                                                   params)
    assert a.value == b.value and a.details["n_checked"] == 50
    assert a.ci == pytest.approx(list(wilson_interval(a.details["num_new_rows"], 50)))
    big = compute("NewRowSynthesis", ori, syn, {"synthetic_sample_size": 1000})
    assert big.details["n_checked"] == len(syn) and "all checked" in big.warnings[0]


def test_new_row_synthesis_errors(shared):
    ori, syn = shared
    rep = evaluate(ori, syn.drop(columns="job"), [{"name": "NewRowSynthesis"}])
    assert "job" in rep.measures[0].error
    with pytest.raises(ConfigError, match="tolerance"):
        evaluate(ori, syn, [{"name": "NewRowSynthesis", "params": {"tolerance": -1}}])


# -- IdentifiabilityScore --------------------------------------------------------------------


AS_NUMBERS = {"rank_few_values": False}


def brute_identifiability(ori: np.ndarray, syn: np.ndarray) -> float:
    """Full distance matrices, in loops over records: the definition, independently."""
    hits = 0
    for i in range(len(ori)):
        own = min(np.sqrt(((ori[i] - ori[j]) ** 2).sum()) for j in range(len(ori)) if j != i)
        released = min(np.sqrt(((ori[i] - s) ** 2).sum()) for s in syn)
        hits += released < own
    return hits / len(ori)


def test_identifiability_by_hand():
    # originals at 0, 1, 3, 10 on a line; released at 0.4 and 9: record 0 (r=1, r̂=0.4) and
    # record 10 (r=7, r̂=1) are identifiable; 1 (r=1, r̂=0.6) too; 3 (r=2, r̂=2.6) is not
    ori = pd.DataFrame({"x": [0.0, 1.0, 3.0, 10.0]})
    syn = pd.DataFrame({"x": [0.4, 9.0]})
    res = compute("IdentifiabilityScore", ori, syn, AS_NUMBERS)
    assert res.value == 0.75 and res.details["n_identifiable"] == 3
    assert res.ci == pytest.approx(list(wilson_interval(3, 4)))
    # a tie (r̂ = r) is not identifiable; a duplicated original (r = 0) never is
    tie = compute("IdentifiabilityScore", pd.DataFrame({"x": [0.0, 2.0]}),
                  pd.DataFrame({"x": [2.0 + 2.0]}), AS_NUMBERS)
    assert tie.value == 0.0
    dup = compute("IdentifiabilityScore", pd.DataFrame({"x": [0.0, 0.0, 5.0]}),
                  pd.DataFrame({"x": [0.0]}), AS_NUMBERS)
    assert dup.value == 0.0


def test_identifiability_encodes_categories_as_sorted_codes():
    # synthcity's LabelEncoder over both sides: a < b < c → 0, 1, 2
    ori = pd.DataFrame({"g": ["a", "c", "c"], "x": [0.0, 0.0, 3.0]})
    syn = pd.DataFrame({"g": ["b"], "x": [0.1]})
    # codes: originals (0,0), (2,0), (2,3); released (1,0.1); r = 2, 2, 3; r̂ ≈ 1.005, 1.005,
    # 3.068: the first two are identifiable
    assert compute("IdentifiabilityScore", ori, syn, AS_NUMBERS).value == pytest.approx(2 / 3)
    # synthcity's default also ranks x (three distinct values < 15): 0, 0.1, 3 → 0, 1, 2;
    # originals (0,0), (2,0), (2,2), released (1,1): r = 2, 2, 2 and r̂ = √2 each
    assert compute("IdentifiabilityScore", ori, syn).value == 1.0


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["none", "entropy"]), st.booleans())
@example(500, "entropy", False)  # a tie that centring the data broke by one ulp
def test_identifiability_equals_brute_force(seed, weights, rank_few):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 40)), int(rng.integers(1, 40))

    def draw(k: int) -> pd.DataFrame:
        return pd.DataFrame({"a": rng.integers(0, 5, k).astype(float) * 2,
                             "b": rng.normal(size=k).round(1) * 3,
                             "g": rng.choice(list("pqrs"), k)})

    ori, syn = draw(n), draw(m)
    res = compute("IdentifiabilityScore", ori, syn,
                  {"weighting": weights, "rank_few_values": rank_few})

    def column(c: str) -> tuple[np.ndarray, np.ndarray]:
        values = sorted(set(ori[c]) | set(syn[c]))
        if c == "g" or (rank_few and len(values) < 15):  # the rank among sorted values
            codes = {v: i for i, v in enumerate(values)}
            return ori[c].map(codes).to_numpy(float), syn[c].map(codes).to_numpy(float)
        return ori[c].to_numpy(float), syn[c].to_numpy(float)

    pairs = [column(c) for c in ("a", "b", "g")]
    x = np.column_stack([p[0] for p in pairs])
    y = np.column_stack([p[1] for p in pairs])
    if weights == "entropy":
        w = []
        for j in range(3):
            p = np.unique(np.round(x[:, j]), return_counts=True)[1] / n
            w.append(-(p * np.log(p)).sum() + 1e-16)
        x, y = x / np.array(w), y / np.array(w)
    assert res.value == pytest.approx(brute_identifiability(x, y), abs=1e-12)


SYNTHCITY = json.loads((DATA / "synthcity_privacy.json").read_text())


@pytest.mark.parametrize("case", sorted(SYNTHCITY["identifiability"]))
def test_identifiability_equals_synthcity(case):
    """synthcity 0.2.12's ``score`` on the shared files (``run_synthcity_privacy.py``)."""
    ori, syn = (pd.read_csv(DATA / f"{n}.csv") for n in ("original", "released"))
    for f in (ori, syn):
        f["hours10"] = (f["hours"] / 10).round() * 10
    theirs = SYNTHCITY["identifiability"][case]
    res = compute("IdentifiabilityScore", ori, syn, {"columns": theirs["columns"]})
    assert res.value == pytest.approx(theirs["score"], abs=1e-9)
    if case == "hours10":  # the ranks of hours10 decide: kept as a number, another value
        other = compute("IdentifiabilityScore", ori, syn,
                        {"columns": theirs["columns"], **AS_NUMBERS})
        assert abs(other.value - theirs["score"]) > 1e-3


def test_identifiability_copy_and_independent():
    rng = np.random.default_rng(1)
    ori = pd.DataFrame(rng.normal(size=(2000, 4)), columns=list("abcd"))
    other = pd.DataFrame(rng.normal(size=(2000, 4)), columns=list("abcd"))
    assert compute("IdentifiabilityScore", ori, ori.copy()).value == 1.0
    # an independent replica of the same size: r̂ and r are alike in law, about half win
    indep = compute("IdentifiabilityScore", ori, other)
    assert abs(indep.value - 0.5) < 0.05
    assert indep.ci[0] < indep.value < indep.ci[1]


def test_identifiability_refuses_missing_values():
    ori = pd.DataFrame({"x": [0.0, 1.0, np.nan]})
    rep = evaluate(ori, ori.fillna(0), [{"name": "IdentifiabilityScore"}])
    assert "'x'" in rep.measures[0].error and "missing" in rep.measures[0].error
