"""Distance-based membership inference: were a record's neighbours in the release its copies?"""

from __future__ import annotations

import numpy as np
from pydantic import Field
from scipy.stats import rankdata

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    MeasureResult,
    Params,
)
from anoneval.plugins._shared.intervals import LevelParams, delong_auc
from anoneval.plugins._shared.mixed import encode, nearest_distances
from anoneval.plugins.attacks._common import (
    AttackMeasure,
    check_not_all_missing,
    frames,
    membership_sets,
)


def auc(member_scores: np.ndarray, other_scores: np.ndarray) -> float:
    """Area under the ROC curve of "score higher → member" (Mann–Whitney U / (n₁ n₀); ties
    count one half)."""
    ranks = rankdata(np.concatenate([member_scores, other_scores]))
    n1, n0 = len(member_scores), len(other_scores)
    return float((ranks[:n1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


class MembershipInference(AttackMeasure):
    """Membership-inference advantage of an attacker who calls a record a member of the data
    behind the release when a released record lies close to it.

    Shokri, Stronati, Song & Shmatikov (2017) define membership inference; the distance-based
    attack on synthetic data is that of Chen, Yu, Zhang & Fritz (2020, GAN-Leaks, full
    black-box) and Hilprecht, Härterich & Bernau (2019). Up to ``n_attacks`` members (original
    records, used to make the release) and as many non-members (control records) are drawn;
    each gets the score −DCR, its distance to the closest released record (anonymeter's
    mixed-type distance over ``columns``: |x − y| / R for numbers, R the range over the three
    data sets, 0/1 for categories; see :mod:`anoneval.plugins._shared.mixed`). The AUC of
    that score separating members from non-members (ties count one half) gives the value
    2·(AUC − 0.5) floored at 0, the attacker's advantage (Yeom et al. 2018; higher = riskier).
    details: ``auc`` with its interval ``auc_ci``, ``advantage_unclipped`` and the median DCR
    of each group. ``ci``: the DeLong (1988) interval of the AUC at ``confidence_level``
    (:mod:`anoneval.plugins._shared.intervals`) mapped through 2·(AUC − 0.5) floored at 0;
    it covers the sampling of members and non-members, not the distance's fit.
    """

    name = "MembershipInference"
    description = "Distance-to-closest-record membership attack with the control set: "\
                  "advantage 2·(AUC − 0.5)."

    class Params(Params, LevelParams):
        n_attacks: int = Field(2000, ge=1, description="Members and non-members drawn (each).")
        columns: list[str] | None = Field(None, min_length=1,
                                          description="Columns compared; null: all of the "
                                                      "original's.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if original is None:
            raise DataError("MembershipInference needs the original data")
        columns = p.columns or list(original.columns)
        ori, syn, ctl = frames(original, anonymized, ctx.control, columns)
        check_not_all_missing(syn, "anonymized")
        rng = ctx.rng(4)
        rows_m, rows_o, _ = membership_sets(len(ori), len(ctl), p.n_attacks, rng)
        members, others = ori.iloc[rows_m], ctl.iloc[rows_o]
        (enc_m, enc_o, enc_s), _, _ = encode([members, others, syn], columns)
        with ctx.progress(2, f"{self.name} (nearest released records)") as bar:
            d_m = nearest_distances(enc_m, enc_s)[:, 0]
            bar.update(1)
            d_o = nearest_distances(enc_o, enc_s)[:, 0]
            bar.update(1)
        a, (low, high) = delong_auc(-d_m, -d_o, p.confidence_level)
        ci = [max(0.0, 2 * (low - 0.5)), max(0.0, 2 * (high - 0.5))]
        return MeasureResult(value=max(0.0, 2 * (a - 0.5)), ci=ci, details={
            "auc": a, "auc_ci": [low, high], "advantage_unclipped": 2 * (a - 0.5),
            "n_members": len(d_m), "n_non_members": len(d_o),
            "member_dcr_median": float(np.median(d_m)),
            "non_member_dcr_median": float(np.median(d_o))})

