"""ARX's ambiguity: how many raw tuples each released record could stand for."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from anoneval.core.api import (
    ClassSummary,
    Context,
    DataError,
    Dataset,
    MeasureResult,
    Microdata,
    SummarySpec,
    row_count_error,
)
from anoneval.plugins.generalization._quality import Inputs, QualityModel, group_area
from anoneval.plugins.generalization._results import row_result
from anoneval.plugins.generalization._tables import Table, _checked_table, fallback_table
from anoneval.plugins.microdata._common import (
    NULL_TEXT,
    Column,
    key_codes,
    token_column,
    warn_missing,
)
from anoneval.plugins.microdata._hierarchy import listed


class Ambiguity(QualityModel):
    """Ambiguity: Σ_rows Π_j share_j·D_j, the number of raw tuples a record could be.

    Source: Goldberger & Tassa (2010), "Efficient anonymizations with enhanced utility"
    (ambiguity metric); ARX's ``QualityModelRowOrientedAmbiguity`` and ``MetricSDNMAmbiguity``.
    share_j·D_j is the number of raw values under the released value (1 for a raw value, D_j
    for the root or the token, so a suppressed record counts Π_j D_j). min = n (nothing
    generalized), max = n·Π_j D_j; the value is clamp((raw − min)/(max − min)) = 1 − ARX's
    ``getAmbiguity().getValue()``. Conventions as the family's
    (``anoneval.plugins.generalization._quality``).

    A record's term depends on its released tuple alone, so the sum runs over the released
    side's class summary (Σ_classes f·area), reduced part by part where a sharded summary lies
    on the dask engine; the original's values of each quasi-identifier (its domain, and the
    check that its values are in the hierarchy) come from one-column summaries. With ``id``
    (deleted records count as suppressed) it reads the records.
    """

    name = "Ambiguity"
    description = "ARX ambiguity: raw tuples each released record could stand for."
    inputs = "both"

    def summaries(self) -> list[SummarySpec] | None:
        p = self.params
        if p.id is not None:
            return None
        qi = tuple(p.quasi_identifiers)
        return [SummarySpec("anonymized", qi), SummarySpec("original", ()),
                *(SummarySpec("original", (c,)) for c in qi)]

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        if self.summaries() is None:
            return super().compute(original, anonymized, ctx)
        p = self.params
        qi = list(p.quasi_identifiers)
        if original is None or anonymized is None:
            raise DataError("Ambiguity needs the original and the anonymized microdata")
        for data in (original, anonymized):
            if isinstance(data, Microdata):
                data.require(qi, "quasi-identifier")
        ctx = ctx.with_summaries(original, anonymized)
        n = ctx.class_summary(SummarySpec("original", ())).n_records
        if not n:
            raise DataError("the original data has no records")
        released = ctx.class_summary(SummarySpec("anonymized", tuple(qi)))
        if released.n_records != n:
            raise row_count_error(n, released.n_records)
        tables = [self._table(c, ctx) for c in qi]
        raw, suppressed, missing = released.reduce(functools.partial(
            _part, qi=qi, tables=tables, given=[c in p.hierarchies for c in qi],
            token=p.suppression_token, missing=p.missing), _sum)
        empty = np.zeros(0, dtype=np.int64)
        warn_missing(ctx, qi, [Column(empty, np.zeros(0, dtype=object), -1, k) for k in missing],
                     p.missing, "anonymized")
        domain = float(np.prod([float(t.domain) for t in tables]))
        return row_result(raw, float(n), n * domain, ctx,
                          {"records": n, "suppressed_records": suppressed})

    def _table(self, col: str, ctx: Context) -> Table:
        """The column's hierarchy table (ARX's fallback without one), the original's values
        checked against its first column."""
        p = self.params
        token = p.suppression_token
        values = ctx.class_summary(SummarySpec("original", (col,)))
        [(codes, uniques)] = key_codes(values.keys, [col])
        raw = token_column(codes, uniques, np.bincount(codes, weights=values.counts,
                                                       minlength=len(uniques)), token, "value")
        if col in p.hierarchies:
            table = _checked_table(col, p.hierarchies[col], ctx, token)
            table.raw_rows(raw.texts, col)
            return table
        return fallback_table(col, raw.texts, token)

    def loss(self, inputs: Inputs, original: Microdata, ctx: Context) -> MeasureResult:
        area = group_area(inputs)
        raw = float(inputs.group_sizes @ area)
        domain = float(np.prod([float(s.table.domain) for s in inputs.columns]))
        return row_result(raw, float(inputs.n), inputs.n * domain, ctx,
                          {"records": inputs.n, "suppressed_records": inputs.suppressed})


def _area(col: str, table: Table, texts: np.ndarray, token: str, given: bool) -> np.ndarray:
    """share·D of each released text (D for the token, the root and a missing value); an
    error names the texts in neither the hierarchy nor the token."""
    pos = table.lookup(texts)
    missing = (texts == NULL_TEXT) & (pos < 0)
    unknown = (pos < 0) & (texts != token) & ~missing
    if unknown.any():
        hint = ("" if given else
                "; give its hierarchy (hierarchies: {column: path}) for generalized values")
        raise DataError(
            f"column {col!r}: released value(s) {listed(texts[unknown])} are not in hierarchy "
            f"{table.path} (nor the suppression token {token!r}){hint}")
    return np.where(pos >= 0, table.share[np.maximum(pos, 0)], 1.0) * table.domain


def _part(part: ClassSummary, qi: Sequence[str], tables: Sequence[Table],
          given: Sequence[bool], token: str, missing: str) -> tuple[float, int, tuple[int, ...]]:
    """Σ f·area over (a part of) the released summary, its suppressed records (all cells the
    token) and its missing cells per quasi-identifier."""
    area = np.ones(part.n_classes)
    sup = np.ones(part.n_classes, dtype=bool)
    n_missing = []
    for c, table, has, (codes, uniques) in zip(qi, tables, given, key_codes(part.keys, qi),
                                               strict=True):
        col = token_column(codes, uniques, np.bincount(codes, weights=part.counts,
                                                       minlength=len(uniques)), token, missing)
        area *= _area(c, table, col.texts, token, has)[col.codes]
        sup &= col.codes == col.token
        n_missing.append(col.n_missing)
    return float(part.counts @ area), int(part.counts[sup].sum()), tuple(n_missing)


def _sum(parts: list[tuple[float, int, tuple[int, ...]]]) -> tuple[float, int, tuple[int, ...]]:
    return (float(sum(p[0] for p in parts)), sum(p[1] for p in parts),
            tuple(int(sum(k)) for k in zip(*(p[2] for p in parts), strict=True)))
