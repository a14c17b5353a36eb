"""The energy statistic between actual data and replica (Pflughoeft et al. 2022, eq. 12)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from pydantic import Field
from scipy.spatial.distance import cdist

from anoneval.core.api import Context, LossMeasure, MeasureResult, task_threads
from anoneval.plugins._shared.continuous import (
    ColumnsParams,
    ReplicaComparison,
    Scale,
    scale_pair,
)

#: Rows per side of a distance block in d-D: 2048² float64 = 32 MB per block and thread.
BLOCK = 2048


@dataclass(frozen=True)
class EnergyResult:
    """E = nm/(n+m)·ED, the energy distance ED (V-statistic), and the permutation p-value."""

    statistic: float
    energy_distance: float
    pvalue: float | None
    resamples: int


def _ed_from_sums(sxx: np.ndarray, syy: np.ndarray, sxy: np.ndarray, n: int, m: int
                  ) -> np.ndarray:
    """ED = 2·Sxy/(nm) − Sxx/n² − Syy/m² from sums over ordered pairs (V-statistics)."""
    return 2.0 * sxy / (n * m) - sxx / n**2 - syy / m**2


def _labels(n: int, m: int, resamples: int, rng: np.random.Generator | None) -> np.ndarray:
    """Row 0: the observed split (True = actual); rows 1..B: random splits of the pool."""
    if resamples and rng is None:
        raise ValueError("random splits need a random generator")
    lab = np.zeros((resamples + 1, n + m), dtype=bool)
    lab[0, :n] = True
    for b in range(1, resamples + 1):
        lab[b, rng.permutation(n + m)[:n]] = True  # type: ignore[union-attr]
    return lab


def _ed_1d(z: np.ndarray, lab: np.ndarray, tick: Callable[[int], None]) -> np.ndarray:
    """Exact 1-D energy distance of every split in O(N) after one O(N log N) sort.

    For empirical CDFs F_n, G_m the V-statistic identity ED = 2∫(F_n − G_m)² dt holds exactly
    (E|X − Y| = ∫F(1 − G) + G(1 − F), E|X − X′| = 2∫F(1 − F)), so
    ED = 2·Σ_k (F_n(z_(k)) − G_m(z_(k)))²·(z_(k+1) − z_(k)) over the sorted pooled values: a sum
    of non-negative terms, free of the cancellation of the three-means form. Ties give zero gaps.
    """
    order = np.argsort(z, kind="stable")
    gaps = np.diff(z[order])
    n = int(lab[0].sum())
    m = lab.shape[1] - n
    batch = max(1, 8_000_000 // max(len(z), 1))
    ed = np.empty(len(lab))
    for s in range(0, len(lab), batch):
        ls = lab[s:s + batch][:, order[:-1]]
        cx = np.cumsum(ls, axis=1, dtype=np.int64)
        pos = np.arange(1, len(z), dtype=np.int64)
        diff = cx / n - (pos - cx) / m
        ed[s:s + batch] = 2.0 * (diff**2 @ gaps)
        tick(len(ls))
    return ed


def _row_block(shared: tuple[np.ndarray, np.ndarray | None, list[tuple[int, int]], int],
               i: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The distance sums of rows ``bounds[i]`` against the pooled sample, one column block at a
    time (on :func:`task_threads` threads, added in block order).

    Without random splits (``L`` None) only the blocks j ≥ i are computed (the distances are
    symmetric: blocks j > i count twice) and the sums by side (xx, yy, xy) are returned. With
    them, every block j: the row block's total and its partial sums R_i = Σ_j D_ij·L_j.
    """
    Z, L, bounds, n = shared
    si = slice(*bounds[i])
    cols = range(len(bounds)) if L is not None else range(i, len(bounds))

    def work(j: int) -> tuple[float, np.ndarray | None]:
        D = cdist(Z[si], Z[slice(*bounds[j])])
        if L is None:
            return float(D.sum()) * (1.0 if i == j else 2.0), None
        return float(D.sum()), D @ L[slice(*bounds[j])]

    threads = min(task_threads(), len(cols), 8)
    if threads <= 1:
        parts = [work(j) for j in cols]
    else:
        with ThreadPoolExecutor(threads) as pool:
            parts = list(pool.map(work, cols))
    if L is None:
        sums = np.zeros(3)  # xx, yy, xy
        row_x = bounds[i][0] < n
        for j, (s, _) in zip(cols, parts, strict=True):
            col_x = bounds[j][0] < n
            sums[0 if row_x and col_x else 1 if not (row_x or col_x) else 2] += s
        return sums, None
    R = np.zeros((si.stop - si.start, L.shape[1]))
    total = 0.0
    for s, r in parts:
        total += s
        R += r
    return np.array([total]), R


def _sums_nd(Z: np.ndarray, lab: np.ndarray, tick: Callable[[int], None],
             block: int | None = None, ctx: Context | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ordered-pair sums of Euclidean distances, by blocks of rows.

    Distances by ``cdist`` (exact differences), ``block × block`` (default :data:`BLOCK`) at a
    time. Each block of rows is one task of ``ctx``'s engine (memory: the block's rows × the
    splits), and the blocks' sums are added in block order: the same on every engine. Blocks
    never straddle the actual/replica boundary, so the observed split's sums are plain block
    sums. With random splits (rows 1.. of ``lab``) the partial sums R = D·L over all splits
    (L: the split indicators, N × (B+1)) are accumulated too; each split's sums then follow
    from R: Sxx = Σ_{i∈x} R_i, Sxy = Σ_{i∈y} R_i, Syy = total − Sxx − 2·Sxy.
    """
    N = len(Z)
    n = int(lab[0].sum())
    block = block or BLOCK
    bounds = list(itertools.pairwise([*range(0, n, block), *range(n, N, block), N]))
    L = np.ascontiguousarray(lab.T, dtype=np.float64) if len(lab) > 1 else None
    results = (ctx or Context()).map_blocks(_row_block, range(len(bounds)), (Z, L, bounds, n))
    tick(len(bounds))
    if L is None:
        xx, yy, xy = np.sum([r for r, _ in results], axis=0) if results else np.zeros(3)
        return np.array([xx]), np.array([yy]), np.array([xy / 2.0])
    total = float(sum(float(r[0]) for r, _ in results))
    R = np.concatenate([r for _, r in results])
    sxx = np.einsum("ib,ib->b", L, R)
    sxy = np.einsum("ib,ib->b", 1.0 - L, R)
    syy = total - sxx - 2.0 * sxy
    return sxx, syy, sxy


def energy_statistic(
    X: np.ndarray,
    Y: np.ndarray,
    resamples: int = 0,
    rng: np.random.Generator | None = None,
    tick: Callable[[int], None] = lambda k: None,
    ctx: Context | None = None,
) -> EnergyResult:
    """E(x, x*) = nm/(n+m)·[2·mean‖x − y‖ − mean‖x − x′‖ − mean‖y − y′‖] and its p-value.

    Exact O(N log N) per split in 1-D, blockwise O(N²) time and O(block·N) memory in d-D, the
    blocks on ``ctx``'s engine.
    The p-value is (1 + #{E_b ≥ E})/(1 + B) over B random splits of the pooled rows.
    """
    X, Y = np.atleast_2d(X), np.atleast_2d(Y)
    n, m = len(X), len(Y)
    lab = _labels(n, m, resamples, rng)
    Z = np.concatenate([X, Y])
    if Z.shape[1] == 1:
        ed = _ed_1d(Z[:, 0], lab, tick)
    else:
        ed = _ed_from_sums(*_sums_nd(Z - Z.mean(axis=0), lab, tick, ctx=ctx), n, m)
    e = float(ed[0])
    pvalue = None
    if resamples:
        # a relative tolerance so that splits equal up to rounding count as ties
        ties = np.count_nonzero(ed[1:] >= e - 1e-12 * abs(e))
        pvalue = float((1 + ties) / (1 + resamples))
    return EnergyResult(n * m / (n + m) * e, e, pvalue, resamples)


class EnergyStatistic(ReplicaComparison, LossMeasure):
    """Energy statistic between actual and replica, per column and joint (eq. 12 of the paper).

    E(x, x*) = nm/(n+m)·ED with the energy distance (V-statistics, zero diagonal included)
    ED = 2·mean‖x_i − x*_h‖ − mean‖x_i − x_h‖ − mean‖x*_i − x*_h‖ (Euclidean, exponent 1),
    Székely & Rizzo's E-statistic; for n = m it is (n/2)·ED, Pflughoeft et al.'s eq. (12). It equals
    ``dcor.homogeneity.energy_test_statistic``. Baringhaus & Franz's Cramér statistic as R's
    ``cramer::cramer.test`` reports it is half of E (``cramer_statistic`` in details).
    The permutation p-value is (1 + #{E_b ≥ E})/(1 + B) over ``resamples`` random splits of
    the pooled rows (``≥``: ties count against; dcor counts ``>`` only). Computed on the
    transformed scale (Task 2), optionally standardized by the actual's standard deviations.
    The value is the joint statistic over all columns (the column's own for one column).
    """

    name = "EnergyStatistic"
    description = "Energy (Cramér) statistic between actual and replica, per column and joint."

    class Params(ColumnsParams):
        resamples: int = Field(
            default=199, ge=0, le=100_000,
            description="Random splits for the permutation p-value (0: no p-value). Each "
                        "costs one pass over the pairwise distances in 2-D and up.",
        )
        scale: Scale = Field(
            default="none",
            description="none: distances on the transformed scale (Pflughoeft et al.); std: divide "
                        "every column by the actual's standard deviation first.",
        )
        per_column: bool = Field(default=True, description="Also report each column alone.")

    def from_columns(self, X: np.ndarray, Y: np.ndarray, columns: list[str],
                     ctx: Context) -> MeasureResult:
        p = self.params
        X, Y, _ = scale_pair(X, Y, p.scale, columns)
        d = len(columns)
        n, m = len(X), len(Y)
        per_col = p.per_column and d > 1
        # progress units: splits in 1-D, distance blocks in d-D (see the two paths)
        blocks = len(range(0, n, BLOCK)) + len(range(0, m, BLOCK))
        joint_units = p.resamples + 1 if d == 1 else blocks
        column_units = (p.resamples + 1) * d if per_col else 0
        with ctx.progress(joint_units + column_units, "energy statistic") as bar:
            joint = energy_statistic(X, Y, p.resamples, ctx.rng(0), bar.update, ctx)
            cols = {}
            if per_col:
                for j, c in enumerate(columns):
                    r = energy_statistic(X[:, j:j + 1], Y[:, j:j + 1], p.resamples,
                                         ctx.rng(j + 1), bar.update)
                    cols[c] = energy_summary(r)
            elif d == 1:
                cols[columns[0]] = energy_summary(joint)
        return MeasureResult(
            value=joint.statistic,
            details={"joint": energy_summary(joint), "columns": cols, "n_actual": n, "n_replica": m,
                     "scale": p.scale},
        )


def energy_summary(r: EnergyResult) -> dict[str, float | int | None]:
    """The details of one energy test: E, the energy distance, the Cramér statistic E / 2, the
    permutation p-value and the number of resamples."""
    return {"statistic": r.statistic, "energy_distance": r.energy_distance,
            "cramer_statistic": r.statistic / 2.0, "pvalue": r.pvalue, "resamples": r.resamples}
