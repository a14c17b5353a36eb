"""Change of the pairwise correlations between the original and the release."""

from __future__ import annotations

from itertools import combinations
from typing import Literal

import numpy as np
from pydantic import Field
from scipy.stats import rankdata

from anoneval.core.api import Context, DataError, Dataset, LossMeasure, MeasureResult
from anoneval.plugins.fidelity._common import (
    FidelityParams,
    as_number,
    numeric_columns,
    pair,
    result,
)


def correlation(x: np.ndarray, y: np.ndarray, coefficient: str) -> float:
    """Pearson's or Spearman's (average ranks for ties) coefficient; NaN when undefined."""
    if len(x) < 2:
        return float("nan")
    if coefficient == "Spearman":
        x, y = rankdata(x), rankdata(y)
    x, y = x - x.mean(), y - y.mean()
    den = np.sqrt((x * x).sum() * (y * y).sum())
    return float((x * y).sum() / den) if den > 0 else float("nan")


class CorrelationDifference(LossMeasure):
    """Mean change of the pairwise correlation coefficients, SDMetrics' CorrelationSimilarity.

    For each pair of numeric columns (datetimes as numbers), ρ is Pearson's or Spearman's
    coefficient over the records where both are present, on each side; the pair's score is
    1 − |ρ_original − ρ_release| / 2 (SDMetrics docs, "CorrelationSimilarity"). SDMetrics'
    threshold rule: a pair whose |ρ_original| <= ``real_correlation_threshold`` gets no score
    (it is listed, not averaged). A pair with an undefined coefficient (a constant column, fewer
    than two complete records) gets no score and a warning. The value is the mean of
    |Δρ| / 2 (= 1 − ``details.score``); ``details.pairs`` the breakdown.
    """

    name = "CorrelationDifference"
    description = "Mean |Δ correlation| / 2 over numeric column pairs (1 − SDMetrics' "\
                  "CorrelationSimilarity)."

    class Params(FidelityParams):
        coefficient: Literal["Pearson", "Spearman"] = Field("Pearson",
                                                            description="Correlation "
                                                                        "coefficient.")
        real_correlation_threshold: float = Field(
            0.0, ge=0, le=1, description="Pairs with |ρ_original| at or below it are not scored.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        ori, syn = pair(original, anonymized, self.name)
        columns = numeric_columns(ori, syn, p.columns, self.name)
        if len(columns) < 2:
            raise DataError(f"{self.name} needs at least two numeric columns")
        values = {c: (as_number(ori.frame[c]).to_numpy(), as_number(syn.frame[c]).to_numpy())
                  for c in columns}
        rows, warnings = [], []
        for a, b in combinations(columns, 2):
            rho = []
            for side in (0, 1):
                x, y = values[a][side], values[b][side]
                ok = ~(np.isnan(x) | np.isnan(y))
                rho.append(correlation(x[ok], y[ok], p.coefficient))
            row = {"column_1": a, "column_2": b, "real": rho[0], "synthetic": rho[1],
                   "score": None}
            if np.isnan(rho[0]) or np.isnan(rho[1]):
                warnings.append(f"the correlation of {a!r} and {b!r} is undefined (constant "
                                "column or fewer than two complete records): no score")
            elif abs(rho[0]) > p.real_correlation_threshold:
                row["score"] = 1 - abs(rho[0] - rho[1]) / 2
            rows.append(row)
        return result(rows, "pairs", warnings, {"coefficient": p.coefficient})

