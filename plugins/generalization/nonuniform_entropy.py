"""Non-uniform (and weighted) entropy information loss (de Waal & Willenborg; El Emam et al.)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import numpy as np
from annotated_types import Interval
from pydantic import Field, model_validator

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    LossMeasure,
    MeasureResult,
    Microdata,
    data_row,
)
from anoneval.plugins.microdata._common import (
    Column,
    Hierarchy,
    QIParams,
    alignment,
    column,
    hierarchy_rows,
    load_hierarchy,
    pair_counts,
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

    It reads the records of both sides (no class summary): Pr(a ∣ b) needs the joint counts
    of each record's raw and released value, which pair rows across the two datasets, while a
    class summary groups the rows of one side.
    """

    name = "NonUniformEntropy"
    description = "Non-uniform entropy: information lost about raw values, in bits."
    unit = "bits"

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
        hierarchies: dict[str, str] = Field(
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

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if not isinstance(original, Microdata) or not isinstance(anonymized, Microdata):
            raise DataError("NonUniformEntropy needs the original and the anonymized microdata")
        qi = list(p.quasi_identifiers)
        original.require(qi, "quasi-identifier")
        anonymized.require(qi, "quasi-identifier")
        take = alignment(original, anonymized, p.id, ctx)
        raw_cols = [column(original, c, p.suppression_token, "value") for c in qi]
        rel_cols = [column(anonymized, c, p.suppression_token, p.missing) for c in qi]
        warn_missing(ctx, qi, raw_cols, "raw", "original")
        warn_missing(ctx, qi, rel_cols, p.missing, "anonymized")
        per_column: dict[str, dict[str, object]] = {}
        with ctx.progress(len(qi), "non-uniform entropy") as progress:
            for c, raw, rel in zip(qi, raw_cols, rel_cols, strict=True):
                per_column[c] = self._column(c, raw, rel, take, ctx)
                progress.update(1)
        w = np.array([p.weights.get(c, 1.0) for c in qi])
        losses = np.array([per_column[c]["loss"] for c in qi], dtype=float)
        norm = np.array([per_column[c]["normalized"] for c in qi], dtype=float)
        weighted = float((w * losses).sum())
        mean_norm = float((w * norm).sum() / w.sum()) if w.sum() > 0 else 0.0
        return MeasureResult(value=mean_norm if p.normalized else weighted, details={
            "records": len(original),
            "weighted_loss": weighted,
            "normalized_mean": mean_norm,
            "arx_normalized_sum": float((w * norm).sum()),
            "per_column": per_column,
        })

    def _column(self, c: str, raw: Column, rel: Column, take: np.ndarray | None,
                ctx: Context) -> dict[str, object]:
        """Loss, maximum, normalized loss (and levels with a hierarchy) of one column."""
        p = self.params
        rel_codes, rel_texts, tok = _aligned(rel, take, p.suppression_token)
        entry: dict[str, object] = {"weight": p.weights.get(c, 1.0)}
        if c in p.hierarchies:
            h = load_hierarchy(ctx.path(p.hierarchies[c]), p.suppression_token)
            loss, entry["levels"] = _hierarchy_loss(c, h, raw, rel_codes, rel_texts, tok)
        else:
            loss = _joint_loss(raw.codes, len(raw.texts), rel_codes, len(rel_texts))
        n = len(raw.codes)
        counts = np.bincount(raw.codes, minlength=len(raw.texts))
        counts = counts[counts > 0]
        maximum = float(-(counts * np.log2(counts / n)).sum()) if n else 0.0
        entry.update(loss=loss, max=maximum, normalized=loss / maximum if maximum > 0 else 0.0)
        return entry


def _aligned(rel: Column, take: np.ndarray | None,
             token: str) -> tuple[np.ndarray, np.ndarray, int]:
    """Released codes in the original's row order; deleted rows get the token's code."""
    if take is None:
        return rel.codes, rel.texts, rel.token
    texts, tok = rel.texts, rel.token
    deleted = take < 0
    if deleted.any() and tok < 0:
        texts, tok = np.append(texts, token), len(texts)
    codes = rel.codes[np.maximum(take, 0)] if len(rel.codes) else np.zeros(len(take), np.int64)
    return np.where(deleted, tok, codes), texts, tok


def _joint_loss(raw: np.ndarray, raw_card: int, rel: np.ndarray, rel_card: int) -> float:
    """−Σ_rows log2(#(raw=a, rel=b) / #(rel=b)) from joint counts."""
    if not len(raw):
        return 0.0
    _, b, counts = pair_counts(raw, raw_card, rel, rel_card)
    per_b = np.bincount(b, weights=counts, minlength=rel_card)
    return float(-(counts * np.log2(counts / per_b[b])).sum())


def _hierarchy_loss(col: str, h: Hierarchy, raw: Column, rel: np.ndarray, rel_texts: np.ndarray,
                    tok: int) -> tuple[float, dict[int, int]]:
    """ARX's chained non-uniform entropy of one column; also the number of cells per level."""
    if not len(rel):
        return 0.0, {}
    hrow_of_raw = hierarchy_rows(h, raw.texts, col)
    a, b, w = pair_counts(raw.codes, len(raw.texts), rel, len(rel_texts))
    r = hrow_of_raw[a]
    vid = h.values.get_indexer(rel_texts)[b]
    match = (h.codes[r] == vid[:, None]) & (vid[:, None] >= 0)
    found = match.any(axis=1)
    level = np.where(found, match.argmax(axis=1), h.height)
    bad = ~found & (b != tok)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = int(np.flatnonzero((raw.codes == a[i]) & (rel == b[i]))[0])
        raise DataError(
            f"column {col!r}, {data_row(row)}: released value {rel_texts[b[i]]!r} is not a "
            f"generalization of the raw value {raw.texts[a[i]]!r} in hierarchy {h.path} "
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
