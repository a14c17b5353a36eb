"""ARX's discernibility: DM normalized between the original's value and n²."""

from __future__ import annotations

import numpy as np

from anoneval.core.base import Context, LossMeasure, MeasureResult
from anoneval.core.data import Dataset
from anoneval.plugins.generalization._quality import QualityParams, quality_inputs, row_result


class Discernibility(LossMeasure):
    """Discernibility: DM = Σ_E f_E² + |S|·n, normalized by ARX's bounds.

    Source: Bayardo & Agrawal (2005), "Data privacy through optimal k-anonymization" (ICDE);
    ARX's ``QualityModelRowOrientedDiscernibility``. f_E are the sizes of the classes of
    non-suppressed records, S the suppressed records, n all records. min = Σ f² over the
    classes of the original (nothing suppressed), max = n²; the value is clamp((DM − min)/(max −
    min)) = 1 − ARX's ``getDiscernibility().getValue()``. Plain DM is the ``DM`` measure.
    Conventions as the family's (``anoneval.plugins.generalization._quality``).
    """

    name = "Discernibility"
    description = "ARX discernibility: Σ f² + n per suppressed record, normalized."
    accepts = ("microdata",)
    inputs = "both"

    class Params(QualityParams):
        pass

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        inputs = quality_inputs(original, anonymized, p, ctx)
        n = inputs.n
        f = inputs.sizes.astype(np.int64)
        dm = int(np.square(f).sum()) + inputs.suppressed * n
        lo = int(np.square(inputs.orig_sizes.astype(np.int64)).sum())
        return row_result(float(dm), float(lo), float(n) * n, ctx, {
            "records": n, "suppressed_records": inputs.suppressed, "classes": len(f),
            "dm_exact": dm})
