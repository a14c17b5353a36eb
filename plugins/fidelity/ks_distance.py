"""Two-sample Kolmogorov–Smirnov distance per column (Pflughoeft et al.'s Section 4.1.3 check)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from anoneval.core.api import Context, LossMeasure, MeasureResult
from anoneval.plugins._shared.continuous import ColumnsParams, ReplicaComparison


class KSDistance(ReplicaComparison, LossMeasure):
    """D = sup_t |F_n(t) − G_m(t)| between the actual's and the replica's column, per column.

    Empirical CDFs are right-continuous (F_n(t) = share of values ≤ t), so ties between the
    samples are handled exactly. The p-value is ``scipy.stats.ks_2samp``'s (exact for small
    samples, asymptotic otherwise; two-sided). D is invariant under the monotone transforms,
    which therefore only matter for the domain checks. The value is the largest D.
    """

    name = "KSDistance"
    description = "Largest per-column Kolmogorov–Smirnov distance between actual and replica."

    class Params(ColumnsParams):
        pass

    def from_columns(self, X: np.ndarray, Y: np.ndarray, columns: list[str],
                     ctx: Context) -> MeasureResult:
        per = {}
        for j, c in enumerate(columns):
            r = stats.ks_2samp(X[:, j], Y[:, j])
            per[c] = {"statistic": float(r.statistic), "pvalue": float(r.pvalue),
                      "location": float(r.statistic_location)}
        worst = max(per, key=lambda c: per[c]["statistic"])
        return MeasureResult(value=per[worst]["statistic"],
                             details={"columns": per, "worst_column": worst,
                                      "min_pvalue": float(np.min([v["pvalue"]
                                                                  for v in per.values()]))})
