"""Mlodak's information loss from the inverse correlation matrices (IL_correl)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import Context, DataError, LossMeasure, MeasureResult
from anoneval.plugins.numeric._common import (
    NumericParams,
    PairedNumeric,
    Pairs,
    column_sd,
    complete_rows,
)

#: Reciprocal condition number below which a correlation matrix is taken as singular.
SINGULAR = 1e-12


def inverse_diagonal(x: np.ndarray, columns: list[str], side: str) -> tuple[np.ndarray, int]:
    """diag(R⁻¹) of the correlation matrix R of the complete records, and how many were left
    out."""
    keep = complete_rows(x)
    z = x[keep]
    if len(z) < 2:
        raise DataError(f"the {side} data has fewer than two records without a missing value "
                        f"in {columns}")
    column_sd(z, columns, side)
    r = np.atleast_2d(np.corrcoef(z, rowvar=False))
    if 1.0 / np.linalg.cond(r) < SINGULAR:
        raise DataError(f"the {side} data's correlation matrix of columns {columns} is singular: "
                        "some columns are collinear")
    return np.diag(np.linalg.inv(r)), int(len(x) - keep.sum())


class CorrelationLoss(PairedNumeric, LossMeasure):
    """λ = c·‖d/‖d‖ − d'/‖d'‖‖ with d, d' the diagonals of the inverse correlation matrices.

    Source: Mlodak (2020), "Information loss resulting from statistical disclosure control of
    output data", Wiadomości Statystyczne 65(9), 7–27; sdcMicro's ``IL_correl``. Correlations
    are Pearson's on each side's complete records (R's ``use = "complete.obs"``). The
    diagonals are positive, so the normalised vectors are unit vectors of the positive orthant
    and their distance is at most √2: the default ``scale: "sdcmicro"`` takes c = 1/√2 (as
    sdcMicro, so λ ∈ [0, 1]); ``scale: "mlodak"`` the paper's c = 1/2. A singular correlation
    matrix (collinear or constant columns) is an error naming the columns.
    """

    name = "CorrelationLoss"
    description = "Mlodak's IL_correl: change of the inverse correlation matrix's diagonal."

    class Params(NumericParams):
        scale: Literal["sdcmicro", "mlodak"] = Field(
            "sdcmicro", description="Constant: 1/√2 (sdcMicro; bounded by 1) or 1/2 (Mlodak "
                                    "2020).")

    def from_pairs(self, pairs: Pairs, ctx: Context) -> MeasureResult:
        if len(pairs.columns) < 2:
            raise DataError("CorrelationLoss needs at least two numeric columns")
        d1, out1 = inverse_diagonal(pairs.x, pairs.columns, "original")
        d2, out2 = inverse_diagonal(pairs.xm, pairs.columns, "anonymized")
        if out1 or out2:
            ctx.warn(f"records with a missing value left out of the correlations: {out1} "
                     f"original, {out2} anonymized")
        c = 1.0 / np.sqrt(2.0) if self.params.scale == "sdcmicro" else 0.5
        value = c * float(np.linalg.norm(d1 / np.linalg.norm(d1) - d2 / np.linalg.norm(d2)))
        return MeasureResult(value=value, details={
            "columns": pairs.columns,
            "inverse_diagonal_original": d1,
            "inverse_diagonal_anonymized": d2,
        })
