"""The interval helpers against scipy and statsmodels-free closed forms, and by simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from anoneval.core.api import (
    bootstrap_indices,
    clopper_pearson,
    percentile_interval,
    wilson_interval,
)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (17, 250), (499, 500)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_intervals_match_scipy(k: int, n: int, level: float) -> None:
    test = binomtest(k, n)
    exact = test.proportion_ci(confidence_level=level, method="exact")
    wilson = test.proportion_ci(confidence_level=level, method="wilson")
    assert clopper_pearson(k, n, level) == pytest.approx((exact.low, exact.high), abs=1e-12)
    assert wilson_interval(k, n, level) == pytest.approx((wilson.low, wilson.high), abs=1e-12)


def test_clopper_pearson_covers_at_least_nominally() -> None:
    rng = np.random.default_rng(5)
    p, n = 0.07, 120
    ks = rng.binomial(n, p, size=400)
    covered = [lo <= p <= hi for lo, hi in (clopper_pearson(int(k), n) for k in ks)]
    assert np.mean(covered) >= 0.93


def test_percentile_interval_and_indices() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    idx = bootstrap_indices(rng, x.size, 500)
    assert idx.shape == (500, 400) and idx.min() >= 0 and idx.max() < 400
    lo, hi = percentile_interval(x[idx].mean(axis=1))
    se = x.std(ddof=1) / np.sqrt(x.size)
    assert lo < x.mean() < hi
    assert hi - lo == pytest.approx(2 * 1.96 * se, rel=0.2)
    assert percentile_interval(np.array([np.nan])) is None


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="confidence_level"):
        wilson_interval(1, 10, 1.0)
    with pytest.raises(ValueError, match="k <= n"):
        clopper_pearson(11, 10)
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_indices(np.random.default_rng(0), 0, 10)
