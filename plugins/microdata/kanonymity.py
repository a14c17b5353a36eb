"""k-anonymity as a risk: the share of records in equivalence classes smaller than k."""

from __future__ import annotations

import functools
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
    ClassSizes,
    QIParams,
    class_sums,
    reduce_classes,
    released_classes,
    sampling_weights,
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
    count and weight sum), reduced where it lies to classes by size, records below k by weight
    and the first violating classes (the same code in memory and on each part of a summary
    sharded on a cluster), so it runs on data an engine never gathers, except with
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
            qi = tuple(p.quasi_identifiers)
            part = functools.partial(_part_figures, k=p.k, weighted=p.weights is not None,
                                     listed=p.list_violations, qi=qi)
            merge = functools.partial(_combine_figures, listed=p.list_violations, qi=qi)
            sizes, (below, candidates) = reduce_classes(original, anonymized, p, ctx, part,
                                                        merge, weights=p.weights)
            value, details = _class_figures(sizes, p)
            if p.weights:
                value = _share(below, sizes.records)
                details["frequency"] = "Fk"
                details["records_below_k"] = below
            if p.list_violations:
                details["violations"] = candidates
            return MeasureResult(value=value, details=details)
        wildcard = p.missing == "wildcard"
        shared = p.model_copy(update={"missing": "value"}) if wildcard else p
        since = len(ctx.warnings)
        data, cl = released_classes(original, anonymized, shared, ctx)
        if wildcard:
            note_wildcard(ctx, since)
        value, details = _class_figures(ClassSizes.of(cl), p)
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


def _class_figures(t: ClassSizes, p: KAnonymity.Params) -> tuple[float, dict[str, object]]:
    """value (the share of records in classes smaller than k) and the class details, from
    the classes by size (in memory and on a sharded summary alike)."""
    n = t.records
    released_records = t.released
    violating = t.where(t.sizes < p.k)
    at_risk = t.where(1.0 / np.maximum(t.sizes, 1) > p.risk_threshold)
    uniques = t.where(t.sizes == 1).n_classes
    smallest = t.smallest
    value = _share(violating.released, n)
    details = {
        "k": p.k,
        "achieved_k": smallest,
        "records": n,
        "released_records": released_records,
        "suppressed_records": t.suppressed,
        "deleted_records": t.deleted,
        "classes": t.n_classes,
        "violating_classes": violating.n_classes,
        "records_in_violating_classes": violating.released,
        "sample_uniques": uniques,
        "sample_unique_share": _share(uniques, released_records),
        "highest_risk": 1.0 / smallest if smallest else 0.0,
        "average_risk": _share(t.n_classes, released_records),
        "average_risk_per_class": (float((t.classes / t.sizes).sum() / t.n_classes)
                                   if smallest else 0.0),
        "risk_threshold": p.risk_threshold,
        "records_above_threshold": at_risk.released,
        "share_above_threshold": _share(at_risk.released, released_records),
        "class_size_counts": t.as_dict(),
    }
    return value, details


def _part_figures(summary: ClassSummary, cl: Classes, k: int, weighted: bool, listed: int,
                  qi: tuple[str, ...]) -> tuple[int, pd.DataFrame | None]:
    """Of one part of disjoint classes: the records in classes whose weight sum Fk < k (0
    without weights), and its ``listed`` first violating classes (:func:`_summary_violations`)."""
    below = 0
    if weighted:
        assert summary.weights is not None
        below = int(cl.sizes[class_sums(cl, summary.weights) < k].sum())
    found = (_summary_violations(summary, list(qi), cl, cl.sizes < k, listed) if listed
             else None)
    return below, found


def _combine_figures(parts: list[tuple[int, pd.DataFrame | None]], listed: int,
                     qi: tuple[str, ...]) -> tuple[int, pd.DataFrame | None]:
    """The figures of the union of the parts' classes. The violations listed are the first
    ``listed`` of all the parts' candidates by size, then by key in the summary's order (each
    column ascending, missing values last), which is the order of the classes of the whole
    summary: each part's first ``listed`` include every class of the whole's first ``listed``
    that lies in that part. (Not so for a key column mixing values that do not compare, such
    as numbers and text, when one part holds only one kind: the part orders them by value, the
    whole by type, then text.)"""
    below = sum(b for b, _ in parts)
    found = [f for _, f in parts if f is not None]
    if len(found) <= 1:  # in memory: the whole summary's classes, in its order
        return below, found[0] if found else None
    spec = SummarySpec("anonymized", qi)
    # one summary of the candidates (disjoint classes: counts are their sizes) sorts their keys
    # as the whole summary sorts its classes
    both = ClassSummary.combine([ClassSummary(spec, f[list(qi)], f["size"].to_numpy(np.int64), None,
                                              {}) for f in found])
    chosen = np.argsort(both.counts, kind="stable")[:listed]  # by size, ties in key order
    out = both.keys.iloc[chosen][list(qi)].reset_index(drop=True).assign(size=both.counts[chosen])
    return below, out


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
