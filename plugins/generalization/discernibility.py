"""ARX's discernibility: DM normalized between the original's value and n²."""

from __future__ import annotations

import functools

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
from anoneval.plugins.generalization._classes import ClassLossMeasure
from anoneval.plugins.generalization._results import row_result
from anoneval.plugins.microdata._common import (
    Column,
    QIParams,
    key_classes,
    key_codes,
    raw_class_sizes,
    warn_missing,
)


class Discernibility(ClassLossMeasure):
    """Discernibility: DM = Σ_E f_E² + |S|·n, normalized by ARX's bounds.

    Source: Bayardo & Agrawal (2005), "Data privacy through optimal k-anonymization" (ICDE);
    ARX's ``QualityModelRowOrientedDiscernibility``. f_E are the sizes of the classes of
    non-suppressed records, S the suppressed records, n all records. min = Σ f² over the
    classes of the original (nothing suppressed), max = n²; the value is clamp((DM − min)/(max −
    min)) = 1 − ARX's ``getDiscernibility().getValue()``. Plain DM is the ``DM`` measure.
    Needs no hierarchy. Suppression, alignment and missing values as the family's
    (``anoneval.plugins.generalization._quality``).

    Both sums come from class summaries (the released side's and the original's), so on the
    dask engine a summary sharded over the workers is reduced part by part (Σ f², classes and
    suppressed records per part: nothing per class reaches the client); with ``id``, or with
    ``missing="suppressed"`` and missing values (classes then merge across parts), it reads
    the classes here.
    """

    name = "Discernibility"
    description = "ARX discernibility: Σ f² + n per suppressed record, normalized."
    inputs = "both"

    class Params(QIParams):
        pass

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if original is None or anonymized is None:
            raise DataError("Discernibility needs the original and the anonymized microdata")
        if isinstance(original, Microdata):
            original.require(list(p.quasi_identifiers), "quasi-identifier")
        found = self._part_sums(original, anonymized, ctx)
        if found is None:  # by id, or groups that merge across parts: the classes here
            cl = self.classes(original, anonymized, ctx)
            f = cl.sizes.astype(np.int64)  # exact: Σ f² ≤ n² fits int64 for n < 3·10⁹
            n, squares, classes, suppressed = (cl.records, int(np.square(f).sum()), len(f),
                                               cl.suppressed_total)
        else:
            n, squares, classes, suppressed = found
        if not n:
            raise DataError("the original data has no records")
        dm = squares + suppressed * n
        if self.summaries() is None:
            assert isinstance(original, Microdata)  # released_classes checked the kinds
            lo = int(np.square(raw_class_sizes(original, p.quasi_identifiers)).sum())
        else:
            raw = ctx.with_summaries(original, anonymized).class_summary(
                SummarySpec("original", tuple(p.quasi_identifiers)))
            lo = raw.reduce(_squares, sum)
        return row_result(float(dm), float(lo), float(n) * n, ctx, {
            "records": n, "suppressed_records": suppressed, "classes": classes,
            "dm_exact": dm})

    def _part_sums(self, original: Dataset, anonymized: Dataset,
                   ctx: Context) -> tuple[int, int, int, int] | None:
        """Records, Σ f², classes and suppressed records of the released summary, reduced part
        by part where its parts lie (nothing per class reaches this process); None by ``id``
        or when ``missing="suppressed"`` meets missing values (groups then merge across
        parts)."""
        p = self.params
        if self.summaries() is None:
            return None
        qi = list(p.quasi_identifiers)
        if isinstance(anonymized, Microdata):
            anonymized.require(qi, "quasi-identifier")
        ctx = ctx.with_summaries(original, anonymized)
        summary = ctx.class_summary(SummarySpec("anonymized", tuple(qi)))
        rows = ctx.class_summary(SummarySpec("original", ())).n_records
        if rows != summary.n_records:
            raise row_count_error(rows, summary.n_records)
        squares, classes, suppressed, missing = summary.reduce(functools.partial(
            _released_part, qi=qi, token=p.suppression_token, missing=p.missing), _add)
        if p.missing == "suppressed" and any(missing):
            return None
        empty = np.zeros(0, dtype=np.int64)
        warn_missing(ctx, qi, [Column(empty, np.zeros(0, dtype=object), -1, k) for k in missing],
                     p.missing, "anonymized")
        return rows, squares, classes, suppressed


def _released_part(part: ClassSummary, qi: list[str], token: str,
                   missing: str) -> tuple[int, int, int, tuple[int, ...]]:
    """Σ f² and the number of the classes of non-suppressed records, the suppressed records
    and the missing cells per quasi-identifier of (a part of) the released summary."""
    cols, _, class_of_group, sizes = key_classes(key_codes(part.keys, qi), part.counts, token,
                                                 missing)
    kept = class_of_group >= 0
    f = sizes[kept].astype(np.int64)
    return (int(np.square(f).sum()), int(kept.sum()), int(sizes[~kept].sum()),
            tuple(c.n_missing for c in cols))


def _add(parts: list[tuple[int, int, int, tuple[int, ...]]]
         ) -> tuple[int, int, int, tuple[int, ...]]:
    return (sum(x[0] for x in parts), sum(x[1] for x in parts), sum(x[2] for x in parts),
            tuple(sum(k) for k in zip(*(x[3] for x in parts), strict=True)))


def _squares(part: ClassSummary) -> int:
    """Σ f² over the classes of (a part of) a summary, exactly."""
    return int(np.square(part.counts.astype(np.int64)).sum())
