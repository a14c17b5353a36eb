"""Non-uniform (and weighted) entropy information loss (de Waal & Willenborg; El Emam et al.)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import pandas as pd
from annotated_types import Interval
from pydantic import Field, model_validator

from anoneval.core.api import (
    DELETED,
    ClassSummary,
    Context,
    DataError,
    Dataset,
    LossMeasure,
    MeasureResult,
    Microdata,
    ParamPath,
    RowClasses,
    SummarySpec,
    align_ids,
    data_row,
    dataset_classes,
    pair_datasets,
    row_count_error,
)
from anoneval.plugins.generalization._cells import paired_columns
from anoneval.plugins.microdata._common import (
    Column,
    Hierarchy,
    QIParams,
    as_text,
    hierarchy_rows,
    load_hierarchy,
    pair_counts,
    token_column,
    warn_missing,
)


class NonUniformEntropy(LossMeasure):
    """NUE = −Σ_records Σ_j w_j·log2 Pr(raw_ij ∣ released_ij), log base 2.

    Source: El Emam et al. (2009), appendix D, derivations 3 (eq. 1–2) and 5 (eq. 4, weights
    w_j ∈ [0,1], default 1, used as given); de Waal & Willenborg (1999). The original and the
    anonymized data must be row-aligned, or aligned by the ``id`` column (original records
    absent from the anonymized data count as suppressed: all their cells are the token).

    * Columns **without a hierarchy**: Pr(a ∣ b) = #(raw = a and released = b) / #(released =
      b). Under global recoding this is eq. (1); under local recoding and suppression it stays
      a probability. A suppressed cell (the token) is just one more released value.
    * Columns **with a hierarchy** (ARX CSV: column 0 raw, column i level i): ARX's
      non-monotonic entropy as its output analysis computes it (``QualityModelColumnOriented
      NonUniformEntropy``, Prasser et al., MIE 2016). Each cell's level is the first level at
      which the hierarchy maps its raw value to the released value; a token cell (or one equal
      to the root) is at the top level. With the distinct levels L_0 < L_1 < … of the column,
      step t charges every cell at level ≥ L_t with −log2(c(v at L_{t−1}) / c(v at L_t)), the
      counts c taken over the raw values of the cells at level ≥ L_t (L_{−1} = raw). Under
      global recoding with suppression this is eq. (1) from raw to the column's level, counted
      on all records, plus −Σ_w s_w·log2(s_w/|S|) for the suppressed cells (ARX's
      ``MetricMDNUNMEntropy``).

    Each column's maximum is −Σ_v c_v·log2(c_v/n) (everything suppressed). ``normalized``
    divides each column by its maximum (0 for a constant column) and returns the weighted mean
    Σ_j w_j·NUE_j/max_j / Σ_j w_j ∈ [0,1] (ARX sums the per-column ratios instead; that sum
    is in details). Missing values are a value of their own (text ``NULL`` in a hierarchy), or
    suppressed cells with ``missing="suppressed"``.

    It pairs the records of both sides (by row order or ``id``) and reduces each block of
    pairs to a per-column count table of (raw value, released value) pairs, which combine by
    addition; the loss is computed from the combined tables, so partitioned data on the dask
    engine gives the local engine's result. A released value outside its raw value's hierarchy
    path is an error naming the record on the local engine, the values only on partitions.
    """

    name = "NonUniformEntropy"
    description = "Non-uniform entropy: information lost about raw values, in bits."
    unit = "bits"
    paired = True

    @classmethod
    def unit_for(cls, params: Mapping[str, Any]) -> str | None:
        """Bits, or none for the ``normalized`` ratio."""
        return None if params.get("normalized") else cls.unit
    accepts = ("microdata",)
    inputs = "both"

    class Params(QIParams):
        weights: dict[str, Annotated[float, Interval(ge=0, le=1)]] = Field(
            default_factory=dict,
            description="Weight w in [0,1] per quasi-identifier (default 1), eq. (4).")
        normalized: bool = Field(False, description="Divide each column by its maximum and "
                                                    "average: a value in [0,1].")
        hierarchies: dict[str, ParamPath] = Field(
            default_factory=dict,
            description="Hierarchy CSV path per quasi-identifier (ARX format), relative to "
                        "the config file.")

        @model_validator(mode="after")
        def _check(self) -> NonUniformEntropy.Params:
            for what, keys in (("weights", self.weights), ("hierarchies", self.hierarchies)):
                unknown = sorted(set(keys) - set(self.quasi_identifiers))
                if unknown:
                    raise ValueError(f"{what} given for {unknown}, which are not "
                                     f"quasi-identifiers {self.quasi_identifiers}")
            return self

    def columns(self) -> dict[str, list[str]]:
        return paired_columns(self.params.quasi_identifiers, self.params.id)

    def pair_key(self) -> str | None:
        return self.params.id

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if not isinstance(original, Microdata) or not isinstance(anonymized, Microdata):
            raise DataError("NonUniformEntropy needs the original and the anonymized microdata")
        qi = list(p.quasi_identifiers)
        original.require(qi, "quasi-identifier")
        anonymized.require(qi, "quasi-identifier")
        if p.id is not None:
            original.require([p.id], "id column")
            anonymized.require([p.id], "id column")
        if p.id is None:
            if len(original) != len(anonymized):
                raise row_count_error(len(original), len(anonymized))
            take = None
        else:
            take = align_ids(original.frame[p.id], anonymized.frame[p.id], p.id)
        # each side's classes per column are cached on the dataset: an original is grouped
        # once however many releases are compared with it
        sides = [_pair_sides(dataset_classes(original, (c,)), dataset_classes(anonymized, (c,)),
                             take, p.suppression_token, p.missing) for c in qi]

        def locate(col: str, raw: str, rel: str) -> int | None:
            """The first record pairing the texts ``raw`` and ``rel`` in column ``col``."""
            frame = pair_datasets(original, anonymized, self.columns(), p.id)
            hit = ((as_text(frame[("original", col)]) == raw)
                   & (as_text(self._released(frame, col)) == rel))
            return int(np.flatnonzero(hit)[0]) if hit.any() else None

        return self._finish(sides, 0 if take is None else int((take < 0).sum()), ctx, locate)

    def _released(self, frame: pd.DataFrame, col: str) -> pd.Series:
        """The released values of ``col``; the token for deleted records."""
        values = frame[("anonymized", col)]
        deleted = frame[DELETED].to_numpy()
        if deleted.any():
            values = values.astype(object).where(~deleted, self.params.suppression_token)
        return values

    def partial(self, frame: pd.DataFrame, ctx: Context) -> Pairs:
        """Per quasi-identifier, the (raw value, released value) → records table of a block."""
        tables = {c: ClassSummary.of_frame(pd.DataFrame({
            "raw": frame[("original", c)], "rel": self._released(frame, c)}), PAIR)
            for c in self.params.quasi_identifiers}
        return Pairs(tables, int(frame[DELETED].sum()))

    def combine(self, parts: Sequence[Pairs]) -> Pairs:
        return Pairs({c: ClassSummary.combine([p.tables[c] for p in parts])
                      for c in self.params.quasi_identifiers},
                     sum(p.deleted for p in parts))

    def finalize(self, combined: Pairs, ctx: Context) -> MeasureResult:
        p = self.params
        return self._finish([_pair_columns(combined.tables[c], p.suppression_token, p.missing)
                             for c in p.quasi_identifiers], combined.deleted, ctx, None)

    def _finish(self, sides: Sequence[tuple[Column, Column, np.ndarray]], deleted: int,
                ctx: Context,
                locate: Callable[[str, str, str], int | None] | None) -> MeasureResult:
        """The result from each quasi-identifier's pairs of all records: its raw and released
        :class:`Column` and the records of each pair (:func:`_pair_columns`)."""
        p = self.params
        qi = list(p.quasi_identifiers)
        if deleted:
            ctx.warn(f"{deleted} records of the original (by {p.id!r}) are not in the "
                     "anonymized data; they count as suppressed")
        warn_missing(ctx, qi, [raw for raw, _, _ in sides], "raw", "original")
        warn_missing(ctx, qi, [rel for _, rel, _ in sides], p.missing, "anonymized")
        per_column: dict[str, dict[str, object]] = {}
        with ctx.progress(len(qi), "non-uniform entropy") as progress:
            for c, (raw, rel, counts) in zip(qi, sides, strict=True):
                per_column[c] = self._column(c, raw, rel, counts, ctx, locate)
                progress.update(1)
        w = np.array([p.weights.get(c, 1.0) for c in qi])
        losses = np.array([per_column[c]["loss"] for c in qi], dtype=float)
        norm = np.array([per_column[c]["normalized"] for c in qi], dtype=float)
        weighted = float((w * losses).sum())
        mean_norm = float((w * norm).sum() / w.sum()) if w.sum() > 0 else 0.0
        records = int(sides[0][2].sum())
        return MeasureResult(value=mean_norm if p.normalized else weighted, details={
            "records": records,
            "weighted_loss": weighted,
            "normalized_mean": mean_norm,
            "arx_normalized_sum": float((w * norm).sum()),
            "per_column": per_column,
        })

    def _column(self, c: str, raw: Column, rel: Column, counts: np.ndarray, ctx: Context,
                locate: Callable[[str, str, str], int | None] | None) -> dict[str, object]:
        """Loss, maximum, normalized loss (and levels with a hierarchy) of one column; ``raw``
        and ``rel`` code the rows of its pair table, ``counts`` their records."""
        p = self.params
        a, b, w = pair_counts(raw.codes, len(raw.texts), rel.codes, len(rel.texts), counts)
        entry: dict[str, object] = {"weight": p.weights.get(c, 1.0)}
        if c in p.hierarchies:
            h = load_hierarchy(ctx.path(p.hierarchies[c]), p.suppression_token)
            loss, entry["levels"] = _hierarchy_loss(c, h, raw.texts, rel.texts, rel.token,
                                                    a, b, w, locate)
        else:
            loss = _joint_loss(b, len(rel.texts), w)
        n = int(w.sum())
        per_raw = np.bincount(a, weights=w, minlength=len(raw.texts))
        per_raw = per_raw[per_raw > 0]
        maximum = float(-(per_raw * np.log2(per_raw / n)).sum()) if n else 0.0
        entry.update(loss=loss, max=maximum, normalized=loss / maximum if maximum > 0 else 0.0)
        return entry


#: The pair table of one column: records per (raw value, released value).
PAIR = SummarySpec("original", ("raw", "rel"))


@dataclass(frozen=True)
class Pairs:
    """The partial of a block of paired records: a pair table per quasi-identifier and the
    number of deleted records (original records without a partner)."""

    tables: dict[str, ClassSummary]
    deleted: int


def _pair_sides(raw: RowClasses, rel: RowClasses, take: np.ndarray | None, token: str,
                missing: str) -> tuple[Column, Column, np.ndarray]:
    """The raw and released :class:`Column` of one column's pairs, and the records of each
    pair, from each side's classes over it, without a table of the pairs' values: the codes
    :func:`_pair_columns` gives such a table with its rows sorted by raw then released class
    (values in order of first appearance). ``take`` is the anonymized row of each original
    record (−1: deleted, released as ``token``), None when rows pair by position."""
    raw_values, rel_values = (values.take(codes) for codes, values in (raw.key_values(0),
                                                                       rel.key_values(0)))
    rel_ids = rel.ids
    if take is not None:
        deleted = take < 0
        rel_ids = (rel_ids[np.maximum(take, 0)] if len(rel_ids)
                   else np.zeros(len(take), dtype=np.int64))
        if deleted.any():
            rel_values = rel_values.astype(object).append(pd.Index([token], dtype=object))
            rel_ids = np.where(deleted, len(rel_values) - 1, rel_ids)
    a, b, counts = pair_counts(raw.ids, len(raw_values), rel_ids, len(rel_values))
    # every raw class has a pair, and pairs are sorted by raw class: ``a`` codes the raw
    # values in their order; the released values are coded in order of first appearance
    distinct, first = np.unique(b, return_index=True)
    seen = distinct[np.argsort(first, kind="stable")]
    recode = np.empty(len(rel_values), dtype=np.int64)
    recode[seen] = np.arange(len(seen))
    b = recode[b]
    rel_values = rel_values.take(seen)
    return (token_column(a, raw_values, np.bincount(a, weights=counts,
                                                    minlength=len(raw_values)), token, "value"),
            token_column(b, rel_values, np.bincount(b, weights=counts,
                                                    minlength=len(rel_values)), token, missing),
            counts)


def _pair_columns(table: ClassSummary, token: str, missing: str) -> tuple[Column, Column,
                                                                        np.ndarray]:
    """The raw and released :class:`Column` of the rows of a pair table, and their counts."""
    counts = table.counts
    out = []
    for key, policy in (("raw", "value"), ("rel", missing)):
        codes, uniques = pd.factorize(table.keys[key], use_na_sentinel=False)
        codes = codes.astype(np.int64, copy=False)
        out.append(token_column(codes, pd.Index(uniques),
                                np.bincount(codes, weights=counts, minlength=len(uniques)),
                                token, policy))
    return out[0], out[1], counts


def _joint_loss(b: np.ndarray, rel_card: int, counts: np.ndarray) -> float:
    """−Σ_rows log2(#(raw=a, rel=b) / #(rel=b)) from the joint counts of the pairs (a, b)."""
    if not len(counts):
        return 0.0
    per_b = np.bincount(b, weights=counts, minlength=rel_card)
    return float(-(counts * np.log2(counts / per_b[b])).sum())


def _hierarchy_loss(col: str, h: Hierarchy, raw_texts: np.ndarray, rel_texts: np.ndarray,
                    tok: int, a: np.ndarray, b: np.ndarray, w: np.ndarray,
                    locate: Callable[[str, str, str], int | None] | None
                    ) -> tuple[float, dict[int, int]]:
    """ARX's chained non-uniform entropy of one column from its pairs (a, b) of raw and
    released codes with ``w`` records each; also the number of cells per level."""
    if not len(w):
        return 0.0, {}
    hrow_of_raw = hierarchy_rows(h, raw_texts, col)
    r = hrow_of_raw[a]
    vid = h.values.get_indexer(rel_texts)[b]
    match = (h.codes[r] == vid[:, None]) & (vid[:, None] >= 0)
    found = match.any(axis=1)
    level = np.where(found, match.argmax(axis=1), h.height)
    bad = ~found & (b != tok)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = locate(col, raw_texts[a[i]], rel_texts[b[i]]) if locate is not None else None
        where = f", {data_row(row)}" if row is not None else ""
        raise DataError(
            f"column {col!r}{where}: released value {rel_texts[b[i]]!r} is not a "
            f"generalization of the raw value {raw_texts[a[i]]!r} in hierarchy {h.path} "
            f"(levels there: {', '.join(repr(h.values[v]) for v in h.codes[r[i]])})")
    loss = 0.0
    prev = 0
    for lev in np.unique(level):
        m = level >= lev
        x, y, wm = h.codes[r[m], prev], h.codes[r[m], lev], w[m]
        cx = np.bincount(x, weights=wm)
        cy = np.bincount(y, weights=wm)
        loss -= float((wm * np.log2(cx[x] / cy[y])).sum())
        prev = int(lev)
    cells = np.bincount(level, weights=w).astype(np.int64)
    return loss, {int(lv): int(k) for lv, k in enumerate(cells) if k}
