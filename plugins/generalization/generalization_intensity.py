"""ARX's generalization intensity: Sweeney's precision as ARX's column-oriented model."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, MeasureResult
from anoneval.plugins.generalization._cells import CellQualityModel, Cells
from anoneval.plugins.generalization._quality import ArxCompatParams
from anoneval.plugins.generalization._results import column_result


class GeneralizationIntensity(CellQualityModel):
    """Generalization intensity (precision loss): per attribute the mean of level / height.

    Source: Sweeney (2002), "Achieving k-anonymity privacy protection using generalization and
    suppression" (Prec); ARX's ``QualityModelColumnOrientedPrecision``. A cell's level is the
    lowest hierarchy level at which its released value occurs, height = #hierarchy columns − 1;
    raw_j = (1/n)·Σ_rows level/height, a suppressed record or a token cell counting 1; min 0,
    max 1. The value is 1 − ARX's ``getGeneralizationIntensity().getArithmeticMean()``. Under
    global recoding with classes below k suppressed, and hierarchies that end in one root,
    this equals ARX's optimisation metric ``Metric.createPrecisionMetric()``
    (``MetricMDNMPrecision``, arithmetic mean; its height omits the ``*`` level the quality
    model adds to a hierarchy with several roots). Conventions
    as the family's (``anoneval.plugins.generalization._quality``); ``compat="arx"`` as in
    Granularity.
    """

    name = "GeneralizationIntensity"
    description = "ARX generalization intensity (precision): mean level/height of the cells."

    class Params(ArxCompatParams):
        pass

    def cell_loss(self, cells: Cells, ctx: Context) -> MeasureResult:
        p = self.params
        n_sup = cells.suppressed_count(p.compat)
        raw = []
        for c in cells.columns:
            s = c.side
            s.require_known()
            t = s.table
            level = np.where(s.rel_pos >= 0, t.first_level[np.maximum(s.rel_pos, 0)], t.height)
            raw.append((c.kept(p.compat) @ (level / max(t.height, 1)) + n_sup) / cells.n)
        raw_a = np.array(raw)
        return column_result(p.quasi_identifiers, raw_a, np.zeros_like(raw_a),
                             np.ones_like(raw_a), p.aggregate, ctx,
                             {"records": cells.n, "suppressed_records": n_sup,
                              "heights": {c.side.name: c.side.table.height
                                          for c in cells.columns}})
