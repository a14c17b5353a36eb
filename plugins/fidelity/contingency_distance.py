"""Total variation distance between the original's and the release's two-way tables."""

from __future__ import annotations

from itertools import combinations

import numpy as np
from pydantic import Field

from anoneval.core.api import Context, DataError, Dataset, LossMeasure, MeasureResult
from anoneval.plugins._shared.mixed import is_numeric
from anoneval.plugins.fidelity._common import (
    FidelityParams,
    binned,
    choose,
    pair,
    require_finite,
    result,
    shared_codes,
    tv,
)


class ContingencyDistance(LossMeasure):
    """Mean total variation distance of the two-way contingency tables of every column pair.

    For each pair (a, b) of the chosen columns, TV = ½ Σ |p(a, b) − q(a, b)| over the cells of
    either side, p and q the shares of original and released records (SDMetrics'
    ContingencySimilarity = 1 − TV, SDMetrics docs). Missing values are a category of their
    own. Numeric columns (not booleans) are binned as SDMetrics does: ``num_discrete_bins``
    equal-width bins over the original's non-missing range (numpy's histogram edges), the
    outer edges opened to ±∞, missing values in a bin of their own. The value is the mean TV
    over the pairs; ``details.score`` the mean ContingencySimilarity, ``details.pairs`` the
    breakdown. Default columns: all.
    """

    name = "ContingencyDistance"
    description = "Mean total variation distance of all two-way tables (1 − SDMetrics' "\
                  "ContingencySimilarity)."

    class Params(FidelityParams):
        num_discrete_bins: int = Field(10, ge=1, description="Bins of numeric columns.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        ori, syn = pair(original, anonymized, self.name)
        columns = choose(ori, syn, self.params.columns, lambda s: True, self.name, "")
        require_finite({"original": ori, "anonymized": syn}, columns, self.name)
        if len(columns) < 2:
            raise DataError(f"{self.name} needs at least two columns")
        codes = {}
        for c in columns:
            r, s = ori.frame[c], syn.frame[c]
            if is_numeric(r) and is_numeric(s):
                br, bs = binned(r, s, self.params.num_discrete_bins)
                codes[c] = (br, bs, self.params.num_discrete_bins + 2)
            else:
                codes[c] = shared_codes(r, s, keep_missing=True)
        rows = []
        for a, b in combinations(columns, 2):
            (ra, sa, na), (rb, sb, nb) = codes[a], codes[b]
            joint_r = ra.astype(np.int64) * nb + rb
            joint_s = sa.astype(np.int64) * nb + sb
            d = tv(joint_r, joint_s, na * nb)
            rows.append({"column_1": a, "column_2": b, "tv": d, "score": 1 - d})
        return result(rows, "pairs", [],
                      {"num_discrete_bins": self.params.num_discrete_bins})

