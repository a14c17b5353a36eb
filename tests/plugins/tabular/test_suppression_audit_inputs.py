"""SuppressionAudit: weights (hand-worked units, replication invariance) and bad input (rule
params, manual_safety, missing values, duplicate cells), each error naming what to fix."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from anoneval.core import evaluate
from anoneval.core.api import ConfigError, Context, DataError, Microdata, Table
from anoneval.plugins.tabular.suppression_audit import SuppressionAudit

CTX = Context()
#: How messages continue after "data row N" (core data_row), as a regex.
R = re.escape(" (1-based, header not counted)")
DIMS = {"d0": "flat", "d1": "flat"}


def table(inner: dict[tuple[str, str], float], suppressed=()) -> pd.DataFrame:
    """Every cell of a flat 2-D table (codes A, B × X, Y and the totals Tot)."""
    rows = []
    for r, c in itertools.product(["Tot", "A", "B"], ["Tot", "X", "Y"]):
        rs = ["A", "B"] if r == "Tot" else [r]
        cs = ["X", "Y"] if c == "Tot" else [c]
        v = sum(inner[(a, b)] for a in rs for b in cs)
        rows.append({"d0": r, "d1": c, "value": v,
                     "status": "u" if (r, c) in suppressed else "s"})
    return pd.DataFrame(rows)


RECT = [("A", "X"), ("A", "Y"), ("B", "X"), ("B", "Y")]


def weighted_micro() -> pd.DataFrame:
    """Cell A,X: 60 (weight 0.5), 30 (weight 2), 10 (weight 1): X = 30 + 60 + 10 = 100 and,
    filling units largest first, T1 = 0.5·60 + 0.5·30 = 45, T2 = 45 + 30 = 75, T3 = 75 +
    0.5·30 + 0.5·10 = 95. Other inner cells: ten records of 10, weight 1 (X = 100)."""
    rows = [("A", "X", 60.0, 0.5), ("A", "X", 30.0, 2.0), ("A", "X", 10.0, 1.0)]
    for r, c in [("A", "Y"), ("B", "X"), ("B", "Y")]:
        rows += [(r, c, 10.0, 1.0)] * 10
    return pd.DataFrame(rows, columns=["d0", "d1", "x", "w"])


def cells(res) -> pd.DataFrame:
    return pd.DataFrame(res.details["cells"]).set_index(["d0", "d1"])


def audit(original, frame, **params):
    return SuppressionAudit(dimensions=DIMS, **params).compute(original, Table(frame), CTX)


def same(a, b) -> None:
    """Equal levels, or both absent (the rule does not fire)."""
    assert (a is None or pd.isna(a)) == (b is None or pd.isna(b))
    if not pd.isna(b):
        assert a == pytest.approx(b, rel=1e-12)


INNER = {(r, c): 100.0 for r, c in itertools.product("AB", "XY")}


def test_weighted_units_hand_worked():
    rules = {"dominance": [{"n": 1, "k": 40}, {"n": 2, "k": 70}, {"n": 3, "k": 90}]}
    res = audit(Microdata(weighted_micro()), table(INNER, RECT), magnitude="x", weight="w",
                rules=rules)
    ax = cells(res).loc[("A", "X")]
    assert ax["level_nk1_40"] == pytest.approx(100 * 45 / 40 - 100)  # 12.5
    assert ax["level_nk2_70"] == pytest.approx(100 * 75 / 70 - 100)  # 7.142857...
    assert ax["level_nk3_90"] == pytest.approx(100 * 95 / 90 - 100)  # 5.555...
    assert ax["protection_level"] == pytest.approx(12.5)
    # unweighted the same records give T1 = 60, T2 = 90, T3 = 100: other levels
    plain = cells(audit(Microdata(weighted_micro()), table(INNER, RECT), magnitude="x",
                        rules=rules)).loc[("A", "X")]
    assert plain["level_nk1_40"] == pytest.approx(100 * 60 / 40 - 100)
    assert plain["level_nk2_70"] == pytest.approx(100 * 90 / 70 - 100)


def test_weighted_frequency_counts_weights_or_records():
    rules = {"frequency": {"n": 3, "safety_range": 0.1}}
    t = table(INNER)
    weighted = cells(audit(Microdata(weighted_micro()), t, magnitude="x", weight="w",
                           rules=rules))
    assert weighted.loc[("A", "X"), "role"] == "published"  # 3.5 units > 3
    records = cells(audit(Microdata(weighted_micro()), t, magnitude="x", weight="w",
                          weighted_frequency=False, rules=rules))
    assert records.loc[("A", "X"), "role"] == "primary"  # 3 records <= 3
    assert records.loc[("A", "X"), "level_frequency"] == pytest.approx(10.0)


def test_cell_table_weights_per_cell_and_per_contribution_match_microdata():
    rules = {"dominance": [{"n": 1, "k": 30}, {"n": 2, "k": 60}], "p_percent": {"p": 30}}
    micro = weighted_micro()
    micro["wc"] = np.where((micro.d0 == "A") & (micro.d1 == "X"), 1.5, 1.0)
    from_micro = cells(audit(Microdata(micro), table(INNER, RECT), magnitude="x", weight="w",
                             rules=rules)).loc[("A", "X")]
    per_contribution = pd.DataFrame([
        {"d0": r, "d1": c, "n": 3.5 if (r, c) == ("A", "X") else 10, "c1": 60 if (r, c) == (
            "A", "X") else 10, "c2": 30 if (r, c) == ("A", "X") else 10, "c3": 10,
         "w1": 0.5 if (r, c) == ("A", "X") else 1, "w2": 2 if (r, c) == ("A", "X") else 1,
         "w3": 1} for r, c in RECT])
    got = cells(audit(Table(per_contribution), table(INNER, RECT), count_column="n",
                      contribution_columns=["c1", "c2", "c3"],
                      contribution_weight_columns=["w1", "w2", "w3"], rules=rules))
    for col in ("level_nk1_30", "level_nk2_60", "level_p30", "protection_level"):
        same(got.loc[("A", "X"), col], from_micro[col])
    assert from_micro["level_nk1_30"] == pytest.approx(100 * 45 / 30 - 100)
    # a weight per cell: every contributor of A,X weighs 1.5
    inner = dict(INNER)
    inner[("A", "X")] = 150.0
    per_cell_micro = cells(audit(Microdata(micro), table(inner, RECT), magnitude="x",
                                 weight="wc", rules=rules)).loc[("A", "X")]
    per_cell = per_contribution.drop(columns=["w1", "w2", "w3"]).assign(
        wc=[1.5, 1, 1, 1], c2=[30, 10, 10, 10])
    got = cells(audit(Table(per_cell), table(inner, RECT), count_column="n",
                      contribution_columns=["c1", "c2", "c3"], weight="wc", rules=rules))
    # X = 150, T1 = 60 (the first unit), T2 = 1.5·60 + 0.5·30 = 105
    assert per_cell_micro["level_nk1_30"] == pytest.approx(100 * 60 / 30 - 150)
    assert per_cell_micro["level_nk2_60"] == pytest.approx(100 * 105 / 60 - 150)
    for col in ("level_nk1_30", "level_nk2_60", "level_p30", "protection_level"):
        same(got.loc[("A", "X"), col], per_cell_micro[col])


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(list(itertools.product("AB", "XY"))),
                          st.integers(1, 50), st.integers(1, 3)), min_size=4, max_size=14))
def test_integer_weights_equal_replicated_records(rows):
    """A record of integer weight w counts as w records (tau-Argus; sdcTable replicates)."""
    rows = rows + [(cell, 5, 1) for cell in itertools.product("AB", "XY")]  # no empty cell
    micro = pd.DataFrame([(r, c, float(x), float(w)) for (r, c), x, w in rows],
                         columns=["d0", "d1", "x", "w"])
    rep = micro.loc[micro.index.repeat(micro["w"].astype(int))].drop(columns="w")
    inner = (micro.x * micro.w).groupby([micro.d0, micro.d1]).sum().to_dict()
    rules = {"frequency": {"n": 3}, "dominance": [{"n": 1, "k": 60}, {"n": 2, "k": 85}],
             "p_percent": {"p": 20}, "pq": {"p": 20, "q": 60}}
    a = cells(audit(Microdata(micro), table(inner, RECT), magnitude="x", weight="w",
                    rules=rules))
    b = cells(audit(Microdata(rep), table(inner, RECT), magnitude="x", rules=rules))
    assert (a["role"] == b["role"]).all()
    levels = [c for c in a.columns if c.startswith("level_")] + ["protection_level"]
    np.testing.assert_allclose(a[levels].astype(float), b[levels].astype(float), rtol=1e-12)


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("rules", "where", "allowed"), [
    ({"pq": {"p": 60, "q": 50}}, "pq", "0 < p < q <= 100"),
    ({"pq": {"p": 50, "q": 50}}, "pq", "0 < p < q <= 100"),
    ({"pq": {"p": 20, "q": 120}}, "pq.q", "less than or equal to 100"),
    ({"pq": {"p": 0, "q": 50}}, "pq.p", "greater than 0"),
    ({"pq": {"q": 50}}, "pq.p", "required"),
    ({"pq": {"p": 10, "q": 50, "n": 2}}, "pq.n", "xtra"),
    ({"p_percent": {"p": 100}}, "p_percent.p", "less than 100"),
    ({"dominance": [{"n": 0, "k": 80}]}, "dominance.0.n", "greater than or equal to 1"),
    ({"dominance": [{"n": 1, "k": 120}]}, "dominance.0.k", "less than or equal to 100"),
    ({"frequency": {"n": 0}}, "frequency.n", "greater than or equal to 1"),
    ({"frequncy": {"n": 2}}, "frequncy", "xtra"),
])
def test_rule_params_name_the_param_and_the_allowed_values(rules, where, allowed):
    with pytest.raises(ValidationError) as err:
        SuppressionAudit(dimensions=DIMS, rules=rules)
    text = str(err.value)
    assert f"rules.{where}" in text and allowed in text
    with pytest.raises(ConfigError, match=r"measures\[0\]\.params"):
        evaluate(None, Table(table(INNER)), [{"name": "SuppressionAudit",
                                             "params": {"dimensions": DIMS, "rules": rules}}])


def test_manual_safety_param_and_level():
    with pytest.raises(ValidationError, match=r"manual_safety[\s\S]*greater than or equal to 0"):
        SuppressionAudit(dimensions=DIMS, manual_safety=-0.1)
    # a primary cell no rule flags (microdata with many equal units) takes manual_safety·X
    micro = pd.DataFrame([(r, c, 10.0) for r, c in itertools.product("AB", "XY")
                          for _ in range(10)], columns=["d0", "d1", "x"])
    t = table(INNER, RECT)
    got = cells(audit(Microdata(micro), t, magnitude="x", manual_safety=0.25,
                      rules={"dominance": [{"n": 1, "k": 80}]}))
    assert got.loc[("A", "X"), "protection_level"] == pytest.approx(25.0)
    # the rectangle: A,X in [0, 200], margins 100 >= 25: passes; ±10 % a-priori: fails
    assert got.loc[("A", "X"), "pass"]
    tight = audit(Microdata(micro), t, magnitude="x", manual_safety=0.25,
                  apriori={"relative": 0.1})
    assert tight.value == 1.0
    # without an original no rule runs: min_level (1)
    assert cells(audit(None, t, manual_safety=0.25)).loc[("A", "X"), "protection_level"] == 1


def test_missing_values_name_the_column_and_row():
    t = table(INNER, RECT)
    bad = t.copy()
    bad.loc[4, "d1"] = None
    with pytest.raises(DataError, match=r"column 'd1' is empty in data row 5"):
        audit(None, bad)
    bad = t.copy()
    bad.loc[2, "status"] = None
    with pytest.raises(DataError, match=r"column 'status' is empty in data row 3"):
        audit(None, bad)
    bad = t.copy()
    bad.loc[0, "value"] = np.nan  # the published grand total
    with pytest.raises(DataError, match=rf"'value': the published cell in data row 1{R} is empty"):
        audit(None, bad)
    bad = t.copy().astype({"value": object})
    bad.loc[1, "value"] = "n/a"
    with pytest.raises(DataError, match=rf"'value': data row 2{R} holds 'n/a', expected a finite"):
        audit(None, bad)
    bad = t.copy()
    bad.loc[(bad.d0 == "A") & (bad.d1 == "X"), "value"] = np.nan  # suppressed: may be empty
    with pytest.raises(DataError, match=r"'value': 1 suppressed cells are empty and no original"):
        audit(None, bad)
    micro = weighted_micro()
    got = cells(audit(Microdata(micro), bad, magnitude="x", weight="w"))
    assert got.loc[("A", "X"), "value"] == pytest.approx(100.0)  # filled from the original
    m = micro.copy()
    m.loc[3, "x"] = np.nan
    with pytest.raises(DataError, match=rf"'x' \(magnitude\): data row 4{R} is empty, expected"):
        audit(Microdata(m), t, magnitude="x")
    m = micro.copy()
    m.loc[5, "w"] = np.nan
    with pytest.raises(DataError, match=rf"'w' \(weight\): data row 6{R} is empty, expected a "
                                        r"number > 0"):
        audit(Microdata(m), t, magnitude="x", weight="w")
    m = micro.copy()
    m.loc[0, "w"] = 0.0
    with pytest.raises(DataError, match=rf"'w' \(weight\): data row 1{R} holds 0.0, expected a "
                                        r"number > 0"):
        audit(Microdata(m), t, magnitude="x", weight="w")
    ct = pd.DataFrame({"d0": ["A", "B"], "d1": ["X", "Y"], "n": [3, None], "c1": [5, 6],
                       "c2": [1, 2]})
    with pytest.raises(DataError, match=rf"'n' \(count_column\): data row 2{R} is empty"):
        audit(Table(ct), t, count_column="n", contribution_columns=["c1", "c2"],
              rules={"p_percent": {"p": 10}})


def test_duplicate_cells_name_both_rows():
    t = table(INNER, RECT)
    dup = pd.concat([t, t.iloc[[3]]], ignore_index=True)
    with pytest.raises(DataError, match=rf"data row 4{R} and data row 10{R} are the same cell "
                                        r"\(d0=A, d1=Tot\)"):
        audit(None, dup)
    ct = pd.DataFrame({"d0": ["A", "B", "A"], "d1": ["X", "Y", "X"], "n": [3, 4, 3],
                       "c1": [5, 6, 5], "c2": [1, 2, 1]})
    with pytest.raises(DataError, match=rf"original cell table: data row 3{R} repeats the cell "
                                        r"d0=A, d1=X"):
        audit(Table(ct), t, count_column="n", contribution_columns=["c1", "c2"],
              rules={"p_percent": {"p": 10}})
    with pytest.raises(DataError, match=r"edge 2 \[Tot, A\] repeats the code 'A'"):
        SuppressionAudit(dimensions={"d0": [["Tot", "A"], ["Tot", "B"], ["Tot", "A"]],
                                     "d1": "flat"}).compute(None, Table(t), CTX)


def test_weight_params_errors():
    t = table(INNER, RECT)
    ct = pd.DataFrame({"d0": ["A"], "d1": ["X"], "n": [3], "c1": [5], "c2": [1], "w1": [1]})
    with pytest.raises(DataError, match=r"one column per 'contribution_columns' \(2\), not 1"):
        audit(Table(ct), t, count_column="n", contribution_columns=["c1", "c2"],
              contribution_weight_columns=["w1"], rules={"p_percent": {"p": 10}})
    with pytest.raises(DataError, match=r"the rules need the 3 largest contributions, "
                                        r"'contribution_columns' gives 2"):
        audit(Table(ct), t, count_column="n", contribution_columns=["c1", "c2"],
              rules={"dominance": [{"n": 3, "k": 90}]})
    with pytest.raises(DataError, match=r"either 'weight' \(per cell\) or"):
        audit(Table(ct.assign(w2=1, w=1)), t, count_column="n", weight="w",
              contribution_columns=["c1", "c2"], contribution_weight_columns=["w1", "w2"])
    with pytest.raises(DataError, match=r"'contribution_weight_columns' applies to an original "
                                        r"cell table"):
        audit(Microdata(weighted_micro()), t, magnitude="x", contribution_weight_columns=["w"])
    with pytest.raises(DataError, match=r"original microdata: column 'v' is missing"):
        audit(Microdata(weighted_micro()), t, magnitude="x", weight="v")


def test_cell_table_needs_no_contributions_for_the_frequency_rule_alone():
    ct = pd.DataFrame({"d0": ["A", "A", "B", "B"], "d1": ["X", "Y", "X", "Y"],
                       "n": [2, 5, 5, 5]})
    got = cells(audit(Table(ct), table(INNER), count_column="n",
                      rules={"frequency": {"n": 2, "safety_range": 0.2}}))
    assert got.loc[("A", "X"), "level_frequency"] == pytest.approx(20.0)  # published: failed
    assert list(got.index[got["role"] == "primary"]) == [("A", "X")]
