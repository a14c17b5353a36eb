"""Total variation distance between the original's and the release's column distributions."""

from __future__ import annotations

from typing import Any

import pandas as pd

from anoneval.plugins.fidelity._column import ColumnFidelity
from anoneval.plugins.fidelity._common import shared_codes, tv


class TVDistance(ColumnFidelity):
    """Mean total variation distance of the columns' value distributions.

    Per column, TV = ½ Σ_v |p(v) − q(v)| over the values of either side, p and q the shares of
    the non-missing original and released values (missing values dropped, as SDMetrics'
    TVComplement does). The value is the mean TV over the columns (loss: 0 = same marginals);
    ``details.score`` is the mean of SDMetrics' TVComplement = 1 − TV (SDMetrics docs,
    "TVComplement"), ``details.columns`` the breakdown. SDMetrics gives a value seen only in
    the release a pseudo-count of 1e-6 in the original; here it counts 0, so the two agree
    when the release has no new values. Default columns: the categorical and boolean ones
    (numbers compare as discrete values when named in ``columns``). A column with no
    non-missing value on one side has no score (warning).
    """

    name = "TVDistance"
    description = "Mean total variation distance of column marginals (1 − SDMetrics' "\
                  "TVComplement)."

    def score(self, column: str, real: pd.Series, released: pd.Series
              ) -> tuple[dict[str, Any], str | None]:
        r, s, n = shared_codes(real, released, keep_missing=False)
        if (r < 0).all() or (s < 0).all():
            return {"tv": None, "score": None}, "no non-missing value on one side: no score"
        d = tv(r, s, n)
        return {"tv": d, "score": 1 - d}, None
