"""Robust covariance by the minimum covariance determinant (MCD) estimator.

Source: Rousseeuw & Van Driessen (1999), "A fast algorithm for the minimum covariance
determinant estimator", Technometrics 41(3). scikit-learn's ``MinCovDet`` (FAST-MCD with one
reweighting step) does the work; sdcMicro calls robustbase's ``covMcd`` for the same estimator.
"""

from __future__ import annotations

import numpy as np

from anoneval.core.errors import PluginError


def mcd_covariance(x: np.ndarray, seed: int) -> np.ndarray:
    """The reweighted MCD covariance of the rows of ``x`` (no missing values)."""
    try:
        from sklearn.covariance import MinCovDet
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise PluginError("the robust (MCD) covariance needs scikit-learn: "
                          "pip install 'anoneval[robust]'") from exc
    return np.asarray(MinCovDet(random_state=seed).fit(x).covariance_)
