"""Difference of a column statistic (mean, standard deviation, median) scaled by the range."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from anoneval.core.api import Context, LossMeasure, MeasureResult
from anoneval.plugins.fidelity._common import (
    FidelityParams,
    as_number,
    choose,
    numeric_only,
    pair,
    result,
)
from anoneval.plugins.similarity._mixed import is_numeric


class StatisticDifference(LossMeasure):
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
    accepts = ("microdata",)
    inputs = "both"

    class Params(FidelityParams):
        statistic: Literal["mean", "std", "median"] = Field("mean",
                                                            description="Statistic compared.")

    def compute(self, original, anonymized, ctx: Context) -> MeasureResult:
        stat = self.params.statistic
        ori, syn = pair(original, anonymized, self.name)
        columns = choose(ori, syn, self.params.columns, is_numeric, self.name, "numeric")
        numeric_only(ori, syn, columns, self.name)
        rows, warnings = [], []
        for c in columns:
            r, s = as_number(ori.frame[c]).dropna(), as_number(syn.frame[c]).dropna()
            row = {"column": c, "real": None, "synthetic": None, "score": None}
            if r.nunique() < 2:
                warnings.append(f"column {c!r} of the original is constant or missing: no score")
                rows.append(row)
                continue
            sr, ss = getattr(r, stat)(), getattr(s, stat)()
            row.update(real=float(sr), synthetic=float(ss))
            if len(s):
                row["score"] = max(1 - abs(sr - ss) / (r.max() - r.min()), 0.0)
            else:
                warnings.append(f"column {c!r} of the release is all missing: no score")
            rows.append(row)
        return result(rows, "columns", warnings, {"statistic": stat})

