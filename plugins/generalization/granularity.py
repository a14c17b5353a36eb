"""ARX's granularity: Iyengar's loss metric as ARX's column-oriented loss."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, MeasureResult
from anoneval.plugins.generalization._cells import CellQualityModel, Cells
from anoneval.plugins.generalization._quality import ArxCompatParams
from anoneval.plugins.generalization._results import column_result


class Granularity(CellQualityModel):
    """Granularity (Iyengar's loss metric LM): per attribute the mean domain share of the cells.

    Source: Iyengar (2002), "Transforming data to satisfy privacy constraints", KDD; ARX's
    ``QualityModelColumnOrientedLoss`` (Prasser et al. 2016). For attribute j with domain size
    D_j (rows of its hierarchy), share(v) = (#raw values under v)/D_j (1/D_j for a raw value,
    1 for the root or the token); raw_j = (1/n)·Σ_rows share_j, a suppressed record counting 1;
    min_j = 1/D_j, max_j = 1. The value is ARX's arithmetic mean over attributes as a loss,
    clamp((mean raw − mean min)/(mean max − mean min)) = 1 − ARX's ``getGranularity()
    .getArithmeticMean()``. ``aggregate="geometric"`` gives ARX's optimisation metric
    ``Metric.createLossMetric()`` (``MetricMDNMLoss``, gs-factor 0.5, geometric mean):
    Π_j (v_j + 1)^(1/m) − 1 over the per-attribute losses v_j = (raw_j − 1/D_j)/(1 − 1/D_j).
    Hierarchies, domain sizes and suppression follow the family's conventions
    (``anoneval.plugins.generalization._quality``); ``compat="arx"`` also counts rows whose
    quasi-identifier values are all equal as suppressed, as ARX's quality model does.
    """

    name = "Granularity"
    description = "ARX granularity (Iyengar's loss): mean domain share of the released cells."

    class Params(ArxCompatParams):
        pass

    def cell_loss(self, cells: Cells, ctx: Context) -> MeasureResult:
        p = self.params
        n_sup = cells.suppressed_count(p.compat)
        raw = np.array([(c.kept(p.compat) @ c.side.share() + n_sup) / cells.n
                        for c in cells.columns])
        lo = np.array([1.0 / c.side.table.domain for c in cells.columns])
        return column_result(p.quasi_identifiers, raw, lo, np.ones_like(raw), p.aggregate, ctx,
                             {"records": cells.n, "suppressed_records": n_sup,
                              "domain_sizes": {c.side.name: c.side.table.domain
                                               for c in cells.columns}})
