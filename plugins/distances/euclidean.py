"""Euclidean distance between microdata records on standardized numeric columns."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from anoneval.plugins.distances._records import ColumnsParams, LinearMapDistance


class Euclidean(LinearMapDistance):
    """Euclidean distance between records after standardizing each numeric column.

    d(x, y) = sqrt( Σ_k ((x_k − y_k) / s_k)² ) with s_k learnt from the reference (original):
    ``std`` the sample standard deviation (ddof = 1), as sdcMicro's distance-based record
    linkage on scaled variables (Domingo-Ferrer & Torra 2001); ``range`` max − min; ``none``
    1. A constant reference column gets s_k = 1. Missing values are an error (impute first or
    use Gower, which skips them). Columns: the given ones, or every numeric column of the
    reference.
    """

    name = "Euclidean"
    description = "Euclidean distance on standardized numeric columns (microdata)."

    class Params(ColumnsParams):
        standardize: Literal["std", "range", "none"] = Field(
            "std", description="Scale of each column, learnt on the original: standard "
            "deviation, range, or none.")

    def _fit_map(self, values: np.ndarray) -> None:
        if self.params.standardize == "std":
            scale = values.std(axis=0, ddof=1) if len(values) > 1 else np.zeros(values.shape[1])
        elif self.params.standardize == "range":
            scale = np.ptp(values, axis=0) if len(values) else np.zeros(values.shape[1])
        else:
            scale = np.ones(values.shape[1])
        self.map_ = np.where(scale > 0, scale, 1.0)
