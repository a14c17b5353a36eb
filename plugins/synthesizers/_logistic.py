"""Gumbel's type-I multivariate logistic distribution: density, entropies, sampling and fitting.

With ``u_i = (x_i − μ_i)/s_i`` and ``S = Σ e^{−u_i}`` over d coordinates,

    F(x) = 1 / (1 + S),      f(x) = d! · Π_i (e^{−u_i} / s_i) / (1 + S)^{d+1},

(Gumbel 1961; Pflughoeft, Soofi & Soyer 2022, Table A3, "similar multivariate case"). Every
sub-vector has the same form, so the marginals are logistic(μ_i, s_i). ``log f`` is linear in
``u_i`` and ``log(1 + S)``: it is the ME model for the information moments E[X_i] and
E[log(1 + Σ e^{−U_i})].

Closed forms (nats) used below, derived with a_i = e^{−u_i}: the vector ``a`` has survival
function 1/(1 + Σ t_i), i.e. a_i = E_i / G with E_i, G iid Exp(1); then S/(1 + S) ~ Beta(d, 1),
so E[log(1 + S)] = ψ(d + 1) − ψ(1) = H_d (the d-th harmonic number; 3/2 for d = 2):

    H(X) = −log d! + (d + 1)·H_d + Σ log s_i       (d = 1: 2 + log s; d = 2: 9/2 − log 2 + log s₁s₂)
    M(X) = Σ H(X_i) − H(X) = 2d + log d! − (d + 1)·H_d     (d = 2: log 2 − ½ ≈ 0.193147)

The total correlation M is free of μ and s (paper, Section 4.2.3). The moment fit uses the
logistic variance π² s²/3, i.e. s = √3·σ/π (paper, eq. above Table 4).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from anoneval.core.api import DataError

SCALE_FROM_SD = math.sqrt(3.0) / math.pi


def harmonic(d: int) -> float:
    """H_d = 1 + 1/2 + … + 1/d."""
    return float(sum(1.0 / k for k in range(1, d + 1)))


def entropy(scale: np.ndarray) -> float:
    """Joint entropy (nats) of the d-variate Gumbel logistic with scales ``scale``."""
    s = np.atleast_1d(np.asarray(scale, dtype=float))
    d = s.size
    return float(-math.lgamma(d + 1) + (d + 1) * harmonic(d) + np.log(s).sum())


def marginal_entropy(scale: float) -> float:
    """Entropy (nats) of the univariate logistic(μ, s): 2 + log s."""
    return 2.0 + math.log(scale)


def total_correlation(d: int) -> float:
    """Σ H(X_i) − H(X) = 2d + log d! − (d + 1)·H_d; log 2 − ½ for d = 2."""
    return 2.0 * d + math.lgamma(d + 1) - (d + 1) * harmonic(d)


def logpdf(x: np.ndarray, loc: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """log f at the rows of ``x`` (shape (n, d))."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    loc, scale = np.asarray(loc, dtype=float), np.asarray(scale, dtype=float)
    d = x.shape[1]
    u = (x - loc) / scale
    # log(1 + S) = logsumexp over {0, −u_1, …, −u_d}, stable for large |u|
    stacked = np.concatenate([np.zeros((x.shape[0], 1)), -u], axis=1)
    log1ps = special.logsumexp(stacked, axis=1)
    return math.lgamma(d + 1) - u.sum(axis=1) - np.log(scale).sum() - (d + 1) * log1ps


def pdf(x: np.ndarray, loc: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The density at the rows of ``x``."""
    return np.exp(logpdf(x, loc, scale))


def sample(rng: np.random.Generator, n: int, loc: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Exact draws: u_i = log G − log E_i with G, E_i iid Exp(1) (see the module docstring)."""
    loc, scale = np.asarray(loc, dtype=float), np.asarray(scale, dtype=float)
    d = loc.size
    g = rng.standard_exponential((n, 1))
    e = rng.standard_exponential((n, d))
    return loc + scale * (np.log(g) - np.log(e))


def fit_moments(x: np.ndarray, ddof: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Location = mean, scale = √3·sd/π per column (method of moments)."""
    x = np.asarray(x, dtype=float)
    return x.mean(axis=0), SCALE_FROM_SD * x.std(axis=0, ddof=ddof)


def _negloglik(theta: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean negative log-likelihood and its gradient in (μ, log s)."""
    n, d = x.shape
    loc, logs = theta[:d], theta[d:]
    s = np.exp(logs)
    u = (x - loc) / s
    stacked = np.concatenate([np.zeros((n, 1)), -u], axis=1)
    log1ps = special.logsumexp(stacked, axis=1)
    ll = math.lgamma(d + 1) - u.sum(axis=1) - logs.sum() - (d + 1) * log1ps
    # ∂ log f / ∂u_i = −1 + (d + 1)·e^{−u_i}/(1 + S)
    w = np.exp(-u - log1ps[:, None])
    dl_du = -1.0 + (d + 1) * w
    g_loc = (dl_du * (-1.0 / s)).mean(axis=0)
    g_logs = (dl_du * (-u)).mean(axis=0) - 1.0
    return -float(ll.mean()), -np.concatenate([g_loc, g_logs])


def fit_ml(x: np.ndarray, start: tuple[np.ndarray, np.ndarray] | None = None,
           columns: list[str] | None = None) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    """Maximum-likelihood (μ, s) of the d-variate Gumbel logistic, started at the moment fit."""
    x = np.asarray(x, dtype=float)
    loc0, s0 = start if start is not None else fit_moments(x)
    if np.any(s0 <= 0):
        bad = [columns[i] if columns else str(i) for i in np.flatnonzero(s0 <= 0)]
        raise DataError(f"MaxEntLogistic: column(s) {bad} are constant; a logistic scale must "
                        "be positive")
    theta0 = np.concatenate([loc0, np.log(s0)])
    res = optimize.minimize(_negloglik, theta0, args=(x,), jac=True, method="L-BFGS-B",
                            options={"maxiter": 500, "gtol": 1e-10, "ftol": 1e-14})
    d = x.shape[1]
    if not np.all(np.isfinite(res.x)):
        raise DataError("MaxEntLogistic: the maximum-likelihood fit did not converge")
    info = {"converged": bool(res.success), "iterations": int(res.nit),
            "mean_loglik": float(-res.fun)}
    return res.x[:d], np.exp(res.x[d:]), info
