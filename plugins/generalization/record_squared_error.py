"""ARX's record-level squared error: standardized distances of records to their releases."""

from __future__ import annotations

import numpy as np

from anoneval.core.base import Context, LossMeasure, MeasureResult
from anoneval.core.data import Dataset, Microdata
from anoneval.plugins.generalization._quality import (
    TypedParams,
    attribute_type,
    numbers,
    quality_inputs,
    row_result,
)


class RecordSquaredError(LossMeasure):
    """Record-level squared error: mean standardized Euclidean distance to the farther end.

    Source: ARX's ``QualityModelRowOrientedSquaredError`` (Prasser et al. 2016). Each
    attribute becomes numbers as in :class:`AttributeSquaredError` (``types``); for record r,
    d_r = sqrt(Σ_j ((x_rj − e_rj)/σ_j)²) with e the end of the released interval farther from
    x (the upper end when hi − x > x − lo) and σ_j the original's population standard
    deviation (a constant attribute adds 0). raw = Σ_r d_r/(m·n); max = the same with every
    interval replaced by the attribute's overall [min, max] (original and released); min 0.
    The value is 1 − ARX's ``getRecordLevelSquaredError().getValue()``. Conventions as the
    family's (``anoneval.plugins.generalization._quality``).
    """

    name = "RecordSquaredError"
    description = "ARX record-level squared error: standardized distance to the releases."
    accepts = ("microdata",)
    inputs = "both"

    class Params(TypedParams):
        pass

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        inputs = quality_inputs(original, anonymized, p, ctx)
        assert isinstance(original, Microdata)
        real = np.zeros(inputs.n)
        worst = np.zeros(inputs.n)
        kinds = {}
        for s in inputs.columns:
            kinds[s.name] = kind = attribute_type(original, s.name, p.types)
            xlo, xhi, ylo, yhi = numbers(inputs, s, kind)
            sd = float(xlo.std())
            if sd == 0:
                continue
            m = min(xlo.min(), xhi.min(), ylo.min(), yhi.min())
            big = max(xlo.max(), xhi.max(), ylo.max(), yhi.max())
            real += ((xlo - np.where(yhi - xlo > xlo - ylo, yhi, ylo)) / sd) ** 2
            worst += ((xlo - np.where(big - xlo > xlo - m, big, m)) / sd) ** 2
        scale = len(inputs.columns) * inputs.n
        return row_result(float(np.sqrt(real).sum()) / scale, 0.0,
                          float(np.sqrt(worst).sum()) / scale, ctx,
                          {"records": inputs.n, "types": kinds})
