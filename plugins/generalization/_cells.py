"""Cell tables of ARX's per-attribute quality models, computed block by block of paired records.

Granularity, GeneralizationIntensity, Missings, Height, AttributeSquaredError and SSESST read
each quasi-identifier on its own: per cell its original value, its released value, and two
facts of its record (suppressed; all released values equal, ARX's ``isSuppressed`` quirk).
Counting the records per distinct (original value, released value, suppressed, equal) is a
sum, so the table of a column is computed per block of paired records and the blocks' tables
add up (:func:`cell_partial`, :func:`cell_combine`): the dask engine computes them where the
records lie, and the client receives tables bounded by the column's distinct value pairs,
never the records nor the classes. The local engine runs the same code on one block, so both
engines give the same numbers. Conventions: :mod:`anoneval.plugins.generalization._quality`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from anoneval.core.api import (
    DELETED,
    Context,
    DataError,
    Dataset,
    LossMeasure,
    MeasureResult,
    pair_datasets,
)
from anoneval.plugins.generalization._quality import QualityParams, Side, compared
from anoneval.plugins.generalization._tables import _checked_table, fallback_table
from anoneval.plugins.microdata._common import NULL_TEXT, Column, token_column, warn_missing


def paired_columns(quasi_identifiers: Sequence[str], id: str | None) -> dict[str, list[str]]:
    """What a measure pairing both sides' quasi-identifier cells reads: the quasi-identifiers
    and the id column, of both sides."""
    cols = [*quasi_identifiers, *([id] if id else [])]
    return {"original": cols, "anonymized": cols}


#: The key columns of a cell table (``count``: records, ``first``: the first record's row).
KEYS = ["raw", "rel", "sup", "equal"]


@dataclass(frozen=True)
class CellParts:
    """The partial of a block of paired records: a cell table per quasi-identifier, the
    original's dtype of each, and the number of deleted records (no partner)."""

    tables: dict[str, pd.DataFrame]
    dtypes: dict[str, Any]
    deleted: int


def cell_partial(frame: pd.DataFrame, qi: Sequence[str], token: str, missing: str) -> CellParts:
    """The cell tables of one block of paired records (its index numbers the records).

    A record is suppressed when it is deleted or all its released cells are the token; a
    deleted record's released cells are the token. Vectorised on integer codes: each column's
    released texts get ids in one vocabulary (to compare them across columns), and each cell
    pattern is one int64 key counted with ``np.unique``."""
    deleted = frame[DELETED].to_numpy(dtype=bool)
    rel = {c: frame[("anonymized", c)] for c in qi}
    if deleted.any():
        rel = {c: v.astype(object).where(~deleted, token) for c, v in rel.items()}
    vocabulary: dict[str, int] = {}
    coded: dict[str, tuple[np.ndarray, pd.Index]] = {}
    sup = np.ones(len(frame), dtype=bool)
    equal = np.ones(len(frame), dtype=bool)
    first_text: np.ndarray | None = None
    for c in qi:
        codes, uniques = pd.factorize(rel[c], use_na_sentinel=False)
        codes = codes.astype(np.int64, copy=False)
        col = token_column(codes, pd.Index(uniques), np.bincount(codes, minlength=len(uniques)),
                           token, missing)
        text_ids = np.fromiter((vocabulary.setdefault(t, len(vocabulary)) for t in col.texts),
                               dtype=np.int64, count=len(col.texts))[col.codes]
        sup &= (col.codes == col.token) if col.token >= 0 else False
        if first_text is None:
            first_text = text_ids
        else:
            equal &= text_ids == first_text
        coded[c] = codes, pd.Index(uniques)
    rows = frame.index.to_numpy()
    flags = sup.astype(np.int64) * 2 + equal
    tables = {}
    for c in qi:
        raw_codes, raw_uniques = pd.factorize(frame[("original", c)], use_na_sentinel=False)
        rel_codes, rel_uniques = coded[c]
        width = max(len(rel_uniques), 1)
        key = (raw_codes.astype(np.int64) * width + rel_codes) * 4 + flags
        keys, at, counts = np.unique(key, return_index=True, return_counts=True)
        pair, flag = keys // 4, keys % 4
        tables[c] = pd.DataFrame({"raw": pd.Index(raw_uniques).take(pair // width),
                                  "rel": rel_uniques.take(pair % width), "sup": flag >= 2,
                                  "equal": flag % 2 == 1, "count": counts, "first": rows[at]})
    return CellParts(tables, {c: frame[("original", c)].dtype for c in qi}, int(deleted.sum()))


def _grouped(cells: pd.DataFrame, agg: dict[str, tuple[str, str]]) -> pd.DataFrame:
    return cells.groupby(KEYS, dropna=False, sort=False, observed=True).agg(
        **agg).reset_index()


def cell_combine(parts: Sequence[CellParts]) -> CellParts:
    """One partial of several: the tables' counts added, their first rows the smallest."""
    tables = {c: _grouped(pd.concat([p.tables[c] for p in parts], ignore_index=True),
                          {"count": ("count", "sum"), "first": ("first", "min")})
              for c in parts[0].tables}
    return CellParts(tables, parts[0].dtypes, sum(p.deleted for p in parts))


@dataclass
class ColumnCells:
    """One quasi-identifier's cells as distinct patterns: ``side`` codes each pattern's
    original and released value (its ``orig``/``rel``), ``sup``/``equal`` its record's facts,
    ``w`` its records, ``first`` its first record's row (None when rows are not known)."""

    side: Side
    dtype: Any
    raw_values: pd.Index
    sup: np.ndarray
    equal: np.ndarray
    w: np.ndarray
    first: np.ndarray | None
    numbers: dict[str, Any] = field(default_factory=dict)

    def kept(self, compat: str) -> np.ndarray:
        """Records per released text, suppressed records left out (with ``compat="arx"``
        also those whose released values are all equal, ARX's quirk)."""
        s = self.side
        drop = self.sup | self.equal if compat == "arx" else self.sup
        return np.bincount(s.rel[~drop], weights=self.w[~drop], minlength=len(s.rel_texts))

    def first_row(self, mask: np.ndarray) -> int | None:
        """The first record among the patterns of ``mask``, when rows are known."""
        if self.first is None or not mask.any():
            return None
        return int(self.first[mask].min())


@dataclass
class Cells:
    """The cells of every quasi-identifier of a comparison and the record counts."""

    columns: list[ColumnCells]
    n: int
    suppressed: int
    quirk: int

    def suppressed_count(self, compat: str) -> int:
        """Suppressed records, with ARX's equal-values quirk under ``compat="arx"``."""
        return self.quirk if compat == "arx" else self.suppressed


def cells_of(parts: CellParts, p: QualityParams, ctx: Context, rows_known: bool) -> Cells:
    """The :class:`Cells` of combined cell tables; warns about deleted records and missing
    released values as the family does on the records."""
    qi = list(p.quasi_identifiers)
    token = p.suppression_token
    if parts.deleted:
        ctx.warn(f"{parts.deleted} records of the original (by {p.id!r}) are not in the "
                 "anonymized data; they count as suppressed")
    columns, rel_cols = [], []
    for c in qi:
        t = parts.tables[c]
        w = t["count"].to_numpy(dtype=np.int64)
        # the original's values in order of first appearance, a missing value last (as
        # Microdata.codes): ARX's fallback hierarchy lists them so
        codes, uniques = pd.factorize(t["raw"], use_na_sentinel=False)
        firsts = np.full(len(uniques), np.iinfo(np.int64).max)
        np.minimum.at(firsts, codes, t["first"].to_numpy(dtype=np.int64))
        na = np.asarray(pd.isna(uniques), dtype=bool)
        order = np.lexsort((firsts, na))
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        uniques = pd.Index(np.asarray(uniques, dtype=object)[order])
        codes = rank[codes]
        raw = token_column(codes, uniques, np.bincount(codes, weights=w, minlength=len(uniques)),
                           token, "value")
        rcodes, runiques = pd.factorize(t["rel"], use_na_sentinel=False)
        rel = token_column(rcodes.astype(np.int64, copy=False), pd.Index(runiques),
                           np.bincount(rcodes, weights=w, minlength=len(runiques)).astype(
                               np.int64), token, p.missing)
        rel_cols.append(rel)
        given = c in p.hierarchies
        table = (_checked_table(c, p.hierarchies[c], ctx, token) if given
                 else fallback_table(c, raw.texts, token))
        orig_rows = table.raw_rows(raw.texts, c)
        pos = table.lookup(rel.texts)
        used = np.bincount(rel.codes, weights=w, minlength=len(rel.texts)) > 0
        missing = (rel.texts == NULL_TEXT) & (pos < 0)
        unknown = used & (pos < 0) & (rel.texts != token) & ~missing
        sup_value = (rel.texts == token) | (rel.texts == table.root) | missing
        side = Side(c, table, raw.codes, raw.texts, orig_rows, rel.codes, rel.texts, pos,
                    sup_value, unknown, token, given)
        columns.append(ColumnCells(side, parts.dtypes[c], uniques,
                                   t["sup"].to_numpy(dtype=bool), t["equal"].to_numpy(dtype=bool),
                                   w, t["first"].to_numpy(dtype=np.int64) if rows_known else None))
    warn_missing(ctx, qi, [Column(r.codes[:0], r.texts, r.token, r.n_missing) for r in rel_cols],
                 p.missing, "anonymized")
    first = columns[0]
    n = int(first.w.sum())
    return Cells(columns, n, int(first.w[first.sup].sum()),
                 int(first.w[first.sup | first.equal].sum()))


class CellQualityModel(LossMeasure):
    """Base of ARX's per-attribute quality models: they pair the records of both sides (by row
    order or ``id``) and read the cell tables (:func:`cell_partial`), so they run
    partition-wise on the dask engine with the local engine's results."""

    paired = True
    inputs = "both"
    accepts = ("microdata",)

    class Params(QualityParams):
        pass

    def columns(self) -> dict[str, list[str]]:
        return paired_columns(self.params.quasi_identifiers, self.params.id)

    def pair_key(self) -> str | None:
        return self.params.id

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        # the models of one comparison pair and count the records once
        original, anonymized, same = compared(original, anonymized, p, f"{self.name} needs")
        key = ("anoneval.generalization.cells", same, tuple(p.quasi_identifiers),
               p.suppression_token, p.missing, p.id)
        parts = anonymized.cached(key, lambda: self.partial(
            pair_datasets(original, anonymized, self.columns(), p.id), ctx))
        return self._finish(parts, ctx, rows_known=True)

    def partial(self, frame: pd.DataFrame, ctx: Context) -> CellParts:
        p = self.params
        return cell_partial(frame, list(p.quasi_identifiers), p.suppression_token, p.missing)

    def combine(self, parts: Sequence[CellParts]) -> CellParts:
        return cell_combine(parts)

    def finalize(self, combined: CellParts, ctx: Context) -> MeasureResult:
        # blocks merged on ``id`` number their rows from 0 each: no row to name then
        return self._finish(combined, ctx, rows_known=self.params.id is None)

    def _finish(self, parts: CellParts, ctx: Context, rows_known: bool) -> MeasureResult:
        if not sum(int(t["count"].sum()) for t in parts.tables.values()):
            raise DataError("the original data has no records")
        return self.cell_loss(cells_of(parts, self.params, ctx, rows_known), ctx)

    def cell_loss(self, cells: Cells, ctx: Context) -> MeasureResult:
        """The model's result from the cells of the comparison."""
        raise NotImplementedError
