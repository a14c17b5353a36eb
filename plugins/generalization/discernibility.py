"""ARX's discernibility: DM normalized between the original's value and n²."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, DataError, Dataset, LossMeasure, MeasureResult, Microdata
from anoneval.plugins.generalization._results import row_result
from anoneval.plugins.microdata._common import QIParams, raw_class_sizes, released_classes


class Discernibility(LossMeasure):
    """Discernibility: DM = Σ_E f_E² + |S|·n, normalized by ARX's bounds.

    Source: Bayardo & Agrawal (2005), "Data privacy through optimal k-anonymization" (ICDE);
    ARX's ``QualityModelRowOrientedDiscernibility``. f_E are the sizes of the classes of
    non-suppressed records, S the suppressed records, n all records. min = Σ f² over the
    classes of the original (nothing suppressed), max = n²; the value is clamp((DM − min)/(max −
    min)) = 1 − ARX's ``getDiscernibility().getValue()``. Plain DM is the ``DM`` measure.
    Needs no hierarchy. Suppression, alignment and missing values as the family's
    (``anoneval.plugins.generalization._quality``).
    """

    name = "Discernibility"
    description = "ARX discernibility: Σ f² + n per suppressed record, normalized."

    class Params(QIParams):
        pass

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if not isinstance(original, Microdata) or not isinstance(anonymized, Microdata):
            raise DataError("Discernibility needs the original and the anonymized microdata")
        original.require(list(p.quasi_identifiers), "quasi-identifier")
        if not len(original):
            raise DataError("the original data has no records")
        _, cl = released_classes(original, anonymized, p, ctx)
        n = cl.records
        f = cl.sizes.astype(np.int64)  # exact: Σ f² ≤ n² fits int64 for n < 3·10⁹
        dm = int(np.square(f).sum()) + cl.suppressed_total * n
        lo = int(np.square(raw_class_sizes(original, p.quasi_identifiers)).sum())
        return row_result(float(dm), float(lo), float(n) * n, ctx, {
            "records": n, "suppressed_records": cl.suppressed_total, "classes": len(f),
            "dm_exact": dm})
