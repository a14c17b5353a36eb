"""Relative change of the eigenvalues of the standardised covariance matrix."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import Context, DataError, LossMeasure, MeasureResult
from anoneval.plugins.numeric._common import (
    NumericParams,
    PairedNumeric,
    Pairs,
    complete_rows,
    pair_details,
    standardize,
)
from anoneval.plugins.numeric._robust import mcd_covariance

#: Eigenvalues below this share of the largest make a covariance matrix singular here.
SINGULAR = 1e-12


def eigenvalues(z: np.ndarray, robust: bool, seed: int, columns: list[str],
                side: str) -> tuple[np.ndarray, int]:
    """Eigenvalues (largest first) of the covariance of standardised ``z``, rows left out."""
    if robust:
        keep = complete_rows(z)
        cov = mcd_covariance(z[keep], seed)
        left_out = int(len(z) - keep.sum())
    else:  # R's var(use = "pairwise.complete.obs"): each entry from its complete pairs
        cov = pd.DataFrame(z).cov().to_numpy()
        left_out = 0
        if np.isnan(cov).any():
            i, j = np.argwhere(np.isnan(cov))[0]
            raise DataError(f"columns {columns[i]!r} and {columns[j]!r} of the {side} data "
                            "have fewer than two records with both values")
    return np.linalg.eigvalsh(cov)[::-1], left_out


def relative_change(e1: np.ndarray, e2: np.ndarray) -> float:
    """Σ_j |λ_j − λ'_j| / λ_j over eigenvalues sorted alike (largest first)."""
    return float(np.sum(np.abs(e1 - e2) / e1))


class EigenvalueLoss(PairedNumeric, LossMeasure):
    """Σ_j |λ_j − λ'_j| / λ_j over the eigenvalues of the standardised covariance matrices.

    Source: Templ & Meindl (2008), "Robust statistics meets SDC: new disclosure risk measures
    for continuous microdata masking", PSD 2008, LNCS 5262; sdcMicro's ``dUtility(method =
    "eigen")`` and, with ``robust: true``, ``"robeigen"``. Each side is standardised by its own
    means and sample SDs (R's ``scale``); λ are the eigenvalues of its covariance (pairwise
    complete observations, as R's ``var(use = "pairwise.complete.obs")``; with ``robust``, the
    MCD covariance of Rousseeuw & Van Driessen 1999 on the complete records, from
    scikit-learn, seeded by the evaluation seed), both sorted largest first. A column without
    variance, or an original matrix with an eigenvalue below 1e-12 of the largest (collinear
    columns: the ratio is undefined), is an error.
    """

    name = "EigenvalueLoss"
    description = "Relative change of the eigenvalues of the standardised covariance (sdcMicro)."

    class Params(NumericParams):
        robust: bool = Field(False, description="Use the MCD robust covariance (sdcMicro's "
                                                "'robeigen'; needs scikit-learn).")

    def from_pairs(self, pairs: Pairs, ctx: Context) -> MeasureResult:
        p = self.params
        cols = pairs.columns
        e1, out1 = eigenvalues(standardize(pairs.x, cols, "original"), p.robust, ctx.seed, cols,
                               "original")
        e2, out2 = eigenvalues(standardize(pairs.xm, cols, "anonymized"), p.robust, ctx.seed,
                               cols, "anonymized")
        if e1[-1] <= SINGULAR * e1[0]:
            raise DataError(f"the original's covariance matrix of columns {cols} is singular "
                            f"(smallest eigenvalue {e1[-1]:.3g}): some columns are collinear")
        if out1 or out2:
            ctx.warn(f"records with a missing value left out of the MCD fit: {out1} original, "
                     f"{out2} anonymized")
        return MeasureResult(value=relative_change(e1, e2), details=pair_details(
            pairs, eigenvalues_original=e1, eigenvalues_anonymized=e2))
