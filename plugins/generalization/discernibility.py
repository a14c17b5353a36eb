"""ARX's discernibility: DM normalized between the original's value and n²."""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np

from anoneval.core.api import (
    ClassSummary,
    Context,
    DataError,
    Dataset,
    MeasureResult,
    Microdata,
    Side,
    SummarySpec,
)
from anoneval.plugins.generalization._classes import ClassLossMeasure
from anoneval.plugins.generalization._results import row_result
from anoneval.plugins.microdata._common import (
    QIParams,
    raw_class_sizes,
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

    Both sums come from class summaries (the released side's by size, as DM reads it, and the
    original's), so on the dask engine a summary sharded over the workers is reduced part by
    part (nothing per class reaches the client); with ``id`` it reads the records.
    """

    name = "Discernibility"
    description = "ARX discernibility: Σ f² + n per suppressed record, normalized."
    inputs = "both"

    class Params(QIParams):
        pass

    def release_columns(self) -> Mapping[Side, Collection[str]] | None:
        """Both sides' quasi-identifiers: the lower bound groups the original's records."""
        return self.columns()

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if original is None or anonymized is None:
            raise DataError("Discernibility needs the original and the anonymized microdata")
        if isinstance(original, Microdata):
            original.require(list(p.quasi_identifiers), "quasi-identifier")
        cs = self.class_sizes(original, anonymized, ctx)
        f = cs.sizes.astype(np.int64)  # exact: Σ f² ≤ n² fits int64 for n < 3·10⁹
        n, squares, classes, suppressed = (cs.records, int((np.square(f) * cs.classes).sum()),
                                           int(cs.classes.sum()), cs.suppressed + cs.deleted)
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


def _squares(part: ClassSummary) -> int:
    """Σ f² over the classes of (a part of) a summary, exactly."""
    return int(np.square(part.counts.astype(np.int64)).sum())
