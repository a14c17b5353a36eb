"""Audit of a cell-suppression pattern: exact intervals, tau-Argus protection levels, pass/fail."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    MeasureResult,
    ParamPath,
    Params,
    RiskMeasure,
    Side,
    data_row,
)
from anoneval.plugins.tabular._audit import (
    additivity_gaps,
    apriori_bounds,
    audit_intervals,
    build_dimension,
    cell_codes,
    constraint_matrix,
    leaf_to_cells,
    lp_solver,
    product_index,
    read_hierarchy,
)
from anoneval.plugins.tabular._cells import top_units
from anoneval.plugins.tabular._rules import LevelStats, Rule

#: sdcTable's status codes and their roles.
SDCTABLE_STATUS = {"s": "published", "z": "published", "u": "primary", "x": "secondary"}
ROLES = ("published", "primary", "secondary")


class FrequencyRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = Field(2, ge=1, description="Unsafe iff 0 < contributors <= n (sdcTable maxN).")
    safety_range: float = Field(0.10, ge=0, description="Protection level as a share of X.")


class DominanceRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = Field(1, ge=1, description="Largest contributions summed, >= 1.")
    k: float = Field(80.0, gt=0, le=100, description="Threshold in %, in (0,100].")


class PPercentRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    p: float = Field(15.0, gt=0, lt=100, description="Precision in %, in (0,100).")


class PQRuleSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    p: float = Field(..., gt=0, lt=100, description="Posterior precision in %, in (0,100).")
    q: float = Field(100.0, gt=0, le=100, description="Prior precision in %, in (p,100].")

    @model_validator(mode="after")
    def _p_below_q(self) -> PQRuleSpec:
        if self.p >= self.q:
            raise ValueError(f"p ({self.p:g}) must be smaller than q ({self.q:g}); allowed: "
                             "0 < p < q <= 100")
        return self


class Rules(BaseModel):
    model_config = ConfigDict(extra="forbid")
    frequency: FrequencyRule | None = None
    dominance: list[DominanceRule] = Field(default_factory=list)
    p_percent: PPercentRule | None = None
    pq: PQRuleSpec | None = None


class Apriori(BaseModel):
    model_config = ConfigDict(extra="forbid")
    relative: float | None = Field(None, ge=0, description="Bounds a·(1 ± relative).")
    lower_column: str | None = None
    upper_column: str | None = None


class TableParams(Params):
    """Params shared by the audit and the loss of a protected table."""

    def table_columns(self) -> list[str]:
        """The protected table's columns a measure reads: dimensions, value, status."""
        return [*self.dimensions, self.value_column, self.status_column]

    dimensions: dict[str, Literal["flat"] | ParamPath | list[list[str]]] = Field(
        ..., description="Per dimension column: a parent,child CSV file, a list of [parent, "
                         "child] edges, or 'flat' (the total over the codes present).")
    total_code: str = Field("Tot", description="Code of a dimension's total.")
    value_column: str = Field("value", description="Cell value (may be empty when suppressed).")
    status_column: str = Field("status", description="Cell status column.")
    status_codes: dict[str, Literal["published", "primary", "secondary"]] = Field(
        default_factory=lambda: dict(SDCTABLE_STATUS),
        description="Status code -> role; default sdcTable's s/z published, u primary, "
                    "x secondary.")


def load_table(data: Dataset, p: TableParams, ctx: Context):
    """The protected table: dimensions, constraint matrix, flat index, values and roles."""
    frame = data.frame
    if len(frame) == 0:
        raise DataError("the protected table is empty")
    for col in [*p.dimensions, p.value_column, p.status_column]:
        if col not in frame.columns:
            raise DataError(f"protected table: column {col!r} is missing (columns: "
                            f"{list(frame.columns)})")
    for col in [*p.dimensions, p.status_column]:
        miss = frame[col].isna().to_numpy()
        if miss.any():
            raise DataError(f"protected table: column {col!r} is empty in "
                            f"{data_row(int(np.argmax(miss)))} ({int(miss.sum())} such rows); "
                            "every cell needs its codes and a status")
    dims = []
    for name, spec in p.dimensions.items():
        edges = read_hierarchy(str(ctx.path(spec))) if isinstance(spec, str) and spec != "flat" \
            else spec
        dims.append(build_dimension(name, edges, frame[name].astype(str).unique(), p.total_code))
    flat = product_index(frame, dims)
    size = int(np.prod([len(d.codes) for d in dims]))
    dup = pd.Series(flat).duplicated(keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(flat == flat[np.argmax(dup)])
        raise DataError(f"protected table: {data_row(int(rows[0]))} and {data_row(int(rows[1]))} "
                        f"are the same cell ({_where(int(flat[rows[0]]), dims)}); give each "
                        f"cell once ({int(dup.sum())} rows repeat a cell)")
    if len(flat) != size:
        have = np.zeros(size, dtype=bool)
        have[flat] = True
        raise DataError(f"protected table: {size - len(flat)} of the {size} cells of the "
                        f"hierarchies' product are missing, e.g. "
                        f"{_where(int(np.argmin(have)), dims)} (give every cell, totals "
                        "included)")
    status = frame[p.status_column].astype(str)
    unknown = sorted(set(status) - set(p.status_codes))
    if unknown:
        row = int(np.argmax((status == unknown[0]).to_numpy()))
        raise DataError(f"column {p.status_column!r}: status {unknown[0]!r} ({data_row(row)}) is "
                        f"not in status_codes; allowed: {sorted(p.status_codes)}")
    roles = np.empty(size, dtype=object)
    roles[flat] = status.map(p.status_codes).to_numpy()
    raw = pd.to_numeric(frame[p.value_column], errors="coerce").to_numpy(dtype=float)
    text = (np.isnan(raw) & frame[p.value_column].notna().to_numpy()) | np.isinf(raw)
    if text.any():
        r = int(np.argmax(text))
        raise DataError(f"column {p.value_column!r}: {data_row(r)} holds "
                        f"{frame[p.value_column].iloc[r]!r}, expected a finite number (or "
                        "empty for a suppressed cell)")
    bad_pub = (roles[flat] == "published") & np.isnan(raw)
    if bad_pub.any():
        raise DataError(f"column {p.value_column!r}: the published cell in "
                        f"{data_row(int(np.argmax(bad_pub)))} is empty; only suppressed cells "
                        "may be empty")
    values = np.full(size, np.nan)
    values[flat] = raw
    a, labels = constraint_matrix(dims)
    return frame, dims, flat, a, labels, values, roles


class SuppressionAudit(RiskMeasure):
    """Share of primary cells an outsider can recompute exactly or too closely (LP audit).

    For every suppressed cell the exact feasible interval [L, U] given every published cell, every
    additivity constraint of the hierarchies and the a-priori bounds (non-negativity; optionally
    ±relative around the true value or given columns): L = min y_c, U = max y_c, two LPs (Geurts
    1992, "Heuristics for cell suppression in tables", CBS; de Wolf 2002, "HiTaS", LNCS 2316;
    sdcTable ``attack()``), solved with HiGHS. U = inf (reported ``null``, ``unbounded``) when no
    finite bound exists. Exactly disclosed: U − L <= ``tolerance``. For every primary cell (status
    primary, or failing a rule while published, then L = U = X) the protection level of every
    firing rule as tau-Argus sets it (Table.cpp ``SetProtectionLevelCell``; Hundepool et al.
    2012, *Statistical Disclosure Control*, §4.2.3): (n,k) 100·Σ_{i<=n}x_i/k − X, p%
    (p/100)·x_1 − (X − x_1 − x_2), pq (p/q)·x_1 − (X − x_1 − x_2), frequency X·safety_range; the
    combined level is the largest magnitude-rule level, else the frequency level, else
    ``manual_safety``·X, at least ``min_level``. Levels are symmetric (LPL = UPL). A primary cell
    passes when L <= X − LPL + tol and U >= X + UPL − tol (all comparisons with the tolerance).
    The frequency rule follows sdcTable (unsafe iff 0 < n <= ``n``; tau-Argus's minFreq is n + 1).
    Without an original side no rule runs and every level is ``min_level`` (sdcTable's default
    LPL = UPL = 1). Each cell lists ``alone_in``, a constraint in which it is the only
    suppressed cell (a suppressed total whose parts are all published), which makes it exact.
    Weights follow tau-Argus (DataCell.cpp ``ComputeWeightedScoreCell``, as the sensitivity
    rules of ``_cells``): a contributor of weight w counts as w units, the largest-units sums
    T(j) fill j units in descending order (the last contributor fractionally), the cell total
    is Σ w·x and, with ``weighted_frequency``, the count Σ w; integer weights equal replicating
    each contributor w times, which is what sdcTable does with ``sampWeightInd``. Microdata
    carry a weight per contributor (``weight``); an original cell table a weight per cell
    (``weight``) or per listed contribution (``contribution_weight_columns``), its count as
    given. Without ``nonnegative`` contributions are ranked by absolute value (tau-Argus).
    value: failing primary cells / primary cells. ``compat="sdctable"`` caps every suppressed
    cell at the largest cell value as sdcTable's ``attack()`` does (it hides unbounded intervals
    and uses knowledge an outsider lacks; off by default). The LP audit is an outsider attack:
    a singleton respondent's insider knowledge is not modelled.
    """

    name = "SuppressionAudit"
    description = "Exact LP intervals of suppressed cells and tau-Argus protection checks."
    unit = "share"
    accepts = ("microdata", "table")

    class Params(TableParams):
        rules: Rules = Field(default_factory=Rules, description="Sensitivity rules setting the "
                             "protection levels of primary cells.")
        magnitude: str | None = Field(None, description="Original microdata: magnitude column.")
        count_column: str | None = Field(None, description="Original cell table: contributors.")
        contribution_columns: list[str] = Field(
            default_factory=list, description="Original cell table: largest contributions.")
        weight: str | None = Field(
            None, description="Sampling weights: in microdata a weight per contributor, in an "
                              "original cell table a weight per cell (all its contributors); "
                              "a unit of weight w counts as w units (tau-Argus).")
        contribution_weight_columns: list[str] = Field(
            default_factory=list, description="Original cell table: the weight of each of "
                                              "'contribution_columns', in the same order.")
        weighted_frequency: bool = Field(
            True, description="With microdata weights: count contributors as the sum of "
                              "weights (tau-Argus) rather than as records.")
        apriori: Apriori | None = Field(
            None, description="A-priori bounds an attacker knows: {relative: r} around the "
                              "true value, or {lower_column, upper_column}.")
        nonnegative: bool = Field(True, description="Cells are non-negative (attacker bound).")
        manual_safety: float = Field(0.0, ge=0, description="Level of a primary cell no rule "
                                     "flags, as a share of X (tau-Argus ManualSafetyPerc).")
        min_level: float = Field(1.0, ge=0, description="Floor of every level (tau-Argus MinLPL).")
        tolerance: float = Field(1e-6, gt=0, description="Absolute tolerance of the checks.")
        compat: Literal["none", "sdctable"] = Field(
            "none", description="sdctable: cap every interval at the largest cell value, as "
                                "sdcTable's audit does (knowledge an outsider lacks).")

    def columns(self) -> dict[Side, list[str]]:
        p = self.params
        bounds = [c for c in (p.apriori.lower_column, p.apriori.upper_column) if c] \
            if p.apriori else []
        given = [p.magnitude, p.count_column, *p.contribution_columns, p.weight,
                 *p.contribution_weight_columns]
        return {"original": [*p.dimensions, *(c for c in given if c)],
                "anonymized": [*p.table_columns(), *bounds]}

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if anonymized is None:
            raise DataError("SuppressionAudit needs the protected table (anonymized side)")
        frame, dims, flat, a, labels, values, roles = load_table(anonymized, p, ctx)
        size = len(values)
        stats = _original_stats(original, p, dims, size) if original is not None else None
        true = values.copy()
        if stats is not None:
            missing = np.isnan(true)
            true[missing] = stats.total[missing]
        if np.isnan(true).any():
            raise DataError(f"column {p.value_column!r}: {int(np.isnan(true).sum())} suppressed "
                            "cells are empty and no original side gives their values")
        if p.nonnegative and (true < 0).any():
            i = int(np.argmax(true < 0))
            raise DataError(f"cell {_where(i, dims)} is negative ({true[i]:g}); set "
                            "nonnegative: false to audit tables with negative cells")
        gap = additivity_gaps(a, true, labels, dims, 1e-9)
        if gap:
            raise DataError(gap)
        sup = np.flatnonzero(roles != "published")
        extra = None
        if p.apriori and (p.apriori.lower_column or p.apriori.upper_column):
            lo = np.full(size, -np.inf)
            hi = np.full(size, np.inf)
            if p.apriori.lower_column:
                lo[flat] = pd.to_numeric(frame[p.apriori.lower_column]).to_numpy(float)
            if p.apriori.upper_column:
                hi[flat] = pd.to_numeric(frame[p.apriori.upper_column]).to_numpy(float)
            extra = (np.nan_to_num(lo[sup], nan=-np.inf), np.nan_to_num(hi[sup], nan=np.inf))
        lb, ub = apriori_bounds(true[sup], p.apriori.model_dump() if p.apriori else None,
                                p.nonnegative, extra)
        if p.compat == "sdctable":
            ub = np.minimum(ub, np.nanmax(true))
        iv = audit_intervals(a, np.nan_to_num(values), sup, lb, ub, ctx)
        alone = _alone_in(a, sup, labels, size)
        lower = np.full(size, np.nan)
        upper = np.full(size, np.nan)
        lower[sup], upper[sup] = iv.lower, iv.upper
        levels, per_rule, flagged = _levels(p, stats, true, size)
        primary = roles == "primary"
        if flagged is not None:
            primary = primary | flagged
        published_primary = primary & (roles == "published")
        lower[published_primary] = upper[published_primary] = true[published_primary]
        tol = p.tolerance
        exact = (upper - lower) <= tol
        lpl = levels
        ok = (lower <= true - lpl + tol) & (upper >= true + lpl - tol)
        passed = primary & ok & ~exact
        failed = primary & ~passed
        n_primary = int(primary.sum())
        shown = np.arange(size)  # every cell: the report draws the whole pattern
        codes = cell_codes(shown, dims)
        cells = pd.DataFrame(codes)
        cells["role"] = [("primary" if primary[i] else roles[i]) for i in shown]
        cells["published"] = roles[shown] == "published"
        cells["value"] = true[shown]
        cells["lower"] = lower[shown]
        cells["upper"] = np.where(np.isinf(upper[shown]), np.nan, upper[shown])
        cells["unbounded"] = np.isinf(upper[shown])
        cells["exact"] = exact[shown]
        cells["protection_level"] = np.where(primary[shown], lpl[shown], np.nan)
        for name, lv in per_rule.items():
            cells[f"level_{name}"] = lv[shown]
        cells["margin_lower"] = true[shown] - lower[shown]
        cells["margin_upper"] = np.where(np.isinf(upper[shown]), np.nan,
                                         upper[shown] - true[shown])
        cells["alone_in"] = [alone.get(int(i)) for i in shown]
        cells["pass"] = np.where(primary[shown], passed[shown], None)
        cells["status"] = np.select(
            [failed[shown], passed[shown], exact[shown]],
            ["failed", "protected", "disclosed"], default="suppressed")
        cells.loc[(roles[shown] == "published") & ~primary[shown], "status"] = "published"
        records = cells.astype(object).where(cells.notna(), None).to_dict("records")
        value = float(failed.sum()) / n_primary if n_primary else 0.0
        return MeasureResult(value=value, details={
            "keys": [d.name for d in dims],
            "n_cells": size, "n_suppressed": len(sup), "n_primary": n_primary,
            "n_failed": int(failed.sum()), "n_exact": int((exact & (roles != "published")).sum()),
            "n_exact_secondary": int((exact & (roles == "secondary")).sum()),
            "n_unbounded": int(np.isinf(upper).sum()),
            "n_constraints": int(a.shape[0]), "n_constraints_used": iv.n_constraints,
            "n_components": iv.n_components, "lp_solver": lp_solver(),
            "constraints": sorted(set(labels)),
            "failed": [r for r in records if r["status"] == "failed"],
            "cells": records,  # every cell; status published/suppressed/protected/failed/disclosed
            "compat": ("sdcTable attack(): suppressed cells capped at the largest cell value"
                       if p.compat == "sdctable" else None),
        })


def _alone_in(a, sup: np.ndarray, labels: list[str], size: int) -> dict[int, str]:
    """Suppressed cells that are the only suppressed cell of some constraint (a suppressed
    total whose parts are all published, a lone cell in a row): exact by that constraint alone,
    named so the user sees why."""
    is_sup = np.zeros(size)
    is_sup[sup] = 1.0
    a = a.tocsr()
    per_row = np.abs(a) @ is_sup
    out: dict[int, str] = {}
    for r in np.flatnonzero(per_row == 1):
        cols = a.indices[a.indptr[r]:a.indptr[r + 1]]
        cell = int(cols[is_sup[cols] == 1][0])
        out.setdefault(cell, labels[r])
    return out


def _where(i: int, dims) -> str:
    return ", ".join(f"{k}={v[0]}" for k, v in cell_codes(np.array([i]), dims).items())


def _original_stats(original: Dataset, p: Any, dims, size: int) -> LevelStats:
    """Contributors, total and top-unit sums T(1..depth) of every cell of the table, weighted
    as tau-Argus does (a unit of weight w counts as w units; :func:`top_units`)."""
    frame = original.frame
    if len(frame) == 0:
        raise DataError("the original side is empty")
    depth = _depth(p)
    if p.count_column:
        for name in ("count_column", "magnitude", "weight"):
            col = getattr(p, name)
            if col and col not in frame.columns:
                raise DataError(f"original cell table: column {col!r} ({name}) is missing "
                                f"(columns: {list(frame.columns)})")
        if len(p.contribution_columns) < depth:
            raise DataError(f"original cell table: the rules need the {depth} largest "
                            f"contributions, 'contribution_columns' gives "
                            f"{len(p.contribution_columns)}")
        if p.contribution_weight_columns and (
                len(p.contribution_weight_columns) != len(p.contribution_columns)):
            raise DataError("'contribution_weight_columns' must name one column per "
                            f"'contribution_columns' ({len(p.contribution_columns)}), not "
                            f"{len(p.contribution_weight_columns)}")
        if p.weight and p.contribution_weight_columns:
            raise DataError("give either 'weight' (per cell) or 'contribution_weight_columns' "
                            "(per contribution), not both")
        idx = product_index(frame, dims)
        if len(np.unique(idx)) != len(idx):
            dup = int(np.flatnonzero(pd.Series(idx).duplicated().to_numpy())[0])
            raise DataError(f"original cell table: {data_row(dup)} repeats the cell "
                            f"{_where(int(idx[dup]), dims)}")
        n = np.zeros(size)
        n[idx] = _column(frame, p.count_column, "count_column", allow_nan=False)
        contrib = np.column_stack([np.empty((len(frame), 0))] + [
            _column(frame, c, "contribution_columns", allow_nan=True)
            for c in p.contribution_columns])
        if p.weight:
            w_cell = _column(frame, p.weight, "weight", allow_nan=False, positive=True)
            weights = np.repeat(w_cell[:, None], contrib.shape[1], axis=1)
        elif p.contribution_weight_columns:
            weights = np.column_stack([
                _column(frame, c, "contribution_weight_columns", allow_nan=True, positive=True)
                for c in p.contribution_weight_columns])
        else:
            weights = None
        have = ~np.isnan(contrib)
        if weights is not None:
            lost = have & np.isnan(weights)
            if lost.any():
                r, j = np.argwhere(lost)[0]
                raise DataError(f"original cell table: {data_row(int(r))} has a contribution in "
                                f"{p.contribution_columns[j]!r} but no weight in "
                                f"{p.contribution_weight_columns[j]!r}")
        if p.nonnegative and (contrib[have] < 0).any():
            r, j = np.argwhere(have & (np.nan_to_num(contrib) < 0))[0]
            raise DataError(f"original column {p.contribution_columns[j]!r}: negative "
                            f"contribution in {data_row(int(r))}; set nonnegative: false")
        cells = np.repeat(idx[:, None], contrib.shape[1], axis=1)[have]
        top = top_units(cells, np.abs(contrib[have]),
                        None if weights is None else weights[have], size, depth)
        total = np.full(size, np.nan)
        if p.magnitude:
            total[idx] = _column(frame, p.magnitude, "magnitude", allow_nan=True)
        return LevelStats(n, total, top)
    if not p.magnitude:
        raise DataError("original microdata need 'magnitude' (or give a cell table with "
                        "'count_column' and 'contribution_columns')")
    if p.contribution_weight_columns:
        raise DataError("'contribution_weight_columns' applies to an original cell table "
                        "(with 'count_column'); for microdata give 'weight'")
    for col in [*p.dimensions, p.magnitude, *([p.weight] if p.weight else [])]:
        if col not in frame.columns:
            raise DataError(f"original microdata: column {col!r} is missing (columns: "
                            f"{list(frame.columns)})")
    x = _column(frame, p.magnitude, "magnitude", allow_nan=False)
    if p.nonnegative and (x < 0).any():
        raise DataError(f"original column {p.magnitude!r}: negative magnitude in "
                        f"{data_row(int(np.argmax(x < 0)))}; set nonnegative: false")
    w = _column(frame, p.weight, "weight", allow_nan=False, positive=True) if p.weight else None
    rows, cell = leaf_to_cells(frame, dims)
    v = np.abs(x[rows])
    wr = None if w is None else w[rows]
    n = np.bincount(cell, weights=wr if (wr is not None and p.weighted_frequency) else None,
                    minlength=size).astype(float)
    total = np.bincount(cell, weights=x[rows] if wr is None else x[rows] * wr, minlength=size)
    return LevelStats(n, total, top_units(cell, v, wr, size, depth))


def _depth(p: Any) -> int:
    """How many largest units the rules read: n of every (n,k) rule, 2 for p% and pq, none
    for the frequency rule alone."""
    return max([2 if (p.rules.p_percent or p.rules.pq) else 0,
                *(r.n for r in p.rules.dominance)])


def _column(frame: pd.DataFrame, col: str, param: str, allow_nan: bool,
            positive: bool = False) -> np.ndarray:
    """A numeric column of the original side, with an error naming the param, column and row."""
    raw = frame[col]
    x = pd.to_numeric(raw, errors="coerce").to_numpy(float)
    bad = np.isnan(x) & raw.notna().to_numpy()
    if not allow_nan:
        bad |= np.isnan(x)
    bad |= np.isinf(x)
    if positive:
        bad |= x <= 0
    if bad.any():
        r = int(np.argmax(bad))
        need = "a number > 0" if positive else "a finite number"
        v = raw.iloc[r]
        held = "is empty" if pd.isna(v) else f"holds {getattr(v, 'item', lambda: v)()!r}"
        raise DataError(f"original column {col!r} ({param}): {data_row(r)} {held}, expected "
                        f"{need}" + ("" if allow_nan else " (missing values are not allowed)"))
    return x


def _levels(p: Any, stats: LevelStats | None, true: np.ndarray, size: int):
    """Combined tau-Argus level per cell, the level of every firing rule, and rule flags."""
    per_rule: dict[str, np.ndarray] = {}
    if stats is None:
        return np.full(size, max(p.min_level, 0.0)), per_rule, None
    lv = LevelStats(stats.contributors, true, stats.top)
    nonempty = lv.contributors > 0
    magnitude = np.full(size, np.nan)
    flagged = np.zeros(size, dtype=bool)
    rules: list[tuple[str, Rule]] = [(f"nk{r.n}_{r.k:g}", Rule("nk", n=r.n, k=r.k))
                                     for r in p.rules.dominance]
    if p.rules.p_percent:
        rules.append((f"p{p.rules.p_percent.p:g}", Rule("p", n=1, p=p.rules.p_percent.p)))
    if p.rules.pq:
        rules.append((f"pq{p.rules.pq.p:g}_{p.rules.pq.q:g}",
                      Rule("p", n=1, p=p.rules.pq.p, q=p.rules.pq.q)))
    for name, rule in rules:
        fire = rule.unsafe(lv) & nonempty
        level = np.where(fire, np.maximum(rule.protection(lv), p.min_level), np.nan)
        per_rule[name] = level
        magnitude = np.fmax(magnitude, level)
        flagged |= fire
    freq = np.full(size, np.nan)
    if p.rules.frequency:
        fire = nonempty & (lv.contributors <= p.rules.frequency.n)
        freq = np.where(fire, np.maximum(true * p.rules.frequency.safety_range, p.min_level),
                        np.nan)
        per_rule["frequency"] = freq
        flagged |= fire
    combined = np.where(np.isnan(magnitude), freq, magnitude)
    combined = np.where(np.isnan(combined), np.abs(true) * p.manual_safety, combined)
    combined = np.where(combined <= 0, 1.0, combined)
    return np.maximum(combined, p.min_level), per_rule, flagged
