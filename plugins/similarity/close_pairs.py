"""π_d: the share of actual–replica pairs within d0 of each other (Pflughoeft et al. 2022)."""

from __future__ import annotations

import numpy as np
from pydantic import Field
from scipy.spatial import cKDTree

from anoneval.core.api import Context, MeasureResult, RiskMeasure
from anoneval.plugins._continuous import ColumnsParams, Scale, paired, scale_pair


def close_pair_count(X: np.ndarray, Y: np.ndarray, d0: float) -> int:
    """#{(i, h): ‖x_i − y_h‖ ≤ d0} by dual KD-tree traversal (``cKDTree.count_neighbors``).

    The same distance arithmetic in every dimension (also 1-D), so the count is symmetric in
    X and Y; memory is O(n + m), never n × m.
    """
    return int(cKDTree(X).count_neighbors(cKDTree(Y), d0))


def rows_with_close_partner(X: np.ndarray, Y: np.ndarray, d0: float) -> int:
    """How many rows of X have some row of Y within distance ≤ d0."""
    dist, _ = cKDTree(Y).query(X, k=1, distance_upper_bound=np.nextafter(d0, np.inf))
    return int(np.count_nonzero(dist <= d0))


class ClosePairs(RiskMeasure):
    """π_d = (1/(nm))·#{(i, h): d(x_i, x*_h) ≤ d0}, jointly and per column (eq. 5, Task 12).

    d is the Euclidean distance on the transformed scale (optionally standardized by the
    actual's standard deviations); pairs at exactly d0 count (``≤``). Counted with KD-trees
    (``cKDTree.count_neighbors``), per column too: never an n × m matrix.
    details also give the shares of actual rows with a replica row within d0 and of replica
    rows with an actual row within d0, and ``passed`` when π_d < ``epsilon`` (Pflughoeft et al.'s
    ε).
    """

    name = "ClosePairs"
    description = "Share of actual–replica pairs closer than d0 (Pflughoeft et al.'s π_d)."
    unit = "share"
    accepts = ("microdata",)
    inputs = "both"

    class Params(ColumnsParams):
        d0: float = Field(default=0.01, ge=0,
                          description="Distance threshold on the transformed scale.")
        epsilon: float = Field(default=0.01, ge=0, le=1,
                               description="π_d must stay below this to pass (their ε).")
        scale: Scale = Field(default="none",
                             description="none, or std: divide columns by the actual's sd.")
        per_column: bool = Field(default=True, description="Also report each column alone.")

    def compute(self, original, anonymized, ctx: Context) -> MeasureResult:
        p = self.params
        X, Y, columns, _ = paired(original, anonymized, p, "ClosePairs")
        X, Y, _ = scale_pair(X, Y, p.scale, columns)
        n, m = len(X), len(Y)
        pi = close_pair_count(X, Y, p.d0) / (n * m)
        cols = {}
        if p.per_column and len(columns) > 1:
            for j, c in enumerate(columns):
                cols[c] = close_pair_count(X[:, j:j + 1], Y[:, j:j + 1], p.d0) / (n * m)
        return MeasureResult(
            value=pi,
            details={
                "pi_d": pi, "columns": cols, "d0": p.d0, "epsilon": p.epsilon,
                "passed": pi < p.epsilon,
                "actual_rows_with_close_replica": rows_with_close_partner(X, Y, p.d0) / n,
                "replica_rows_with_close_actual": rows_with_close_partner(Y, X, p.d0) / m,
            },
        )
