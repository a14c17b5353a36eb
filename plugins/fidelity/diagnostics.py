"""SDMetrics' validity diagnostics: BoundaryAdherence, CategoryAdherence, MissingValueSimilarity.

Each scores a column as SDMetrics does (1 = the release keeps to the original; SDMetrics docs,
"Diagnostic metrics") and reports the **mean score over the columns** as its value (higher =
less loss), unlike the other fidelity measures, which report 1 − score: the names are
SDMetrics', so the numbers are too. ``details.columns`` is the breakdown; a column whose score
is undefined has ``score: null``, a warning, and stays out of the mean.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from anoneval.core.api import Context, Dataset, MeasureResult
from anoneval.plugins.fidelity._column import ColumnFidelity
from anoneval.plugins.fidelity._common import as_number


class _Diagnostic(ColumnFidelity):
    unit = "share"
    higher_is_worse = False

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        res = super().compute(original, anonymized, ctx)
        score = res.details.get("score")
        return MeasureResult(value=score, details=res.details, warnings=res.warnings)


class BoundaryAdherence(_Diagnostic):
    """Share of released values inside the original's [min, max] (SDMetrics' BoundaryAdherence).

    Per numeric (or datetime) column: #{released values v with min_r <= v <= max_r} / m, bounds
    over the original's non-missing values and inclusive. Missing released values are left out
    of numerator and denominator when the original has missing values, and count as outside
    otherwise (SDMetrics' ``range_is_nullable`` rule). A release whose values are all missing
    and so left out has no score (SDMetrics divides 0 by 0).
    """

    name = "BoundaryAdherence"
    description = "Share of released numeric values within the original's range (SDMetrics' "\
                  "BoundaryAdherence)."
    column_kind = "numeric"

    def score(self, column: str, real: pd.Series, released: pd.Series
              ) -> tuple[dict[str, Any], str | None]:
        r, s = as_number(real).to_numpy(), as_number(released).to_numpy()
        present = r[~np.isnan(r)]
        if not len(present):
            return {"score": None}, "the original holds only missing values: no score"
        lo, hi = float(present.min()), float(present.max())
        if np.isnan(r).any():
            s = s[~np.isnan(s)]
        if not len(s):
            return {"score": None, "min": lo, "max": hi}, "no released value: no score"
        inside = int(((s >= lo) & (s <= hi)).sum())
        return {"min": lo, "max": hi, "n_outside": len(s) - inside,
                "score": inside / len(s)}, None


class CategoryAdherence(_Diagnostic):
    """Share of released values that are categories of the original (SDMetrics'
    CategoryAdherence).

    Per categorical (or boolean) column: #{released values found among the original's
    values} / m. A missing released value is valid when the original has missing values
    (SDMetrics' ``range_is_nullable`` rule), else invalid; values compare by equality.
    """

    name = "CategoryAdherence"
    description = "Share of released categorical values that occur in the original (SDMetrics' "\
                  "CategoryAdherence)."

    def score(self, column: str, real: pd.Series, released: pd.Series
              ) -> tuple[dict[str, Any], str | None]:
        values = pd.Series(real.dropna().unique())
        valid = released.isin(values).to_numpy(dtype=bool)
        if real.isna().any():
            valid |= released.isna().to_numpy()
        bad = released[~valid].dropna()
        return {"n_invalid": int((~valid).sum()),
                "invalid": sorted(map(str, bad.unique()))[:20],
                "score": float(valid.mean())}, None


class MissingValueSimilarity(_Diagnostic):
    """1 − |share missing in the original − share missing in the release| per column
    (SDMetrics' MissingValueSimilarity). Default columns: all of the original's."""

    name = "MissingValueSimilarity"
    description = "Similarity of the columns' shares of missing values (SDMetrics' "\
                  "MissingValueSimilarity)."
    column_kind = "any"

    def score(self, column: str, real: pd.Series, released: pd.Series
              ) -> tuple[dict[str, Any], str | None]:
        a, b = float(real.isna().mean()), float(released.isna().mean())
        return {"real": a, "synthetic": b, "score": 1 - abs(a - b)}, None
