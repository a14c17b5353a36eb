"""The model densities f* and f** of the architecture, as the inspections read them."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

# ---------------------------------------------------------------------------------------------
# model densities f* and f**
# ---------------------------------------------------------------------------------------------


@dataclass
class ModelView:
    """A fitted model on the transformed scale: exact normal / logistic, or a large sample."""

    kind: Literal["normal", "logistic", "sampled"]
    columns: list[str]
    mean: np.ndarray | None = None
    cov: np.ndarray | None = None
    loc: np.ndarray | None = None
    scale: np.ndarray | None = None
    sample: np.ndarray | None = None

    def logpdf(self, axes: Sequence[np.ndarray], cols: Sequence[int]) -> np.ndarray:
        """log density of the marginal over ``cols`` at the grid points."""
        from anoneval.plugins._shared.continuous import (
            log_kde_on_grid,
            normal_logpdf_on_grid,
            rule_of_thumb_bandwidth,
        )

        cols = list(cols)
        if self.kind == "normal":
            assert self.mean is not None and self.cov is not None
            return normal_logpdf_on_grid(self.mean[cols], self.cov[np.ix_(cols, cols)], axes)
        if self.kind == "logistic":
            from anoneval.plugins.synthesizers import _logistic

            assert self.loc is not None and self.scale is not None
            mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
            flat = mesh.reshape(-1, len(cols))
            return _logistic.logpdf(flat, self.loc[cols], self.scale[cols]).reshape(
                mesh.shape[:-1])
        assert self.sample is not None
        s = self.sample[:, cols]
        return log_kde_on_grid(s, rule_of_thumb_bandwidth(s), axes)

    def marginal_cdf(self, j: int, t: np.ndarray) -> np.ndarray:
        """CDF of column ``j`` at ``t`` (the model's, or the sample's ECDF)."""
        from scipy import stats

        if self.kind == "normal":
            assert self.mean is not None and self.cov is not None
            return stats.norm.cdf(t, self.mean[j], math.sqrt(self.cov[j, j]))
        if self.kind == "logistic":
            assert self.loc is not None and self.scale is not None
            return stats.logistic.cdf(t, self.loc[j], self.scale[j])
        assert self.sample is not None
        s = np.sort(self.sample[:, j])
        return np.searchsorted(s, t, side="right") / len(s)

    def mutual_information(self, grid: Callable[[], float]) -> float:
        """Total correlation Σ H(f_k) − H(f): closed form, or ``grid()`` for a sample."""
        from anoneval.plugins._shared.continuous import normal_mutual_information

        if self.kind == "normal":
            assert self.cov is not None
            return normal_mutual_information(self.cov, self.columns)
        if self.kind == "logistic":
            from anoneval.plugins.synthesizers import _logistic

            return float(_logistic.total_correlation(len(self.columns)))
        return grid()

    def parameters(self) -> dict[str, Any]:
        if self.kind == "normal":
            return {"mean": self.mean, "covariance": self.cov}
        if self.kind == "logistic":
            return {"location": self.loc, "scale": self.scale}
        return {"sample_rows": len(self.sample) if self.sample is not None else 0}
