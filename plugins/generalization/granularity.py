"""ARX's granularity: Iyengar's loss metric as ARX's column-oriented loss."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, MeasureResult, Microdata
from anoneval.plugins.generalization._quality import CellModel, Inputs, nonsuppressed_counts
from anoneval.plugins.generalization._results import column_result


class Granularity(CellModel):
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

    def loss(self, inputs: Inputs, original: Microdata, ctx: Context) -> MeasureResult:
        p = self.params
        n_sup = self.suppressed_count(inputs)
        raw = np.array([(nonsuppressed_counts(inputs, s, p.compat) @ s.share() + n_sup) / inputs.n
                        for s in inputs.columns])
        lo = np.array([1.0 / s.table.domain for s in inputs.columns])
        return column_result(p.quasi_identifiers, raw, lo, np.ones_like(raw), p.aggregate, ctx,
                             {"records": inputs.n, "suppressed_records": n_sup,
                              "domain_sizes": {s.name: s.table.domain for s in inputs.columns}})
