"""Relative absolute distance between an original and a perturbed frequency table."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from anoneval.core import Context, LossMeasure, MeasureResult
from anoneval.core.data import Dataset
from anoneval.plugins.tabular._freq import FreqParams, aligned_counts, frequency_table


class RelativeAbsoluteDistance(LossMeasure):
    """Mean (or sum) over cells with x_c > 0 of |x'_c − x_c| / x_c (Shlomo, Antal & Elliot 2015).

    The relative distance is undefined for original zero cells, so they are left out (as
    cellKey's ``exclude_zeros``); perturbed counts in them are reported as ``false_nonzeros``
    with their absolute distance. Not symmetric: the original is the reference. Cells are
    aligned by key; a cell missing on one side counts 0.
    """

    name = "RelativeAbsoluteDistance"
    description = "Mean relative absolute distance |x' - x| / x over the original non-zero cells."
    accepts = ("microdata", "table")
    inputs = "both"

    class Params(FreqParams):
        aggregate: Literal["mean", "sum"] = Field(
            "mean", description="Average the per-cell distances over the cells used, or sum them.")

    def prepare(self, original: Dataset | None, ctx: Context) -> Any:
        """The original's frequency table, built once however many variants follow."""
        return None if original is None else frequency_table(original, self.params, self.name)

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert original is not None and anonymized is not None
        _, f, g = aligned_counts(original, anonymized, self.params, self.name,
                                 ctx.prepared)
        used = f > 0
        rad = np.abs(g[used] - f[used]) / f[used]
        total = float(rad.sum())
        n_used = int(used.sum())
        value = total if self.params.aggregate == "sum" else (total / n_used if n_used else None)
        false_nz = (f == 0) & (g > 0)
        return MeasureResult(value=value, details={
            "sum": total, "cells_used": n_used, "n_cells": len(f),
            "max": float(rad.max()) if n_used else None,
            "false_zeros": int((used & (g == 0)).sum()),
            "false_nonzeros": int(false_nz.sum()),
            "false_nonzeros_absolute": float(g[false_nz].sum()),
            "mean_absolute_distance": float(np.abs(g - f).mean()) if len(f) else None,
        })
