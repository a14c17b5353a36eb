"""(α,k)-anonymity as a risk: the share of records in classes too small or too homogeneous."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from pydantic import Field

from anoneval.plugins.microdata._sensitive import (
    TOLERANCE,
    Distribution,
    Judged,
    SensitiveParams,
    SensitiveRisk,
    Tally,
    class_max,
    worst_of,
)


class AlphaKAnonymity(SensitiveRisk):
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

    Computed from the released side's class summary (the one ``LDiversity`` reads: quasi-
    identifiers → sensitive-value histograms), so it runs on data an engine never gathers,
    except with ``per_record`` (a row table) or ``id`` (deleted records are found by comparing
    both sides' rows), which read the records.
    """

    name = "AlphaKAnonymity"
    description = "Share of records in classes smaller than k or with a value share above alpha."

    class Params(SensitiveParams):
        alpha: float = Field(0.5, gt=0, le=1, description="Largest share of one sensitive "
                                                          "value allowed in a class.")
        k: int = Field(2, ge=1, description="Smallest class size allowed.")

    stat_name = "alpha"

    def judge(self, dists: Mapping[str, Distribution], sizes: np.ndarray,
              shared: None) -> Judged:
        p = self.params
        stat = {sa: class_max(d.pair_class, d.q, len(sizes), 0.0) for sa, d in dists.items()}
        worst = worst_of(stat, len(sizes))
        # a share at α holds
        return Judged(stat, worst, (worst > p.alpha + TOLERANCE) | (sizes < p.k))

    def report(self, tally: Tally, p_values: Mapping[str, np.ndarray]) -> dict[str, object]:
        p = self.params
        return {"alpha": p.alpha, "k": p.k, "achieved_alpha": tally.worst,
                "achieved_k": tally.smallest,
                "per_attribute": {sa: {"achieved_alpha": v} for sa, v in tally.largest.items()}}
