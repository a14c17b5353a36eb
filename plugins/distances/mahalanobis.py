"""Mahalanobis distance between microdata records."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from anoneval.core.api import DataError
from anoneval.plugins.distances._records import ColumnsParams, LinearMapDistance


class Mahalanobis(LinearMapDistance):
    """Mahalanobis distance d(x, y) = sqrt((x − y)ᵀ Σ⁺ (x − y)) on numeric columns.

    Mahalanobis (1936); used for distance-based record linkage by sdcMicro and Domingo-Ferrer &
    Torra (2001). Σ is the sample covariance (ddof = 1) of the reference (original); Σ⁺ its
    Moore–Penrose pseudo-inverse: directions with eigenvalue ≤ ``rcond`` · largest are ignored
    (collinear or constant columns), which equals the inverse when Σ is regular. Computed as the
    Euclidean distance after whitening with Σ⁺^½. Missing values are an error.
    """

    name = "Mahalanobis"
    description = "Mahalanobis distance with the original's covariance (microdata)."

    class Params(ColumnsParams):
        rcond: float = Field(1e-12, gt=0, lt=1, description="Relative cut-off of small "
                             "covariance eigenvalues (pseudo-inverse).")

    def _fit_map(self, values: np.ndarray) -> None:
        if len(values) < 2:
            raise DataError(f"{self.name} needs at least 2 original records for a covariance")
        cov = np.atleast_2d(np.cov(values, rowvar=False, ddof=1))
        eigval, eigvec = np.linalg.eigh(cov)
        keep = eigval > self.params.rcond * max(float(eigval.max()), 0.0)
        if not keep.any():
            raise DataError(f"{self.name}: every column is constant in the original data")
        self.map_ = eigvec[:, keep] / np.sqrt(eigval[keep])
        self.rank_ = int(keep.sum())
