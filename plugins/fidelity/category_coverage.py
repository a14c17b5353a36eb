"""Share of the original's categories that the release never shows."""

from __future__ import annotations

from anoneval.core.api import Context, LossMeasure, MeasureResult
from anoneval.plugins.fidelity._common import (
    FidelityParams,
    choose,
    is_categorical,
    pair,
    result,
)


class CategoryCoverageLoss(LossMeasure):
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
    accepts = ("microdata",)
    inputs = "both"

    class Params(FidelityParams):
        pass

    def compute(self, original, anonymized, ctx: Context) -> MeasureResult:
        ori, syn = pair(original, anonymized, self.name)
        columns = choose(ori, syn, self.params.columns, is_categorical, self.name,
                         "categorical")
        rows, warnings = [], []
        for c in columns:
            real = set(ori.frame[c].dropna().unique())
            row = {"column": c, "score": None, "n_categories": len(real)}
            if not real:
                warnings.append(f"column {c!r} of the original is all missing: no score")
            else:
                seen = real & set(syn.frame[c].dropna().unique())
                row.update(n_covered=len(seen), missing=sorted(map(str, real - seen))[:20],
                           score=len(seen) / len(real))
            rows.append(row)
        return result(rows, "columns", warnings)

