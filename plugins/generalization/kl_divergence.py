"""ARX's KL divergence between the original and the released tuples with hierarchy areas."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, MeasureResult, Microdata, Records
from anoneval.plugins.generalization._cells import CellParts, Cells
from anoneval.plugins.generalization._quality import Inputs, group_area
from anoneval.plugins.generalization._records import RecordQualityModel, kl_divergence, kl_sums


class HierarchyKLDivergence(RecordQualityModel):
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

    On the dask engine the domains and areas come from the paired records' cell tables, and
    p_r and q_r from two hash-partitioned group-bys of the paired records on the workers (by
    original tuple, then by released tuple; :mod:`anoneval.plugins.generalization._records`):
    nothing is gathered.
    """

    name = "HierarchyKLDivergence"
    description = "ARX KL divergence of the released classes spread over hierarchy areas (bits)."

    def loss(self, inputs: Inputs, original: Microdata, ctx: Context) -> MeasureResult:
        n = inputs.n
        log_domain = float(sum(np.log2(float(s.table.domain)) for s in inputs.columns))
        kl, upper = kl_sums(inputs.orig_sizes[inputs.orig_group].astype(float),
                            inputs.group_sizes[inputs.group].astype(float),
                            np.log2(group_area(inputs))[inputs.group], inputs.row_sup, n,
                            inputs.suppressed, log_domain)
        return self._result(kl, upper, n, inputs.suppressed)

    def record_loss(self, cells: Cells, parts: CellParts, records: Records,
                    ctx: Context) -> MeasureResult:
        p = self.params
        kl, upper = kl_divergence(cells, parts, p.quasi_identifiers, p.suppression_token,
                                  p.missing, records)
        return self._result(kl, upper, cells.n, cells.suppressed)

    @staticmethod
    def _result(kl: float, upper: float, n: int, suppressed: int) -> MeasureResult:
        return MeasureResult(value=kl, details={
            "raw": kl, "all_suppressed": upper, "records": n, "suppressed_records": suppressed})
