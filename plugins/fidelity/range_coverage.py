"""Share of the original's numeric ranges that the release does not cover."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from anoneval.core.api import Microdata
from anoneval.plugins.fidelity._column import ColumnFidelity
from anoneval.plugins.fidelity._common import as_number, value_range


class RangeCoverageLoss(ColumnFidelity):
    """Mean over numeric columns of the uncovered share of the original's range.

    Per column, SDMetrics' RangeCoverage (SDMetrics docs) is
    max(1 − (max((min_s − min_r)/R, 0) + max((max_r − max_s)/R, 0)), 0) with R = max_r − min_r
    over non-missing values; the value is 1 − the mean coverage (``details.score``). A constant
    original column has no score (warning), as has a release column with no value.
    """

    name = "RangeCoverageLoss"
    description = "Uncovered share of the original's numeric ranges (1 − SDMetrics' "\
                  "RangeCoverage)."
    unit = "share"
    column_kind = "numeric"

    def score(self, column: str, real: pd.Series, released: pd.Series
              ) -> tuple[dict[str, Any], str | None]:
        r, s = as_number(real), as_number(released)
        return coverage(r.min(), r.max(), s.min(), s.max())

    def score_column(self, column: str, original: Microdata, released: Microdata
                     ) -> tuple[dict[str, Any], str | None]:
        return coverage(*value_range(original, column), *value_range(released, column))


def coverage(lo_r: float, hi_r: float, lo_s: float, hi_s: float
             ) -> tuple[dict[str, Any], str | None]:
    """One column's row of the breakdown from the present values' extremes (NaN: none)."""
    if np.isnan(lo_r) or lo_r == hi_r or np.isnan(lo_s):
        return {"score": None}, ("constant or missing in the original, or missing in the "
                                 "release: no score")
    span = hi_r - lo_r
    miss = max((lo_s - lo_r) / span, 0) + max((hi_r - hi_s) / span, 0)
    return {"real_min": float(lo_r), "real_max": float(hi_r), "synthetic_min": float(lo_s),
            "synthetic_max": float(hi_s), "score": max(1 - miss, 0.0)}, None
