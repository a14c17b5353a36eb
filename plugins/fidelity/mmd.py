"""Maximum mean discrepancy between the original and the release (RBF kernel, unbiased)."""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field
from scipy.stats import norm

from anoneval.core.api import (
    Context,
    Dataset,
    IntervalParams,
    LossMeasure,
    MeasureResult,
)
from anoneval.plugins.fidelity._common import FidelityParams
from anoneval.plugins.fidelity._embed import (
    blocks,
    distances,
    each_block,
    rows_field,
    sampled_embedding,
)

#: Records of the pooled sample whose pairwise distances give the median heuristic.
MEDIAN_ROWS = 2000


def kernel_sums(x: np.ndarray, y: np.ndarray, sigma: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Row sums of k(X, X) and k(X, Y) per original record, of k(Y, Y) and k(X, Y) per
    released record, with k(a, b) = exp(−‖a − b‖² / (2σ²)); the diagonals included."""
    g = 1 / (2 * sigma * sigma)

    def part_x(a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        kxy = np.exp(-g * distances(x[a:b], y) ** 2)
        return np.exp(-g * distances(x[a:b], x) ** 2).sum(axis=1), kxy.sum(axis=1), \
            kxy.sum(axis=0)

    def part_y(a: int, b: int) -> np.ndarray:
        return np.exp(-g * distances(y[a:b], y) ** 2).sum(axis=1)

    px = each_block(part_x, blocks(len(x), max(len(x), len(y))))
    py = each_block(part_y, blocks(len(y), len(y)))
    return (np.concatenate([p[0] for p in px]), np.concatenate([p[1] for p in px]),
            np.concatenate(py), np.sum([p[2] for p in px], axis=0))


def mmd2_unbiased(x: np.ndarray, y: np.ndarray, sigma: float
                  ) -> tuple[float, float]:
    """The unbiased MMD² (Gretton et al. 2012, Lemma 6) and the standard error of its
    first-order (Hoeffding projection) approximation."""
    n, m = len(x), len(y)
    sxx, sxy, syy, syx = kernel_sums(x, y, sigma)
    # k(a, a) = 1: the U-statistic leaves the diagonal out
    mean_xx = (sxx.sum() - n) / (n * (n - 1))
    mean_yy = (syy.sum() - m) / (m * (m - 1))
    mean_xy = sxy.sum() / (n * m)
    value = float(mean_xx + mean_yy - 2 * mean_xy)
    # projections h1(x_i) = E k(x_i, X') − E k(x_i, Y), h2(y_j) = E k(y_j, Y') − E k(X, y_j)
    h1 = (sxx - 1) / (n - 1) - sxy / m
    h2 = (syy - 1) / (m - 1) - syx / n
    se = 2 * math.sqrt(h1.var(ddof=1) / n + h2.var(ddof=1) / m)
    return value, se


def median_heuristic(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> float:
    """Median of the pairwise distances of the pooled records (a seeded sample of
    ``MEDIAN_ROWS`` when larger), distinct pairs only."""
    pooled = np.vstack([x, y])
    if len(pooled) > MEDIAN_ROWS:
        pooled = pooled[np.sort(rng.choice(len(pooled), MEDIAN_ROWS, replace=False))]
    d = distances(pooled, pooled)
    return float(np.median(d[np.triu_indices(len(pooled), 1)]))


class MMD(LossMeasure):
    """Maximum mean discrepancy of Gretton, Borgwardt, Rasch, Schölkopf & Smola (2012), "A
    kernel two-sample test", JMLR 13:723–773: the unbiased estimate (their Lemma 6)

    MMD²_u = 1/(n(n−1)) Σ_{i≠i'} k(x_i, x_i') + 1/(m(m−1)) Σ_{j≠j'} k(y_j, y_j')
    − 2/(nm) Σ_{i,j} k(x_i, y_j),

    with the Gaussian (RBF) kernel k(a, b) = exp(−‖a − b‖²/(2σ²)) on the records embedded as
    numbers (standardised by the original; categories one-hot; missing values a 0 plus an
    indicator). σ: ``bandwidth``, or null for the median heuristic (their §8: the median
    distance between distinct pooled records, from a seeded sample of 2,000 of them). The
    value is MMD²_u (0 for equal distributions; unbiased, so it may be slightly negative);
    ``details.mmd`` is √max(MMD²_u, 0). synthcity's MaximumMeanDiscrepancy is the biased
    V-statistic with its own bandwidth, so the numbers differ.

    ``ci``: the normal interval MMD²_u ± z·se with the first-order (Hoeffding) variance
    4 Var(h1)/n + 4 Var(h2)/m, h1(x) = E k(x, X') − E k(x, Y), h2(y) = E k(y, Y') − E k(X, y)
    (Serfling 1980, §5.5; Gretton et al. 2012, Cor. 16). At equal distributions the
    projections vanish (a degenerate U-statistic) and the interval is too narrow: use it away
    from 0. It leaves out the O(1/n²) terms: in a simulation (N(0, 1) against N(1, 1), σ = 1,
    400 repetitions) the nominal 95 % interval covered 91 % at 150 + 150 records, 95 % at
    400 + 400 and 96.5 % at 800 + 800. Quadratic: sides larger than ``max_rows`` (default
    5,000) are replaced by a seeded uniform sample (warning).
    """

    name = "MMD"
    description = "Unbiased maximum mean discrepancy with an RBF kernel (Gretton et al. 2012)."

    class Params(FidelityParams, IntervalParams):
        bandwidth: float | None = Field(None, gt=0, description="Kernel bandwidth σ on the "
                                                                "embedded records; null: the "
                                                                "median heuristic.")
        max_rows: int | None = rows_field(5000)

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        warnings: list[str] = []
        rng = ctx.rng(47)
        x, y = sampled_embedding(original, anonymized, p.columns, p.max_rows, rng, self.name,
                                 warnings, min_rows=2)
        sigma = p.bandwidth or median_heuristic(x, y, rng)
        if not sigma > 0:
            sigma = 1.0
            warnings.append("every record is the same: bandwidth 1")
        value, se = mmd2_unbiased(x, y, sigma)
        z = float(norm.ppf((1 + p.confidence_level) / 2))
        return MeasureResult(value=value, ci=(value - z * se, value + z * se),
                             warnings=warnings,
                             details={"mmd2": value, "mmd": math.sqrt(max(value, 0.0)),
                                      "se": se, "bandwidth": sigma,
                                      "bandwidth_rule": "given" if p.bandwidth else "median",
                                      "rows": {"original": len(x), "anonymized": len(y)}})

