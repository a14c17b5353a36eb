"""Match rules of the edit distances (LCSS, EDR): which point pairs count as equal."""

from __future__ import annotations

import numpy as np

from anoneval.plugins.distances._geodp import cost_matrix


def distance_match(P: np.ndarray, Q: np.ndarray, sphere: bool, radius: float, eps: float,
                   strict: bool) -> np.ndarray:
    """d(p_i, q_j) < eps (``strict``) or ≤ eps, with d in metres (sphere) or coordinate units;
    shape (n, m, B)."""
    d = cost_matrix(P, Q, sphere)
    if sphere:
        d = d * radius
    return d < eps if strict else d <= eps


def axes_match(P: np.ndarray, Q: np.ndarray, sphere: bool, radius: float,
               eps: float) -> np.ndarray:
    """|Δx| ≤ eps and |Δy| ≤ eps (L∞, Chen et al. 2005). On the sphere the axes are the
    north–south distance R·|Δφ| and the east–west distance R·cos(φ̄)·|Δλ| (Δλ wrapped across the
    antimeridian, φ̄ the mean latitude); there P, Q are unit vectors."""
    if sphere:
        P, Q = _lonlat(P), _lonlat(Q)
    dx = np.abs(P[:, :, None, 0] - Q[:, None, :, 0])
    dy = np.abs(P[:, :, None, 1] - Q[:, None, :, 1])
    if sphere:
        dx = np.minimum(dx, 360.0 - dx)
        mean_lat = np.radians((P[:, :, None, 1] + Q[:, None, :, 1]) / 2)
        dx = np.radians(dx) * np.cos(mean_lat) * radius
        dy = np.radians(dy) * radius
    return np.moveaxis((dx <= eps) & (dy <= eps), 0, -1)


def _lonlat(U: np.ndarray) -> np.ndarray:
    """(lon, lat) degrees of unit vectors."""
    return np.degrees(np.stack([np.arctan2(U[..., 1], U[..., 0]),
                                np.arcsin(np.clip(U[..., 2], -1.0, 1.0))], axis=-1))
