"""Share of the original's categories that the release never shows."""

from __future__ import annotations

from typing import Any

import pandas as pd

from anoneval.core.api import Microdata
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
        return covered(distinct(real), distinct(released))

    def score_column(self, column: str, original: Microdata, released: Microdata
                     ) -> tuple[dict[str, Any], str | None]:
        # each side's distinct values, kept on the dataset: a text column's come from its
        # distinct objects, which the survey of its kinds of values found already
        return covered(frozenset(original.distinct(column).tolist()),
                       frozenset(released.distinct(column).tolist()))


def distinct(values: pd.Series) -> frozenset[Any]:
    """The distinct present values: one hash pass over the column, the missing ones dropped
    from the distinct values (not from the column, which would copy it)."""
    unique = pd.unique(values.to_numpy() if values.dtype == object else values)
    return frozenset(unique[~pd.isna(unique)].tolist() if len(unique) else [])


def covered(values: frozenset[Any], released: frozenset[Any]
            ) -> tuple[dict[str, Any], str | None]:
    """One column's row of the breakdown: which of the original's distinct ``values`` the
    release's distinct values show."""
    row = {"score": None, "n_categories": len(values)}
    if not values:
        return row, "the original is all missing: no score"
    seen = values & released
    return {**row, "n_covered": len(seen), "missing": sorted(map(str, values - seen))[:20],
            "score": len(seen) / len(values)}, None
