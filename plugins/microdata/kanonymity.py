"""k-anonymity as a risk: the share of records in equivalence classes smaller than k."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.base import Context, MeasureResult, RiskMeasure
from anoneval.core.data import Dataset, Microdata
from anoneval.plugins.microdata._common import (
    Classes,
    QIParams,
    released_classes,
    size_counts,
)


class KAnonymity(RiskMeasure):
    """Share of records in equivalence classes of fewer than ``k`` records.

    Source: Sweeney (2002), "k-anonymity: a model for protecting privacy", IJUFKS 10(5).
    Classes are the groups of identical quasi-identifier tuples among the non-suppressed
    records (a record is suppressed when all its quasi-identifiers equal
    ``suppression_token``; original records missing by ``id`` count as suppressed); a class of
    size ``f`` violates k-anonymity when ``f < k`` (strict). value = Σ_{f<k} f / n, where n
    counts every record, suppressed ones included (they are in no class and carry no
    re-identification risk). Missing quasi-identifier values are a value of their own (with a
    warning), or suppressed cells with ``missing="suppressed"``.

    details, after ARX's sample risk models (``RiskModelSampleRisks``/``...Summary``/
    ``...Uniqueness``, reference notes §2). Like ARX, these risks are taken over the released
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
    unit = "share"
    accepts = ("microdata",)
    inputs = "either"

    class Params(QIParams):
        k: int = Field(2, ge=1, description="Smallest class size allowed (classes of f < k "
                                            "violate).")
        risk_threshold: float = Field(
            0.2, gt=0, le=1,
            description="Prosecutor-risk threshold τ: details report the share of released "
                        "records whose risk 1/f exceeds it (0.2 = classes smaller than 5).")
        list_violations: int = Field(
            0, ge=0, description="List up to this many violating classes in details "
                                 "(quasi-identifier values and size, smallest first).")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        data, cl = released_classes(original, anonymized, p, ctx)
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
        if p.list_violations:
            details["violations"] = _violations(data, list(p.quasi_identifiers), cl, violating,
                                                p.list_violations)
        return MeasureResult(value=value, details=details)


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
