"""MaxEntNormal: the multivariate normal ME model for means and covariances, and its replica."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import Context, DataError, Microdata, SynthesisResult, Synthesizer
from anoneval.plugins._shared.continuous import (
    check_covariance,
    forward,
    normal_entropy,
    select_columns,
)
from anoneval.plugins.synthesizers._synth import SynthParams, replica_result, replica_size


def whiten_to(z: np.ndarray, mean: np.ndarray, cov: np.ndarray, ddof: int) -> np.ndarray:
    """Affinely map the rows of ``z`` so their sample mean and covariance (``ddof``) are exactly
    ``mean`` and ``cov``: x = μ + L_Σ L_S⁻¹ (z − z̄), with L the Cholesky factors.

    This is the moment adjustment of Pflughoeft et al.'s Figure 3 (middle panel; Muralidhar, Parsa &
    Sarathy 1999): the replica keeps the information moments of the actual data exactly.
    """
    zc = z - z.mean(axis=0)
    s = np.atleast_2d(np.cov(zc, rowvar=False, ddof=ddof))
    ls = np.linalg.cholesky(s)
    lc = np.linalg.cholesky(cov)
    white = np.linalg.solve(ls, zc.T)  # L_S⁻¹ (z − z̄)ᵀ, sample covariance I
    return mean + (lc @ white).T


class MaxEntNormal(Synthesizer):
    """Replica drawn from N(μ, Σ) fitted on the transformed scale, then back-transformed.

    The normal is the ME model for the information moments E[X_k] and E[(X_k − μ_k)(X_h − μ_h)]
    (Pflughoeft, Soofi & Soyer 2022, Table A3 and Section 4.1.2; with ``transform: log`` it is
    the lognormal model of the mortgage example). θ_j are the equal-weight sample moments
    (eq. 2): the covariance divides by n − ``ddof`` (default n). Entropies use eq. (31),
    H = d/2·log(2πe) + ½ log|Σ|; mutual information −½ log|R| (eq. 32 for two columns); on the
    original scale H(Y_k) = H(X_k) + μ_k for log/log1p. All in nats. A singular Σ is an error
    naming the collinear columns.
    """

    name = "MaxEntNormal"
    description = "Multivariate normal maximum-entropy replica (means and covariances)."

    class Params(SynthParams):
        adjust_moments: bool = Field(
            False, description="Affinely adjust the replica so its sample mean and covariance "
                               "equal the original's exactly (Pflughoeft et al., Figure 3).")
        ddof: Literal[0, 1] = Field(
            0, description="Covariance divisor n − ddof: 0 = the paper's equal weights (eq. 2), "
                           "1 = the unbiased estimator.")

    def generate(self, original: Microdata, ctx: Context) -> SynthesisResult:
        p = self.params
        cols = select_columns(original, p.columns, "synthesizer (MaxEntNormal)")
        x, fitted = forward(original.frame, cols, p.transform)
        n_orig, d = x.shape
        if n_orig < d + 1:
            raise DataError(f"MaxEntNormal needs more rows than columns to estimate a covariance; "
                            f"got {n_orig} rows for {d} columns {cols}")
        mean = x.mean(axis=0)
        cov = check_covariance(np.atleast_2d(np.cov(x, rowvar=False, ddof=p.ddof)), cols)
        n = replica_size(p, original)
        rng = ctx.rng()
        z = rng.standard_normal((n, d))
        if p.adjust_moments:
            if n < d + 1 + p.ddof:
                raise DataError(f"adjust_moments needs n > {d + p.ddof} replica rows (got n={n})")
            draws = whiten_to(z, mean, cov, p.ddof)
        else:
            draws = mean + z @ np.linalg.cholesky(cov).T
        sd = np.sqrt(np.diag(cov))
        corr = cov / np.outer(sd, sd)
        details: dict[str, Any] = {
            "model": "multivariate normal (ME for means and covariances)",
            "parameters": {"mean": dict(zip(cols, mean.tolist(), strict=True)),
                           "covariance": cov.tolist(), "correlation": corr.tolist(),
                           "ddof": p.ddof},
            "information_moments": ["x_k", "(x_k - mu_k)(x_h - mu_h)"],
            "adjust_moments": p.adjust_moments,
        }
        if p.adjust_moments:
            rc = np.atleast_2d(np.cov(draws, rowvar=False, ddof=p.ddof))
            details["replica_moment_error"] = {
                "mean": float(np.max(np.abs(draws.mean(axis=0) - mean))),
                "covariance": float(np.max(np.abs(rc - cov))),
            }
        return replica_result(
            cols, fitted, draws, mean, [normal_entropy(cov[k:k + 1, k:k + 1]) for k in range(d)],
            normal_entropy(cov, cols), lambda a, b: float(-0.5 * np.log1p(-corr[a, b] ** 2)),
            details)
