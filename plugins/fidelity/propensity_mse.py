"""Propensity-score mean squared error: how well a classifier tells the release from the data."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field
from scipy.optimize import brentq
from scipy.stats import ncx2

from anoneval.core.api import Context, Dataset, LossMeasure, MeasureResult
from anoneval.plugins._shared.fits import iteration_limit
from anoneval.plugins._shared.intervals import LevelParams
from anoneval.plugins.fidelity._common import FidelityParams, choose, pair, require_finite
from anoneval.plugins.fidelity._sklearn import (
    design,
    for_trees,
    max_rows_field,
    sklearn,
    subsample,
)

#: Default ``max_rows`` per propensity model.
MAX_ROWS = {"logistic": 200_000, "cart": 20_000}


def pmse(scores: np.ndarray, c: float) -> float:
    """(1/N) Σ (p̂_i − c)²."""
    return float(np.mean((scores - c) ** 2))


def noncentrality_interval(t: float, df: int, confidence_level: float) -> tuple[float, float]:
    """The interval of λ for an observed ``t`` ~ χ²_df(λ) by inverting the noncentral χ²
    distribution (equal tails; an end is 0 where even λ = 0 cannot reach its tail)."""
    alpha = (1 - confidence_level) / 2

    def end(p: float) -> float:
        if ncx2.cdf(t, df, 1e-12) <= p:
            return 0.0
        hi = t + 10 * np.sqrt(t + df) + 10
        while ncx2.cdf(t, df, hi) > p:
            hi *= 2
        return float(brentq(lambda lam: ncx2.cdf(t, df, lam) - p, 1e-12, hi, xtol=1e-10))

    return end(1 - alpha), end(alpha)


class PropensityMSE(LossMeasure):
    """pMSE of Snoke, Raab, Nowok, Dibben & Slavkovic (2018), "General and specific utility
    measures for synthetic data", JRSS A 181(3):663–688.

    The original (label 0, n records) and the release (label 1, m records) are stacked; a
    propensity model predicts the label from ``columns`` (default all): numbers standardised
    (a missing indicator when values are missing), categories one-hot (missing is a
    category). With c = m / N, N = n + m, pMSE = (1/N) Σ_i (p̂_i − c)² (0 = indistinguishable;
    at most c(1 − c)). The value is pMSE.

    The null expectation (release drawn from the data's distribution) is, for ``logistic``
    (unpenalised main-effects logistic regression), the closed form
    E = (k − 1) c (1 − c) / N, sd = √(2(k − 1)) c (1 − c) / N, k − 1 the number of
    predictors of the full-rank design (one-hot without a first category): to first order
    p̂ − c = c(1 − c) x'β̂ with β̂ ~ N(0, (c(1 − c) X'X)⁻¹), so N·pMSE ≈ c(1 − c) χ²_{k−1}.
    Snoke et al. print (k − 1)(1 − c)² c / N, a factor (1 − c) smaller; a Monte Carlo check
    (300 null pairs of 1,000 + 1,000 records, k − 1 = 5) gave a mean pMSE / E of 1.98 ± 0.07
    with their form and 0.99 with this one. For ``cart``
    (scikit-learn's decision tree with ``max_depth`` and ``min_samples_leaf``) the mean pMSE
    over ``n_permutations`` refits with the labels permuted (Snoke et al.'s permutation
    null). details: ``pmse``, ``null_pmse``, ``ratio`` = pMSE / null (≈ 1 for a release
    drawn from the data's distribution), ``null`` naming the null used, ``standardized``
    (logistic only), ``model_rows`` the records of each side the model saw. A side larger
    than ``max_rows`` (default 200,000 for logistic, 20,000 for CART, whose null takes
    ``n_permutations`` more fits) is replaced by a uniform random sample of that many records
    drawn with the evaluation seed, so the measure stays within seconds on millions of
    records (a warning says so; pMSE and its null then refer to the sample sizes). SDMetrics
    has no pMSE (SDMetrics#123); its LogisticDetection is a different score.

    ``ci`` (logistic only) at ``confidence_level``: by the same first-order argument
    N·pMSE / (c(1 − c)) ~ χ²_{k−1}(λ), noncentral when the sides differ, and
    E[pMSE] = c(1 − c)(k − 1 + λ)/N; inverting the noncentral χ² at the observed statistic
    gives an interval of λ (:func:`noncentrality_interval`) and so of E[pMSE]. CART has no
    such form and a refitting bootstrap would cost ``n_boot`` fits, so its ``ci`` is None.
    """

    name = "PropensityMSE"
    description = "Propensity-score MSE (Snoke et al. 2018), logistic or CART, with its ratio "\
                  "to the null expectation."

    class Params(FidelityParams, LevelParams):
        model: Literal["logistic", "cart"] = Field("logistic", description="Propensity model.")
        n_permutations: int = Field(10, ge=1, description="CART: refits with permuted labels "
                                                          "for the null expectation.")
        max_depth: int | None = Field(10, ge=1, description="CART: maximum tree depth.")
        min_samples_leaf: int = Field(20, ge=1, description="CART: minimum records per leaf.")
        max_rows: int | None = max_rows_field("logistic 200,000, cart 20,000")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        ori, syn = pair(original, anonymized, self.name)
        columns = choose(ori, syn, p.columns, lambda s: True, self.name, "")
        require_finite({"original": ori, "anonymized": syn}, columns, self.name)
        frames, sizes, warnings = subsample({"original": ori.frame[columns],
                                             "anonymized": syn.frame[columns]},
                                            p.max_rows or MAX_ROWS[p.model], ctx.rng(8))
        both = pd.concat(frames.values(), ignore_index=True)
        (X,) = design(both, [both], columns, drop_first=p.model == "logistic")
        y = np.r_[np.zeros(sizes["original"]), np.ones(sizes["anonymized"])]
        n_all = len(y)
        c = sizes["anonymized"] / n_all
        details: dict[str, object] = {"model": p.model, "c": c, "n": n_all, "model_rows": sizes}
        ci: list[float] | None = None
        if p.model == "logistic":
            lm = sklearn("linear_model", self.name)
            fit = lm.LogisticRegression(C=np.inf, max_iter=1000).fit(X, y)
            note = iteration_limit(fit, "the propensity model")
            if note:
                warnings.append(note)
            value = pmse(fit.predict_proba(X)[:, 1], c)
            k1 = X.shape[1]
            null = k1 * c * (1 - c) / n_all
            sd = np.sqrt(2 * k1) * c * (1 - c) / n_all
            details.update(k=k1 + 1, null="logistic closed form (k − 1) c (1 − c) / N",
                           standardized=(value - null) / sd if sd > 0 else None)
            if k1 > 0 and 0 < c < 1:
                unit = c * (1 - c) / n_all
                lam = noncentrality_interval(value / unit, k1, p.confidence_level)
                ci = [unit * (k1 + lam[0]), unit * (k1 + lam[1])]
        else:
            tree = sklearn("tree", self.name)
            rng = ctx.rng(6)
            X = for_trees(X)

            def fitted(labels: np.ndarray) -> float:
                model = tree.DecisionTreeClassifier(
                    max_depth=p.max_depth, min_samples_leaf=p.min_samples_leaf,
                    random_state=int(rng.integers(2**31 - 1)))
                return pmse(model.fit(X, labels).predict_proba(X)[:, 1], c)

            with ctx.progress(1 + p.n_permutations, f"{self.name} (CART refits)") as bar:
                value = fitted(y)
                bar.update(1)
                perms = []
                for _ in range(p.n_permutations):
                    perms.append(fitted(rng.permutation(y)))
                    bar.update(1)
            null = float(np.mean(perms))
            details.update(null=f"permutation of the labels ({p.n_permutations} refits)",
                           null_pmse_sd=float(np.std(perms, ddof=1)) if len(perms) > 1
                           else None)
        details.update(pmse=value, null_pmse=null, ratio=value / null if null > 0 else None)
        if not null > 0:
            warnings.append("the null expectation is 0: no ratio")
        return MeasureResult(value=value, ci=ci, details=details, warnings=warnings)

