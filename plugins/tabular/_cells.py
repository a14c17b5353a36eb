"""Cells of a magnitude table: the per-cell statistics the sensitivity rules read, built from
microdata, a class summary or a table dataset, and the params that say how.

A cell table is built either from microdata (``cells`` span the table, ``magnitude`` is the
response, optional ``contributor`` ids and ``weight``) or from a ready ``table`` dataset (one row
per cell with a count, a total and the largest contributions). For every cell it holds the number
of contributors, the total and the cumulative top-unit sums T(1), T(2), ... that the rules need.
A table's roles come from its load options (``keys``, ``count``, ``total``, ``contributions``);
the params ``cells``, ``count_column``, ``total_column`` and ``contribution_columns`` fill the
roles it leaves unset (e.g. a DataFrame evaluated with ``kind="table"``), and a role set both
ways to different columns is an error. A table's contributions are sorted per row; a missing
j-th largest counts 0 in a cell of fewer than j contributors and is an error otherwise, as are
non-numeric values and (for non-negative data) contributions summing to more than the total.
With ``negative="absolute"`` a table's rule total is |total|, the best a table allows.

From microdata the cells are built from the released side's class summary keyed by the spanning
variables, contributor, magnitude and weight (:func:`cell_specs`): each summary row stands for
its records, so counts, totals, holdings and the top contributions are those of the records,
and an engine can compute it without gathering the data.

Conventions (those of tau-Argus and sdcTable, with their differences noted):

- Contributions are ranked in descending order; ties are interchangeable (the sums do not depend on
  which of two equal contributions comes first).
- Weights follow tau-Argus (``WGT``): a record of weight w counts as w units; T(j) fills j units in
  descending order, the last record taking a fractional share (DataCell.cpp
  ``ComputeWeightedScoreCell``); for integer weights this equals replicating each record w times.
  Unlike tau-Argus, which keeps only the top n records per cell and so under-fills when weights
  are below 1, every record is used, and the x_1 of the p% and pq rules is T(1), the first unit
  (tau-Argus takes the largest record's value there, whatever its weight). The cell total is
  Σ w·x and, with ``frequency="weighted"``, the count is Σ w (tau-Argus's minimum frequency on
  weighted data); ``frequency="unweighted"`` counts records.
- ``contributor`` (holding or enterprise id): a contributor's records in a cell are summed before
  ranking, and the count is the number of distinct contributors (tau-Argus holding level). A
  record with a missing id belongs to no holding and is a contributor of its own.
  Weights and contributors cannot be combined, as in tau-Argus (UserSupport #312). With
  ``negative="absolute"`` a contributor's records are summed with their signs before |·|.
- Negative magnitudes are an error (sdcTable). ``negative="absolute"`` ranks by absolute value
  as tau-Argus does, and also takes the rule total as Σ|x|: tau-Argus's signed total makes every
  all-negative cell fail the p% rule (UserSupport #156). The reported ``total`` stays signed.
- A cell without contributors is empty and never unsafe. Equality is safe in every rule; ties are
  decided up to a relative tolerance of 1e-10 of the cell total, so that rounding in a summation
  never turns an exact tie into a violation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from pydantic import AfterValidator, Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    FrameData,
    Microdata,
    Params,
    SummarySpec,
    Table,
    data_row,
    distinct,
)
from anoneval.plugins.tabular._rules import RTOL, LevelStats


class SpanParams(Params):
    """Params of every tabular measure: the spanning variables and a table's count column."""

    cells: Annotated[list[str], AfterValidator(distinct("spanning variables repeat"))] = Field(
        default_factory=list,
        description="Spanning (categorical) variables of the table. Required for microdata; for "
                    "a table dataset they default to the table's 'keys' load option.")
    count_column: str | None = Field(
        None, description="Table data: column with the number of units (contributors) per cell, "
                          "when the table's 'count' load option is not set.")



class CellParams(SpanParams):
    """Params every sensitivity rule shares: how to build the cells and what to report."""

    magnitude: str | None = Field(
        None, description="Response variable summed in the cells (microdata only).")
    contributor: str | None = Field(
        None, description="Holding or enterprise id (microdata only): a contributor's records in "
                          "a cell are summed before ranking and the count is of contributors.")
    weight: str | None = Field(
        None, description="Sampling weight (microdata only), used as tau-Argus does: a record of "
                          "weight w counts as w units.")
    frequency: Literal["weighted", "unweighted"] = Field(
        "weighted",
        description="With a weight: count contributors as Σw (tau-Argus) or as records.")
    totals: bool = Field(
        False, description="Also evaluate every marginal and the grand total (microdata only).")
    total_code: str = Field("Total", description="Key value of an aggregated variable in margins.")
    negative: Literal["error", "absolute"] = Field(
        "error",
        description="Negative magnitudes: an error, or rank by absolute value (tau-Argus).")
    total_column: str | None = Field(
        None, description="Table data: column with the cell total, when 'total' is not set.")
    contribution_columns: list[str] = Field(
        default_factory=list,
        description="Table data: columns with the largest contributions, largest first, when "
                    "the table's 'contributions' load option is not set.")
    max_rows: int | None = Field(
        10_000, ge=0, description="Rows of details['cells'] (unsafe cells first); null for all. "
                                  "Counts and shares are always exact.")



@dataclass
class CellTable:
    keys: pd.DataFrame
    records: np.ndarray
    signed_total: np.ndarray | None
    levels: dict[str, LevelStats] = field(default_factory=dict)

    @property
    def empty(self) -> np.ndarray:
        return self.records <= 0


def _show(value: Any) -> str:
    """A value for an error message: numpy scalars as plain Python numbers."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _numeric(frame: pd.DataFrame, column: str, role: str) -> np.ndarray:
    """A column as float64, with an error naming the first non-numeric or missing row."""
    s = frame[column]
    if pd.api.types.is_bool_dtype(s) or not (pd.api.types.is_numeric_dtype(s)
                                             or s.dtype == object
                                             or pd.api.types.is_string_dtype(s)):
        raise DataError(f"{role} column {column!r} must be numeric; it has type {s.dtype}")
    values = pd.to_numeric(s, errors="coerce").to_numpy(np.float64, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        what = "missing" if pd.isna(s.iloc[row]) else "not a finite number"
        raise DataError(f"{role} column {column!r} must be numeric: {data_row(row)} (index "
                        f"{_show(s.index[row])}) holds {_show(s.iloc[row])}, which is {what} "
                        f"({int(bad.sum())} such rows)")
    return values


def top_units(cell: np.ndarray, value: np.ndarray, weight: np.ndarray | None, n_cells: int,
              depth: int) -> np.ndarray:
    """T(1..depth) per cell: the sum of the j largest units, weighted units filled fractionally.

    Record r with value x and weight w, preceded (in descending order) by records of total weight
    W, adds x · clip(j − W, 0, w) to T(j). Each pass extracts the largest remaining record of every
    cell with ``np.maximum.at`` (no sort, no loop over cells); unweighted data needs ``depth``
    passes, weights below 1 need more, restricted to the cells not yet filled.
    """
    top = np.zeros((n_cells, depth))
    if depth == 0 or len(value) == 0:
        return top
    units = np.arange(1, depth + 1, dtype=np.float64)
    filled = np.zeros(n_cells)
    idx = np.arange(len(value))
    c, work = cell, value.astype(np.float64, copy=True)  # values are >= 0 here
    w = weight
    done = 0
    while len(idx):
        best = np.full(n_cells, -1.0)
        np.maximum.at(best, c, work)
        hit = np.flatnonzero(work == best[c])
        hit = hit[work[hit] >= 0]
        if not len(hit):
            break
        _, first = np.unique(c[hit], return_index=True)
        pick = hit[first]
        pc = c[pick]
        wv = w[pick] if w is not None else np.ones(len(pick))
        prev = filled[pc]
        top[pc] += work[pick, None] * np.clip(units[None, :] - prev[:, None], 0.0, wv[:, None])
        filled[pc] += wv
        work[pick] = -1.0
        done += 1
        if done >= depth:
            if w is None:
                break
            keep = (work >= 0) & (filled[c] < depth)
            idx, c, work, w = idx[keep], c[keep], work[keep], w[keep]
    return top


def _first_rows(ids: np.ndarray, n_groups: int) -> np.ndarray:
    """Row index of the first record of each group."""
    first_mask = ~pd.Series(ids).duplicated().to_numpy()
    rows = np.flatnonzero(first_mask)
    out = np.empty(n_groups, dtype=np.int64)
    out[ids[rows]] = rows
    return out


def _sum_per_pair(a: np.ndarray, b: np.ndarray, n_b: int,
                  value: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The ``a`` of each distinct (a, b) pair and the sum of ``value`` over the pair's rows.

    Sorts the pair key with the row number packed into its low bits: a value sort of one int64
    array is several times faster than an argsort (and than hashing mostly distinct keys).
    """
    n = len(a)
    n_b = max(n_b, 1)
    idx_bits = max((n - 1).bit_length(), 1)
    if ((int(a.max(initial=0)) + 1) * n_b).bit_length() + idx_bits <= 63:
        packed = np.sort(((a * n_b + b) << idx_bits) | np.arange(n, dtype=np.int64))
        order = packed & ((1 << idx_bits) - 1)
        key = packed >> idx_bits
        new = key[1:] != key[:-1]
        first_a = key // n_b
    else:  # keys too wide to pack: lexicographic argsort
        order = np.lexsort((b, a))
        first_a, sb = a[order], b[order]
        new = (first_a[1:] != first_a[:-1]) | (sb[1:] != sb[:-1])
    starts = np.flatnonzero(np.concatenate([[n > 0], new]))
    sums = None if value is None else np.add.reduceat(value[order], starts)
    return first_a[starts], sums


@dataclass
class _Records:
    """Validated record arrays of microdata; ``count`` is each row's number of records (rows
    of a class summary stand for several), None for one each. ``weight`` is the total weight
    of a row's records."""

    value: np.ndarray | None
    signed: np.ndarray | None
    weight: np.ndarray | None
    holder: np.ndarray | None
    n_holders: int
    count: np.ndarray | None = None


def _microdata_records(data: Microdata, p: CellParams, need_magnitude: bool,
                       owner: str, count: np.ndarray | None = None) -> _Records:
    if not p.cells:
        raise DataError(f"{owner}: 'cells' (the spanning variables) is required for microdata")
    cols = [*p.cells, *(c for c in (p.magnitude, p.contributor, p.weight) if c)]
    data.require(cols, "column")
    for name in ("count_column", "total_column", "contribution_columns"):
        if getattr(p, name):
            raise DataError(f"{owner}: {name!r} applies to table data only; this is microdata")
    if need_magnitude and not p.magnitude:
        raise DataError(f"{owner}: 'magnitude' (the response variable) is required for microdata")
    if p.weight and p.contributor:
        raise DataError(f"{owner}: 'weight' and 'contributor' cannot be combined (as in "
                        "tau-Argus): a holding has no single weight")
    frame = data.frame
    weight = None
    if p.weight:
        weight = _numeric(frame, p.weight, "weight")
        if (weight <= 0).any():
            row = int(np.flatnonzero(weight <= 0)[0])
            raise DataError(f"weight column {p.weight!r} must be > 0: {data_row(row)} holds "
                            f"{_show(weight[row])}")
    signed = value = None
    if p.magnitude:
        signed = _numeric(frame, p.magnitude, "magnitude")
        neg = signed < 0
        if neg.any() and p.negative == "error":
            ids, _ = data.group_ids(p.cells)
            rows = np.flatnonzero(neg)
            raise DataError(
                f"magnitude column {p.magnitude!r} has {len(rows)} negative values in "
                f"{len(np.unique(ids[rows]))} cells (first at {data_row(int(rows[0]))}: "
                f"{_show(signed[rows[0]])}); the sensitivity rules assume non-negative "
                "contributions. Set negative: 'absolute' to rank by absolute value as "
                "tau-Argus does")
        value = np.abs(signed) if neg.any() else signed
    holder, n_holders = None, 0
    if p.contributor:
        holder, uniq = data.codes(p.contributor)
        n_holders = len(uniq)
        missing = frame[p.contributor].isna().to_numpy()
        if missing.any():  # a record in no holding is a contributor of its own
            holder = holder.copy()
            holder[missing] = n_holders + np.arange(int(missing.sum()))
            n_holders += int(missing.sum())
    if count is not None and weight is not None:
        weight = weight * count
    return _Records(value, signed, weight, holder, n_holders, count)


def _grouping_stats(cell: np.ndarray, n_cells: int, rec: _Records, p: CellParams,
                    depths: dict[str, int]) -> tuple[np.ndarray, np.ndarray | None,
                                                     dict[str, LevelStats]]:
    records = np.bincount(cell, rec.count, minlength=n_cells).astype(np.float64)
    w = rec.weight
    mult = w if w is not None else rec.count  # each row's weight, or its number of records
    signed_total = None
    if rec.signed is not None:
        signed_total = np.bincount(cell, rec.signed if mult is None else rec.signed * mult,
                                   minlength=n_cells)
    levels: dict[str, LevelStats] = {}
    for level, depth in depths.items():
        cl, val, wl = cell, rec.value, mult
        if level == "holding":
            assert rec.holder is not None
            # a holding's records are summed with their signs, then ranked by |sum|
            signed = rec.signed
            if signed is not None and rec.count is not None:
                signed = signed * rec.count
            cl, val = _sum_per_pair(cell, rec.holder, rec.n_holders, signed)
            val = None if val is None else np.abs(val)
            wl = None
            contributors = np.bincount(cl, minlength=n_cells).astype(np.float64)
        elif w is not None and p.frequency == "weighted":
            contributors = np.bincount(cell, w, minlength=n_cells)
        else:
            contributors = records
        if val is None:
            total = np.zeros(n_cells)
            top = np.zeros((n_cells, 0))
        else:
            total = np.bincount(cl, val if wl is None else val * wl, minlength=n_cells)
            top = top_units(cl, val, wl, n_cells, depth)
        levels[level] = LevelStats(contributors, total, top)
    return records, signed_total, levels


def _microdata_cells(data: Microdata, p: CellParams, depths: dict[str, int],
                     need_magnitude: bool, owner: str, ctx: Context,
                     rec: _Records | None = None) -> CellTable:
    if rec is None:
        rec = _microdata_records(data, p, need_magnitude, owner)
    groupings: list[tuple[str, ...]] = [tuple(p.cells)]
    if p.totals:
        groupings += [s for r in range(len(p.cells) - 1, -1, -1)
                      for s in combinations(p.cells, r)]
    parts: list[CellTable] = []
    frame = data.frame
    with ctx.progress(len(groupings), f"{owner} cells") as bar:
        for cols in groupings:
            if cols:
                ids, n_cells = data.group_ids(cols)
            else:
                ids, n_cells = np.zeros(len(frame), dtype=np.int64), 1 if len(frame) else 0
            records, signed_total, levels = _grouping_stats(ids, n_cells, rec, p, depths)
            rows = _first_rows(ids, n_cells)
            keys = pd.DataFrame(index=pd.RangeIndex(n_cells))
            for col in p.cells:
                if col in cols:
                    keys[col] = frame[col].to_numpy()[rows]
                else:
                    keys[col] = p.total_code
            if p.totals:
                keys = keys.astype(object)
            parts.append(CellTable(keys, records, signed_total, levels))
            bar.update()
    if len(parts) == 1:
        return parts[0]
    signed = [t.signed_total for t in parts if t.signed_total is not None]
    return CellTable(
        pd.concat([t.keys for t in parts], ignore_index=True),
        np.concatenate([t.records for t in parts]),
        np.concatenate(signed) if signed else None,
        {lv: LevelStats(np.concatenate([t.levels[lv].contributors for t in parts]),
                        np.concatenate([t.levels[lv].total for t in parts]),
                        np.concatenate([t.levels[lv].top for t in parts]))
         for lv in depths},
    )


def _table_attr(table: Table, attr: str, given: Any, param: str) -> Any:
    """A table role from its load option, else from the param; both set and different: error."""
    own = getattr(table, attr)
    if own and given and own != given:
        raise DataError(f"the table's {attr!r} load option is {own!r} but the param {param!r} "
                        f"is {given!r}; give one of them")
    return own or given


def table_keys(table: Table, cells: list[str]) -> list[str]:
    """Key columns of a table dataset: its 'keys' load option, else the 'cells' param."""
    keys = _table_attr(table, "keys", cells, "cells")
    if not keys:
        raise DataError("the table has no key columns: set the 'keys' load option or the "
                        "'cells' param")
    table.require(keys, "key column")
    dup = table.frame.duplicated(subset=keys).to_numpy()
    if dup.any():
        row = int(np.flatnonzero(dup)[0])
        raise DataError(f"table keys {keys} are not unique: {data_row(row)} repeats "
                        f"{table.frame[keys].iloc[row].tolist()}")
    return list(keys)


def table_count(table: Table, count_column: str | None) -> str:
    """The count column of a table dataset: its 'count' load option, else the param."""
    count = _table_attr(table, "count", count_column, "count_column")
    if not count:
        raise DataError("the table has no count column: set the 'count' load option or the "
                        "'count_column' param")
    table.require([count], "count column")
    return str(count)


def _table_cells(table: Table, p: CellParams, depths: dict[str, int], need_magnitude: bool,
                 owner: str) -> CellTable:
    for name in ("magnitude", "contributor", "weight"):
        if getattr(p, name):
            raise DataError(f"{owner}: {name!r} applies to microdata only; for a table use the "
                            "count, total and contributions columns")
    if p.totals:
        raise DataError(f"{owner}: 'totals' applies to microdata only; a ready table should "
                        "carry its margins as rows")
    if "holding" in depths:
        raise DataError(f"{owner}: holding-level rules need microdata with a 'contributor'")
    keys = table_keys(table, p.cells)
    frame = table.frame
    count_col = table_count(table, p.count_column)
    count = _numeric(frame, count_col, "count")
    if (count < 0).any():
        row = int(np.flatnonzero(count < 0)[0])
        raise DataError(f"count column {count_col!r} must be >= 0: {data_row(row)} holds "
                        f"{_show(count[row])}")
    total_col = _table_attr(table, "total", p.total_column, "total_column")
    contrib = _table_attr(table, "contributions", p.contribution_columns, "contribution_columns")
    depth = depths.get("record", 0)
    signed_total = None
    total = np.zeros(len(frame))
    top = np.zeros((len(frame), 0))
    table.require([*([total_col] if total_col else []), *contrib], "table column")
    if total_col:
        signed_total = _numeric(frame, total_col, "total")
    if need_magnitude:
        if not total_col:
            raise DataError(f"{owner} needs the cell totals: set the table's 'total' load option "
                            "or the 'total_column' param")
        if len(contrib) < depth:
            raise DataError(f"{owner} needs the {depth} largest contributions per cell; the "
                            f"table gives {len(contrib)} ({list(contrib)}): set the "
                            "'contributions' load option or 'contribution_columns'")
    if signed_total is not None:
        tops = _table_contributions(frame, contrib, count)
        negative = (signed_total < 0) | (tops < 0).any(axis=1)
        if negative.any() and p.negative == "error":
            raise DataError(f"the table has negative totals or contributions in "
                            f"{int(negative.sum())} cells (first at "
                            f"{data_row(int(np.flatnonzero(negative)[0]))}); the sensitivity "
                            "rules assume non-negative contributions. Set negative: 'absolute' "
                            "to rank by absolute value as tau-Argus does")
        tops = -np.sort(-np.abs(tops), axis=1)
        total = np.abs(signed_total)
        top = np.cumsum(tops, axis=1)
        if p.negative == "error" and contrib:
            over = top[:, -1] > total * (1 + RTOL) + RTOL
            if over.any():
                row = int(np.flatnonzero(over)[0])
                raise DataError(f"the contributions {list(contrib)} of {data_row(row)} sum to "
                                f"{top[row, -1]:g}, more than the cell total {total[row]:g} "
                                f"({total_col!r})")
    keys_frame = frame[keys].reset_index(drop=True)
    return CellTable(keys_frame, count, signed_total,
                     {"record": LevelStats(count, total, top)})


def _table_contributions(frame: pd.DataFrame, columns: list[str],
                         count: np.ndarray) -> np.ndarray:
    """The contribution columns as a (cells, columns) array. A missing j-th largest contribution
    counts 0 in a cell with fewer than j contributors and is an error in any other cell, where
    taking it as 0 would understate the cell's risk."""
    tops = np.zeros((len(frame), len(columns)))
    for j, col in enumerate(columns):
        s = frame[col]
        values = pd.to_numeric(s, errors="coerce").to_numpy(np.float64, na_value=np.nan)
        given = s.notna().to_numpy()
        bad = given & ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise DataError(f"contribution column {col!r} must be numeric: {data_row(row)} holds "
                            f"{_show(s.iloc[row])} ({int(bad.sum())} such rows)")
        missing = ~given & (count >= j + 1)
        if missing.any():
            row = int(np.flatnonzero(missing)[0])
            raise DataError(f"contribution column {col!r} (the {j + 1}. largest) is missing at "
                            f"{data_row(row)}, whose cell has {count[row]:g} contributors; give "
                            f"it, or 0 ({int(missing.sum())} such rows)")
        tops[:, j] = np.where(given, values, 0.0)
    return tops


def cell_specs(p: CellParams) -> list[SummarySpec] | None:
    """The class summaries the cells of microdata come from (keys: the spanning variables,
    contributor, magnitude and weight), or None for params of a table dataset."""
    if not p.cells or p.count_column or p.total_column or p.contribution_columns:
        return None
    keys = tuple(dict.fromkeys(
        [*p.cells, *(c for c in (p.contributor, p.magnitude, p.weight) if c)]))
    return [SummarySpec(side, keys) for side in ("anonymized", "original")]


def _summary_cells(data: Dataset, side: str, p: CellParams, depths: dict[str, int],
                   need_magnitude: bool, owner: str, ctx: Context) -> CellTable:
    """The cell table from the released side's class summary: each summary row stands for
    its records (equal spanning values, contributor, magnitude and weight)."""
    specs = cell_specs(p)
    assert specs is not None
    spec = SummarySpec(side, specs[0].keys)  # type: ignore[arg-type]
    if isinstance(data, FrameData):
        data.require(spec.keys, "column")
    summary = ctx.class_summary(spec)
    keys, counts = summary.keys, summary.counts
    if p.contributor:  # records in no holding are contributors of their own: one row each
        alone = keys[p.contributor].isna().to_numpy() & (counts > 1)
        if alone.any():
            take = np.repeat(np.arange(len(keys)), np.where(alone, counts, 1))
            keys = keys.iloc[take].reset_index(drop=True)
            counts = np.where(alone, 1, counts)[take]
    rows = Microdata(keys)
    try:
        rec = _microdata_records(rows, p, need_magnitude, owner, counts)
    except DataError as exc:
        if isinstance(data, FrameData):  # in memory: the same check names the data's row
            _microdata_records(data, p, need_magnitude, owner)  # type: ignore[arg-type]
        raise DataError(f"{exc} (a row of the class summary of the {side} data: one row per "
                        "distinct combination of its columns)") from exc
    return _microdata_cells(rows, p, depths, need_magnitude, owner, ctx, rec)


def build_cells(data: Dataset, p: CellParams, depths: dict[str, int], need_magnitude: bool,
                owner: str, ctx: Context, side: str = "anonymized") -> CellTable:
    """The cell table of microdata (from ``side``'s class summary when :func:`cell_specs`
    gives one) or of a table dataset; ``depths`` maps level → top units."""
    if isinstance(data, Table):
        return _table_cells(data, p, depths, need_magnitude, owner)
    if data.data_kind != "microdata":  # in memory, or partitioned (from its summaries)
        raise DataError(f"{owner} accepts microdata or table data, not {data.data_kind}")
    if "holding" in depths and not p.contributor:
        raise DataError(f"{owner}: holding-level rules need the 'contributor' param")
    if cell_specs(p) is not None:
        return _summary_cells(data, side, p, depths, need_magnitude, owner, ctx)
    return _microdata_cells(data, p, depths, need_magnitude, owner, ctx)

