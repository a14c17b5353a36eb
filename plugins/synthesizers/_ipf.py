"""Iterative proportional fitting: the ME joint table of categorical variables given marginals.

Among all joint distributions with the given marginal tables, the one of maximum entropy is
the limit of IPF started from the uniform table (Deming & Stephan 1940; Csiszár 1975, the
I-projection of the uniform distribution); Polettini (2003, "Maximum entropy simulation for
microdata protection") uses it to simulate categorical microdata. Each sweep rescales the table
so that one marginal at a time is met exactly: p ← p · target_S / current_S. Cells whose
marginal target is 0 stay 0 (0/0 is taken as 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from anoneval.core.api import DataError


@dataclass
class IPFResult:
    """The fitted table, the number of sweeps and the largest marginal error left."""

    table: np.ndarray
    sweeps: int
    max_error: float
    converged: bool


def marginal(table: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """Sum ``table`` over every axis not in ``axes`` (result in the order of sorted ``axes``)."""
    drop = tuple(i for i in range(table.ndim) if i not in set(axes))
    return table.sum(axis=drop) if drop else table


def ipf(shape: Sequence[int], margins: Sequence[tuple[Sequence[int], np.ndarray]],
        tol: float = 1e-12, max_sweeps: int = 1000) -> IPFResult:
    """Fit the ME table of ``shape`` to ``margins`` = [(axes, target probabilities), …].

    Each target is a probability table over its (sorted) axes. Stops when every marginal is
    within ``tol`` (max absolute difference) or after ``max_sweeps`` sweeps.
    """
    table = np.full(tuple(shape), 1.0 / float(np.prod(shape)))
    prepared = []
    for axes, target in margins:
        axes = tuple(sorted(axes))
        target = np.asarray(target, dtype=float)
        want = tuple(shape[a] for a in axes)
        if target.shape != want:
            raise DataError(f"IPF margin over axes {axes} has shape {target.shape}, "
                            f"expected {want}")
        if np.any(target < 0) or not np.isclose(target.sum(), 1.0, atol=1e-9):
            raise DataError(f"IPF margin over axes {axes} must be non-negative and sum to 1")
        bshape = [shape[i] if i in axes else 1 for i in range(len(shape))]
        prepared.append((axes, target, bshape))
    error, sweeps = np.inf, 0
    for sweeps in range(1, max_sweeps + 1):  # noqa: B007 - `sweeps` is reported
        for axes, target, bshape in prepared:
            current = marginal(table, axes)
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(current > 0, target / current, 0.0)
            table *= ratio.reshape(bshape)
        error = max((float(np.max(np.abs(marginal(table, a) - t))) for a, t, _ in prepared),
                    default=0.0)
        if error < tol:
            break
    return IPFResult(table, sweeps, error, error < tol)
