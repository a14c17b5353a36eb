"""Hellinger distance between an original and a perturbed frequency table."""

from __future__ import annotations

import math

import numpy as np

from anoneval.core.api import Context, Dataset, MeasureResult
from anoneval.plugins.tabular._freq import FreqParams, FrequencyLoss


class HellingerDistance(FrequencyLoss):
    """HD = sqrt(½ Σ_c (√x'_c − √x_c)²) over the cells' counts (Shlomo, Antal & Elliot 2015).

    Cells are aligned by key; a cell missing on one side counts 0. HD is symmetric and 0 for
    identical tables. details: ``utility`` = 1 − HD/√N with N the original total (the bounded
    utility of the paper, as SmallCountRounding's ``HDutility``), and ``hd_proportions``, the
    Hellinger distance of the two tables' cell proportions (in [0, 1]).
    """

    name = "HellingerDistance"
    description = "Hellinger distance between original and perturbed cell counts."

    class Params(FreqParams):
        pass

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        _, f, g = self.aligned(original, anonymized, ctx)
        hd = math.sqrt(0.5 * float(((np.sqrt(f) - np.sqrt(g)) ** 2).sum()))
        n_f, n_g = float(f.sum()), float(g.sum())
        hd_prop = None
        if n_f > 0 and n_g > 0:
            hd_prop = math.sqrt(0.5 * float(((np.sqrt(f / n_f) - np.sqrt(g / n_g)) ** 2).sum()))
        return MeasureResult(value=hd, details={
            "utility": 1.0 - hd / math.sqrt(n_f) if n_f > 0 else None,
            "hd_proportions": hd_prop, "n_cells": len(f),
            "units_original": n_f, "units_anonymized": n_g,
        })
