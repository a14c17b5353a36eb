"""ARX's SSE/SST: squared error of the released midpoints relative to their spread."""

from __future__ import annotations

from anoneval.core.api import Context, MeasureResult
from anoneval.plugins.generalization._cells import CellQualityModel, Cells
from anoneval.plugins.generalization._numbers import typed_cells
from anoneval.plugins.generalization._quality import TypedParams
from anoneval.plugins.generalization._results import row_result


class SSESST(CellQualityModel):
    """SSE/SST: Σ (mid_orig − mid_rel)² over Σ (mid_rel − centroid_orig)², clamped to [0, 1].

    Source: ARX's ``QualityModelRowOrientedSSESST`` (Prasser et al. 2016), the clustering
    quality ratio of within-cluster to total sum of squares. Each attribute becomes numbers as
    in :class:`AttributeSquaredError` (``types``); mid is the midpoint of a cell's interval,
    the centroid the mean of the original's midpoints per attribute; sums run over records and
    attributes, unstandardized as in ARX. min 0, raw SSE, max SST; the value is clamp(SSE/SST)
    = 1 − ARX's ``getSSESST().getValue()``. Conventions as the family's
    (``anoneval.plugins.generalization._quality``).
    """

    name = "SSESST"
    description = "ARX SSE/SST: squared error of released midpoints over their total spread."

    class Params(TypedParams):
        pass

    def cell_loss(self, cells: Cells, ctx: Context) -> MeasureResult:
        p = self.params
        sse = sst = 0.0
        columns, kinds = typed_cells(cells, p.types)
        for _, num in columns:  # num: per (original, released) value pair
            mid_in = (num.x_lo[num.a] + num.x_hi[num.a]) / 2
            mid_out = (num.y_lo[num.b] + num.y_hi[num.b]) / 2
            centroid = float(num.w @ mid_in) / cells.n
            sse += float(num.w @ (mid_in - mid_out) ** 2)
            sst += float(num.w @ (mid_out - centroid) ** 2)
        return row_result(sse, 0.0, sst, ctx, {"records": cells.n, "types": kinds,
                                               "sse": sse, "sst": sst})
