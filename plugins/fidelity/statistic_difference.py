"""Difference of a column statistic (mean, standard deviation, median) scaled by the range."""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from pydantic import Field

from anoneval.plugins.fidelity._column import ColumnFidelity
from anoneval.plugins.fidelity._common import FidelityParams, as_number


class StatisticDifference(ColumnFidelity):
    """Mean over numeric columns of min(|s_original − s_release| / range_original, 1).

    s is the column's mean, standard deviation (n − 1 denominator) or median over its
    non-missing values, and range_original = max − min of the original. The column's score
    is SDMetrics' StatisticSimilarity, max(1 − |Δs| / range, 0) (SDMetrics docs); a constant
    original column has no score (warning). The value is 1 − ``details.score``;
    ``details.columns`` the breakdown.
    """

    name = "StatisticDifference"
    description = "Mean |Δ statistic| / range of numeric columns (1 − SDMetrics' "\
                  "StatisticSimilarity)."
    column_kind = "numeric"

    class Params(FidelityParams):
        statistic: Literal["mean", "std", "median"] = Field("mean",
                                                            description="Statistic compared.")

    def extra(self) -> dict[str, Any]:
        return {"statistic": self.params.statistic}

    def score(self, column: str, real: pd.Series, released: pd.Series
              ) -> tuple[dict[str, Any], str | None]:
        stat = self.params.statistic
        r, s = as_number(real).dropna(), as_number(released).dropna()
        row = {"real": None, "synthetic": None, "score": None}
        lo, hi = r.min(), r.max()
        if not len(r) or lo == hi:
            return row, "the original is constant or missing: no score"
        sr, ss = getattr(r, stat)(), getattr(s, stat)()
        row.update(real=float(sr), synthetic=float(ss))
        if not len(s):
            return row, "the release is all missing: no score"
        return {**row, "score": max(1 - abs(sr - ss) / (hi - lo), 0.0)}, None
