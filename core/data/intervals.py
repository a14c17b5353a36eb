"""Confidence intervals that measures attach to estimated values (``MeasureResult.ci``).

Closed forms where the estimate is a binomial proportion — the Wilson (1927) score interval and
the exact Clopper & Pearson (1934) interval — and the bootstrap percentile interval (Efron &
Tibshirani 1993, ch. 13) otherwise. Every function takes ``confidence_level`` in (0, 1) and
returns ``(low, high)`` as floats.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, Field


class IntervalParams(BaseModel):
    """Params of a measure that reports an interval: its level and bootstrap size."""

    confidence_level: float = Field(0.95, gt=0, lt=1,
                                    description="Confidence level of the value's interval (ci).")
    n_boot: int = Field(200, ge=10, le=100_000,
                        description="Bootstrap replicates where the interval has no closed form.")


def _z(confidence_level: float) -> float:
    from scipy.stats import norm  # here: importing the contract stays cheap (no scipy.stats)

    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must lie in (0, 1), got {confidence_level!r}")
    return float(norm.ppf((1 + confidence_level) / 2))


def wilson_interval(k: float, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """Wilson (1927) score interval of the proportion ``k / n`` (``k`` may be fractional)."""
    if n < 1:
        raise ValueError("a proportion needs at least one trial")
    z = _z(confidence_level)
    z2 = z * z
    centre = (k + z2 / 2) / (n + z2)
    half = z / (n + z2) * math.sqrt(max(k * (n - k) / n, 0.0) + z2 / 4)
    return max(centre - half, 0.0), min(centre + half, 1.0)


def clopper_pearson(k: int, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """Exact Clopper & Pearson (1934) interval of a binomial proportion ``k / n``.

    Equal tails of (1 − level)/2 from the beta quantiles; 0 and 1 at ``k = 0`` and ``k = n``.
    """
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    from scipy.stats import beta

    alpha = 1 - confidence_level
    low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def percentile_interval(replicates: np.ndarray,
                        confidence_level: float = 0.95) -> tuple[float, float] | None:
    """Bootstrap percentile interval of ``replicates`` (NaN replicates ignored; None if none)."""
    _z(confidence_level)
    reps = np.asarray(replicates, dtype=float)
    reps = reps[np.isfinite(reps)]
    if reps.size == 0:
        return None
    tail = (1 - confidence_level) / 2 * 100
    low, high = np.percentile(reps, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_indices(rng: np.random.Generator, n: int, n_boot: int) -> np.ndarray:
    """``n_boot`` × ``n`` row indices drawn with replacement (one replicate per row)."""
    if n < 1:
        raise ValueError("the bootstrap needs at least one row")
    return rng.integers(0, n, size=(n_boot, n))
