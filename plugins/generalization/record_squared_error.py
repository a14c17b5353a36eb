"""ARX's record-level squared error: standardized distances of records to their releases."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, MeasureResult, Microdata, Records
from anoneval.plugins.generalization._cells import CellParts, Cells
from anoneval.plugins.generalization._numbers import Numbers, typed_cells, typed_columns
from anoneval.plugins.generalization._quality import Inputs, Side, TypedParams
from anoneval.plugins.generalization._records import (
    RecordQualityModel,
    squared_sums,
    squared_terms,
)
from anoneval.plugins.generalization._results import row_result


class RecordSquaredError(RecordQualityModel):
    """Record-level squared error: mean standardized Euclidean distance to the farther end.

    Source: ARX's ``QualityModelRowOrientedSquaredError`` (Prasser et al. 2016). Each
    attribute becomes numbers as in :class:`AttributeSquaredError` (``types``); for record r,
    d_r = sqrt(Σ_j ((x_rj − e_rj)/σ_j)²) with e the end of the released interval farther from
    x (the upper end when hi − x > x − lo) and σ_j the original's population standard
    deviation (a constant attribute adds 0). raw = Σ_r d_r/(m·n); max = the same with every
    interval replaced by the attribute's overall [min, max] (original and released); min 0.
    The value is 1 − ARX's ``getRecordLevelSquaredError().getValue()``. Conventions as the
    family's (``anoneval.plugins.generalization._quality``).

    On the dask engine σ_j and the ranges come from the paired records' cell tables, then
    Σ_r d_r is summed block by block where the records lie
    (:mod:`anoneval.plugins.generalization._records`): nothing is gathered. By ``id`` there, a
    column typed ``string`` needs its hierarchy (as :class:`AttributeSquaredError`).
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
            found = squared_terms(num, inputs.n)
            if found is None:
                continue
            pair, far = found
            real += per_row(s, num, pair)
            worst += far[s.orig]
        return self._result(float(np.sqrt(real).sum()), float(np.sqrt(worst).sum()),
                            inputs.n, kinds, ctx)

    def record_loss(self, cells: Cells, parts: CellParts, records: Records,
                    ctx: Context) -> MeasureResult:
        p = self.params
        columns, kinds = typed_cells(cells, p.types)
        real, worst = squared_sums(cells, parts, [num for _, num in columns],
                                   p.suppression_token, p.missing, records)
        return self._result(real, worst, cells.n, kinds, ctx)

    def _result(self, real: float, worst: float, n: int, kinds: dict[str, str],
                ctx: Context) -> MeasureResult:
        scale = len(self.params.quasi_identifiers) * n
        return row_result(real / scale, 0.0, worst / scale, ctx, {"records": n, "types": kinds})


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
