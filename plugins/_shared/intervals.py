"""Intervals several families share: the AUC's DeLong interval, bootstrap replicates of a share.

DeLong, DeLong & Clarke-Pearson (1988), "Comparing the areas under two or more correlated
receiver operating characteristic curves: a nonparametric approach", Biometrics 44(3):837–845:
the AUC is the Mann–Whitney statistic θ = 1/(n₁n₀) Σᵢ Σⱼ ψ(Xᵢ, Yⱼ) (ψ = 1 when Xᵢ > Yⱼ, ½ on
a tie), its variance var(V₁₀)/n₁ + var(V₀₁)/n₀ from the structural components
V₁₀(Xᵢ) = 1/n₀ Σⱼ ψ(Xᵢ, Yⱼ) and V₀₁(Yⱼ) = 1/n₁ Σᵢ ψ(Xᵢ, Yⱼ), computed from mid-ranks (Sun &
Xu 2014, "Fast implementation of DeLong's algorithm", IEEE SPL 21(11)), and the interval
θ ± z·se (z = Φ⁻¹((1 + level)/2)) clipped to [0, 1].
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, Field
from scipy.stats import norm, rankdata


class LevelParams(BaseModel):
    """The level of a closed-form interval (no bootstrap, so no ``n_boot``)."""

    confidence_level: float = Field(0.95, gt=0, lt=1,
                                    description="Confidence level of the value's interval (ci).")


def delong_auc(positive: np.ndarray, negative: np.ndarray,
               confidence_level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """The AUC of "higher score → positive" (ties count one half) and its DeLong interval."""
    x = np.asarray(positive, dtype=np.float64)
    y = np.asarray(negative, dtype=np.float64)
    n1, n0 = len(x), len(y)
    if n1 < 1 or n0 < 1:
        raise ValueError("the AUC needs at least one score of each class")
    both = rankdata(np.concatenate([x, y]))
    v10 = (both[:n1] - rankdata(x)) / n0  # share of negatives each positive beats
    v01 = 1.0 - (both[n1:] - rankdata(y)) / n1  # share of positives beating each negative
    auc = float(v10.mean())
    var = (v10.var(ddof=1) / n1 if n1 > 1 else 0.0) + (v01.var(ddof=1) / n0 if n0 > 1 else 0.0)
    half = float(norm.ppf((1 + confidence_level) / 2)) * math.sqrt(max(var, 0.0))
    return auc, (max(auc - half, 0.0), min(auc + half, 1.0))
