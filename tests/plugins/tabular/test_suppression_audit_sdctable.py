"""SuppressionAudit against sdcTable's own primary rules and ``attack()`` (fixtures in
tests/data/sdctable, made by its make_fixtures.R; see the NOTE.md there).

sdcTable's ``attack()`` caps every suppressed cell at the largest cell value (reference §7.2);
``compat="sdctable"`` reproduces it to 1e-9, and the default differs exactly where that cap
binds (then our upper end is larger or unbounded).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anoneval.core.api import Context, Microdata, Table
from anoneval.plugins.tabular import _audit
from anoneval.plugins.tabular.suppression_audit import SuppressionAudit

DATA = Path(__file__).resolve().parents[2] / "data" / "sdctable"
CASES = {"oned": ["v1"], "twod": ["v1", "v2"], "hier": ["v1", "v2"], "cube": ["v1", "v2", "v3"],
         "weighted": ["v1", "v2"]}
RULES = {"frequency": {"n": 2, "safety_range": 0.10},
         "dominance": [{"n": 1, "k": 80}, {"n": 2, "k": 90}], "p_percent": {"p": 15}}
CTX = Context()


def load(case: str):
    tab = pd.read_csv(DATA / case / "table.csv", keep_default_na=False, na_values=[""],
                      dtype={d: str for d in CASES[case]})
    dims = {d: pd.read_csv(DATA / case / f"hier_{d}.csv", dtype=str).values.tolist()
            for d in CASES[case]}
    return tab, dims


def patterns(case: str) -> list[str]:
    tab, _ = load(case)
    return [c[len("status_"):] for c in tab.columns if c.startswith("status_")]


PAIRS = [(c, p) for c in CASES for p in patterns(c)]


def run(case: str, pattern: str, **params):
    tab, dims = load(case)
    frame = tab[[*CASES[case], "value"]].copy()
    frame["status"] = tab[f"status_{pattern}"]
    res = SuppressionAudit(dimensions=dims, total_code="Tot", **params).compute(
        None, Table(frame), CTX)
    cells = pd.DataFrame(res.details["cells"])
    merged = tab.merge(cells, on=CASES[case], suffixes=("", "_ours"))
    assert len(merged) == len(tab) == res.details["n_cells"]
    sup = merged[merged[f"status_{pattern}"].isin(["u", "x"])]
    assert len(sup) == res.details["n_suppressed"] > 0
    return sup, merged


@pytest.mark.parametrize(("case", "pattern"), PAIRS)
def test_compat_sdctable_reproduces_attack_to_1e9(case, pattern):
    sup, _ = run(case, pattern, compat="sdctable")
    np.testing.assert_allclose(sup["lower"], sup[f"low_{pattern}"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(sup["upper"], sup[f"up_{pattern}"], rtol=0, atol=1e-9)


@pytest.mark.parametrize(("case", "pattern"), PAIRS)
def test_default_differs_from_attack_only_when_its_cap_binds(case, pattern):
    sup, merged = run(case, pattern)
    cap = merged["value"].max()
    np.testing.assert_allclose(sup["lower"], sup[f"low_{pattern}"], rtol=0, atol=1e-9)
    theirs = sup[f"up_{pattern}"].to_numpy()
    ours = np.where(sup["unbounded"], np.inf, sup["upper"].astype(float))
    if np.isclose(theirs, cap, rtol=0, atol=1e-9).any():  # the cap binds: ours contain theirs
        assert (ours >= theirs - 1e-9).all() and (ours > theirs + 1e-9).any()
    else:
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)


@pytest.mark.parametrize(("case", "pattern"), [("oned", "total"), ("twod", "margins")])
def test_sdctable_cap_hides_an_unbounded_total(case, pattern):
    """Reference §7.2: with the grand total suppressed, attack() reports its true value as the
    upper end; the outsider's interval is unbounded."""
    sup, merged = run(case, pattern)
    top = sup[sup["value"] == merged["value"].max()].iloc[0]
    assert top[f"up_{pattern}"] == pytest.approx(top["value"], abs=1e-9)
    assert top["unbounded"] and pd.isna(top["upper"])


@pytest.mark.parametrize("case", list(CASES))
def test_rules_flag_the_cells_sdctable_marks_primary(case):
    """Frequency (n <= 2), (1,80), (2,90) dominance and p% (15) on the microdata, on every cell
    (margins included): the flagged cells are sdcTable's primary suppressions; in ``weighted``
    with integer sampling weights (sdcTable ``sampWeightInd``: count Σw, records replicated)."""
    tab, dims = load(case)
    micro = pd.read_csv(DATA / case / "microdata.csv", dtype={d: str for d in CASES[case]})
    frame = tab[[*CASES[case], "value"]].copy()
    frame["status"] = "s"
    weight = {"weight": "w"} if "w" in micro.columns else {}
    res = SuppressionAudit(dimensions=dims, rules=RULES, magnitude="mag", **weight).compute(
        Microdata(micro), Table(frame), CTX)
    cells = pd.DataFrame(res.details["cells"]).merge(tab, on=CASES[case])
    ours = cells["role"] == "primary"
    theirs = cells["status_primary"] == "u"
    assert theirs.any()
    assert (ours == theirs).all(), cells.loc[ours != theirs, [*CASES[case], "n", "value"]]
    if weight:  # sdcTable's weights (each record replicated w times) matter here
        plain = SuppressionAudit(dimensions=dims, rules=RULES, magnitude="mag").compute(
            Microdata(micro), Table(frame), CTX)
        other = pd.DataFrame(plain.details["cells"]).merge(tab, on=CASES[case])
        assert ((other["role"] == "primary") != theirs).any()


@pytest.mark.parametrize("case", ["hier", "cube"])
def test_scipy_fallback_gives_the_warm_started_intervals(case, monkeypatch):
    """Without highspy (extra "lp") every bound is a fresh scipy solve: same intervals."""
    import highspy  # noqa: F401  (test extra: the warm path really runs)
    warm, _ = run(case, "simpleheuristic")
    assert _audit.lp_solver().startswith("highspy")
    monkeypatch.setitem(sys.modules, "highspy", None)  # import highspy -> ImportError
    assert _audit.lp_solver().startswith("scipy")
    cold, _ = run(case, "simpleheuristic")
    np.testing.assert_allclose(cold["lower"], warm["lower"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(cold["upper"].astype(float), warm["upper"].astype(float),
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("chunk", [1, 3, 7])
def test_split_and_merged_tasks_give_the_same_intervals(chunk, monkeypatch):
    """Tasks of ``chunk`` variables (large components split, small ones merged into one model)
    leave sdcTable's intervals unchanged."""
    monkeypatch.setattr(_audit, "CHUNK", chunk)
    for case, pattern in [("cube", "simpleheuristic"), ("hier", "subtotal"), ("cube", "box")]:
        sup, _ = run(case, pattern, compat="sdctable")
        np.testing.assert_allclose(sup["lower"], sup[f"low_{pattern}"], rtol=0, atol=1e-9)
        np.testing.assert_allclose(sup["upper"], sup[f"up_{pattern}"], rtol=0, atol=1e-9)
