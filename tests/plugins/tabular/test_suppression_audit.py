"""SuppressionAudit and SuppressionLoss against hand-worked patterns and an independent LP.

The independent LP is written separately here: every cell of the table is a variable (published
cells fixed by equal bounds), the additivity rows are enumerated cell by cell with itertools,
and the dense problem is solved by scipy's HiGHS per cell; the plugin instead eliminates the
published cells and solves per connected component of a sparse model.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from anoneval.core.api import Context, DataError, Microdata, Table
from anoneval.plugins.tabular import _audit
from anoneval.plugins.tabular.suppression_audit import SuppressionAudit
from anoneval.plugins.tabular.suppression_loss import SuppressionLoss

CTX = Context()


def full_table(inner: dict[tuple, float], hier: list[dict[str, list[str]]]) -> pd.DataFrame:
    """Every cell (all levels) of a table given its inner values and per-dimension children."""
    def leaves(d, code):
        kids = hier[d].get(code)
        return [code] if not kids else [x for k in kids for x in leaves(d, k)]
    codes = [["Tot", *[k for ks in h.values() for k in ks]] for h in hier]
    rows = []
    for cell in itertools.product(*codes):
        parts = itertools.product(*(leaves(d, c) for d, c in enumerate(cell)))
        rows.append({**{f"d{d}": c for d, c in enumerate(cell)},
                     "value": float(sum(inner[p] for p in parts)), "status": "s"})
    return pd.DataFrame(rows)


def suppress(frame: pd.DataFrame, cells: list[tuple], code: str = "u") -> pd.DataFrame:
    out = frame.copy()
    keys = [c for c in out.columns if c.startswith("d")]
    for cell in cells:
        mask = np.logical_and.reduce([out[k] == v for k, v in zip(keys, cell, strict=True)])
        out.loc[mask, "status"] = code
    return out


def edges(h: dict[str, list[str]]) -> list[list[str]]:
    return [[p, k] for p, ks in h.items() for k in ks]


def audit(frame, hier, **params):
    dims = {f"d{d}": edges(h) for d, h in enumerate(hier)}
    return SuppressionAudit(dimensions=dims, **params).compute(None, Table(frame), CTX)


def cells_of(res) -> pd.DataFrame:
    """The suppressed and primary cells of an audit (details list every cell)."""
    c = pd.DataFrame(res.details["cells"])
    assert len(c) == res.details["n_cells"]
    return c[c["status"] != "published"].reset_index(drop=True)


def dense_lp(frame: pd.DataFrame, hier, nonneg=True) -> pd.DataFrame:
    """Independent audit: one variable per cell, constraints enumerated cell by cell."""
    keys = [c for c in frame.columns if c.startswith("d")]
    pos = {tuple(r): i for i, r in enumerate(frame[keys].itertuples(index=False))}
    rows = []
    for cell, i in pos.items():
        for d, h in enumerate(hier):
            kids = h.get(cell[d])
            if kids:
                row = np.zeros(len(pos))
                row[i] = 1
                for k in kids:
                    row[pos[(*cell[:d], k, *cell[d + 1:])]] = -1
                rows.append(row)
    a = np.array(rows)
    sup = (frame["status"] != "s").to_numpy()
    vals = frame["value"].to_numpy()
    bounds = [((0 if nonneg else None), None) if s else (v, v) for s, v in zip(sup, vals,
                                                                               strict=True)]
    out = []
    for i in np.flatnonzero(sup):
        c = np.zeros(len(pos))
        c[i] = 1
        lo = linprog(c, A_eq=a, b_eq=np.zeros(len(a)), bounds=bounds, method="highs")
        hi = linprog(-c, A_eq=a, b_eq=np.zeros(len(a)), bounds=bounds, method="highs")
        out.append({**dict(zip(keys, frame.loc[i, keys], strict=True)), "lower": lo.x[i],
                    "upper": (hi.x[i] if hi.status == 0 else np.nan)})
    return pd.DataFrame(out)


FLAT3 = {"Tot": ["A", "B", "C"]}
FLAT3B = {"Tot": ["X", "Y", "Z"]}
INNER33 = {(r, c): float(v) for (r, c), v in zip(
    itertools.product("ABC", "XYZ"), [10, 20, 30, 40, 50, 60, 70, 80, 95], strict=True)}


def test_lone_suppressed_cell_in_a_row_is_exact():
    t = suppress(full_table(INNER33, [FLAT3, FLAT3B]), [("A", "X")])
    res = audit(t, [FLAT3, FLAT3B])
    c = cells_of(res)
    assert c.loc[0, "lower"] == pytest.approx(10) and c.loc[0, "upper"] == pytest.approx(10)
    assert c.loc[0, "exact"] and res.value == 1.0 and res.details["n_failed"] == 1
    assert c.loc[0, "alone_in"].startswith("d")


def test_two_cells_in_one_row_and_no_column_partner_are_exact():
    t = suppress(full_table(INNER33, [FLAT3, FLAT3B]), [("A", "X"), ("A", "Y")])
    c = cells_of(audit(t, [FLAT3, FLAT3B]))
    assert c["exact"].all()
    np.testing.assert_allclose(c["lower"], [10, 20])


def test_rectangle_gives_hand_worked_interval():
    t = suppress(full_table(INNER33, [FLAT3, FLAT3B]),
                 [("A", "X"), ("A", "Y"), ("B", "X"), ("B", "Y")])
    c = cells_of(audit(t, [FLAT3, FLAT3B])).set_index(["d0", "d1"])
    # AX = t, AY = 30 - t, BX = 50 - t, BY = 40 + t (row/column sums of the four unknowns);
    # non-negativity: 0 <= t <= 30
    assert c.loc[("A", "X"), ["lower", "upper"]].tolist() == pytest.approx([0, 30])
    assert c.loc[("A", "Y"), ["lower", "upper"]].tolist() == pytest.approx([0, 30])
    assert c.loc[("B", "X"), ["lower", "upper"]].tolist() == pytest.approx([20, 50])
    assert c.loc[("B", "Y"), ["lower", "upper"]].tolist() == pytest.approx([40, 70])
    assert not c["exact"].any()


def test_apriori_relative_bounds_tighten_jointly():
    t = suppress(full_table(INNER33, [FLAT3, FLAT3B]),
                 [("A", "X"), ("A", "Y"), ("B", "X"), ("B", "Y")])
    c = cells_of(audit(t, [FLAT3, FLAT3B], apriori={"relative": 0.25})).set_index(["d0", "d1"])
    # AX in [7.5, 12.5]; AY = 30-t in [15, 25] -> t in [5, 15]; BX = 50-t in [30, 50] ->
    # t in [0, 20]; BY = 40+t in [37.5, 62.5] -> t in [0, 22.5]: t in [7.5, 12.5]
    assert c.loc[("A", "X"), ["lower", "upper"]].tolist() == pytest.approx([7.5, 12.5])
    assert c.loc[("B", "Y"), ["lower", "upper"]].tolist() == pytest.approx([47.5, 52.5])


HIER_G = {"Tot": ["G1", "G2"], "G1": ["a", "b"], "G2": ["c", "d"]}
INNER_G = {(r, c): float(v) for (r, c), v in zip(
    itertools.product("abcd", "XY"), [5, 7, 11, 13, 17, 19, 23, 29], strict=True)}


def test_suppressed_subtotal_with_published_parts_is_exact():
    t = suppress(full_table(INNER_G, [HIER_G, {"Tot": ["X", "Y"]}]), [("G1", "X"), ("G1", "Y")])
    c = cells_of(audit(t, [HIER_G, {"Tot": ["X", "Y"]}]))
    assert c["exact"].all()
    np.testing.assert_allclose(c["lower"], [5 + 11, 7 + 13])
    # the reason is named: the subtotal is the only suppressed cell of a constraint of d0
    # (Tot = G1 + G2 and G1 = a + b both qualify)
    assert all(r in ("d0: Tot = G1 + G2", "d0: G1 = a + b") for r in c["alone_in"])


def test_published_subtotal_breaks_a_leaf_rectangle():
    # rectangle a,b x X,Y is an interval in the leaf table, but a+b = G1 is published ...
    # rectangle a,c x X,Y instead: G1 row is published, so aX = G1X - bX is exact
    hier = [HIER_G, {"Tot": ["X", "Y"]}]
    t = suppress(full_table(INNER_G, hier), [("a", "X"), ("a", "Y"), ("c", "X"), ("c", "Y")])
    c = cells_of(audit(t, hier))
    assert c["exact"].all()
    flat = [{"Tot": ["a", "b", "c", "d"]}, {"Tot": ["X", "Y"]}]
    leaf_only = t[t["d0"].isin(["Tot", "a", "b", "c", "d"])].reset_index(drop=True)
    assert not cells_of(audit(leaf_only, flat))["exact"].any()


def test_unbounded_when_a_cell_and_all_its_margins_are_suppressed():
    hier = [FLAT3, FLAT3B]
    t = suppress(full_table(INNER33, hier), [("A", "X"), ("A", "Tot"), ("Tot", "X"),
                                             ("Tot", "Tot")])
    res = audit(t, hier)
    c = cells_of(res)
    assert c["unbounded"].all() and c["upper"].isna().all()
    # grand total 455; AX >= 0 and every margin is AX plus its published rest
    c = c.set_index(["d0", "d1"])
    lows = [c.loc[k, "lower"] for k in [("A", "X"), ("A", "Tot"), ("Tot", "X"), ("Tot", "Tot")]]
    assert lows == pytest.approx([0, 50, 110, 445])
    # sdcTable's cap (the largest cell, the grand total 455) makes every cell look bounded and
    # the grand total exact on its upper side: AX <= 455 - 445 = 10
    capped = cells_of(audit(t, hier, compat="sdctable")).set_index(["d0", "d1"])
    ups = [capped.loc[k, "upper"] for k in [("A", "X"), ("A", "Tot"), ("Tot", "X"),
                                             ("Tot", "Tot")]]
    assert ups == pytest.approx([10, 60, 120, 455])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_3d_cube_matches_independent_dense_lp(seed):
    rng = np.random.default_rng(seed)
    hier = [{"Tot": ["G1", "G2"], "G1": ["a", "b"], "G2": ["c", "d", "e"]},
            {"Tot": ["X", "Y", "Z"]}, {"Tot": ["p", "q"]}]
    inner_codes = [["a", "b", "c", "d", "e"], ["X", "Y", "Z"], ["p", "q"]]
    inner = {cell: float(rng.integers(0, 50)) for cell in itertools.product(*inner_codes)}
    t = full_table(inner, hier)
    pick = rng.choice(len(t), size=25, replace=False)
    t.loc[pick, "status"] = rng.choice(["u", "x"], size=25)
    got = cells_of(audit(t, hier)).set_index(["d0", "d1", "d2"]).sort_index()
    want = dense_lp(t, hier).set_index(["d0", "d1", "d2"]).sort_index()
    np.testing.assert_allclose(got["lower"], want["lower"], atol=1e-6)
    np.testing.assert_allclose(got["upper"].to_numpy(float), want["upper"].to_numpy(float),
                               atol=1e-6)


def _micro():
    # cell A,X: contributions 60, 30, 10 (X = 100); other inner cells: many small units
    rows = [("A", "X", 60.0), ("A", "X", 30.0), ("A", "X", 10.0)]
    for (r, c) in itertools.product("AB", "XY"):
        if (r, c) != ("A", "X"):
            rows += [(r, c, 10.0)] * 10
    return pd.DataFrame(rows, columns=["d0", "d1", "x"])


def test_protection_levels_and_pass_fail_from_microdata():
    micro = _micro()
    inner = micro.groupby(["d0", "d1"])["x"].sum().to_dict()
    hier = [{"Tot": ["A", "B"]}, {"Tot": ["X", "Y"]}]
    t = suppress(full_table(inner, hier), [("A", "X"), ("A", "Y"), ("B", "X"), ("B", "Y")])
    t.loc[(t.d0 != "A") | (t.d1 != "X"), "status"] = t["status"].where(
        t["status"] == "s", "x")
    dims = {"d0": "flat", "d1": "flat"}
    m = SuppressionAudit(dimensions=dims, magnitude="x", rules={
        "dominance": [{"n": 1, "k": 50}], "p_percent": {"p": 50},
        "frequency": {"n": 3, "safety_range": 0.1}})
    res = m.compute(Microdata(micro), Table(t), CTX)
    c = pd.DataFrame(res.details["cells"]).set_index(["d0", "d1"])
    ax = c.loc[("A", "X")]
    # nk(1,50): 100·60/50 − 100 = 20; p50%: 0.5·60 − (100 − 90) = 20; freq: 0.1·100 = 10
    assert ax["level_nk1_50"] == pytest.approx(20)
    assert ax["level_p50"] == pytest.approx(20)
    assert ax["level_frequency"] == pytest.approx(10)
    assert ax["protection_level"] == pytest.approx(20)
    # AX = t, AY = 200 - t, BX = 200 - t, BY = t: t in [0, 200], margins 100 each -> pass
    assert ax["lower"] == pytest.approx(0) and ax["upper"] == pytest.approx(200)
    assert ax["pass"] and res.value == 0.0
    strict = SuppressionAudit(dimensions=dims, magnitude="x", apriori={"relative": 0.1},
                              rules={"dominance": [{"n": 1, "k": 50}]})
    res2 = strict.compute(Microdata(micro), Table(t), CTX)
    # a-priori ±10 %: t in [90, 110], margins 10 < 20 -> fails
    assert res2.value == 1.0 and res2.details["failed"][0]["d0"] == "A"


def test_rule_flagged_published_cell_counts_as_disclosed():
    micro = _micro()
    inner = micro.groupby(["d0", "d1"])["x"].sum().to_dict()
    t = full_table(inner, [{"Tot": ["A", "B"]}, {"Tot": ["X", "Y"]}])
    res = SuppressionAudit(dimensions={"d0": "flat", "d1": "flat"}, magnitude="x",
                           rules={"dominance": [{"n": 1, "k": 50}]}).compute(
        Microdata(micro), Table(t), CTX)
    assert res.value == 1.0 and res.details["failed"][0]["exact"]


def test_bad_input_errors():
    hier = [FLAT3, FLAT3B]
    t = full_table(INNER33, hier)
    bad = t.copy()
    bad.loc[0, "value"] += 1
    with pytest.raises(DataError, match="not additive"):
        audit(bad, hier)
    bad = t.copy()
    bad.loc[0, "status"] = "q"
    with pytest.raises(DataError, match="status 'q'"):
        audit(bad, hier)
    bad = t.copy()
    bad.loc[bad.d0 == "C", "d0"] = "Q"
    with pytest.raises(DataError, match="not in its hierarchy"):
        audit(bad, hier)
    neg = {k: (-v if k == ("A", "X") else v) for k, v in INNER33.items()}
    with pytest.raises(DataError, match="nonnegative"):
        audit(full_table(neg, hier), hier)
    audit(full_table(neg, hier), hier, nonnegative=False)


def test_suppression_loss_hand_values():
    hier = [FLAT3, FLAT3B]
    t = suppress(full_table(INNER33, hier), [("A", "X"), ("B", "Y")], "u")
    t = suppress(t, [("A", "Y"), ("B", "X")], "x")
    res = SuppressionLoss(dimensions={"d0": "flat", "d1": "flat"}).compute(None, Table(t), CTX)
    d = res.details
    assert d["n_suppressed"] == 4 and d["n_primary"] == 2 and d["n_secondary"] == 2
    assert d["sum_suppressed"] == 10 + 20 + 40 + 50 and d["sum_secondary"] == 20 + 40
    assert res.value == pytest.approx(120 / 455)
    assert d["share_inner_suppressed"] == pytest.approx(4 / 9)


def test_custom_status_codes_apriori_columns_and_row_order():
    hier = [FLAT3, FLAT3B]
    t = suppress(full_table(INNER33, hier), [("A", "X"), ("A", "Y"), ("B", "X"), ("B", "Y")],
                 "P")
    t.loc[t.status == "s", "status"] = "ok"
    t["lo"], t["hi"] = t["value"] - 5, t["value"] + 100
    res = audit(t.sample(frac=1, random_state=3), hier, status_codes={"ok": "published",
                                                                      "P": "primary"},
                apriori={"lower_column": "lo", "upper_column": "hi"})
    c = cells_of(res).set_index(["d0", "d1"])
    # AX = t in [5, 15] from its own columns; AY = 30 - t >= 15 ... BX = 50 - t >= 25;
    # BY = 40 + t >= 45 -> t >= 5: t in [5, 15]
    assert c.loc[("A", "X"), ["lower", "upper"]].tolist() == pytest.approx([5, 15])
    assert res.details["n_primary"] == 4


def test_original_cell_table_gives_the_same_levels_as_microdata():
    micro = _micro()
    inner = micro.groupby(["d0", "d1"])["x"].sum().to_dict()
    hier = [{"Tot": ["A", "B"]}, {"Tot": ["X", "Y"]}]
    t = suppress(full_table(inner, hier), [("A", "X"), ("A", "Y"), ("B", "X"), ("B", "Y")])
    rules = {"dominance": [{"n": 1, "k": 50}], "p_percent": {"p": 50}}
    dims = {"d0": "flat", "d1": "flat"}
    from_micro = SuppressionAudit(dimensions=dims, magnitude="x", rules=rules).compute(
        Microdata(micro), Table(t), CTX)
    cells = t[["d0", "d1", "value"]].copy()
    cells["n"] = [3 if (r, c) == ("A", "X") else (13 if "Tot" in (r, c) else 10)
                  for r, c in zip(cells.d0, cells.d1, strict=True)]
    cells.loc[cells.d0.eq("Tot") & cells.d1.eq("Tot"), "n"] = 33
    cells["x1"] = [60.0 if "A" in r + c or r + c == "TotTot" or (r, c) in
                   [("Tot", "X")] else 10.0 for r, c in zip(cells.d0, cells.d1, strict=True)]
    cells.loc[cells.d0.eq("A") & ~cells.d1.isin(["X", "Tot"]), "x1"] = 10.0
    cells["x2"] = np.where(cells["x1"] == 60, 30.0, 10.0)
    cells["x3"] = 10.0
    from_table = SuppressionAudit(dimensions=dims, magnitude="value", count_column="n",
                                  contribution_columns=["x1", "x2", "x3"], rules=rules).compute(
        Table(cells), Table(t), CTX)
    a = pd.DataFrame(from_micro.details["cells"])
    b = pd.DataFrame(from_table.details["cells"])
    pd.testing.assert_series_equal(a["protection_level"], b["protection_level"])
    assert a.loc[(a.d0 == "A") & (a.d1 == "X"), "protection_level"].item() == pytest.approx(20)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=9, max_size=9),
       st.sets(st.integers(0, 15), min_size=1, max_size=8))
# HiGHS 1.16's warm start ends "Unknown" on maximizing one of these cells (unbounded)
@example(values=[0, 0, 1, 0, 0, 0, 0, 1, 0], picked={0, 2, 3, 4, 5, 12, 13, 15})
def test_interval_contains_the_true_value_and_ignores_row_order(values, picked):
    hier = [FLAT3, FLAT3B]
    inner = {cell: float(v) for cell, v in zip(itertools.product("ABC", "XYZ"), values,
                                                strict=True)}
    t = full_table(inner, hier)
    t.loc[sorted(picked), "status"] = "x"
    c = cells_of(audit(t, hier)).set_index(["d0", "d1"]).sort_index()
    upper = c["upper"].astype(float).fillna(np.inf)
    assert (c["lower"] <= c["value"] + 1e-7).all() and (c["value"] <= upper + 1e-7).all()
    assert (c["lower"] >= -1e-9).all()
    dense = dense_lp(t, hier).set_index(["d0", "d1"]).sort_index()
    np.testing.assert_allclose(c["lower"], dense["lower"], atol=1e-7)
    np.testing.assert_allclose(c["upper"].astype(float), dense["upper"], atol=1e-7)
    shuffled = cells_of(audit(t.iloc[::-1], hier)).set_index(["d0", "d1"]).sort_index()
    np.testing.assert_allclose(shuffled["lower"], c["lower"], atol=1e-7)


@pytest.mark.parametrize("measure", [SuppressionAudit, SuppressionLoss])
def test_declared_columns_are_all_a_measure_reads(measure):
    # the protected table's dimensions, value and status: junk columns change nothing
    hier = [FLAT3, FLAT3B]
    t = suppress(full_table(INNER33, hier), [("A", "X"), ("A", "Y"), ("B", "X"), ("B", "Y")])
    m = measure(dimensions={"d0": "flat", "d1": "flat"})
    declared = m.columns()
    assert declared is not None and set(declared["anonymized"]) == {"d0", "d1", "value",
                                                                     "status"}
    junk = t.assign(junk_num=np.arange(len(t)) * 0.5, junk_txt="p")
    full = m.compute(None, Table(junk), CTX)
    pruned = m.compute(None, Table(t[list(declared["anonymized"])]), CTX)
    assert full.value == pruned.value and full.details == pruned.details


# x0 − x1 − x2 = 0, x1 = 1, x2 − x3 = 1, all ≥ 0: x0 ∈ [2, ∞), x1 = 1, x2 ∈ [1, ∞), x3 ∈ [0, ∞)
CHAIN = (np.array([[1.0, -1, -1, 0], [0, 1, 0, 0], [0, 0, 1, -1]]), np.array([0.0, 1, 1]))


@pytest.mark.parametrize("solve", [_audit._solve_highspy, _audit._solve_scipy])
def test_each_lp_path_gives_the_hand_worked_intervals_and_refuses_an_infeasible_model(solve):
    import scipy.sparse as sp
    a, b = CHAIN
    lo, hi = solve(sp.csr_matrix(a), b, np.zeros(4), np.full(4, np.inf), 0, 4)
    np.testing.assert_array_equal(lo, [2, 1, 1, 0])
    np.testing.assert_array_equal(hi, [np.inf, 1, np.inf, np.inf])
    with pytest.raises(DataError, match=r"infeasible.*inconsistent"):  # x1 = 1 and x1 ≤ 0.5
        solve(sp.csr_matrix(a), b, np.zeros(4), np.array([np.inf, 0.5, np.inf, np.inf]), 0, 4)


class Faked:
    """HiGHS whose statuses pass through ``fake(status, cold)``: ``cold`` when the basis was
    cleared since the objective last changed."""

    def __init__(self, new_highs, fake) -> None:
        self.h, self.fake, self.cold, self.cleared = new_highs(), fake, False, 0

    def __getattr__(self, name: str):
        return getattr(self.h, name)

    def changeColCost(self, j, cost):
        self.cold = False
        return self.h.changeColCost(j, cost)

    def clearSolver(self):
        self.cold, self.cleared = True, self.cleared + 1
        return self.h.clearSolver()

    def getModelStatus(self):
        return self.fake(self.h.getModelStatus(), self.cold)


def test_an_undecided_warm_start_is_solved_from_scratch(monkeypatch):
    """A warm-started solve that ends neither optimal nor unbounded is run again without its
    basis; one that stays undecided is an error naming the solver's status."""
    import highspy
    import scipy.sparse as sp

    unset = highspy.HighsModelStatus.kNotset
    new_highs = _audit._new_highs
    a, b = CHAIN
    made: list[Faked] = []
    for fake in (lambda st, cold: st if cold else unset, lambda st, cold: unset):
        monkeypatch.setattr(_audit, "_new_highs",
                            lambda fake=fake: made.append(Faked(new_highs, fake)) or made[-1])
        if fake(None, True) is unset:
            with pytest.raises(DataError, match=r"no answer.*Not Set.*from scratch"):
                _audit._solve_highspy(sp.csr_matrix(a), b, np.zeros(4), np.full(4, np.inf), 0, 4)
            continue
        lo, hi = _audit._solve_highspy(sp.csr_matrix(a), b, np.zeros(4), np.full(4, np.inf),
                                       0, 4)
        np.testing.assert_array_equal(lo, [2, 1, 1, 0])
        np.testing.assert_array_equal(hi, [np.inf, 1, np.inf, np.inf])
        assert made[-1].cleared == 8  # every bound solved again from scratch


def test_unbounded_or_infeasible_before_any_point_is_decided(monkeypatch):
    """HiGHS may answer "unbounded or infeasible"; before any solve found a point, a solve
    without objective tells which."""
    import highspy
    import scipy.sparse as sp

    status = highspy.HighsModelStatus
    new_highs = _audit._new_highs

    def vague(st, cold):
        return status.kUnboundedOrInfeasible if st in (status.kUnbounded,
                                                       status.kInfeasible) else st

    monkeypatch.setattr(_audit, "_new_highs", lambda: Faked(new_highs, vague))
    a, b = CHAIN
    free = np.full(4, -np.inf)  # x3 free below: its minimum, the first solve, is unbounded
    lo, hi = _audit._solve_highspy(sp.csr_matrix(a), b, free, np.full(4, np.inf), 3, 4)
    assert lo.tolist() == [-np.inf] and hi.tolist() == [np.inf]
    with pytest.raises(DataError, match=r"infeasible.*inconsistent"):
        _audit._solve_highspy(sp.csr_matrix(a), b, np.zeros(4),
                              np.array([np.inf, 0.5, np.inf, np.inf]), 0, 4)
