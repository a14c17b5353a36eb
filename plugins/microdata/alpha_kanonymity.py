"""(α,k)-anonymity as a risk: the share of records in classes too small or too homogeneous."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from anoneval.core.api import Context, Dataset, MeasureResult, RiskMeasure
from anoneval.plugins.microdata._sensitive import (
    SensitiveParams,
    class_key,
    class_max,
    distribution,
    prepare,
    result,
)

#: Shares within this of α count as equal to α (satisfied), against rounding.
TOLERANCE = 1e-12


class AlphaKAnonymity(RiskMeasure):
    """Share of records in equivalence classes that violate (α,k)-anonymity.

    Source: Wong, Li, Fu & Wang (2006), "(α, k)-anonymity: an enhanced k-anonymity model for
    privacy preserving data publishing", KDD; pyCANON's ``alpha_k_anonymity``. A class E of
    f_E records violates when f_E < k or when the share of some sensitive value in E exceeds
    α (``>``; a share equal to α holds). As pyCANON, α bounds every sensitive value (Wong et
    al. bound a chosen sensitive value; give that value's column for the same effect).

    Missing sensitive values are a value of their own (with a warning); missing
    quasi-identifier values too, or suppressed cells with ``missing="suppressed"``.

    value = records in violating classes / n (n counts suppressed records, in no class).
    details: ``achieved_alpha`` = the largest share of one value in a class, ``achieved_k`` =
    the smallest class (pyCANON returns this pair); ``per_record`` adds each released row's
    class maximum share.
    """

    name = "AlphaKAnonymity"
    description = "Share of records in classes smaller than k or with a value share above alpha."
    unit = "share"
    accepts = ("microdata",)
    inputs = "either"

    class Params(SensitiveParams):
        alpha: float = Field(0.5, gt=0, le=1, description="Largest share of one sensitive "
                                                          "value allowed in a class.")
        k: int = Field(2, ge=1, description="Smallest class size allowed.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        data, cl = prepare(original, anonymized, p, ctx)
        n_classes = len(cl.sizes)
        worst = np.zeros(n_classes)
        per_attribute = {}
        for sa in p.sensitive:
            d = distribution(data, cl, sa, ctx, class_key(p))
            stat = class_max(d.pair_class, d.q, n_classes, 0.0)
            worst = np.maximum(worst, stat)
            per_attribute[sa] = {"achieved_alpha": float(stat.max()) if n_classes else None}
        violates = (worst > p.alpha + TOLERANCE) | (cl.sizes < p.k)
        return result(data, cl, violates, worst, "alpha", p, {
            "alpha": p.alpha, "k": p.k,
            "achieved_alpha": float(worst.max()) if n_classes else None,
            "achieved_k": int(cl.sizes.min()) if n_classes else None,
            "per_attribute": per_attribute,
        })
