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
        return covered(distinct(real), released)

    def score_column(self, column: str, original: Microdata, released: Microdata
                     ) -> tuple[dict[str, Any], str | None]:
        values = original.cached(("anoneval.fidelity.categories", column),
                                 lambda: distinct(original.frame[column]))
        return covered(values, released.frame[column])


def distinct(values: pd.Series) -> frozenset[Any]:
    """The distinct present values: one hash pass over the column, the missing ones dropped
    from the distinct values (not from the column, which would copy it)."""
    unique = pd.unique(values.to_numpy() if values.dtype == object else values)
    return frozenset(unique[~pd.isna(unique)].tolist() if len(unique) else [])


def covered(values: frozenset[Any], released: pd.Series) -> tuple[dict[str, Any], str | None]:
    """One column's row of the breakdown: which of the original's ``values`` the release
    shows."""
    row = {"score": None, "n_categories": len(values)}
    if not values:
        return row, "the original is all missing: no score"
    seen = shown(values, released)
    return {**row, "n_covered": len(seen), "missing": sorted(map(str, values - seen))[:20],
            "score": len(seen) / len(values)}, None


def shown(values: frozenset[Any], released: pd.Series, first: int = 4_096) -> frozenset[Any]:
    """Those of ``values`` that ``released`` holds: its rows are read in blocks of doubling
    size (``first`` rows, then twice as many, ...), stopping once every value was seen. A
    release that shows every category early (the usual case) is read only in part; one that
    misses some is read once, as a whole."""
    seen: set[Any] = set()
    start, size = 0, first
    while start < len(released) and len(seen) < len(values):
        seen |= values & distinct(released.iloc[start:start + size])
        start, size = start + size, 2 * size
    return frozenset(seen)
