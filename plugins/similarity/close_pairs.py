"""π_d: the share of actual–replica pairs within d0 of each other (Pflughoeft et al. 2022)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import Field
from scipy.spatial import cKDTree

from anoneval.core.api import Context, MeasureResult, RiskMeasure, spans
from anoneval.plugins._shared.continuous import ColumnsParams, ReplicaComparison, Scale, scale_pair

#: Rows per block of the KD-tree counts (``Context.map_blocks``).
QUERY_ROWS = 1 << 15


def close_pair_count(X: np.ndarray, Y: np.ndarray, d0: float) -> int:
    """#{(i, h): ‖x_i − y_h‖ ≤ d0} by dual KD-tree traversal (``cKDTree.count_neighbors``).

    The same distance arithmetic in every dimension (also 1-D), so the count is symmetric in
    X and Y; memory is O(n + m), never n × m.
    """
    return int(cKDTree(X).count_neighbors(cKDTree(Y), d0))


def rows_with_close_partner(X: np.ndarray, Y: np.ndarray | cKDTree, d0: float) -> int:
    """How many rows of X have some row of Y (or of Y's KD-tree) within distance ≤ d0."""
    tree = Y if isinstance(Y, cKDTree) else cKDTree(Y)
    dist, _ = tree.query(X, k=1, distance_upper_bound=np.nextafter(d0, np.inf))
    return int(np.count_nonzero(dist <= d0))


@dataclass(frozen=True)
class Pairs:
    """What every block of the count reads: both samples, their KD-trees and the actual's
    per-column trees."""

    X: np.ndarray
    Y: np.ndarray
    tree_x: cKDTree
    tree_y: cKDTree
    column_trees: list[cKDTree]
    d0: float


def count_block(job: Pairs, block: tuple[str, int, int]) -> np.ndarray:
    """Counts for rows ``start:stop`` of one side. Replica rows (``"y"``): close pairs jointly,
    per column, and replica rows with a close actual row; actual rows (``"x"``): actual rows
    with a close replica row. Integer counts: any split adds up to the same totals."""
    side, start, stop = block
    if side == "x":
        return np.array([rows_with_close_partner(job.X[start:stop], job.tree_y, job.d0)])
    Y = job.Y[start:stop]
    joint = int(job.tree_x.count_neighbors(cKDTree(Y), job.d0))
    cols = [int(t.count_neighbors(cKDTree(Y[:, j:j + 1]), job.d0))
            for j, t in enumerate(job.column_trees)]
    return np.array([joint, *cols, rows_with_close_partner(Y, job.tree_x, job.d0)])


class ClosePairs(ReplicaComparison, RiskMeasure):
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

    class Params(ColumnsParams):
        d0: float = Field(default=0.01, ge=0,
                          description="Distance threshold on the transformed scale.")
        epsilon: float = Field(default=0.01, ge=0, le=1,
                               description="π_d must stay below this to pass (their ε).")
        scale: Scale = Field(default="none",
                             description="none, or std: divide columns by the actual's sd.")
        per_column: bool = Field(default=True, description="Also report each column alone.")

    def from_columns(self, X: np.ndarray, Y: np.ndarray, columns: list[str],
                     ctx: Context) -> MeasureResult:
        p = self.params
        X, Y, _ = scale_pair(X, Y, p.scale, columns)
        n, m = len(X), len(Y)
        per_column = p.per_column and len(columns) > 1
        job = Pairs(X, Y, cKDTree(X), cKDTree(Y),
                    [cKDTree(X[:, j:j + 1]) for j in range(len(columns))] if per_column else [],
                    p.d0)
        x_blocks = [("x", a, b) for a, b in spans(n, QUERY_ROWS)]
        parts = ctx.map_blocks(count_block, [*x_blocks, *(("y", a, b) for a, b in
                                                        spans(m, QUERY_ROWS))], job)
        x_close = sum(int(c[0]) for c in parts[:len(x_blocks)])
        counts = np.sum(parts[len(x_blocks):], axis=0, dtype=np.int64)
        pi = int(counts[0]) / (n * m)
        cols = {c: int(counts[1 + j]) / (n * m) for j, c in enumerate(columns)} \
            if per_column else {}
        return MeasureResult(
            value=pi,
            details={
                "pi_d": pi, "columns": cols, "d0": p.d0, "epsilon": p.epsilon,
                "passed": pi < p.epsilon,
                "actual_rows_with_close_replica": x_close / n,
                "replica_rows_with_close_actual": int(counts[-1]) / m,
            },
        )
