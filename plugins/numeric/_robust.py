"""Robust covariance by the minimum covariance determinant (MCD) estimator.

Source: Rousseeuw & Van Driessen (1999), "A fast algorithm for the minimum covariance
determinant estimator", Technometrics 41(3); consistency factor of Croux & Haesbroeck (1999),
"Influence function and efficiency of the minimum covariance determinant scatter matrix
estimator", J. Multivariate Analysis 71(2). scikit-learn's ``MinCovDet`` (FAST-MCD and one
reweighting step at the 0.975 χ² quantile) finds the reweighted support; the covariance is the
support's sample covariance (n − 1) times the consistency factor at the support's share, as
robustbase's ``covMcd`` (which sdcMicro calls) scales it. robustbase also applies an empirical
small-sample factor (Pison et al. 2002), not applied here, and its random subset search can
settle on another support: the two agree to a few per cent, not exactly.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammainc
from scipy.stats import chi2

from anoneval.core.api import PluginError


def consistency_factor(p: int, share: float) -> float:
    """c = α / P(χ²_{p+2} ≤ χ²_{p;α}): makes a covariance of the central share α of a normal
    sample consistent for the full covariance."""
    return share / float(gammainc(p / 2 + 1, chi2.ppf(share, p) / 2))


def mcd_covariance(x: np.ndarray, seed: int) -> np.ndarray:
    """The reweighted, consistency-corrected MCD covariance of the rows of ``x`` (complete)."""
    try:
        from sklearn.covariance import MinCovDet
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise PluginError("the robust (MCD) covariance needs scikit-learn: "
                          "pip install 'anoneval[robust]'") from exc
    support = MinCovDet(random_state=seed).fit(x).support_
    share = float(support.mean())
    cov = np.atleast_2d(np.cov(x[support], rowvar=False))
    return cov * (consistency_factor(x.shape[1], share) if share < 1 else 1.0)
