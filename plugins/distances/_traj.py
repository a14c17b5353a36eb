"""Shared machinery of the trajectory distances: haversine, per-point caches, length grouping.

All trajectory distances compare two :class:`~anoneval.core.data.Trajectories` datasets. Their
cost is dominated by point-to-point great-circle distances, so the per-point trigonometry is
cached on each dataset (``Dataset.cached``) and the pair work is vectorised over all pairs of
trajectories that share a pair of lengths: for Martinez2021 the aligned indices depend only on
the two lengths, for DTW and Hausdorff the point-distance tensor has a fixed shape.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from anoneval.core.data import Dataset, Trajectories
from anoneval.core.errors import DataError

#: Mean Earth radius in km (IUGG), as the ``haversine`` package the mobility anonymizer uses.
EARTH_RADIUS_KM = 6371.0088
#: Elements per temporary array in a chunk (about 4 MB of float64): cache-friendly, bounded.
CHUNK_ELEMENTS = 1 << 19


def as_trajectories(data: Dataset, role: str) -> Trajectories:
    """``data`` as trajectories, or a clear error naming the role and the kind received."""
    if not isinstance(data, Trajectories):
        raise DataError(f"the {role} data must be trajectories, got {data.kind}")
    return data


def point_arrays(data: Trajectories) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Latitude and longitude in radians and the cosine of the latitude of every point (cached)."""

    def compute() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lat = np.radians(data.lat)
        return lat, np.radians(data.lon), np.cos(lat)

    return data.cached(("geo_points",), compute)


def haversine_km(lat1: np.ndarray, lon1: np.ndarray, cos1: np.ndarray,
                 lat2: np.ndarray, lon2: np.ndarray, cos2: np.ndarray) -> np.ndarray:
    """Great-circle distance in km between points given in radians (arrays broadcast).

    The haversine formula with the mean Earth radius 6371.0088 km, evaluated in the same order
    as the ``haversine`` package (point 1 first), so results agree to the last bits.
    """
    a = np.sin((lat2 - lat1) * 0.5)
    a *= a
    b = np.sin((lon2 - lon1) * 0.5)
    b *= b
    a += cos1 * cos2 * b
    np.sqrt(a, out=a)
    np.arcsin(a, out=a)
    a *= 2 * EARTH_RADIUS_KM
    return a


def point_distance(x: Trajectories, px: np.ndarray, y: Trajectories, py: np.ndarray,
                   sp_type: str = "Haversine") -> np.ndarray:
    """Spatial distance between points ``px`` of ``x`` and ``py`` of ``y`` (broadcasting).

    ``Haversine``: great-circle km. ``Euclidean``: plain distance of (lon, lat) in degrees.
    """
    if sp_type == "Euclidean":
        return np.hypot(y.lon[py] - x.lon[px], y.lat[py] - x.lat[px])
    lx, gx, cx = point_arrays(x)
    ly, gy, cy = point_arrays(y)
    return haversine_km(lx[px], gx[px], cx[px], ly[py], gy[py], cy[py])


def average_speeds(data: Trajectories, sp_type: str = "Haversine") -> np.ndarray:
    """Mean speed of each trajectory in km/h (degrees·3600/s for ``Euclidean``), cached.

    As the mobility anonymizer's ``Trajectory.get_avg_speed``: the mean over the n−1 consecutive
    point pairs of (distance / Δt); a pair with Δt = 0 contributes 0 but still counts in n−1; a
    one-point trajectory has speed 0. The sum runs pair by pair in time order (as upstream's loop)
    and is vectorised across trajectories.
    """

    def compute() -> np.ndarray:
        lengths = data.lengths
        steps = np.maximum(lengths - 1, 0)
        owner = np.repeat(np.arange(len(data)), steps)
        step_start = np.concatenate([[0], np.cumsum(steps)[:-1]]) if len(data) else steps
        rank = np.arange(int(steps.sum())) - np.repeat(step_start, steps)
        first = data.offsets[:-1][owner] + rank
        dist = point_distance(data, first, data, first + 1, sp_type)
        dt = (data.t[first + 1] - data.t[first]).astype(np.float64)
        ratio = np.divide(dist, dt, out=np.zeros_like(dist), where=dt != 0)
        # add pair k of every trajectory at once, k = 0, 1, ...: upstream's summation order
        acc = np.zeros(len(data))
        order = np.argsort(rank, kind="stable")
        bounds = np.searchsorted(rank[order], np.arange(int(steps.max(initial=0)) + 1))
        for k in range(len(bounds) - 1):
            sel = order[bounds[k]:bounds[k + 1]]
            acc[owner[sel]] += ratio[sel]
        return np.divide(acc, steps, out=np.zeros_like(acc), where=steps > 0) * 3600

    return data.cached(("avg_speed_kmh", sp_type), compute)


def length_groups(lengths: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """``(length, positions)`` for each distinct value of ``lengths``, ascending."""
    if len(lengths) == 0:
        return []
    order = np.argsort(lengths, kind="stable")
    sorted_lengths = lengths[order]
    starts = np.flatnonzero(np.r_[True, sorted_lengths[1:] != sorted_lengths[:-1]])
    ends = np.r_[starts[1:], len(order)]
    return [(int(sorted_lengths[s]), order[s:e]) for s, e in zip(starts, ends, strict=True)]


def pair_groups(lx: np.ndarray, ly: np.ndarray) -> Iterator[tuple[int, int, np.ndarray]]:
    """For paired lengths ``lx[k], ly[k]``: ``(n1, n2, k positions)`` per distinct length pair."""
    if len(lx) == 0:
        return
    key = lx.astype(np.int64) * (int(ly.max()) + 1) + ly
    for _, pos in length_groups(key):
        yield int(lx[pos[0]]), int(ly[pos[0]]), pos


def chunks(n: int, size: int) -> Iterator[slice]:
    """Consecutive slices of ``range(n)`` with at most ``size`` (≥ 1) items."""
    size = max(int(size), 1)
    for start in range(0, n, size):
        yield slice(start, min(start + size, n))


def resolve(data: Trajectories, index: np.ndarray | None) -> np.ndarray:
    """Trajectory positions: all of them when ``index`` is None, else checked integers."""
    if index is None:
        return np.arange(len(data))
    index = np.asarray(index, dtype=np.int64).reshape(-1)
    if len(index) and (index.min() < 0 or index.max() >= len(data)):
        raise IndexError(f"trajectory positions must be in [0, {len(data)}), got "
                         f"{int(index.min())}..{int(index.max())}")
    return index


def check_points(data: Trajectories, role: str) -> None:
    """Every trajectory needs a point: distances of empty trajectories are undefined."""
    if len(data) and data.lengths.min() < 1:
        bad = data.trajectory_id[int(np.argmin(data.lengths))]
        raise DataError(f"{role} trajectory {bad!r} has no points")
