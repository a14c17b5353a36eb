"""ARX's KL divergence between the original and the released tuples with hierarchy areas."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, MeasureResult, Microdata
from anoneval.plugins.generalization._quality import Inputs, QualityModel, group_area


class HierarchyKLDivergence(QualityModel):
    """KL divergence Σ_rows p_r·log2(p_r/q_r) in bits, ARX's ``MetricSDNMKLDivergence``.

    Source: Kifer & Gehrke (2006), "Injecting utility into anonymized datasets" (SIGMOD);
    ARX's ``MetricSDNMKLDivergence`` (``Metric.createKLDivergenceMetric()``). p_r = (#original
    records with row r's quasi-identifier tuple)/n; q_r = (f_E/n)/area(E) for the released class
    E of row r, area = Π_j share_j·D_j (raw values under each released value, from the
    hierarchy); for a suppressed record q_r = (|S|/n)/Π_j D_j. As in ARX the sum runs over rows,
    not distinct tuples, so a tuple with c copies adds c times. The value is the raw divergence
    (ARX gives no bounds); details ``all_suppressed`` is the divergence of the release with
    every record suppressed, Σ_rows p_r·log2(p_r·Π_j D_j), which ARX keeps as its "max" though
    a fine release with small classes over wide areas can exceed it. Conventions as the family's
    (``anoneval.plugins.generalization._quality``).
    """

    name = "HierarchyKLDivergence"
    description = "ARX KL divergence of the released classes spread over hierarchy areas (bits)."

    def loss(self, inputs: Inputs, original: Microdata, ctx: Context) -> MeasureResult:
        n = inputs.n
        log_domain = float(sum(np.log2(float(s.table.domain)) for s in inputs.columns))
        pr = inputs.orig_sizes[inputs.orig_group] / n
        size = inputs.group_sizes[inputs.group].astype(float)
        log_area = np.log2(group_area(inputs))[inputs.group]
        sup = inputs.row_sup
        s = inputs.suppressed
        log_q = np.where(sup, np.log2(max(s, 1) / n) - log_domain,
                         np.log2(size / n) - log_area)
        kl = float((pr * (np.log2(pr) - log_q)).sum())
        upper = float((pr * (np.log2(pr) + log_domain)).sum())
        return MeasureResult(value=kl, details={
            "raw": kl, "all_suppressed": upper, "records": n, "suppressed_records": s})
