"""Empirical ε: a lower confidence bound on the differential-privacy ε a release can have,
from a membership attack's true and false positive rates (privacy auditing)."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field
from scipy.stats import beta

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    IntervalParams,
    MeasureResult,
    Params,
    clopper_pearson,
)
from anoneval.plugins._shared.mixed import encode, nearest_distances
from anoneval.plugins.attacks._common import (
    AttackMeasure,
    check_not_all_missing,
    frames,
    membership_sets,
)
from anoneval.plugins.attacks.domias import auc, domias_scores, split_sets


def epsilon(tpr: np.ndarray, fpr: np.ndarray, delta: float) -> np.ndarray:
    """The least ε an (ε, δ)-DP mechanism needs for a test with these rates (Kairouz, Oh &
    Viswanath 2015, Thm 2.1): max(log((TPR − δ)/FPR), log((1 − δ − FPR)/(1 − TPR))),
    floored at 0 (a vacuous ratio gives 0, a zero denominator +inf)."""
    tpr, fpr = np.asarray(tpr, dtype=float), np.asarray(fpr, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(tpr - delta > 0, np.log(np.maximum(tpr - delta, 1e-300) / fpr), 0.0)
        b = np.where(1 - delta - fpr > 0,
                     np.log(np.maximum(1 - delta - fpr, 1e-300) / (1 - tpr)), 0.0)
    return np.maximum(np.maximum(a, b), 0.0)


def _cp_bounds(k: np.ndarray, n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper–Pearson ends for counts ``k`` of ``n`` (vectorised; as
    :func:`anoneval.core.api.clopper_pearson`)."""
    alpha = 1 - level
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        low = np.where(k > 0, beta.ppf(alpha / 2, k, n - k + 1), 0.0)
        high = np.where(k < n, beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
    return np.nan_to_num(low), np.nan_to_num(high, nan=1.0)


def rates(members: np.ndarray, others: np.ndarray,
          thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts of members and of non-members scoring at least each threshold."""
    tp = len(members) - np.searchsorted(np.sort(members), thresholds, side="left")
    fp = len(others) - np.searchsorted(np.sort(others), thresholds, side="left")
    return tp, fp


def lower_bounds(members: np.ndarray, others: np.ndarray, thresholds: np.ndarray,
                 delta: float, level: float) -> np.ndarray:
    """ε lower bound at each threshold: TPR at its Clopper–Pearson lower end, FPR at its
    upper end (each end one-sided at (1 + level)/2, so both hold together at ``level``)."""
    tp, fp = rates(members, others, thresholds)
    tpr_lo = _cp_bounds(tp, len(members), level)[0]
    fpr_hi = _cp_bounds(fp, len(others), level)[1]
    return epsilon(tpr_lo, fpr_hi, delta)


class EmpiricalEpsilon(AttackMeasure):
    """Empirical lower bound on ε from a membership attack, as in privacy auditing.

    An (ε, δ)-differentially private mechanism bounds every membership test:
    TPR ≤ e^ε·FPR + δ and 1 − FPR ≤ e^ε·(1 − TPR) + δ (Kairouz, Oh & Viswanath 2015;
    Jagielski, Ullman & Oprea 2020, "Auditing differentially private machine learning: how
    private is private SGD?", NeurIPS; Nasr, Song, Thakurta, Papernot & Carlini 2021,
    "Adversary instantiation: lower bounds for differentially private machine learning",
    IEEE S&P). An attack observed to beat those bounds proves ε is at least
    ε_LB = max(log((TPR_lo − δ)/FPR_hi), log((1 − δ − FPR_hi)/(1 − TPR_lo))), floored at 0,
    with TPR_lo and FPR_hi the Clopper–Pearson (1934) ends at ``confidence_level`` (each end
    one-sided at (1 + level)/2: the bound holds at ``confidence_level`` by the union bound).
    A release claiming ε below the value is refuted at that confidence. The value is a lower
    bound: a weak attack gives 0 whatever the release, never a proof of privacy.

    The attack: ``dcr`` (the score is minus the distance to the closest released record, as
    :class:`~anoneval.plugins.attacks.membership_inference.MembershipInference`: up to
    ``n_attacks`` original records as members and as many control records as non-members)
    or ``domias`` (the log density ratio of :class:`~anoneval.plugins.attacks.domias.DOMIAS`,
    whose sets it uses). The operating point: "member" means score ≥ a threshold. With
    ``selection: split`` (default) the threshold maximising ε_LB is chosen on a random half of
    the members and non-members and ε_LB is evaluated on the other half, so the bound keeps its
    confidence; ``same`` chooses and evaluates on all records, which is optimistic (the best of
    many thresholds; for exploration only, flagged by a warning). ``delta``: the δ the release
    claims (0 for pure ε).

    ``ci``: [ε_LB, ε_UB] at the operating point, ε_UB from TPR's upper and FPR's lower
    Clopper–Pearson ends (None when unbounded: no false positive); the value is its lower end.
    details: the operating point (``threshold``, ``tp``, ``fp``, ``tpr``, ``fpr``, their
    intervals, the counts), ``epsilon_point`` (from the observed rates), ``auc`` of the scores.
    """

    name = "EmpiricalEpsilon"
    description = "Lower confidence bound on ε from a membership attack's TPR/FPR "\
                  "(Clopper–Pearson; privacy auditing, Jagielski et al. 2020)."

    class Params(IntervalParams, Params):
        attack: Literal["dcr", "domias"] = Field("dcr", description="Membership attack: dcr "
                                                                    "(distance to closest "
                                                                    "record) or domias.")
        n_attacks: int = Field(2000, ge=2, description="Members and non-members (each).")
        columns: list[str] | None = Field(None, min_length=1,
                                          description="Columns compared; null: all of the "
                                                      "original's.")
        delta: float = Field(0.0, ge=0, lt=1, description="The δ of the claimed (ε, δ)-DP.")
        selection: Literal["split", "same"] = Field(
            "split", description="split: choose the threshold on half the records, bound on "
                                 "the other half; same: both on all (optimistic).")
        density: Literal["kde", "gaussian"] = Field("kde", description="domias: the density "
                                                                       "model.")
        bandwidth: Literal["scott", "silverman"] | Annotated[float, Field(gt=0)] = Field(
            "scott", description="domias: the KDE bandwidth factor.")

    def scores(self, original: Dataset | None, anonymized: Dataset | None,
               ctx: Context) -> tuple[np.ndarray, np.ndarray]:
        """The attack's scores of the members and the non-members (higher → member)."""
        p = self.params
        if original is None:
            raise DataError("EmpiricalEpsilon needs the original data")
        columns = p.columns or list(original.columns)
        ori, syn, ctl = frames(original, anonymized, ctx.control, columns)
        check_not_all_missing(syn, "anonymized")
        rng = ctx.rng(32)
        if p.attack == "domias":
            members, others, reference = split_sets(ori, ctl, p.n_attacks, rng)
            s_m, s_o, _ = domias_scores(members, others, reference, syn, columns, p.density,
                                        p.bandwidth)
            return s_m, s_o
        rows_m, rows_o, _ = membership_sets(len(ori), len(ctl), p.n_attacks, rng)
        members, others = ori.iloc[rows_m], ctl.iloc[rows_o]
        (enc_m, enc_o, enc_s), _, _ = encode([members, others, syn], columns)
        return -nearest_distances(enc_m, enc_s)[:, 0], -nearest_distances(enc_o, enc_s)[:, 0]

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        s_m, s_o = self.scores(original, anonymized, ctx)
        point = operating_point(s_m, s_o, p.delta, p.confidence_level,
                                ctx.rng(33) if p.selection == "split" else None)
        warnings = []
        if p.selection == "same":
            warnings.append("selection 'same' picks the best of many thresholds on the records "
                            "it bounds with: the bound is optimistic (use 'split' for an audit)")
        low, high = point["epsilon_lower"], point["epsilon_upper"]
        return MeasureResult(
            value=low, ci=None if high is None else [low, high],
            details={"attack": p.attack, "selection": p.selection, "delta": p.delta, **point,
                     "auc": auc(s_m, s_o)},
            warnings=warnings)


def operating_point(members: np.ndarray, others: np.ndarray, delta: float, level: float,
                    split: np.random.Generator | None) -> dict[str, Any]:
    """The audit: the threshold maximising the ε lower bound, chosen on a random half of each
    group (``split``; None: on all records) and evaluated on the other half (None: on all).
    Returns the threshold, counts, rates with their Clopper–Pearson intervals and the lower,
    upper (None if unbounded) and point ε."""
    if split is not None:
        pm, po = split.permutation(len(members)), split.permutation(len(others))
        choose_m, eval_m = members[pm[:len(pm) // 2]], members[pm[len(pm) // 2:]]
        choose_o, eval_o = others[po[:len(po) // 2]], others[po[len(po) // 2:]]
        if min(len(choose_m), len(choose_o)) < 1:
            raise DataError("EmpiricalEpsilon: too few members or non-members to split")
    else:
        choose_m, eval_m, choose_o, eval_o = members, members, others, others
    candidates = np.unique(np.concatenate([choose_m, choose_o]))
    bounds = lower_bounds(choose_m, choose_o, candidates, delta, level)
    threshold = float(candidates[int(np.argmax(bounds))])
    tp, fp = (int(x[0]) for x in rates(eval_m, eval_o, np.array([threshold])))
    n1, n0 = len(eval_m), len(eval_o)
    tpr_ci = clopper_pearson(tp, n1, level)
    fpr_ci = clopper_pearson(fp, n0, level)
    high = float(epsilon(tpr_ci[1], fpr_ci[0], delta))
    point = float(epsilon(tp / n1, fp / n0, delta))
    return {"threshold": threshold, "tp": tp, "fp": fp, "n_members": n1, "n_non_members": n0,
            "tpr": tp / n1, "fpr": fp / n0, "tpr_ci": list(tpr_ci), "fpr_ci": list(fpr_ci),
            "epsilon_lower": float(epsilon(tpr_ci[0], fpr_ci[1], delta)),
            "epsilon_upper": high if math.isfinite(high) else None,
            "epsilon_point": point if math.isfinite(point) else None}
