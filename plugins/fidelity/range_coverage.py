"""Share of the original's numeric ranges that the release does not cover."""

from __future__ import annotations

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


class RangeCoverageLoss(LossMeasure):
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
    accepts = ("microdata",)
    inputs = "both"

    class Params(FidelityParams):
        pass

    def compute(self, original, anonymized, ctx: Context) -> MeasureResult:
        ori, syn = pair(original, anonymized, self.name)
        columns = choose(ori, syn, self.params.columns, is_numeric, self.name, "numeric")
        numeric_only(ori, syn, columns, self.name)
        rows, warnings = [], []
        for c in columns:
            r, s = as_number(ori.frame[c]).dropna(), as_number(syn.frame[c]).dropna()
            row = {"column": c, "score": None}
            if r.nunique() < 2 or not len(s):
                warnings.append(f"column {c!r}: constant or missing in the original, or missing "
                                "in the release: no score")
            else:
                lo_r, hi_r, lo_s, hi_s = r.min(), r.max(), s.min(), s.max()
                span = hi_r - lo_r
                miss = max((lo_s - lo_r) / span, 0) + max((hi_r - hi_s) / span, 0)
                row.update(real_min=float(lo_r), real_max=float(hi_r),
                           synthetic_min=float(lo_s), synthetic_max=float(hi_s),
                           score=max(1 - miss, 0.0))
            rows.append(row)
        return result(rows, "columns", warnings)

