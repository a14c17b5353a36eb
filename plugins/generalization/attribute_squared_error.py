"""ARX's attribute-level squared error between original and released values."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, MeasureResult
from anoneval.plugins.generalization._cells import CellQualityModel, Cells
from anoneval.plugins.generalization._numbers import typed_cells
from anoneval.plugins.generalization._quality import ColumnParams, TypedParams
from anoneval.plugins.generalization._results import column_result


class AttributeSquaredError(CellQualityModel):
    """Attribute-level squared error: Σ_rows min(max((x − lo)², (x − hi)²), d_max(x)).

    Source: ARX's ``QualityModelColumnOrientedSquaredError`` (Prasser et al. 2016), the mean
    squared error of a released interval [lo, hi] towards its farther end. Per attribute, x is
    the original value as a number and [lo, hi] the released cell as numbers (``types``:
    'integer'/'decimal' use values and ranges, 'string' the positions in the hierarchy file, as
    ARX; see :func:`~anoneval.plugins.generalization._numbers.numbers`); a suppressed cell spans
    the attribute's range [m, M]. d_max(x) = max((x − m)², (x − M)²); min 0, max Σ_rows d_max.
    The value is 1 − ARX's ``getAttributeLevelSquaredError().getArithmeticMean()``.
    Conventions as the family's (``anoneval.plugins.generalization._quality``).
    """

    name = "AttributeSquaredError"
    description = "ARX attribute-level squared error of the released values or ranges."

    class Params(ColumnParams, TypedParams):
        pass

    def cell_loss(self, cells: Cells, ctx: Context) -> MeasureResult:
        p = self.params
        raw, hi = [], []
        columns, kinds = typed_cells(cells, p.types)
        for _, num in columns:  # num: per (original, released) value pair
            xlo, xhi = num.x_lo[num.a], num.x_hi[num.a]
            m, big = min(xlo.min(), xhi.min()), max(xlo.max(), xhi.max())
            dmax = np.maximum((xlo - m) ** 2, (xlo - big) ** 2)
            diff = np.maximum((xlo - num.y_lo[num.b]) ** 2, (xlo - num.y_hi[num.b]) ** 2)
            raw.append(float(num.w @ np.minimum(diff, dmax)))
            hi.append(float(num.w @ dmax))
        raw_a = np.array(raw)
        return column_result(p.quasi_identifiers, raw_a, np.zeros_like(raw_a), np.array(hi),
                             p.aggregate, ctx, {"records": cells.n, "types": kinds})
