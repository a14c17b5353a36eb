"""Hierarchical table model and the LP interval audit of a cell-suppression pattern.

A table is the Cartesian product of its dimensions' codes (every level); each dimension is a
rooted tree (root = the total code). The additivity constraints are, for every dimension d,
every non-leaf code p of d with children k_1..k_m and every combination of codes of the other
dimensions, ``y(..p..) = Σ_j y(..k_j..)`` (sdcTable ``create_m_matrix``). The audit is the
outsider's attacker problem (Geurts 1992; de Wolf 2002; sdcTable ``attack()``): published
cells are fixed, every suppressed cell lies in its a-priori bounds (default [0, +inf)), and for
every suppressed cell c the exact interval is [min y_c, max y_c] over that polytope, two LPs
per cell solved with HiGHS (Huangfu & Hall 2018, "Parallelizing the dual revised simplex
method", Math. Prog. Comp. 10). The LPs are split into the connected components of the
suppressed cells (cells linked by a common constraint), which leaves every interval unchanged
and makes each LP small; the solves run as tasks of ``CHUNK`` variables on the engine (both
cores), small components merged into one model and large ones split. With highspy (optional
extra ``lp``) a task builds one LP model and only its objective changes per solve, so the
simplex restarts from the last optimal basis; without it every bound is a fresh scipy
``linprog`` solve (same intervals, several times slower).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import linprog
from scipy.sparse.csgraph import connected_components

from anoneval.core.api import Context, DataError, data_row, read_text


@dataclass
class Dimension:
    """One dimension: its codes (root first) and each non-leaf code's children."""

    name: str
    codes: list[str]
    children: dict[str, list[str]]

    @property
    def leaves(self) -> list[str]:
        return [c for c in self.codes if c not in self.children]

    def ancestors(self) -> dict[str, list[str]]:
        """Every code's chain from itself up to the root."""
        parent = {k: p for p, ks in self.children.items() for k in ks}
        out: dict[str, list[str]] = {}
        for c in self.codes:
            chain = [c]
            while chain[-1] in parent:
                chain.append(parent[chain[-1]])
            out[c] = chain
        return out


def build_dimension(name: str, spec: str | Sequence[Sequence[str]], present: Sequence[str],
                    total_code: str) -> Dimension:
    """A dimension from ``"flat"`` (the total over the codes present) or ``parent,child`` edges.

    Every code present in the table must be in the hierarchy; a parent with one child (an
    sdcTable "duplicate") is an error, as the table would repeat a cell under two codes."""
    present_set = {str(c) for c in present}
    if isinstance(spec, str) and spec == "flat":
        leaves = sorted(present_set - {total_code})
        if not leaves:
            raise DataError(f"dimension {name!r}: no codes besides the total {total_code!r}")
        children = {total_code: leaves}
    else:
        children = {}
        seen: dict[str, str] = {}
        for i, edge in enumerate(spec):
            if len(edge) != 2:
                raise DataError(f"dimension {name!r}: hierarchy edge {i} is {edge!r}, "
                                "expected [parent, child]")
            parent, child = str(edge[0]), str(edge[1])
            if child in seen:
                raise DataError(f"dimension {name!r}: hierarchy edge {i} [{parent}, {child}] "
                                f"repeats the code {child!r}, already a child of "
                                f"{seen[child]!r}; a code has one parent")
            seen[child] = parent
            children.setdefault(parent, []).append(child)
    kids = {k for ks in children.values() for k in ks}
    roots = set(children) - kids
    if roots != {total_code}:
        raise DataError(f"dimension {name!r}: the hierarchy's root must be the total code "
                        f"{total_code!r}, found roots {sorted(roots)}")
    codes = [total_code]
    for c in codes:  # breadth-first, root first
        codes.extend(children.get(c, []))
    if len(codes) != len(set(codes)):
        raise DataError(f"dimension {name!r}: a code has two parents in the hierarchy")
    for p, ks in children.items():
        if len(ks) < 2:
            raise DataError(f"dimension {name!r}: code {p!r} has a single child {ks[0]!r}; "
                            "give the cell under one code only")
    missing = sorted(present_set - set(codes))
    if missing:
        raise DataError(f"dimension {name!r}: codes {missing[:10]} of the table are not in "
                        "its hierarchy")
    return Dimension(name, codes, children)


def read_hierarchy(path: str) -> list[list[str]]:
    """``parent,child`` edges from a CSV file (a header row ``parent,child`` is optional)."""
    text = read_text(path, "hierarchy file")
    rows = []
    for i, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row:
            continue
        rows.append(row)
        if len(row) != 2:
            raise DataError(f"hierarchy file {path}, line {i}: expected two columns "
                            f"parent,child, found {len(row)}")
    if rows and [r.strip().lower() for r in rows[0]] == ["parent", "child"]:
        rows = rows[1:]
    return rows


def constraint_matrix(dims: Sequence[Dimension]) -> tuple[sp.csr_matrix, list[str]]:
    """The additivity constraints A y = 0 over the flat (C-order) cell index, and a label each."""
    shape = tuple(len(d.codes) for d in dims)
    grid = np.arange(int(np.prod(shape))).reshape(shape)
    rows, cols, vals, labels = [], [], [], []
    n_rows = 0
    for axis, d in enumerate(dims):
        pos = {c: i for i, c in enumerate(d.codes)}
        for parent, kids in d.children.items():
            top = np.take(grid, pos[parent], axis=axis).ravel()
            m = len(top)
            r = np.arange(n_rows, n_rows + m)
            rows.append(r)
            cols.append(top)
            vals.append(np.ones(m))
            for k in kids:
                rows.append(r)
                cols.append(np.take(grid, pos[k], axis=axis).ravel())
                vals.append(-np.ones(m))
            labels.extend([f"{d.name}: {parent} = {' + '.join(kids)}"] * m)
            n_rows += m
    a = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n_rows, grid.size))
    return a, labels


@dataclass
class Intervals:
    """Per suppressed cell: lower, upper (inf when unbounded)."""

    lower: np.ndarray
    upper: np.ndarray
    n_components: int
    n_constraints: int


#: Variables per task: each task solves 2 × CHUNK LPs on one model. Small components are
#: merged into one block-diagonal model of up to CHUNK variables; a larger component is split
#: into tasks of CHUNK variables each (each builds the component's model), so even one large
#: component keeps both cores busy. Chunks follow the data only, never the worker count.
CHUNK = 100


def lp_solver() -> str:
    """Which LP path the audit takes on this installation (reported in the details)."""
    try:
        import highspy  # noqa: F401
    except ImportError:
        return "scipy linprog (HiGHS, a fresh solve per bound; install the extra 'lp')"
    return "highspy (HiGHS, warm-started)"


def _solve_tasks(shared: None, task: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of the variables ``j0 .. j1 - 1`` of one LP model ``(A, b, lb, ub)``:
    highspy's warm-started simplex when installed, else one scipy HiGHS solve per bound."""
    try:
        import highspy  # noqa: F401  (optional extra "lp")
    except ImportError:
        return _solve_scipy(*task)
    return _solve_highspy(*task)


def _solve_scipy(a_eq: sp.csr_matrix, b_eq: np.ndarray, lb: np.ndarray, ub: np.ndarray,
                 j0: int, j1: int) -> tuple[np.ndarray, np.ndarray]:
    """Fallback without highspy: each bound is a fresh scipy ``linprog`` (HiGHS, no warm start)."""
    n = a_eq.shape[1]
    bounds_list = [(lo if np.isfinite(lo) else None, hi if np.isfinite(hi) else None)
                   for lo, hi in zip(lb, ub, strict=True)]
    lo_out, hi_out = np.empty(j1 - j0), np.empty(j1 - j0)
    c = np.zeros(n)
    for j in range(j0, j1):
        for sign, dest in ((1.0, lo_out), (-1.0, hi_out)):
            c[j] = sign
            res = linprog(c, A_eq=a_eq if a_eq.shape[0] else None,
                          b_eq=b_eq if a_eq.shape[0] else None, bounds=bounds_list,
                          method="highs")
            c[j] = 0.0
            if res.status == 3:
                dest[j - j0] = -np.inf * sign
            elif res.status == 2:
                raise DataError(f"the audit LP is infeasible ({res.message}); the published "
                                "cells and the a-priori bounds are inconsistent")
            elif res.status != 0:
                raise DataError(f"the audit LP solver gave no answer for a suppressed cell "
                                f"({res.message})")
            else:
                dest[j - j0] = res.x[j]
    return lo_out, hi_out


_HIGHS_QUIET = False


def _new_highs():
    """A silent ``highspy.Highs``; its once-per-process banner on stdout is swallowed."""
    global _HIGHS_QUIET
    import os

    import highspy
    if _HIGHS_QUIET:
        h = highspy.Highs()
    else:
        fd = os.dup(1)
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 1)
                h = highspy.Highs()
        finally:
            os.dup2(fd, 1)
            os.close(fd)
        _HIGHS_QUIET = True
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")  # presolve would discard the basis kept between solves
    return h


def _solve_highspy(a: sp.csr_matrix, b: np.ndarray, lb: np.ndarray, ub: np.ndarray, j0: int,
                   j1: int) -> tuple[np.ndarray, np.ndarray]:
    """One LP model; each solve changes only the objective (+y_j for the lower end, -y_j for
    the upper), so the dual simplex restarts from the last optimal basis (a warm start), which
    stays primal feasible. A warm start that ends undecided (HiGHS 1.16 reports ``Unknown``
    for some unbounded objectives) is solved again from scratch; "unbounded or infeasible"
    before any solve found a point is told apart by a solve without objective."""
    import highspy
    a = a.tocsc()
    n = a.shape[1]
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, a.shape[0]
    lp.col_cost_ = np.zeros(n)
    lp.col_lower_ = np.where(np.isfinite(lb), lb, -highspy.kHighsInf)
    lp.col_upper_ = np.where(np.isfinite(ub), ub, highspy.kHighsInf)
    lp.row_lower_ = lp.row_upper_ = b
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = a.indptr
    lp.a_matrix_.index_ = a.indices
    lp.a_matrix_.value_ = a.data
    h = _new_highs()
    h.passModel(lp)
    status = highspy.HighsModelStatus
    names = {status.kOptimal: "optimal", status.kUnbounded: "unbounded",
             status.kInfeasible: "infeasible", status.kUnboundedOrInfeasible: "either"}

    def solve(cold: bool = False) -> str:
        if cold:
            h.clearSolver()  # drop the basis: a solve from scratch
        h.run()
        return names.get(h.getModelStatus(), "unknown")

    lower, upper = np.empty(j1 - j0), np.empty(j1 - j0)
    feasible = False  # a solve found a point (the region is the same for every objective)
    for j in range(j0, j1):
        for sign, dest in ((1.0, lower), (-1.0, upper)):
            h.changeColCost(j, sign)
            got = solve()
            if got == "unknown" or (got == "infeasible" and feasible):
                got = solve(cold=True)
            if got == "either" and not feasible:  # is there a point at all?
                h.changeColCost(j, 0.0)
                found = solve()
                if found == "unknown":
                    found = solve(cold=True)
                h.changeColCost(j, sign)
                feasible = found == "optimal"  # (no objective: never unbounded)
                got = {"optimal": "unbounded", "infeasible": "infeasible",
                       "either": "infeasible"}.get(found, "unknown")
            if got == "optimal":
                dest[j - j0] = h.getSolution().col_value[j]
                feasible = True
            elif got in ("unbounded", "either"):
                dest[j - j0] = -np.inf * sign
            elif got == "infeasible" and not feasible:
                raise DataError("the audit LP is infeasible; the published cells and the "
                                "a-priori bounds are inconsistent")
            else:
                raise DataError("the audit LP solver gave no answer for a suppressed cell "
                                f"({h.modelStatusToString(h.getModelStatus())}, also solved "
                                "from scratch)")
        h.changeColCost(j, 0.0)
    return lower + 0.0, upper + 0.0  # a maximum of 0 comes back as -0.0


def audit_intervals(a: sp.csr_matrix, values: np.ndarray, suppressed: np.ndarray,
                    lb: np.ndarray, ub: np.ndarray, ctx: Context) -> Intervals:
    """Exact feasible intervals of the suppressed cells (flat indices ``suppressed``) given the
    published ``values`` of the other cells, constraints ``a`` and bounds ``lb``/``ub`` of the
    suppressed cells. Components are solved in tasks of ``CHUNK`` variables on the engine."""
    n = a.shape[1]
    is_sup = np.zeros(n, dtype=bool)
    is_sup[suppressed] = True
    a_s = a[:, suppressed].tocsr()
    pub_vals = np.where(is_sup, 0.0, values)
    rhs = -(a @ pub_vals)
    used = np.flatnonzero(np.diff(a_s.indptr) > 0)
    a_s, rhs = a_s[used], rhs[used]
    k = len(suppressed)
    if k == 0:
        return Intervals(np.empty(0), np.empty(0), 0, 0)
    link = (a_s.T @ a_s) if a_s.shape[0] else sp.identity(k, format="csr")
    n_comp, label = connected_components(link != 0, directed=False)
    order = np.argsort(label, kind="stable")
    starts = np.searchsorted(label[order], np.arange(n_comp + 1))
    row_comp = label[a_s.indices[a_s.indptr[:-1]]] if a_s.shape[0] else np.empty(0, int)
    row_order = np.argsort(row_comp, kind="stable")
    row_starts = np.searchsorted(row_comp[row_order], np.arange(n_comp + 1))
    tasks: list[tuple] = []
    members: list[np.ndarray] = []
    small: list[tuple] = []  # components waiting to be merged into one model

    def flush() -> None:
        if small:
            merged = sp.block_diag([x[0] for x in small], format="csr")
            n_vars = merged.shape[1]
            tasks.append((merged, *(np.concatenate([x[i] for x in small]) for i in (1, 2, 3)),
                          0, n_vars))
            members.append(np.concatenate([x[4] for x in small]))
            small.clear()

    for ci in range(n_comp):
        vars_ = order[starts[ci]:starts[ci + 1]]
        rows_ = row_order[row_starts[ci]:row_starts[ci + 1]]
        prob = (a_s[rows_][:, vars_].tocsr(), rhs[rows_], lb[vars_], ub[vars_], vars_)
        if len(vars_) > CHUNK:
            for j0 in range(0, len(vars_), CHUNK):
                j1 = min(j0 + CHUNK, len(vars_))
                tasks.append((*prob[:4], j0, j1))
                members.append(vars_[j0:j1])
            continue
        if sum(len(x[4]) for x in small) + len(vars_) > CHUNK:
            flush()
        small.append(prob)
    flush()
    results = ctx.map_blocks(_solve_tasks, tasks)
    lower, upper = np.empty(k), np.empty(k)
    for vars_, (lo, hi) in zip(members, results, strict=True):
        lower[vars_], upper[vars_] = lo, hi
    return Intervals(lower, upper, n_comp, int(a_s.shape[0]))


def product_index(frame: pd.DataFrame, dims: Sequence[Dimension]) -> np.ndarray:
    """Flat cell index of every row of ``frame`` (its dimension columns)."""
    shape = tuple(len(d.codes) for d in dims)
    idx = []
    for d in dims:
        pos = {c: i for i, c in enumerate(d.codes)}
        codes = frame[d.name].astype(str)
        mapped = codes.map(pos)
        missing = mapped.isna().to_numpy()
        if missing.any():
            r = int(np.argmax(missing))
            raise DataError(f"column {d.name!r}: code {codes.iloc[r]!r} ({data_row(r)}) is not "
                            f"in the dimension's hierarchy ({int(missing.sum())} such rows)")
        idx.append(mapped.to_numpy(dtype=np.int64))
    return np.ravel_multi_index(tuple(idx), shape)


def cell_codes(flat: np.ndarray, dims: Sequence[Dimension]) -> dict[str, list[str]]:
    """The codes of flat cell indices, per dimension."""
    shape = tuple(len(d.codes) for d in dims)
    parts = np.unravel_index(flat, shape)
    return {d.name: [d.codes[i] for i in part] for d, part in zip(dims, parts, strict=True)}


def leaf_to_cells(frame: pd.DataFrame, dims: Sequence[Dimension]) -> tuple[np.ndarray, np.ndarray]:
    """(record row, flat cell) for every cell that contains each record (its leaf codes and all
    their ancestors): how microdata contributes to every level of the table."""
    shape = tuple(len(d.codes) for d in dims)
    rec_rows = np.arange(len(frame))
    combos: list[tuple[np.ndarray, list[np.ndarray]]] = [(rec_rows, [])]
    for d in dims:
        pos = {c: i for i, c in enumerate(d.codes)}
        anc = d.ancestors()
        leaves = set(d.leaves)
        codes = frame[d.name].astype(str).to_numpy()
        bad = [c for c in pd.unique(codes) if c not in leaves]
        if bad:
            raise DataError(f"original column {d.name!r}: code {bad[0]!r} is not a leaf of the "
                            "dimension's hierarchy (microdata carry the finest codes)")
        depth = {c: [pos[x] for x in anc[c]] for c in leaves}
        new = []
        for rows, parts in combos:
            lists = [depth[c] for c in codes[rows]]
            lens = np.fromiter((len(x) for x in lists), int, len(lists))
            rep = np.repeat(np.arange(len(rows)), lens)
            flat_codes = np.fromiter((v for x in lists for v in x), int, int(lens.sum()))
            new.append((rows[rep], [p[rep] for p in parts] + [flat_codes]))
        combos = new
    rows, parts = combos[0]
    return rows, np.ravel_multi_index(tuple(parts), shape)


def additivity_gaps(a: sp.csr_matrix, values: np.ndarray, labels: Sequence[str],
                    dims: Sequence[Dimension], tol: float) -> str | None:
    """A message naming the worst violated constraint of the true table, or None."""
    gap = a @ values
    scale = tol * np.maximum(1.0, abs(a) @ np.abs(values))
    bad = np.flatnonzero(np.abs(gap) > scale)
    if not len(bad):
        return None
    worst = bad[np.argmax(np.abs(gap[bad]))]
    top = a.indices[a.indptr[worst]:a.indptr[worst + 1]]
    where = cell_codes(top[:1], dims)
    at = ", ".join(f"{k}={v[0]}" for k, v in where.items())
    return (f"the table is not additive: {len(bad)} constraint(s) fail, worst "
            f"{labels[worst]!r} at the cell {at} (gap {gap[worst]:g})")


def apriori_bounds(values: np.ndarray, spec: Mapping | None, nonnegative: bool,
                   extra: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """Attacker bounds of the suppressed cells: non-negativity, ±relative around the true
    value, or given columns (intersected)."""
    lb = np.zeros(len(values)) if nonnegative else np.full(len(values), -np.inf)
    ub = np.full(len(values), np.inf)
    if spec and spec.get("relative") is not None:
        r = float(spec["relative"])
        lb = np.maximum(lb, values - r * np.abs(values))
        ub = np.minimum(ub, values + r * np.abs(values))
    if extra is not None:
        lb = np.maximum(lb, extra[0])
        ub = np.minimum(ub, extra[1])
    return lb, ub
