"""k-anonymity as a risk: the share of records in equivalence classes smaller than k."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from anoneval.core.api import (
    ClassSummary,
    Context,
    Dataset,
    MeasureResult,
    Microdata,
    SummarySpec,
)
from anoneval.plugins.microdata._common import (
    Classes,
    ClassRiskMeasure,
    QIParams,
    class_sums,
    released_classes,
    sampling_weights,
    size_counts,
    summary_classes,
    summary_specs,
)
from anoneval.plugins.microdata._frequencies import frequencies, note_wildcard


class KAnonymity(ClassRiskMeasure):
    """Share of records in equivalence classes of fewer than ``k`` records.

    Source: Sweeney (2002), "k-anonymity: a model for protecting privacy", IJUFKS 10(5).
    Classes are the groups of identical quasi-identifier tuples among the non-suppressed
    records (a record is suppressed when all its quasi-identifiers equal
    ``suppression_token``; original records missing by ``id`` count as suppressed); a class of
    size ``f`` violates k-anonymity when ``f < k`` (strict). value = Σ_{f<k} f / n, where n
    counts every record, suppressed ones included (they are in no class and carry no
    re-identification risk). Missing quasi-identifier values are a value of their own (with a
    warning), or suppressed cells with ``missing="suppressed"``.

    sdcMicro's variants (``kAnon_violations``; Templ, Kowarik & Meindl 2015): with ``weights``
    a record violates when the sum of the weights of its class, Fk, is below k (sdcMicro's
    weighted violations); with ``missing="wildcard"`` a missing value matches any value and
    records violate when their frequency fk from sdcMicro's ``freqCalc`` rule (``alpha`` for
    partly missing keys; see ``_frequencies``) is below k. value is then the share of such
    records, ``records_below_k`` their count; the class figures below stay exact-match.
    ``per_record`` adds a table of each record's fk, Fk and violation, aligned with the rows.

    The measure reads only the released side's class summary (quasi-identifiers → record
    count and weight sum), so it runs on data an engine never gathers, except with
    ``missing="wildcard"`` (matching across classes), ``per_record`` (a row table) or ``id``
    (deleted records are found by comparing both sides' rows), which read the records.

    details, after ARX's sample risk models (``RiskModelSampleRisks``/``...Summary``/
    ``...Uniqueness``). Like ARX, these risks are taken over the released
    (non-suppressed) records only: their denominator is ``released_records``, not n.

    * ``achieved_k``: the smallest class size (null when every record is suppressed);
    * ``sample_unique_share``: records in classes of size 1 / released records (ARX's
      ``getFractionOfUniqueRecords``; ``sample_uniques`` is the count);
    * prosecutor risk: ``highest_risk`` = 1/min f; ``average_risk`` = #classes / #released
      records (ARX: the mean over released records of 1/f); ``average_risk_per_class`` = the
      mean over classes of 1/f (pyCANON's ``average_rir``); ``share_above_threshold`` =
      Σ{f : 1/f > risk_threshold} / released records (strict ``>``, ARX's records at risk;
      ``records_above_threshold`` is the count);
    * ``class_size_counts``: ``{class size: number of classes}``;
    * ``violations`` (only with ``list_violations`` > 0): the smallest violating classes.
    """

    name = "KAnonymity"
    description = "Share of records in equivalence classes smaller than k."

    class Params(QIParams):
        missing: Literal["value", "suppressed", "wildcard"] = Field(  # type: ignore[assignment]
            "value",
            description="Missing values in quasi-identifiers: a value of their own (with a "
                        "warning), suppressed cells, or a wildcard matching any value "
                        "(sdcMicro's freqCalc, scaled by alpha).")
        alpha: float = Field(1.0, ge=0, le=1, description="Weight of partly missing keys "
                                                          "under missing='wildcard'.")
        weights: str | None = Field(None, description="Sampling-weight column: records violate "
                                                      "when their class's weight sum Fk < k.")
        per_record: bool = Field(False, description="Add each record's fk, Fk and violation "
                                                    "(details 'per_record').")
        k: int = Field(2, ge=1, description="Smallest class size allowed (classes of f < k "
                                            "violate).")
        risk_threshold: float = Field(
            0.2, gt=0, le=1,
            description="Prosecutor-risk threshold τ: details report the share of released "
                        "records whose risk 1/f exceeds it (0.2 = classes smaller than 5).")
        list_violations: int = Field(
            0, ge=0, description="List up to this many violating classes in details "
                                 "(quasi-identifier values and size, smallest first).")

        @model_validator(mode="after")
        def _weights(self) -> KAnonymity.Params:
            if self.weights is not None and self.weights in self.quasi_identifiers:
                raise ValueError(f"weights column {self.weights!r} is also a quasi-identifier")
            if self.alpha != 1 and self.missing != "wildcard":
                raise ValueError("alpha applies only with missing='wildcard'")
            return self

    def summaries(self) -> list[SummarySpec] | None:
        p = self.params
        if p.missing == "wildcard" or p.per_record:
            return None
        return summary_specs(p, p.weights)

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if self.summaries() is not None:
            summary, cl = summary_classes(original, anonymized, p, ctx, p.weights,
                                          keys=bool(p.list_violations))
            value, details = _class_figures(cl, p)
            if p.weights:
                assert summary.weights is not None
                w_class = class_sums(cl, summary.weights)
                below = int(cl.sizes[w_class < p.k].sum())
                value = _share(below, cl.records)
                details["frequency"] = "Fk"
                details["records_below_k"] = below
            if p.list_violations:
                details["violations"] = _summary_violations(
                    summary, list(p.quasi_identifiers), cl, cl.sizes < p.k, p.list_violations)
            return MeasureResult(value=value, details=details)
        wildcard = p.missing == "wildcard"
        shared = p.model_copy(update={"missing": "value"}) if wildcard else p
        since = len(ctx.warnings)
        data, cl = released_classes(original, anonymized, shared, ctx)
        if wildcard:
            note_wildcard(ctx, since)
        value, details = _class_figures(cl, p)
        if p.weights or wildcard or p.per_record:
            w = sampling_weights(data, p.weights) if p.weights else None
            freq = frequencies(data, list(p.quasi_identifiers), cl, w, wildcard, p.alpha)
            row_f = freq.row_Fk if w is not None else freq.row_fk
            below = row_f < p.k  # NaN (suppressed) compares False
            if p.weights or wildcard:
                value = _share(below.sum(), cl.records)
                details["frequency"] = "Fk" if w is not None else "fk"
                details["records_below_k"] = int(below.sum())
            if p.per_record:
                table = pd.DataFrame({"fk": freq.row_fk, "Fk": freq.row_Fk, "violates": below})
                if p.id is not None:
                    table.insert(0, p.id, data.frame[p.id].to_numpy())
                details["per_record"] = table
        if p.list_violations:
            details["violations"] = _violations(data, list(p.quasi_identifiers), cl,
                                                cl.sizes < p.k, p.list_violations)
        return MeasureResult(value=value, details=details)


def _class_figures(cl: Classes, p: KAnonymity.Params) -> tuple[float, dict[str, object]]:
    """value (the share of records in classes smaller than k) and the class details."""
    f = cl.sizes
    n = cl.records
    released_records = int(f.sum())
    violating = f < p.k
    at_risk = 1.0 / np.maximum(f, 1) > p.risk_threshold
    value = _share(f[violating].sum(), n)
    details = {
        "k": p.k,
        "achieved_k": int(f.min()) if len(f) else None,
        "records": n,
        "released_records": released_records,
        "suppressed_records": cl.suppressed,
        "deleted_records": cl.deleted,
        "classes": len(f),
        "violating_classes": int(violating.sum()),
        "records_in_violating_classes": int(f[violating].sum()),
        "sample_uniques": int((f == 1).sum()),
        "sample_unique_share": _share((f == 1).sum(), released_records),
        "highest_risk": 1.0 / float(f.min()) if len(f) else 0.0,
        "average_risk": _share(len(f), released_records),
        "average_risk_per_class": float(np.mean(1.0 / f)) if len(f) else 0.0,
        "risk_threshold": p.risk_threshold,
        "records_above_threshold": int(f[at_risk].sum()),
        "share_above_threshold": _share(f[at_risk].sum(), released_records),
        "class_size_counts": size_counts(f),
    }
    return value, details


def _share(part: float, whole: int) -> float:
    """``part / whole``, 0 when ``whole`` is 0 (no records)."""
    return float(part) / whole if whole else 0.0


def _violations(data: Microdata, qi: list[str], cl: Classes, violating: np.ndarray,
                limit: int) -> pd.DataFrame:
    """The ``limit`` smallest violating classes: their quasi-identifier values and size."""
    classes = np.flatnonzero(violating)
    classes = classes[np.argsort(cl.sizes[classes], kind="stable")][:limit]
    row_class = cl.row_class()
    rows = np.flatnonzero(np.isin(row_class, classes))
    found, first = np.unique(row_class[rows], return_index=True)  # first row of each class
    out = data.frame.iloc[rows[first[np.searchsorted(found, classes)]]][qi]
    return out.reset_index(drop=True).assign(size=cl.sizes[classes])


def _summary_violations(summary: ClassSummary, qi: list[str], cl: Classes, violating: np.ndarray,
                        limit: int) -> pd.DataFrame:
    """:func:`_violations` from the class summary: each class's first summary row's values."""
    classes = np.flatnonzero(violating)
    classes = classes[np.argsort(cl.sizes[classes], kind="stable")][:limit]
    row_class = cl.row_class()
    first = np.full(len(cl.sizes), -1, dtype=np.int64)
    rows = np.flatnonzero(row_class >= 0)
    first[row_class[rows][::-1]] = rows[::-1]
    out = summary.keys.iloc[first[classes]][qi]
    return out.reset_index(drop=True).assign(size=cl.sizes[classes])
