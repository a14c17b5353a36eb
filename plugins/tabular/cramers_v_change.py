"""Change in Cramér's V between an original and a perturbed two-way frequency table."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import Context, DataError, Dataset, MeasureResult
from anoneval.plugins.tabular._freq import FreqParams, FrequencyLoss


def cramers_v(table: np.ndarray) -> tuple[float | None, float]:
    """Cramér's V and Pearson's χ² of a two-way count table; rows and columns with no units are
    dropped, and V is None when fewer than two rows or columns remain (no association defined).
    """
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    n = table.sum()
    if min(table.shape) < 2 or n <= 0:
        return None, 0.0
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    chi2 = float(((table - expected) ** 2 / expected).sum())
    return math.sqrt(chi2 / (n * (min(table.shape) - 1))), chi2


class CramersVChange(FrequencyLoss):
    """Change in Cramér's V, V = sqrt(χ² / (N·(min(R, C) − 1))), from original to perturbed.

    Shlomo, Antal & Elliot (2015) report the relative difference RCV = 100·(V' − V)/V; with
    ``change="relative"`` the value is |RCV| (percent, not symmetric; 0 when both V are 0,
    undefined when only the original's is), with ``"absolute"`` it is |V' − V| (symmetric).
    The two-way table crosses ``variables`` (default: the two spanning variables), summing the
    counts over any others; cells are aligned by key, missing = 0.
    """

    name = "CramersVChange"
    description = "Change in Cramér's V of a two-way frequency table after perturbation."

    class Params(FreqParams):
        variables: list[str] | None = Field(
            None, min_length=2, max_length=2,
            description="The row and column variable; default: the two spanning variables.")
        change: Literal["relative", "absolute"] = Field(
            "relative", description="|100·(V'−V)/V| (percent) or |V'−V|.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        keys, f, g = self.aligned(original, anonymized, ctx)
        pair = self.params.variables or list(keys.columns)
        if len(pair) != 2 or any(v not in keys.columns for v in pair):
            raise DataError(f"{self.name} needs two of the spanning variables "
                            f"{list(keys.columns)} as 'variables'; got {pair}")
        rows, _ = pd.factorize(keys[pair[0]], use_na_sentinel=False)
        cols, _ = pd.factorize(keys[pair[1]], use_na_sentinel=False)
        shape = (rows.max(initial=-1) + 1, cols.max(initial=-1) + 1)
        t_f, t_g = np.zeros(shape), np.zeros(shape)
        np.add.at(t_f, (rows, cols), f)
        np.add.at(t_g, (rows, cols), g)
        v_f, chi_f = cramers_v(t_f)
        v_g, chi_g = cramers_v(t_g)
        warnings = []
        rcv = None
        if v_f is None or v_g is None:
            value = None
            warnings.append("Cramér's V is undefined when a table has fewer than two non-empty "
                            "rows or columns")
        elif self.params.change == "absolute":
            value = abs(v_g - v_f)
            rcv = 100.0 * (v_g - v_f) / v_f if v_f > 0 else None
        else:
            rcv = 100.0 * (v_g - v_f) / v_f if v_f > 0 else None
            value = abs(rcv) if rcv is not None else (0.0 if v_g == v_f else None)
            if value is None:
                warnings.append("the original's Cramér's V is 0: the relative change is "
                                "undefined; use change='absolute'")
        return MeasureResult(value=value, warnings=warnings, details={
            "variables": pair, "cramers_v_original": v_f, "cramers_v_anonymized": v_g,
            "rcv_percent": rcv, "chi2_original": chi_f, "chi2_anonymized": chi_g,
        })
