"""MaxEntLogistic: Gumbel's bivariate / multivariate logistic ME model and its replica."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field
from scipy import special

from anoneval.core.api import Context, DataError, Microdata, SynthesisResult, Synthesizer
from anoneval.plugins._shared.continuous import forward, select_columns
from anoneval.plugins.synthesizers import _logistic
from anoneval.plugins.synthesizers._synth import SynthParams, replica_result, replica_size


class MaxEntLogistic(Synthesizer):
    """Replica drawn from the Gumbel type-I logistic fitted on the transformed scale.

    The d-variate logistic F(x) = 1/(1 + Σ e^{−(x_k − μ_k)/s_k}) is the ME model for the
    information moments E[X_k] and E[log(1 + Σ e^{−U_k})] (Pflughoeft, Soofi & Soyer 2022,
    Table A3 and Section 4.2). ``fit: moments`` takes μ_k = mean and s_k = √3·σ_k/π (the paper's
    relation, σ_k with divisor n − ``ddof``); ``fit: ml`` maximises the likelihood from there.
    Closed forms (nats, see ``_logistic``): H(X_k) = 2 + log s_k, H(X) = −log d! + (d+1)·H_d +
    Σ log s_k, and the mutual information (total correlation) 2d + log d! − (d+1)·H_d, which
    is log 2 − ½ ≈ 0.1931 for two columns whatever μ and s are. Sampling is exact.
    """

    name = "MaxEntLogistic"
    description = "Gumbel multivariate logistic maximum-entropy replica."

    class Params(SynthParams):
        fit: Literal["moments", "ml"] = Field(
            "moments", description="moments: s = √3·sd/π and location = mean (the paper's "
                                   "choice); ml: maximum likelihood started there.")
        ddof: Literal[0, 1] = Field(0, description="Standard-deviation divisor n − ddof.")

    def generate(self, original: Microdata, ctx: Context) -> SynthesisResult:
        p = self.params
        cols = select_columns(original, p.columns, "synthesizer (MaxEntLogistic)")
        x, fitted = forward(original.frame, cols, p.transform)
        if len(x) < 2:
            raise DataError(f"MaxEntLogistic needs at least 2 rows, got {len(x)}")
        loc, scale = _logistic.fit_moments(x, p.ddof)
        if np.any(scale <= 0):
            bad = [c for c, s in zip(cols, scale, strict=True) if s <= 0]
            raise DataError(f"MaxEntLogistic: column(s) {bad} are constant on the transformed "
                            "scale; a logistic scale must be positive")
        fit_info: dict[str, Any] = {"method": p.fit}
        if p.fit == "ml":
            loc, scale, info = _logistic.fit_ml(x, (loc, scale), cols)
            fit_info.update(info)
            if not info["converged"]:
                ctx.warn("MaxEntLogistic: the maximum-likelihood fit stopped before converging")
        n = replica_size(p, original)
        draws = _logistic.sample(ctx.rng(), n, loc, scale)
        d = len(cols)
        u = (x - loc) / scale
        data_theta = float(special.logsumexp(
            np.concatenate([np.zeros((len(u), 1)), -u], axis=1), axis=1).mean())
        m2 = _logistic.total_correlation(2)
        return replica_result(
            cols, fitted, draws, loc, [_logistic.marginal_entropy(float(s)) for s in scale],
            _logistic.entropy(scale), lambda a, b: m2, {
                "model": "Gumbel type-I multivariate logistic (ME, Table A3)",
                "parameters": {"location": dict(zip(cols, loc.tolist(), strict=True)),
                               "scale": dict(zip(cols, scale.tolist(), strict=True))},
                "fit": fit_info,
                "information_moments": {
                    "mean": dict(zip(cols, x.mean(axis=0).tolist(), strict=True)),
                    "log(1 + sum exp(-u_k))": {"data": data_theta,
                                               "model": _logistic.harmonic(d)},
                },
            })
