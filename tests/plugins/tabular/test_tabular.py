"""Tabular risk (sensitivity rules, entropy) and loss (perturbed frequency tables) plugins.

Expected values are hand-worked (arithmetic in comments), taken from the tau-Argus manual and the
sdcTable fixtures quoted in ``shared/reference/sdc_anchors.md``, computed by brute force in this
file, or taken from scipy (Cramér's V).
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from scipy.stats.contingency import association

from anoneval.core import evaluate, evaluate_many
from anoneval.core.api import ConfigError, Context, DataError, Microdata, Table
from anoneval.plugins.tabular._cells import _sum_per_pair, top_units
from anoneval.plugins.tabular.cramers_v_change import CramersVChange
from anoneval.plugins.tabular.dominance import Dominance
from anoneval.plugins.tabular.entropy_risk import EntropyRisk
from anoneval.plugins.tabular.hellinger_distance import HellingerDistance
from anoneval.plugins.tabular.ppercent import PPercent
from anoneval.plugins.tabular.pqrule import PQRule
from anoneval.plugins.tabular.relative_absolute_distance import RelativeAbsoluteDistance
from anoneval.plugins.tabular.sensitivity_rules import SensitivityRules
from anoneval.plugins.tabular.threshold import Threshold

CTX = Context()


def run(measure, data, other=None):
    """Compute a one-sided measure on ``data`` (a DataFrame is microdata)."""
    data = Microdata(data) if isinstance(data, pd.DataFrame) else data
    return measure.compute(None, data, CTX) if other is None else measure.compute(
        data, Microdata(other) if isinstance(other, pd.DataFrame) else other, CTX)


def one_cell(values, **extra):
    """Microdata of a single cell 'c' with the given contributions."""
    return pd.DataFrame({"c": ["A"] * len(values), "v": values, **extra})


def status(result):
    return result.details["cells"]["status"].tolist()


# -- tau-Argus manual examples ------------------------------------------------------------------

# Holdings example (manual p.93-94): (cell ref 1, cell ref 2, value, holding).
HOLDINGS = pd.DataFrame(
    [("800", "20", 599, 1), ("800", "20", 344, 1), ("800", "20", 244, 1), ("800", "20", 644, 2),
     ("800", "30", 355, 1), ("800", "30", 433, 2), ("800", "30", 323, 3), ("800", "30", 343, 3),
     ("900", "20", 23, 4), ("900", "20", 43, 5), ("900", "20", 34, 5), ("900", "20", 53, 5),
     ("900", "30", 700, 6), ("900", "30", 200, 6), ("900", "30", 60, 7), ("900", "30", 40, 8),
     ("900", "30", 10, 9)],
    columns=["r1", "r2", "v", "holding"])


def cell_row(result, r1, r2):
    cells = result.details["cells"]
    return cells[(cells["r1"] == r1) & (cells["r2"] == r2)].iloc[0]


def test_holdings_example_p_percent_record_vs_holding_level():
    # Cell 900/30 at record level: X = 1010, x1 = 700, x2 = 200: 1010 - 900 = 110 >= 0.1·700
    # = 70: safe. At holding level the values are 900 (6), 60, 40, 10: 1010 - 960 = 50 < 90:
    # unsafe.
    base = {"cells": ["r1", "r2"], "magnitude": "v", "p": 10, "n": 1}
    record = run(PPercent(base), HOLDINGS)
    holding = run(PPercent({**base, "contributor": "holding"}), HOLDINGS)
    assert cell_row(record, "900", "30")["status"] == "safe"
    row = cell_row(holding, "900", "30")
    assert row["status"] == "unsafe" and row["reason"] == "holding:p(10,n=1)"
    assert row["contributors"] == 4 and row["total"] == 1010
    assert row["top1_share"] == pytest.approx(900 / 1010)
    assert row["top2_share"] == pytest.approx(960 / 1010)


def test_holdings_example_threshold_three_holdings():
    # Holdings per cell: 800/20 {1,2}, 800/30 {1,2,3}, 900/20 {4,5}, 900/30 {6,7,8,9}:
    # "at least 3 holdings" fails in 800/20 and 900/20.
    res = run(Threshold({"cells": ["r1", "r2"], "contributor": "holding",
                         "min_contributors": 3}), HOLDINGS)
    cells = res.details["cells"]
    unsafe = sorted(cells.loc[cells["status"] == "unsafe", ["r1", "r2"]].agg("/".join, axis=1))
    assert unsafe == ["800/20", "900/20"]
    assert res.value == 0.5
    assert res.details["operator"] == "unsafe when 0 < contributors < 3"


def test_weights_example():
    # Manual p.90-91: 100 (weight 4) and 10 (weight 7): cell value 4·100 + 7·10 = 470; the two
    # largest "contributors" are 100 and 100, weighted top-2 = 200; weighted count 11.
    df = one_cell([100.0, 10.0], w=[4.0, 7.0])
    res = run(Dominance({"cells": ["c"], "magnitude": "v", "weight": "w", "n": 2, "k": 43}), df)
    row = res.details["cells"].iloc[0]
    assert row["total"] == 470
    assert row["top2_share"] * 470 == pytest.approx(200)
    assert row["top1_share"] * 470 == pytest.approx(100)
    assert row["contributors"] == 11
    # 200/470 = 42.55 %: safe at k = 43, unsafe at k = 42.
    assert res.value == 0.0
    assert run(Dominance({"cells": ["c"], "magnitude": "v", "weight": "w", "n": 2, "k": 42}),
               df).value == 1.0
    unweighted = run(Threshold({"cells": ["c"], "weight": "w", "min_contributors": 3,
                                "frequency": "unweighted"}), df)
    assert unweighted.value == 1.0  # 2 records < 3, although Σw = 11


def test_fractional_weights_fill_units():
    # 100 (w 0.5), 50 (w 0.5), 10 (w 3): unit 1 = 0.5·100 + 0.5·50 = 75; unit 2 = 10 → T(2) = 85.
    top = top_units(np.zeros(3, dtype=np.int64), np.array([10.0, 100.0, 50.0]),
                    np.array([3.0, 0.5, 0.5]), 1, 2)
    assert top[0].tolist() == [75.0, 85.0]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 50), st.integers(1, 4)),
                min_size=1, max_size=40),
       st.integers(1, 4))
def test_integer_weights_equal_replicated_records(rows, depth):
    # Brute force: replicate each record w times; T(j) = sum of the j largest replicas.
    cell = np.array([r[0] for r in rows], dtype=np.int64)
    value = np.array([r[1] for r in rows], dtype=np.float64)
    weight = np.array([r[2] for r in rows], dtype=np.float64)
    top = top_units(cell, value, weight, 5, depth)
    for c in range(5):
        reps = sorted((v for v, w, cc in zip(value, weight, cell, strict=True) if cc == c
                       for _ in range(int(w))), reverse=True)
        expected = [sum(reps[:j]) for j in range(1, depth + 1)]
        assert top[c].tolist() == pytest.approx(expected)


# -- boundary cases of each rule -----------------------------------------------------------------


@pytest.mark.parametrize(("values", "expected"), [
    ([75.0, 25.0], "safe"),     # 75 = 0.75·100: equality is safe
    ([76.0, 24.0], "unsafe"),   # 76 > 75
    ([74.0, 26.0], "safe"),     # 74 < 75
    ([100.0], "unsafe"),        # a single contributor holds 100 %
])
def test_dominance_boundary(values, expected):
    res = run(Dominance({"cells": ["c"], "magnitude": "v"}), one_cell(values))
    assert status(res) == [expected]


@pytest.mark.parametrize(("values", "expected"), [
    ([50.0, 30.0, 20.0], "safe"),    # n=2: 80 = 0.8·100
    ([50.0, 31.0, 19.0], "unsafe"),  # 81 > 80
    ([50.0, 29.0, 21.0], "safe"),    # 79 < 80
])
def test_dominance_n2_boundary(values, expected):
    res = run(Dominance({"cells": ["c"], "magnitude": "v", "n": 2, "k": 80}), one_cell(values))
    assert status(res) == [expected]


def test_dominance_with_min_contributors():
    df = pd.DataFrame({"c": ["A", "A", "B", "B", "B"], "v": [50.0, 50.0, 10.0, 10.0, 10.0]})
    res = run(Dominance({"cells": ["c"], "magnitude": "v", "k": 75, "min_contributors": 3}), df)
    # A: 50 % is not dominant, but 2 < 3 contributors; B: 3 contributors, 33 %.
    assert status(res) == ["unsafe", "safe"]
    assert res.details["cells"]["reason"].tolist() == ["freq(<3)", ""]


@pytest.mark.parametrize(("values", "expected"), [
    ([100.0, 50.0, 10.0], "safe"),    # X − x1 − x2 = 10 = 0.1·100: equality is safe
    ([100.0, 50.0, 9.5], "unsafe"),   # 9.5 < 10
    ([100.0, 50.0, 10.5], "safe"),    # 10.5 > 10
    ([100.0, 50.0], "unsafe"),        # two contributors: x2's owner learns x1 exactly
])
def test_ppercent_boundary(values, expected):
    res = run(PPercent({"cells": ["c"], "magnitude": "v", "p": 10}), one_cell(values))
    assert status(res) == [expected]


@pytest.mark.parametrize(("values", "expected"), [
    ([100.0, 60.0, 50.0, 50.0], "safe"),    # n=2: X − (100+60+50) = 50 = 0.5·100
    ([100.0, 60.0, 50.0, 49.0], "unsafe"),  # 49 < 50
    ([100.0, 60.0, 50.0, 51.0], "safe"),    # 51 > 50
])
def test_pqrule_boundary(values, expected):
    res = run(PQRule({"cells": ["c"], "magnitude": "v", "p": 25, "q": 50, "n": 2}),
              one_cell(values))
    assert status(res) == [expected]


def test_pq_equals_p_percent_with_q_100():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"c": rng.integers(0, 30, 400), "v": rng.lognormal(2, 1.5, 400)})
    a = run(PPercent({"cells": ["c"], "magnitude": "v", "p": 30, "n": 2}), df)
    b = run(PQRule({"cells": ["c"], "magnitude": "v", "p": 30, "q": 100, "n": 2}), df)
    assert a.value == b.value
    assert status(a) == status(b)


@pytest.mark.parametrize(("count", "expected"), [(2, "unsafe"), (3, "safe"), (4, "safe")])
def test_threshold_boundary(count, expected):
    res = run(Threshold({"cells": ["c"], "min_contributors": 3}), one_cell([1.0] * count))
    assert status(res) == [expected]


# -- ready tables --------------------------------------------------------------------------------


def sdctable_cells() -> pd.DataFrame:
    """Cells 6 and 14 of sdcTable's microdata1 fixture (anchors §2, derived) and cell 13."""
    return pd.DataFrame({
        "region": ["A", "D", "D", "B"], "gender": ["female", "male", "total", "male"],
        "freq": [2, 11, 30, 0], "val": [20.0, 366.0, 518.0, 0.0],
        "top1": [11.0, 280.0, 280.0, np.nan], "top2": [9.0, 11.0, 18.0, np.nan],
        "top3": [np.nan, 10.0, 11.0, np.nan]})


def sdc_table(**overrides) -> Table:
    opts = {"keys": ["region", "gender"], "count": "freq", "total": "val",
            "contributions": ["top1", "top2", "top3"], **overrides}
    return Table(sdctable_cells(), **opts)


def test_table_nk_boundary_from_sdctable_fixture():
    # Cell 14 (D/male): top-2 = 291 of 366 = 79.5 %: unsafe at (2,75), safe at (2,80).
    # Cell 6: 20 of 20 = 100 %. Cell 13 (D/total): 298/518 = 57.5 %. B/male is empty.
    at75 = run(Dominance({"n": 2, "k": 75}), sdc_table())
    at80 = run(Dominance({"n": 2, "k": 80}), sdc_table())
    assert status(at75) == ["unsafe", "unsafe", "safe", "empty"]
    assert status(at80) == ["unsafe", "safe", "safe", "empty"]
    assert at75.value == pytest.approx(2 / 3)
    assert at75.details["keys"] == ["region", "gender"]
    assert at75.details["n_empty"] == 1 and at75.details["n_nonempty"] == 3
    # unsafe magnitude share: (20 + 366) / (20 + 366 + 518)
    assert at75.details["unsafe_magnitude_share"] == pytest.approx(386 / 904)


def test_table_p_rule_from_sdctable_fixture():
    # p = 70: cell 14 gap 366 − 291 = 75 < 0.7·280 = 196 (unsafe); cell 6 gap 0 (unsafe);
    # cell 13 gap 518 − 298 = 220 >= 196 (safe).
    res = run(PPercent({"p": 70}), sdc_table())
    assert status(res) == ["unsafe", "unsafe", "safe", "empty"]
    # anchors: under P(70,1) cell 14's upper protection level is 196 − 75 = 121; cell 6:
    # 0.7·11 − 0 = 7.7; safe and empty cells have none.
    prot = res.details["cells"]["protection_level"].tolist()
    assert prot[:2] == pytest.approx([7.7, 121.0]) and np.isnan(prot[2:]).all()
    # (2,75): 100·291/75 − 366 = 22 for cell 14; 100·20/75 − 20 = 6.67 for cell 6.
    nk = run(Dominance({"n": 2, "k": 75}), sdc_table()).details["cells"]["protection_level"]
    assert nk.tolist()[:2] == pytest.approx([100 * 20 / 75 - 20, 22.0])
    # pq = (60, 80): ratio 0.75: 0.75·280 = 210 > 75 (unsafe); cell 13: 220 >= 210 (safe).
    assert status(run(PQRule({"p": 60, "q": 80}), sdc_table())) == status(res)


def test_table_roles_from_params_and_conflicts():
    frame = sdctable_cells()
    table = Table(frame)
    params = {"cells": ["region", "gender"], "count_column": "freq", "total_column": "val",
              "contribution_columns": ["top1", "top2"], "n": 2, "k": 75}
    assert status(run(Dominance(params), table)) == ["unsafe", "unsafe", "safe", "empty"]
    with pytest.raises(DataError, match="'count' load option is 'freq' but the param"):
        run(Dominance({"count_column": "val"}), sdc_table())
    with pytest.raises(DataError, match=r"needs the 3 largest contributions.*gives 2"):
        run(PPercent({"n": 2}), sdc_table(contributions=["top1", "top2"]))
    with pytest.raises(DataError, match="'magnitude' applies to microdata only"):
        run(Dominance({"magnitude": "val"}), sdc_table())
    with pytest.raises(DataError, match=r"not unique: data row 2 "):
        run(Threshold(), Table(pd.concat([frame.iloc[:1], frame.iloc[:1]]),
                               keys=["region", "gender"], count="freq"))


def test_table_contributions_are_validated():
    frame = sdctable_cells()

    def table(f):
        return Table(f, keys=["region", "gender"], count="freq", total="val",
                     contributions=["top1", "top2", "top3"])

    # A/female has 2 contributors, so its missing 3rd largest is 0 (top-3 = top-2 = 20/20);
    # D/male has 11: without its 2nd largest, 0 would understate its top-2 share.
    assert run(Dominance({"n": 3}), table(frame)).details["cells"]["top3_share"][0] == 1.0
    gap = frame.copy()
    gap.loc[1, "top2"] = np.nan
    with pytest.raises(DataError, match=r"'top2' \(the 2\. largest\) is missing at data row 2 "
                                        r".*, whose cell has 11 contributors"):
        run(Dominance({"n": 2}), table(gap))
    text = frame.astype({"top1": object})
    text.loc[2, "top1"] = "n/a"
    with pytest.raises(DataError, match=r"'top1' must be numeric: data row 3 .* holds 'n/a'"):
        run(PPercent(), table(text))
    over = frame.copy()
    over.loc[1, "top1"] = 400.0  # 400 + 11 + 10 = 421 > 366
    with pytest.raises(DataError, match=r"of data row 2 .* sum to 421, more than the cell "
                                        r"total 366 \('val'\)"):
        run(Dominance(), table(over))
    negative = frame.copy()
    negative.loc[3, "freq"] = -2
    with pytest.raises(DataError,
                       match=r"count column 'freq' must be >= 0: data row 4 .* holds -2\.0"):
        run(Threshold(), table(negative))


def test_sensitivity_rules_on_a_ready_table():
    # Only the ready table (no microdata): nk(2,75), p(70) and freq(<3), reasons per cell.
    # A/female: 20/20 > 75 %; gap 0 < 0.7·11; 2 < 3. D/male: 291/366 = 79.5 % > 75 %;
    # gap 75 < 196. D/total: 298/518 = 57.5 %; gap 220 >= 196; 30 >= 3. B/male: empty.
    res = run(SensitivityRules({"rules": [{"rule": "nk", "n": 2, "k": 75}, {"rule": "p", "p": 70},
                                          {"rule": "freq", "min_contributors": 3}]}), sdc_table())
    assert res.details["cells"]["reason"].tolist() == [
        "nk(2,75); p(70,n=1); freq(<3)", "nk(2,75); p(70,n=1)", "", "empty"]
    assert res.value == pytest.approx(2 / 3)
    # holdings cannot be formed from a table
    with pytest.raises(DataError, match="'contributor' applies to microdata only"):
        run(SensitivityRules({"rules": [{"rule": "nk", "n": 1, "k": 75, "level": "holding"}],
                              "contributor": "h"}), sdc_table())


def test_table_threshold_needs_no_magnitude():
    res = run(Threshold({"min_contributors": 3}), Table(sdctable_cells(),
                                                        keys=["region", "gender"], count="freq"))
    assert status(res) == ["unsafe", "safe", "safe", "empty"]
    assert "total" not in res.details["cells"].columns


# -- against a brute-force implementation -------------------------------------------------------


def brute_force(df, cells, holding=None):
    """Per cell: sorted contributions (holdings summed first), as plain Python lists."""
    out = {}
    for key, grp in df.groupby(cells, sort=False):
        vals = (grp.groupby(holding)["v"].sum() if holding else grp["v"]).tolist()
        out[key if isinstance(key, tuple) else (key,)] = sorted(vals, reverse=True)
    return out


def brute_unsafe(vals, rule, **kw):
    total = sum(vals)
    top = vals + [0.0] * 5
    # integer values and params: compare cross-multiplied, exactly (0.7·360 is not 252 in floats)
    if rule == "nk":
        return 100 * sum(top[: kw["n"]]) > kw["k"] * total
    if rule == "p":
        return kw.get("q", 100) * (total - sum(top[: kw["n"] + 1])) < kw["p"] * top[0]
    return len(vals) < kw["m"]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.booleans())
def test_rules_match_brute_force(seed, use_holding):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 120))
    df = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.choice(["x", "y", "z"], n),
                       "v": rng.integers(0, 100, n).astype(float), "h": rng.integers(0, 8, n)})
    holding = "h" if use_holding else None
    base = {"cells": ["a", "b"], "magnitude": "v", "contributor": holding}
    truth = brute_force(df, ["a", "b"], holding)
    checks = [(Dominance({**base, "n": 2, "k": 70}), "nk", {"n": 2, "k": 70}),
              (PPercent({**base, "p": 15, "n": 1}), "p", {"p": 15, "n": 1}),
              (PQRule({**base, "p": 20, "q": 60, "n": 2}), "p", {"p": 20, "q": 60, "n": 2}),
              (Threshold({**base, "min_contributors": 3}), "freq", {"m": 3})]
    for measure, rule, kw in checks:
        res = run(measure, df)
        cells = res.details["cells"]
        got = {(a, b): s == "unsafe" for a, b, s in zip(cells["a"], cells["b"], cells["status"],
                                                         strict=True)}
        want = {k: brute_unsafe(v, rule, **kw) for k, v in truth.items()}
        assert got == want, measure.name
        assert res.value == pytest.approx(sum(want.values()) / len(want))


def test_margins_match_brute_force():
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"a": rng.integers(0, 3, 200), "b": rng.integers(0, 3, 200),
                       "v": rng.lognormal(2, 1, 200)})
    res = run(Dominance({"cells": ["a", "b"], "magnitude": "v", "n": 1, "k": 30,
                         "totals": True, "max_rows": None}), df)
    cells = res.details["cells"]
    assert len(cells) == 9 + 3 + 3 + 1
    for _, row in cells.iterrows():
        sub = df
        for col in ("a", "b"):
            if row[col] != "Total":
                sub = sub[sub[col] == row[col]]
        assert row["total"] == pytest.approx(sub["v"].sum())
        assert row["top1_share"] == pytest.approx(sub["v"].max() / sub["v"].sum())
        assert (row["status"] == "unsafe") == (sub["v"].max() > 0.3 * sub["v"].sum())
    grand = cells[(cells["a"] == "Total") & (cells["b"] == "Total")].iloc[0]
    assert grand["contributors"] == 200


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31))
def test_rule_value_invariant_to_row_order(seed):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 5, 80), "v": rng.integers(1, 50, 80).astype(float)})
    shuffled = df.sample(frac=1.0, random_state=int(seed % 1000)).reset_index(drop=True)
    m = SensitivityRules({"cells": ["a"], "magnitude": "v",
                          "rules": [{"rule": "nk", "n": 2, "k": 60}, {"rule": "p", "p": 20}]})
    assert run(m, df).value == run(m, shuffled).value


# -- SensitivityRules ----------------------------------------------------------------------------


def test_sensitivity_rules_reasons_and_levels():
    m = SensitivityRules({"cells": ["r1", "r2"], "magnitude": "v", "contributor": "holding",
                          "rules": [{"rule": "p", "p": 10, "level": "record"},
                                    {"rule": "p", "p": 10},
                                    {"rule": "freq", "min_contributors": 3},
                                    {"rule": "nk", "n": 1, "k": 75}]})
    res = run(m, HOLDINGS)
    reasons = dict(zip(res.details["cells"]["r1"] + "/" + res.details["cells"]["r2"],
                       res.details["cells"]["reason"], strict=True))
    # 800/20: holdings 1187, 644 (2 holdings: p fails, gap 0; 1187/1831 = 64.8 % <= 75).
    # 900/20: holdings 23, 130 (2 holdings; 130/153 = 85 % > 75).
    # 900/30: holding p fails (above); 900/1010 = 89 % > 75. 800/30: holdings 1 (355), 2 (433),
    # 3 (666): gap 1454 − 1099 = 355 >= 66.6; 666/1454 = 46 %: safe.
    assert reasons == {
        "800/20": "holding:p(10,n=1); holding:freq(<3)",
        "800/30": "",
        "900/20": "holding:p(10,n=1); holding:freq(<3); holding:nk(1,75)",
        "900/30": "holding:p(10,n=1); holding:nk(1,75)",
    }
    assert res.details["unsafe_by_rule"] == {"p(10,n=1)": 0, "holding:p(10,n=1)": 3,
                                             "holding:freq(<3)": 2, "holding:nk(1,75)": 2}
    assert res.value == 0.75
    cells = res.details["cells"]
    # 900/20 protection: max(p: 0.1·130 − (153 − 153) = 13, nk: 100·130/75 − 153 = 20.33)
    assert cells["protection_level"].iloc[2] == pytest.approx(100 * 130 / 75 - 153)
    assert cells["records"].tolist() == [4, 4, 4, 5]
    assert cells["holdings"].tolist() == [2, 3, 2, 4]


def test_sensitivity_rules_holding_level_needs_contributor():
    m = SensitivityRules({"cells": ["r1"], "magnitude": "v",
                          "rules": [{"rule": "nk", "n": 1, "k": 75, "level": "holding"}]})
    with pytest.raises(DataError, match=r"rules\[0\]: level 'holding' needs"):
        run(m, HOLDINGS)


def test_max_rows_keeps_unsafe_cells_and_exact_counts():
    df = pd.DataFrame({"c": np.repeat(np.arange(10), [1, 5, 5, 1, 5, 5, 5, 5, 5, 1]),
                       "v": 1.0})
    res = run(Threshold({"cells": ["c"], "min_contributors": 2, "max_rows": 2}), df)
    assert res.value == pytest.approx(3 / 10)
    assert res.details["n_unsafe"] == 3 and res.details["cells_truncated"]
    assert res.details["cells"]["c"].tolist() == [0, 3]


# -- negative values and bad input ---------------------------------------------------------------


def test_negative_values_error_names_rows_and_cells():
    df = pd.DataFrame({"c": ["A", "A", "B", "C"], "v": [5.0, -1.0, -2.0, 3.0]})
    with pytest.raises(DataError,
                       match=r"2 negative values in 2 cells \(first at data row 2 .*\): -1\.0"):
        run(Dominance({"cells": ["c"], "magnitude": "v"}), df)


def test_negative_absolute_mirrors_positive():
    # All-negative cell −700, −200, −60, −40, −10 behaves as its mirror under "absolute":
    # |X| = 1010, gap 110 >= 70: safe (tau-Argus's signed total would flag it).
    neg = one_cell([-700.0, -200.0, -60.0, -40.0, -10.0])
    pos = one_cell([700.0, 200.0, 60.0, 40.0, 10.0])
    m = PPercent({"cells": ["c"], "magnitude": "v", "p": 10, "negative": "absolute"})
    a, b = run(m, neg), run(m, pos)
    assert status(a) == status(b) == ["safe"]
    assert a.details["cells"]["total"].tolist() == [-1010.0]
    assert a.details["cells"]["top1_share"].tolist() == pytest.approx([700 / 1010])


def test_missing_column_is_named():
    with pytest.raises(DataError, match="'turnover' not in the microdata"):
        run(Dominance({"cells": ["c"], "magnitude": "turnover"}), one_cell([1.0]))
    with pytest.raises(DataError, match="'region' not in the microdata"):
        run(Threshold({"cells": ["region"]}), one_cell([1.0]))


def test_non_numeric_magnitude_names_first_row():
    df = pd.DataFrame({"c": ["A", "A", "A"], "v": ["1", "x", "y"]})
    with pytest.raises(DataError, match=r"'v' must be numeric: data row 2 .*'x'.*\(2 such rows\)"):
        run(Dominance({"cells": ["c"], "magnitude": "v"}), df)
    df = pd.DataFrame({"c": ["A", "A"], "v": [1.0, np.nan]})
    with pytest.raises(DataError, match=r"data row 2 .* missing"):
        run(PPercent({"cells": ["c"], "magnitude": "v"}), df)


@pytest.mark.parametrize(("cls", "params", "field"), [
    (PPercent, {"p": 0}, "p"), (PPercent, {"p": 100}, "p"), (PPercent, {"n": 0}, "n"),
    (PQRule, {"p": 60, "q": 50}, "q"), (PQRule, {"p": 50, "q": 50}, "q"),
    (PQRule, {"p": 110, "q": 120}, "p"), (PQRule, {"p": 10, "q": 180}, "q"),
    (Dominance, {"k": 0}, "k"), (Dominance, {"k": 100.5}, "k"), (Dominance, {"n": 0}, "n"),
    (Threshold, {"min_contributors": 0}, "min_contributors"),
])
def test_param_validation(cls, params, field):
    with pytest.raises(ValidationError) as err:
        cls(params)
    assert field in str(err.value)
    with pytest.raises(ConfigError, match=r"measures\[0\]\.params"):
        evaluate(one_cell([1.0]), None, [{"name": cls.name, "params": params}])


def test_repeated_spanning_variable_is_a_validation_error():
    for cls in (Dominance, EntropyRisk, HellingerDistance):
        with pytest.raises(ValidationError, match=r"spanning variables repeat \['a'\]"):
            cls({"cells": ["a", "a"]})


def test_sensitivity_rules_spec_validation():
    with pytest.raises(ConfigError, match=r"rules\[0\]\.pq"):
        evaluate(one_cell([1.0]), None, [{"name": "SensitivityRules", "params": {
            "cells": ["c"], "rules": [{"rule": "pq", "p": 50, "q": 40}]}}])
    with pytest.raises(ConfigError, match=r"rules\[0\]"):
        evaluate(one_cell([1.0]), None, [{"name": "SensitivityRules", "params": {
            "cells": ["c"], "rules": [{"rule": "zz"}]}}])


def test_weights_and_contributor_conflict():
    df = one_cell([1.0, 2.0], w=[1.0, 2.0], h=[1, 2])
    with pytest.raises(DataError, match="'weight' and 'contributor' cannot be combined"):
        run(Dominance({"cells": ["c"], "magnitude": "v", "weight": "w", "contributor": "h"}), df)


def test_rules_through_public_api():
    report = evaluate(HOLDINGS, None, [
        {"name": "Dominance", "params": {"cells": ["r1", "r2"], "magnitude": "v"}},
        {"name": "PPercent", "params": {"cells": ["r1", "r2"], "magnitude": "v",
                                        "contributor": "holding"}},
        {"name": "PQRule", "params": {"cells": ["r1", "r2"], "magnitude": "v"}},
        {"name": "Threshold", "params": {"cells": ["r1", "r2"], "contributor": "holding"}},
        {"name": "SensitivityRules", "params": {"cells": ["r1", "r2"], "magnitude": "v"}},
    ])
    values = {m.name: m.value for m in report.measures}
    assert all(m.error is None for m in report.measures)
    # Dominance (1,75) by record: shares 644/1831, 433/1454, 53/153, 700/1010 (69 %): none.
    assert values["Dominance"] == 0.0
    assert values["PPercent"] == 0.75
    assert values["Threshold"] == 0.5
    # the per-cell table reaches the JSON report as one object per cell
    cells = json.loads(report.to_json())["measures"][1]["details"]["cells"]
    assert cells[3] == {"r1": "900", "r2": "30", "contributors": 4.0, "total": 1010.0,
                        "top1_share": pytest.approx(900 / 1010),
                        "top2_share": pytest.approx(960 / 1010),
                        # tau-Argus upper protection level: 0.1·900 − (1010 − 960) = 40
                        "protection_level": pytest.approx(40.0),
                        "status": "unsafe", "reason": "holding:p(10,n=1)"}


def test_table_kind_through_public_api():
    report = evaluate(sdctable_cells(), None, [
        {"name": "PPercent", "params": {"p": 70, "cells": ["region", "gender"],
                                        "count_column": "freq", "total_column": "val",
                                        "contribution_columns": ["top1", "top2"]}}],
        data_kind="table")
    assert report.measures[0].error is None
    assert report.measures[0].value == pytest.approx(2 / 3)


# -- EntropyRisk ---------------------------------------------------------------------------------


def freq_table(counts) -> Table:
    return Table(pd.DataFrame({"cell": range(len(counts)), "n": counts}), keys=["cell"],
                 count="n")


def test_entropy_uniform_and_concentrated():
    assert run(EntropyRisk(), freq_table([5, 5, 5, 5])).value == pytest.approx(0.0)
    assert run(EntropyRisk(), freq_table([20, 0, 0, 0])).value == 1.0
    assert run(EntropyRisk(), freq_table([7])).value == 1.0  # K = 1


def test_entropy_hand_worked():
    # counts (2,1,1,0): N = 4, H = −(½ ln ½ + 2·¼ ln ¼) = 1.5 ln 2, K = 4: 1 − 1.5/2 = 0.25.
    res = run(EntropyRisk(), freq_table([2, 1, 1, 0]))
    assert res.value == pytest.approx(0.25)
    d = res.details
    assert d["entropy"] == pytest.approx(1.5 * math.log(2))
    assert (d["zero_cells"], d["cells_of_size_1"], d["cells_of_size_2"]) == (1, 2, 1)
    # combined: ⅓·(1/4) + ⅓·0.25 + ⅓·(1 + ½ ln 4)/√4 = ⅓·(0.5 + (1 + ln 2)/2)
    assert d["combined"] == pytest.approx((0.5 + (1 + math.log(2)) / 2) / 3)
    # units: counts (3,1,0): N = 4, H = −(¾ ln ¾ + ¼ ln ¼); normalizer ln 4 (vs ln 3 for cells).
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert run(EntropyRisk({"normalize": "units"}), freq_table([3, 1, 0])).value == \
        pytest.approx(1 - h / math.log(4))
    assert run(EntropyRisk(), freq_table([3, 1, 0])).value == pytest.approx(1 - h / math.log(3))
    weighted = run(EntropyRisk({"weights": [1, 0, 0]}), freq_table([3, 1, 0]))
    assert weighted.details["combined"] == pytest.approx(1 / 3)
    # population term −(1/√N)·log(1/(e·√N)): 1 at N = 1; (1 + ½ ln 100)/10 at N = 100.
    only_n = {"weights": [0, 0, 1]}
    assert run(EntropyRisk(only_n), freq_table([1, 0])).details["combined"] == pytest.approx(1.0)
    assert run(EntropyRisk(only_n), freq_table([60, 40])).details["combined"] == \
        pytest.approx((1 + 0.5 * math.log(100)) / 10)


def test_entropy_microdata_product_grid_counts_zero_cells():
    # Observed cells (x,1) ×2 and (y,2): K = 2·2 = 4 with 2 zero cells; "observed": K = 2.
    df = pd.DataFrame({"a": ["x", "x", "y"], "b": [1, 1, 2]})
    h = -(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3))
    prod = run(EntropyRisk({"cells": ["a", "b"]}), df)
    assert prod.details["n_cells"] == 4 and prod.details["zero_cells"] == 2
    assert prod.value == pytest.approx(1 - h / math.log(4))
    obs = run(EntropyRisk({"cells": ["a", "b"], "grid": "observed"}), df)
    assert obs.value == pytest.approx(1 - h / math.log(2))
    cat = df.assign(a=pd.Categorical(df["a"], categories=["x", "y", "z"]))
    assert run(EntropyRisk({"cells": ["a", "b"]}), cat).details["n_cells"] == 6


def test_entropy_rises_as_cells_are_zeroed():
    values = [run(EntropyRisk(), freq_table([4] * (8 - z) + [0] * z)).value for z in range(8)]
    assert values[0] == pytest.approx(0.0)
    assert all(b > a for a, b in itertools.pairwise(values))
    assert values[-1] == 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=25).filter(lambda c: sum(c) > 0),
       st.sampled_from(["cells", "units"]))
def test_entropy_bounded(counts, normalize):
    res = run(EntropyRisk({"normalize": normalize}), freq_table(counts))
    assert 0.0 <= res.value <= 1.0
    assert 0.0 <= res.details["combined"] <= 1.0 + 1e-12


def test_entropy_bad_input():
    with pytest.raises(ValidationError, match="sum to 1"):
        EntropyRisk({"weights": [0.5, 0.5, 0.5]})
    with pytest.raises(DataError, match="no units"):
        run(EntropyRisk(), freq_table([0, 0]))
    with pytest.raises(DataError, match=r"counts must be >= 0; data row 2 "):
        run(EntropyRisk(), freq_table([1, -1]))
    with pytest.raises(DataError, match="'cells'"):
        run(EntropyRisk(), pd.DataFrame({"a": [1]}))


# -- loss measures -------------------------------------------------------------------------------


def pair(f, g):
    return freq_table(f), freq_table(g)


def loss(measure, f, g):
    a, b = pair(f, g)
    return measure.compute(a, b, CTX)


def test_loss_zero_for_identical_tables():
    counts = [3, 0, 5, 2, 7, 1]
    assert loss(HellingerDistance(), counts, counts).value == 0.0
    assert loss(RelativeAbsoluteDistance(), counts, counts).value == 0.0
    df = pd.DataFrame({"a": [0, 0, 1, 1, 1, 2], "b": [0, 1, 0, 1, 1, 0]})
    for change in ("relative", "absolute"):
        res = run(CramersVChange({"cells": ["a", "b"], "change": change}), df, df)
        assert res.value == 0.0


def test_hellinger_hand_worked():
    # f = 1..6, g = (0,3,3,3,6,6): HD² = ½[(1−0)² + (√2−√3)² + 0 + (2−√3)² + (√5−√6)² + 0].
    s = 0.5 * (1 + (math.sqrt(2) - math.sqrt(3)) ** 2 + (2 - math.sqrt(3)) ** 2
               + (math.sqrt(5) - math.sqrt(6)) ** 2)
    res = loss(HellingerDistance(), [1, 2, 3, 4, 5, 6], [0, 3, 3, 3, 6, 6])
    assert res.value == pytest.approx(math.sqrt(s))
    assert res.details["utility"] == pytest.approx(1 - math.sqrt(s) / math.sqrt(21))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=20))
def test_hellinger_symmetric_and_bounded(cells):
    f, g = [c[0] for c in cells], [c[1] for c in cells]
    ab, ba = loss(HellingerDistance(), f, g), loss(HellingerDistance(), g, f)
    assert ab.value == pytest.approx(ba.value)
    if sum(f) and sum(g):
        assert 0.0 <= ab.details["hd_proportions"] <= 1.0 + 1e-12


def test_relative_absolute_distance_hand_worked_and_asymmetric():
    # RAD(A) = Σ_c |T1(c) − T0(c)| / T0(c), a sum (ESSnet SDC handbook §4.7).
    # f = (10,5,0,4), g = (12,5,3,0): cells with f > 0: 2/10 + 0/5 + 4/4 = 1.2; mean 0.4.
    res = loss(RelativeAbsoluteDistance(), [10, 5, 0, 4], [12, 5, 3, 0])
    assert res.value == pytest.approx(1.2)
    d = res.details
    assert (d["false_zeros"], d["false_nonzeros"], d["false_nonzeros_absolute"]) == (1, 1, 3)
    assert d["mean"] == pytest.approx(0.4) and d["cells_used"] == 3
    # handbook AD(A) over all 4 aligned cells: (2 + 0 + 3 + 4) / 4
    assert d["mean_absolute_distance"] == pytest.approx(9 / 4)
    assert loss(RelativeAbsoluteDistance({"aggregate": "mean"}), [10, 5, 0, 4],
                [12, 5, 3, 0]).value == pytest.approx(0.4)
    # swapped: 2/12 + 0 + 3/3 = 7/6 (≠ 1.2) over 3 cells = 7/18 (≠ 0.4): RAD is not symmetric.
    assert loss(RelativeAbsoluteDistance({"aggregate": "mean"}), [12, 5, 3, 0],
                [10, 5, 0, 4]).value == pytest.approx(7 / 18)
    assert loss(RelativeAbsoluteDistance(), [12, 5, 3, 0], [10, 5, 0, 4]).value == \
        pytest.approx(7 / 6)
    # no original non-zero cell: undefined, with a warning
    empty = loss(RelativeAbsoluteDistance(), [0, 0], [1, 0])
    assert empty.value is None and "no non-zero cell" in empty.warnings[0]


def test_loss_aligns_missing_cells_as_zero():
    # microdata: the anonymized side lacks cell (1, 1) and adds (2, 0).
    orig = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1]})
    anon = pd.DataFrame({"a": [0, 0, 1, 2], "b": [0, 1, 0, 0]})
    res = run(HellingerDistance({"cells": ["a", "b"]}), orig, anon)
    # two cells differ 1 vs 0: HD = sqrt(½·2) = 1.
    assert res.value == pytest.approx(1.0)
    rad = run(RelativeAbsoluteDistance({"cells": ["a", "b"], "aggregate": "mean"}), orig, anon)
    assert rad.value == pytest.approx(0.25) and rad.details["false_nonzeros"] == 1
    # sum: cell (1, 1) lost its one unit: 1/1 over the 4 original cells
    assert run(RelativeAbsoluteDistance({"cells": ["a", "b"]}), orig, anon).value == 1.0


def test_cramers_v_hand_worked_and_scipy():
    # [[10,0],[0,10]]: V = 1; [[5,5],[5,5]]: V = 0. Relative change 100 %, absolute 1.
    def table(counts):
        return Table(pd.DataFrame({"r": [0, 0, 1, 1], "c": [0, 1, 0, 1], "n": counts}),
                     keys=["r", "c"], count="n")
    a, b = table([10, 0, 0, 10]), table([5, 5, 5, 5])
    rel = CramersVChange().compute(a, b, CTX)
    assert rel.details["cramers_v_original"] == pytest.approx(1.0)
    assert rel.value == pytest.approx(100.0) and rel.details["rcv_percent"] == pytest.approx(-100)
    assert CramersVChange({"change": "absolute"}).compute(a, b, CTX).value == pytest.approx(1.0)
    # against scipy on a 3×4 table
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": rng.integers(0, 3, 300), "y": rng.integers(0, 4, 300)})
    df.loc[df.index[:100], "y"] = df["x"][:100]
    pert = df.sample(frac=0.8, random_state=1)
    res = run(CramersVChange({"cells": ["x", "y"], "change": "absolute"}), df, pert)
    v_o = association(pd.crosstab(df["x"], df["y"]).to_numpy(), method="cramer")
    v_p = association(pd.crosstab(pert["x"], pert["y"]).to_numpy(), method="cramer")
    assert res.details["cramers_v_original"] == pytest.approx(v_o)
    assert res.details["cramers_v_anonymized"] == pytest.approx(v_p)
    assert res.value == pytest.approx(abs(v_p - v_o))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 15), min_size=6, max_size=6),
       st.lists(st.integers(0, 15), min_size=6, max_size=6))
def test_cramers_v_absolute_change_symmetric(f, g):
    def table(counts):
        return Table(pd.DataFrame({"r": [0, 0, 0, 1, 1, 1], "c": [0, 1, 2, 0, 1, 2],
                                   "n": counts}), keys=["r", "c"], count="n")
    m = CramersVChange({"change": "absolute"})
    ab, ba = m.compute(table(f), table(g), CTX).value, m.compute(table(g), table(f), CTX).value
    assert (ab is None and ba is None) or ab == pytest.approx(ba)


def test_cramers_v_marginalises_extra_variables_and_needs_two():
    df = pd.DataFrame({"a": [0, 0, 1, 1, 1], "b": [0, 0, 1, 1, 0], "c": [0, 1, 0, 1, 1]})
    pert = df.assign(c=0)  # only the summed-over variable changes
    res = run(CramersVChange({"cells": ["a", "b", "c"], "variables": ["a", "b"]}), df, pert)
    assert res.details["cramers_v_original"] > 0
    assert res.value == 0.0
    with pytest.raises(DataError, match="needs two of the spanning variables"):
        run(CramersVChange({"cells": ["a", "b", "c"]}), df, df)


def test_loss_through_public_api():
    orig = pd.DataFrame({"a": [0, 0, 1, 1, 1], "b": [0, 1, 0, 1, 1]})
    anon = pd.DataFrame({"a": [0, 1, 1, 1, 1], "b": [0, 1, 0, 1, 1]})
    report = evaluate(orig, anon, [
        {"name": n, "params": {"cells": ["a", "b"]}}
        for n in ("HellingerDistance", "RelativeAbsoluteDistance", "CramersVChange")])
    assert all(m.error is None for m in report.measures), [m.error for m in report.measures]
    # cells (0,0),(0,1),(1,0),(1,1): f = 1,1,1,2; g = 1,0,1,3.
    hd = math.sqrt(0.5 * (1 + (math.sqrt(2) - math.sqrt(3)) ** 2))
    assert report.measures[0].value == pytest.approx(hd)
    # RAD (sum): 0/1 + 1/1 + 0/1 + 1/2 = 1.5
    assert report.measures[1].value == pytest.approx(1 + 0.5)
    missing = evaluate(orig, anon, [{"name": "HellingerDistance", "params": {"cells": ["zz"]}}])
    assert "'zz'" in missing.measures[0].error


def test_table_bad_input():
    with pytest.raises(DataError, match="key column 'zz' not in the table"):
        run(Threshold({"cells": ["zz"], "count_column": "n"}),
            Table(pd.DataFrame({"a": [1], "n": [2]})))
    with pytest.raises(DataError, match="'totals' applies to microdata only"):
        run(Dominance({"totals": True}), sdc_table())
    frame = sdctable_cells()
    frame.loc[1, "top2"] = -11.0
    with pytest.raises(DataError, match=r"negative totals or contributions in 1 cells \(first "
                                        r"at data row 2 \(1-based"):
        run(Dominance({"n": 2}), Table(frame, keys=["region", "gender"], count="freq",
                                       total="val", contributions=["top1", "top2", "top3"]))


def test_empty_microdata_gives_no_value():
    df = pd.DataFrame({"c": pd.Series([], dtype=object), "v": pd.Series([], dtype=float)})
    res = run(Dominance({"cells": ["c"], "magnitude": "v"}), df)
    assert res.value is None and "no non-empty cell" in res.warnings[0]


def test_loss_prepared_original_reused_across_variants():
    orig = pd.DataFrame({"a": [0, 0, 1, 1, 1], "b": [0, 1, 0, 1, 1]})
    variants = {"same": orig, "moved": orig.assign(a=[0, 1, 1, 1, 1])}
    multi = evaluate_many(orig, variants, [{"name": "HellingerDistance",
                                             "params": {"cells": ["a", "b"]}}])
    got = [r.measures[0].value for r in multi.variants]
    m = HellingerDistance({"cells": ["a", "b"]})
    assert got == [run(m, orig, v).value for v in variants.values()]
    assert got[0] == 0.0 and got[1] > 0


def test_holding_sums_with_keys_too_wide_to_pack():
    # Cell ids near 2^40 with 2^30 holdings cannot be packed with the row number into 63 bits:
    # the lexicographic fallback must give the same sums as a groupby.
    rng = np.random.default_rng(2)
    a, b, v = rng.integers(0, 20, 300), rng.integers(0, 9, 300), rng.random(300)
    want = pd.DataFrame({"a": a, "b": b, "v": v}).groupby(["a", "b"])["v"].sum()
    for scale, n_b in ((1, 9), (2**40, 2**30)):
        cells, sums = _sum_per_pair(a * scale, b, n_b, v)
        assert sums == pytest.approx(want.to_numpy())
        assert (cells // scale).tolist() == want.index.get_level_values("a").tolist()


def test_negative_absolute_holding_sums_signed_records_first():
    # Holding 1 has +60 and −20 in the cell: its value is |60 − 20| = 40, holding 2 has −50.
    # Units 50, 40: X = 90, p = 10: gap 90 − 90 = 0 < 5: unsafe; nk(1,75): 50/90 = 56 % safe.
    df = pd.DataFrame({"c": "A", "v": [60.0, -20.0, -50.0], "h": [1, 1, 2]})
    base = {"cells": ["c"], "magnitude": "v", "contributor": "h", "negative": "absolute"}
    row = run(Dominance(base), df).details["cells"].iloc[0]
    assert row["top1_share"] == pytest.approx(50 / 90)
    assert row["total"] == -10.0 and row["status"] == "safe"
    assert status(run(PPercent(base), df)) == ["unsafe"]


def test_missing_contributor_id_is_a_contributor_of_its_own():
    # 60 and 30 belong to no holding, 10 to holding 1: three contributors, top-1 60/100 = 60 %
    # (safe at k = 75); fusing the two records without an id would give 90/100 (unsafe).
    df = pd.DataFrame({"c": "A", "v": [60.0, 30.0, 10.0], "h": [np.nan, np.nan, 1.0]})
    base = {"cells": ["c"], "magnitude": "v", "contributor": "h"}
    row = run(Dominance(base), df).details["cells"].iloc[0]
    assert row["contributors"] == 3 and row["status"] == "safe"
    assert row["top1_share"] == pytest.approx(0.6)
    assert run(Threshold({**base, "min_contributors": 3}), df).value == 0.0


def test_loss_bad_input():
    keyed = Table(pd.DataFrame({"cell": [0, 1], "n": [1, 2]}), keys=["cell"])
    with pytest.raises(DataError, match="no count column: set the 'count' load option"):
        HellingerDistance().compute(keyed, keyed, CTX)
    other = Table(pd.DataFrame({"zone": [0, 1], "n": [1, 2]}), keys=["zone"], count="n")
    with pytest.raises(DataError, match="different key columns"):
        RelativeAbsoluteDistance().compute(freq_table([1, 2]), other, CTX)
    with pytest.raises(DataError, match="'count_column' applies to table data only"):
        run(HellingerDistance({"cells": ["a"], "count_column": "n"}),
            pd.DataFrame({"a": [1]}), pd.DataFrame({"a": [1]}))
