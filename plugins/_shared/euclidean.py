"""Exact Euclidean nearest neighbours in bounded memory: a KD-tree in few dimensions, blockwise
BLAS screening otherwise, every reported distance recomputed directly.

:class:`EuclideanIndex` holds the reference rows, transformed once by the caller, and answers
the ``k`` nearest reference rows of any query rows. Two search paths give the same result:

- ``"kdtree"`` (scipy's ``cKDTree``, Friedman, Bentley & Finkel 1977), queried with
  :func:`task_threads` threads: the default up to :data:`KD_MAX_DIM` columns, where a tree
  prunes well (measured on 4·10⁴ × 4·10⁴ standard-normal rows, CPU time: the tree is 16×
  faster at 8 columns, 1.4× slower at 16, 7× slower at 32; real data, with structure and
  duplicates, favour the tree more);
- ``"blas"`` above: blocks of query rows (a block's matrix holds :data:`BLOCK_CELLS` numbers,
  so memory is bounded whatever the size) screened in the BLAS form
  ‖q − r‖² = ‖q‖² + ‖r‖² − 2 q·r (one matrix product per block, float64; threads over the
  blocks, numpy and BLAS release the GIL).

Precision. The BLAS form loses digits to cancellation (a copy can come out at ±1e-16 instead
of 0), so it only *screens*: with u = 2⁻⁵³ and d columns, each screened ‖r‖² − 2 q·r is off by
at most e = γ_{d+2} (‖q‖² + 2‖r‖²), γ_m = m u / (1 − m u) (Higham 2002, "Accuracy and Stability
of Numerical Algorithms", §3.1); every reference row within 2e (doubled again for safety) of a
query's k-th smallest screened value is kept, and the kept pairs' distances are recomputed
directly, √(Σ_j (q_j − r_j)²) summed over the columns in order, the arithmetic of scipy's
``cdist``. The k nearest are chosen on those exact values, ties going to the lower reference
row. The tree path recomputes its k neighbours' distances the same way. So both paths return
``cdist``'s values, bitwise, and an exact copy is always at distance exactly 0 (its difference
is 0 in every column). A NaN in a row is refused by the callers.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import numpy as np
from scipy.spatial import cKDTree

from anoneval.core.api import DataError, spans, task_threads

#: Up to this many columns the KD-tree path is the default (see the module docstring).
KD_MAX_DIM = 12
#: Cells of one block's screening matrix (16 MB of float64).
BLOCK_CELLS = 1 << 21
Method = Literal["auto", "kdtree", "blas"]
_U = 2.0 ** -53


def direct_distances(Q: np.ndarray, R: np.ndarray, qi: np.ndarray, ri: np.ndarray
                     ) -> np.ndarray:
    """‖Q[qi[k]] − R[ri[k]]‖ for each k, summed column by column in order (``cdist``'s
    arithmetic: bitwise its values)."""
    acc = np.zeros(len(qi))
    for j in range(Q.shape[1]):
        t = Q[qi, j] - R[ri, j]
        t *= t
        acc += t
    return np.sqrt(acc)


def choose_method(d: int, method: Method = "auto") -> Literal["kdtree", "blas"]:
    """The search path: the given one, or the KD-tree up to :data:`KD_MAX_DIM` columns."""
    if method != "auto":
        return method
    return "kdtree" if d <= KD_MAX_DIM else "blas"


def _gamma(m: int) -> float:
    return m * _U / (1 - m * _U)


class EuclideanIndex:
    """The reference rows ``R`` (n × d float64, finite) ready for exact nearest searches."""

    def __init__(self, R: np.ndarray, method: Method = "auto") -> None:
        R = np.ascontiguousarray(R, dtype=np.float64)
        if R.ndim != 2 or len(R) == 0:
            raise DataError("the reference of a nearest-neighbour search has no rows")
        self.R = R
        self.method = choose_method(R.shape[1], method)
        self.tree = cKDTree(R) if self.method == "kdtree" else None
        self._augT: np.ndarray | None = None
        self._rmax = 0.0

    def _augmented(self) -> tuple[np.ndarray, float]:
        """[r, ‖r‖²]ᵀ (so that [−2q, 1] · [r, ‖r‖²] = ‖r‖² − 2 q·r in one product) and the
        largest ‖r‖², built on first use."""
        if self._augT is None:
            norms = np.einsum("ij,ij->i", self.R, self.R)
            self._augT = np.ascontiguousarray(np.column_stack([self.R, norms]).T)
            self._rmax = float(norms.max())
        return self._augT, self._rmax

    def __len__(self) -> int:
        return len(self.R)

    def query(self, Q: np.ndarray, k: int = 1, threads: int | None = None,
              first_on_ties: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Indices and exact distances (``len(Q)`` × ``k``, rows sorted by distance) of the
        ``k`` nearest reference rows of each row of ``Q``; ``threads`` defaults to
        :func:`task_threads`. Among reference rows at exactly the same distance the BLAS path
        lists the lower index first; the tree does so too with ``first_on_ties`` (k = 1: a
        row whose two nearest are within rounding of each other is searched again on the BLAS
        path), else it returns one of them."""
        Q = np.ascontiguousarray(Q, dtype=np.float64)
        n = len(self.R)
        if n < k:
            raise DataError(f"{k} nearest neighbours asked of {n} reference records")
        threads = task_threads() if threads is None else max(int(threads), 1)
        if len(Q) == 0:
            return np.zeros((0, k), np.int64), np.zeros((0, k))
        if self.tree is not None and first_on_ties and k == 1 and n > 1:
            idx, dist = self.query(Q, 2, threads)
            tied = np.flatnonzero(dist[:, 1] <= dist[:, 0] * (1 + 16 * _gamma(Q.shape[1] + 2)))
            idx, dist = idx[:, :1].copy(), dist[:, :1].copy()
            if len(tied):
                idx[tied], dist[tied] = self._blas(Q[tied], 1, threads)
            return idx, dist
        if self.tree is not None:
            # queries in the order of their own tree's leaves: neighbours in turn visit the
            # same nodes, which stay in cache (≈15 % less CPU at 10⁵ rows); results unpermuted
            order = cKDTree(Q, balanced_tree=False, compact_nodes=False).indices \
                if len(Q) > 1024 else np.arange(len(Q))
            idx = np.empty((len(Q), k), np.int64)
            idx[order] = np.asarray(self.tree.query(Q[order], k=k, workers=threads)[1],
                                    np.int64).reshape(len(Q), k)
            dist = direct_distances(Q, self.R, np.repeat(np.arange(len(Q)), k),
                                    idx.ravel()).reshape(len(Q), k)
            order = np.lexsort((idx, dist), axis=1) if k > 1 else None
            if order is not None:
                idx = np.take_along_axis(idx, order, 1)
                dist = np.take_along_axis(dist, order, 1)
            return idx, dist
        return self._blas(Q, k, threads)

    def _blas(self, Q: np.ndarray, k: int, threads: int) -> tuple[np.ndarray, np.ndarray]:
        """The BLAS path over blocks of query rows (threads over the blocks)."""
        self._augmented()
        n = len(self.R)
        idx = np.empty((len(Q), k), np.int64)
        dist = np.empty((len(Q), k))
        step = max(1, BLOCK_CELLS // n)
        blocks = spans(len(Q), step)

        def run(span: tuple[int, int]) -> None:
            idx[span[0]:span[1]], dist[span[0]:span[1]] = self._blas_block(Q[span[0]:span[1]], k)

        if threads > 1 and len(blocks) > 1:
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(run, blocks))
        else:
            for span in blocks:
                run(span)
        return idx, dist

    def _blas_block(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        m, d = q.shape
        qa = np.empty((m, d + 1))
        np.multiply(q, -2.0, out=qa[:, :d])
        qa[:, d] = 1.0
        augT, rmax = self._augmented()
        g = qa @ augT  # ‖r‖² − 2 q·r
        kth = g.min(axis=1) if k == 1 else np.partition(g, k - 1, axis=1)[:, k - 1]
        qn = np.einsum("ij,ij->i", q, q)
        slack = 4 * _gamma(d + 2) * (qn + 2 * rmax)
        qi, ri = np.nonzero(g <= (kth + slack)[:, None])
        exact = direct_distances(q, self.R, qi, ri)
        order = np.lexsort((ri, exact, qi))
        first = np.searchsorted(qi[order], np.arange(m))
        take = order[first[:, None] + np.arange(k)]
        return ri[take], exact[take]


__all__ = ["BLOCK_CELLS", "KD_MAX_DIM", "EuclideanIndex", "choose_method", "direct_distances"]
