"""Entropy-based disclosure risk of a frequency table (Antal, Shlomo & Elliot 2014)."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field, field_validator

from anoneval.core.api import Context, DataError, Dataset, MeasureResult, RiskMeasure
from anoneval.plugins.tabular._freq import (
    FreqParams,
    FrequencySummaries,
    product_size,
    released_frequencies,
)


class EntropyRisk(FrequencySummaries, RiskMeasure):
    """1 − H / log K for a frequency table, H = −Σ (c_i/N) log(c_i/N) (natural log, 0 log 0 = 0).

    Antal, Shlomo & Elliot (2014): high entropy means counts spread
    evenly (low risk), low entropy means few non-zero cells (attribute disclosure). Their n is
    ambiguous; by default (``normalize="cells"``) the normalizer is log K with K the number of
    cells *including zero cells*, so more zero cells mean more risk (property c) and the value lies
    in [0, 1], as in Antal et al.'s combined measure below; ``normalize="units"`` uses log N
    (N units) instead, the reading of the ESSnet SDC handbook §4.7, where n is "the total number
    of units covered by the table". K = 1 (or N = 1) gives 1.
    ``grid="product"`` takes K as the full cross product of the variables' categories (zero
    cells included); ``"observed"`` as the cells present (rows of a table, counts of 0 included).

    details: K, N, H (nats), zero cells, cells of size 1 and 2, and the combined measure of Antal
    et al. in the form of the ESSnet SDC handbook §5.9:
    ``w1·|D|/K + w2·(1 − H/log K) − w3·(1/√N)·log(1/(e·√N))``, D the zero cells; its third term
    (1 + ½ log N)/√N falls from 1 at N = 1 towards 0 as the population grows. The handbook
    leaves the weights to the user; they must be >= 0 and sum to 1 so that it stays in [0, 1].

    On microdata the counts come from the released side's class summary over ``cells``, which
    an engine computes without gathering the data (the categories of categorical columns are
    read from the column types); a table dataset is read as it is.
    """

    name = "EntropyRisk"
    description = "1 - H/log K: entropy risk of a frequency table (Antal, Shlomo & Elliot 2014)."
    accepts = ("microdata", "table")
    inputs = "either"

    class Params(FreqParams):
        normalize: Literal["cells", "units"] = Field(
            "cells", description="Normalize H by log K (cells, zero cells included) or log N.")
        grid: Literal["product", "observed"] = Field(
            "product", description="K: cross product of the categories, or the observed cells.")
        weights: list[float] = Field(
            default_factory=lambda: [1 / 3, 1 / 3, 1 / 3], min_length=3, max_length=3,
            description="Weights w1, w2, w3 (>= 0, summing to 1) of the combined measure's "
                        "zero-cell, entropy and population-size terms.")

        @field_validator("weights")
        @classmethod
        def _weights_sum_to_one(cls, v: list[float]) -> list[float]:
            if any(w < 0 for w in v) or not math.isclose(sum(v), 1.0, rel_tol=1e-9):
                raise ValueError(f"weights must be >= 0 and sum to 1; got {v}")
            return v

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        data, keys, counts = released_frequencies(original, anonymized, p, self.name, ctx)
        n_units = float(counts.sum())
        if n_units <= 0:
            raise DataError(f"{self.name}: the table holds no units (all counts are 0)")
        k_cells = product_size(data, keys) if p.grid == "product" else len(counts)
        pos = counts[counts > 0]
        share = pos / n_units
        h = float(-(share * np.log(share)).sum())
        h_max = math.log(k_cells) if p.normalize == "cells" else math.log(n_units)
        value = 1.0 if h_max <= 0 else min(1.0, max(0.0, 1.0 - h / h_max))
        zero = k_cells - len(pos)
        entropy_term = 1.0 if k_cells <= 1 else min(1.0, max(0.0, 1.0 - h / math.log(k_cells)))
        size_term = -(1.0 / math.sqrt(n_units)) * math.log(1.0 / (math.e * math.sqrt(n_units)))
        w1, w2, w3 = p.weights
        terms = {"zero_cells": zero / k_cells, "entropy": entropy_term, "population": size_term}
        return MeasureResult(value=value, details={
            "n_cells": k_cells, "n_units": n_units, "entropy": h, "log_base": "e",
            "normalizer": h_max, "zero_cells": zero, "zero_cell_share": zero / k_cells,
            "cells_of_size_1": int((counts == 1).sum()),
            "cells_of_size_2": int((counts == 2).sum()),
            "combined": w1 * terms["zero_cells"] + w2 * entropy_term + w3 * size_term,
            "combined_terms": terms, "weights": list(p.weights),
        })
