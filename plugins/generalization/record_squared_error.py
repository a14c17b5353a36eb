"""ARX's record-level squared error: standardized distances of records to their releases."""

from __future__ import annotations

import math

import numpy as np

from anoneval.core.api import Context, MeasureResult, Microdata
from anoneval.plugins.generalization._numbers import Numbers, typed_columns
from anoneval.plugins.generalization._quality import Inputs, QualityModel, Side, TypedParams
from anoneval.plugins.generalization._results import row_result


class RecordSquaredError(QualityModel):
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

    class Params(TypedParams):
        pass

    def loss(self, inputs: Inputs, original: Microdata, ctx: Context) -> MeasureResult:
        p = self.params
        real = np.zeros(inputs.n)
        worst = np.zeros(inputs.n)
        columns, kinds = typed_columns(inputs, original, p.types)
        for s, num in columns:  # num: per (original, released) value pair
            x, ylo, yhi = num.x_lo[num.a], num.y_lo[num.b], num.y_hi[num.b]
            mean = float(num.w @ x) / inputs.n
            sd = math.sqrt(float(num.w @ (x - mean) ** 2) / inputs.n)  # population
            if sd == 0:
                continue
            m = min(x.min(), num.x_hi[num.a].min(), ylo.min(), yhi.min())
            big = max(x.max(), num.x_hi[num.a].max(), ylo.max(), yhi.max())
            pair_term = ((x - np.where(yhi - x > x - ylo, yhi, ylo)) / sd) ** 2
            real += per_row(s, num, pair_term)
            xo = num.x_lo
            worst += (((xo - np.where(big - xo > xo - m, big, m)) / sd) ** 2)[s.orig]
        scale = len(inputs.columns) * inputs.n
        return row_result(float(np.sqrt(real).sum()) / scale, 0.0,
                          float(np.sqrt(worst).sum()) / scale, ctx,
                          {"records": inputs.n, "types": kinds})


def per_row(s: Side, num: Numbers, pair_value: np.ndarray) -> np.ndarray:
    """Each row's entry of a per-pair array: a dense lookup table when small, else a search."""
    width = len(s.rel_texts)
    size = len(s.orig_texts) * width
    if size <= 4 * len(s.orig) + 1_000_000:
        grid = np.zeros(size)
        grid[num.a * width + num.b] = pair_value
        return grid[s.orig * width + s.rel]
    keys = num.a * width + num.b  # sorted: pair_counts orders by a, then b
    return pair_value[np.searchsorted(keys, s.orig * width + s.rel)]
