"""Change of the model mutual information from actual to replica (Pflughoeft et al. 2022)."""

from __future__ import annotations

import itertools
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import Context, DataError, LossMeasure, MeasureResult
from anoneval.plugins._shared.continuous import (
    ColumnsParams,
    ReplicaComparison,
    grid_mutual_information,
    grid_probabilities,
    information_summary,
    kde_on_grid,
    normal_mutual_information,
    rule_of_thumb_bandwidth,
)
from anoneval.plugins.fidelity.kl_divergence import DEFAULT_GRID, grid_for


def _mi(X: np.ndarray, model: str, names: list[str], grid: int | None) -> float:
    """M of one side; the normal model's covariance has the paper's divisor n (eq. 2), as in
    the synthesizers (R, hence M, does not depend on the divisor)."""
    if model == "normal":
        return normal_mutual_information(np.cov(X, rowvar=False, ddof=0), names)
    h = rule_of_thumb_bandwidth(X)
    zero = [c for c, v in zip(names, h, strict=True) if not v > 0]
    if zero:
        raise DataError(f"column(s) {', '.join(map(repr, zero))} are constant: no kernel density")
    axes = grid_for([X], h, grid or DEFAULT_GRID[X.shape[1]])
    return grid_mutual_information(grid_probabilities(kde_on_grid(X, h, axes), axes))


class MutualInformationChange(ReplicaComparison, LossMeasure):
    """|M(actual) − M(replica)|: the dependence the replica's model keeps, in nats.

    ``model``: ``normal`` fits the normal ME model to each side (on the transformed scale) and
    uses M = −½·log det R, the total correlation Σ H(f_k) − H(f) (Pflughoeft et al.'s eqs. 17 and
    19;
    −½·log(1 − ρ²) for two columns, eq. 32). ``kde`` uses the product-Gaussian KDE on a grid,
    M = Σ P log(P/(P₁P₂…)) (eq. 16 on the grid of eqs. 21-23; at most 3 columns jointly).
    details: M, the M index δ² = 1 − e^(−2M) (eq. 18) and the coin index q = ½(1 + √δ²)
    (eq. 15) for each side, jointly and for every pair of columns. MI is invariant under the
    one-to-one transforms in theory; the normal model's MI is not (it depends on which scale
    is normal).
    """

    name = "MutualInformationChange"
    description = "Change in model mutual information (M index) from actual to replica."
    unit = "nats"

    class Params(ColumnsParams):
        model: Literal["normal", "kde"] = Field(
            default="normal",
            description="normal: closed form of the fitted normal ME model; kde: grid "
                        "estimate from the kernel density (eq. 16).")
        grid: int | None = Field(default=None, ge=16, le=4096,
                                 description="Grid points per dimension for model kde.")

    def from_columns(self, X: np.ndarray, Y: np.ndarray, columns: list[str],
                     ctx: Context) -> MeasureResult:
        p = self.params
        d = len(columns)
        if d < 2:
            raise DataError(f"mutual information needs at least two columns, got {columns}")
        if p.model == "kde" and d > 3:
            raise DataError(f"model 'kde' takes 2 or 3 columns jointly, got {d}; pass `columns`")

        def side(cols: list[int]) -> dict[str, float]:
            names = [columns[j] for j in cols]
            out = {}
            for label, data in (("actual", X), ("replica", Y)):
                info = information_summary(_mi(data[:, cols], p.model, names, p.grid))
                out.update({f"{key}_{label}": v for key, v in
                            zip(("mi", "m_index", "coin_index"), info.values(), strict=True)})
            out["change"] = abs(out["mi_actual"] - out["mi_replica"])
            return out

        joint = side(list(range(d)))
        pairs = []
        if d > 2:
            for a, b in itertools.combinations(range(d), 2):
                pairs.append({"columns": f"{columns[a]} × {columns[b]}", **side([a, b])})
        return MeasureResult(
            value=joint["change"],
            details={"model": p.model, "joint": joint, "pairs": pd.DataFrame(pairs)},
        )
