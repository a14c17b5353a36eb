"""Relative absolute distance between an original and a perturbed frequency table."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import Context, Dataset, MeasureResult
from anoneval.plugins.tabular._freq import FreqParams, FrequencyLoss


class RelativeAbsoluteDistance(FrequencyLoss):
    """RAD = Σ_c |x'_c − x_c| / x_c over the cells with x_c > 0 (Shlomo, Antal & Elliot 2015).

    A sum over cells, as the ESSnet SDC handbook §4.7 (citing Shlomo, Antal &
    Elliot 2015) defines it: RAD(A) = Σ_{c∈A} |T_1(c) − T_0(c)| / T_0(c), with
    T_0 the original and T_1 the perturbed table. ``aggregate="mean"`` divides RAD by the number
    of cells used; the handbook's AD(A) = Σ_{c∈A} |T_1(c) − T_0(c)| / n_A over all aligned cells
    is ``details["mean_absolute_distance"]``. The relative distance is undefined for original
    zero cells, so they are left out (as cellKey's ``exclude_zeros``); perturbed counts in them
    are reported as ``false_nonzeros`` with their absolute distance. Not symmetric: the original
    is the reference. Cells are aligned by key; a cell missing on one side counts 0. No value
    when the original has no non-zero cell.
    """

    name = "RelativeAbsoluteDistance"
    description = "Relative absolute distance: sum of |x' - x| / x over original non-zero cells."

    class Params(FreqParams):
        aggregate: Literal["sum", "mean"] = Field(
            "sum", description="Sum the per-cell distances (the paper's RAD) or average them over "
                               "the cells used.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        _, f, g = self.aligned(original, anonymized, ctx)
        used = f > 0
        rad = np.abs(g[used] - f[used]) / f[used]
        total = float(rad.sum())
        n_used = int(used.sum())
        value = None if not n_used else total if self.params.aggregate == "sum" else total / n_used
        false_nz = (f == 0) & (g > 0)
        warnings = [] if n_used else ["the original table has no non-zero cell: RAD is undefined"]
        return MeasureResult(value=value, warnings=warnings, details={
            "sum": total, "mean": total / n_used if n_used else None,
            "cells_used": n_used, "n_cells": len(f),
            "max": float(rad.max()) if n_used else None,
            "false_zeros": int((used & (g == 0)).sum()),
            "false_nonzeros": int(false_nz.sum()),
            "false_nonzeros_absolute": float(g[false_nz].sum()),
            "mean_absolute_distance": float(np.abs(g - f).mean()) if len(f) else None,
        })
