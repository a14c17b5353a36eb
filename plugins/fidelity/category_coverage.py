"""Share of the original's categories that the release never shows."""

from __future__ import annotations

from typing import Any

import pandas as pd

from anoneval.plugins.fidelity._column import ColumnFidelity


class CategoryCoverageLoss(ColumnFidelity):
    """Mean over categorical columns of the share of original categories missing from the
    release.

    Per column, SDMetrics' CategoryCoverage (SDMetrics docs) is the number of distinct
    non-missing original values that also occur in the release over the number of distinct
    non-missing original values; the value is 1 − the mean coverage (``details.score``).
    Default columns: the categorical and boolean ones. An all-missing original column has no
    score (warning).
    """

    name = "CategoryCoverageLoss"
    description = "Share of original categories missing from the release (1 − SDMetrics' "\
                  "CategoryCoverage)."
    unit = "share"

    def score(self, column: str, real: pd.Series, released: pd.Series
              ) -> tuple[dict[str, Any], str | None]:
        values = set(real.dropna().unique())
        row = {"score": None, "n_categories": len(values)}
        if not values:
            return row, "the original is all missing: no score"
        seen = values & set(released.dropna().unique())
        return {**row, "n_covered": len(seen), "missing": sorted(map(str, values - seen))[:20],
                "score": len(seen) / len(values)}, None
