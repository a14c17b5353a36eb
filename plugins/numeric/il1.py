"""IL1 and IL1s: absolute distances between original and perturbed numeric values."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, LossMeasure, MeasureResult
from anoneval.plugins.numeric._common import PairedNumeric, Pairs, column_sd, pair_details


class IL1(PairedNumeric, LossMeasure):
    """Sum of relative absolute deviations, in percent: IL1 = Σ_ij 100·|x_ij − x'_ij| / |x_ij|.

    Source: Yancey, Winkler & Creecy (2002), "Disclosure risk assessment in perturbative
    microdata protection", LNCS 2316; sdcMicro's ``dUtility(method = "IL1")``. As sdcMicro, the
    sum runs over every cell (not a mean); cells whose original value is 0 (an infinite or
    undefined term) and cells missing on either side are left out, and their count is in
    ``details.dropped_cells`` with a warning. details also give each column's sum and the mean
    over the cells used (``mean_per_cell``).
    """

    name = "IL1"
    description = "Sum over cells of 100·|x − x'|/|x| (sdcMicro's IL1)."

    def from_pairs(self, pairs: Pairs, ctx: Context) -> MeasureResult:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = 100.0 * np.abs(pairs.x - pairs.xm) / np.abs(pairs.x)
        used = np.isfinite(terms)
        terms = np.where(used, terms, 0.0)
        dropped = int(used.size - used.sum())
        if dropped:
            ctx.warn(f"{dropped} cells left out of IL1: the original value is 0 (an infinite "
                     "term) or a side is missing")
        per_column = terms.sum(axis=0)
        total = float(per_column.sum())
        return MeasureResult(value=total, details=pair_details(
            pairs, per_column, dropped_cells=dropped,
            mean_per_cell=total / int(used.sum()) if used.any() else None))


class IL1s(PairedNumeric, LossMeasure):
    """Standardised absolute deviations: IL1s = Σ_ij |x_ij − x'_ij| / (√2·s_j).

    Source: Mateo-Sanz, Sebé & Domingo-Ferrer (2004), "Outlier protection in continuous
    microdata masking", PSD 2004, LNCS 3050; sdcMicro's ``dUtility(method = "IL1s")``.
    s_j is the original column's sample standard deviation (n − 1, missing values ignored).
    value is sdcMicro's **sum** over cells; the paper's per-cell mean, IL1s / (n·p), is
    ``details.mean_per_cell`` (sdcMicro's ``IL1old``). Cells missing on either side add
    nothing (as sdcMicro). A column without variance in the original is an error naming it.
    """

    name = "IL1s"
    description = "Sum over cells of |x − x'| / (√2·sd(x)) (sdcMicro's IL1s)."

    def from_pairs(self, pairs: Pairs, ctx: Context) -> MeasureResult:
        sd = column_sd(pairs.x, pairs.columns, "original")
        terms = np.abs(pairs.x - pairs.xm) / (sd * np.sqrt(2.0))
        per_column = np.nansum(terms, axis=0)
        total = float(per_column.sum())
        n, p = pairs.x.shape
        return MeasureResult(value=total, details=pair_details(
            pairs, per_column, missing_cells=int(np.isnan(terms).sum()),
            mean_per_cell=total / (n * p)))
