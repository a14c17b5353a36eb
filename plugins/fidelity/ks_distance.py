"""Two-sample Kolmogorov–Smirnov distance per column (Pflughoeft et al.'s Section 4.1.3 check)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from anoneval.core.api import Context, LossMeasure, MeasureResult
from anoneval.plugins._shared.continuous import ColumnsParams, ReplicaComparison

#: Above this many values on a side scipy's ``ks_2samp`` (mode "auto") uses the asymptotic
#: p-value, which :func:`ks_two_sample` computes from one sort of each sample.
EXACT_UP_TO = 10_000


def ks_two_sample(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """``scipy.stats.ks_2samp(x, y)`` (two-sided, mode "auto"): statistic, p-value and
    location, equal to scipy's, each sample sorted once.

    scipy evaluates F_n − G_m at every value of both samples by searching the concatenated
    values (unsorted) in each sorted sample; here the searches run on sorted keys (the same
    differences, in the same order, so the same ties are chosen). Samples of at most
    :data:`EXACT_UP_TO` values go to scipy (its exact p-value). Large samples get Smirnov's
    asymptotic p-value, ``kstwo.sf(D, round(mn / (m + n)))``, as scipy does.
    """
    if max(len(x), len(y)) <= EXACT_UP_TO:
        r = stats.ks_2samp(x, y)
        return {"statistic": float(r.statistic), "pvalue": float(r.pvalue),
                "location": float(r.statistic_location)}
    a, b = np.sort(x), np.sort(y)
    n1, n2 = len(a), len(b)
    # F_n − G_m at the values of x, then at those of y (scipy's order of data_all)
    diffs = np.concatenate([np.searchsorted(a, a, "right") / n1 - np.searchsorted(b, a, "right")
                            / n2, np.searchsorted(a, b, "right") / n1
                            - np.searchsorted(b, b, "right") / n2])
    low, high = int(np.argmin(diffs)), int(np.argmax(diffs))
    min_s, max_s = float(np.clip(-diffs[low], 0, 1)), float(diffs[high])
    d, at = (min_s, low) if min_s > max_s else (max_s, high)
    location = a[at] if at < n1 else b[at - n1]
    m, n = sorted([float(n1), float(n2)], reverse=True)
    pvalue = float(np.clip(stats.kstwo.sf(d, np.round(m * n / (m + n))), 0, 1))
    return {"statistic": d, "pvalue": pvalue, "location": float(location)}


class KSDistance(ReplicaComparison, LossMeasure):
    """D = sup_t |F_n(t) − G_m(t)| between the actual's and the replica's column, per column.

    Empirical CDFs are right-continuous (F_n(t) = share of values ≤ t), so ties between the
    samples are handled exactly. The p-value is ``scipy.stats.ks_2samp``'s (exact for samples
    of at most 10,000 values, Smirnov's asymptotic form otherwise; two-sided); SDMetrics'
    KSComplement is 1 − D. D is invariant under the monotone transforms, which therefore only
    matter for the domain checks. The value is the largest D.
    """

    name = "KSDistance"
    description = "Largest per-column Kolmogorov–Smirnov distance between actual and replica."

    class Params(ColumnsParams):
        pass

    def from_columns(self, X: np.ndarray, Y: np.ndarray, columns: list[str],
                     ctx: Context) -> MeasureResult:
        per: dict[str, dict[str, Any]] = {c: ks_two_sample(X[:, j], Y[:, j])
                                          for j, c in enumerate(columns)}
        worst = max(per, key=lambda c: per[c]["statistic"])
        return MeasureResult(value=per[worst]["statistic"],
                             details={"columns": per, "worst_column": worst,
                                      "min_pvalue": float(np.min([v["pvalue"]
                                                                  for v in per.values()]))})
