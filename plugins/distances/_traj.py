"""Shared machinery of the trajectory distances: haversine, per-point caches, length grouping.

All trajectory distances compare two :class:`~anoneval.core.data.kinds.Trajectories` datasets. Their
cost is dominated by point-to-point great-circle distances, so the per-point trigonometry is
cached on each dataset (``Dataset.cached``) and the pair work is vectorised over all pairs of
trajectories that share a pair of lengths: for Martinez2021 the aligned indices depend only on
the two lengths, for DTW and Hausdorff the point-distance tensor has a fixed shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

from anoneval.core.api import DataError, Dataset, Distance, Trajectories, task_threads

T = TypeVar("T")
R = TypeVar("R")
#: Mean Earth radius in km (IUGG), as the ``haversine`` package the mobility anonymizer uses.
EARTH_RADIUS_KM = 6371.0088
#: Elements per temporary array in a chunk (about 4 MB of float64): cache-friendly, bounded.
CHUNK_ELEMENTS = 1 << 19


def as_trajectories(data: Dataset, role: str) -> Trajectories:
    """``data`` as trajectories, or a clear error naming the role and the kind received."""
    if not isinstance(data, Trajectories):
        raise DataError(f"the {role} data must be trajectories, got {data.data_kind}")
    return data


def point_arrays(data: Trajectories) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Latitude and longitude in radians and the cosine of the latitude of every point (cached)."""

    def compute() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lat = np.radians(data.lat)
        return lat, np.radians(data.lon), np.cos(lat)

    return data.cached(("geo_points",), compute)


def times(data: Trajectories) -> np.ndarray:
    """Point times as float64 (exact for epoch seconds), cached."""
    return data.cached(("times_f8",), lambda: data.t.astype(np.float64))


def half_vectors(data: Trajectories) -> np.ndarray:
    """Cartesian unit vectors of the points halved, shape (3, n_points), cached.

    Halving is exact in binary floating point and saves a pass: |u/2 − v/2|² = chord²/4.
    """

    def compute() -> np.ndarray:
        lat, lon, cos_lat = point_arrays(data)
        return 0.5 * np.stack([cos_lat * np.cos(lon), cos_lat * np.sin(lon), np.sin(lat)])

    return data.cached(("half_vectors",), compute)


def chord_haversine(u: np.ndarray, px: np.ndarray, v: np.ndarray, py: np.ndarray,
                    scale: float = 2 * EARTH_RADIUS_KM) -> np.ndarray:
    """``scale`` · asin(chord/2) between points ``px`` of half-vectors ``u`` and ``py`` of ``v``:
    great-circle km with the default scale (2R), metres with 2000·R.

    The haversine term equals a quarter of the squared chord, sin²(Δφ/2) + cos φ1 cos φ2
    sin²(Δλ/2) = |u − v|²/4, which needs no trigonometry per pair, at 40 % less cost. Its
    rounding differs from the haversine formula (``haversine`` package) by ~1e-16 in the unit
    chord: an *absolute* difference below 2e-9 m whatever the distance (measured: ≤ 1.4e-9 m),
    i.e. ~1e-9 relative at 1 m, 1e-11 at 100 m, 1e-12 at 1 km. Neither form is more exact.
    """
    a = u[0][px] - v[0][py]
    a *= a
    for k in (1, 2):
        d = u[k][px] - v[k][py]
        d *= d
        a += d
    np.minimum(a, 1.0, out=a)
    np.sqrt(a, out=a)
    np.arcsin(a, out=a)
    a *= scale
    return a


def haversine_km(lat1: np.ndarray, lon1: np.ndarray, cos1: np.ndarray,
                 lat2: np.ndarray, lon2: np.ndarray, cos2: np.ndarray) -> np.ndarray:
    """Great-circle distance in km between points given in radians (arrays broadcast).

    The haversine formula with the mean Earth radius 6371.0088 km, evaluated in the same order
    as the ``haversine`` package (point 1 first), so results agree to the last bits. Used where
    a distance is computed once per point (speeds, bounding box).
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

    ``Haversine``: great-circle km (chord form, see :func:`chord_haversine`).
    ``Euclidean``: plain distance of (lon, lat) in degrees.
    """
    if sp_type == "Euclidean":
        return np.hypot(y.lon[py] - x.lon[px], y.lat[py] - x.lat[px])
    return chord_haversine(half_vectors(x), px, half_vectors(y), py)


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
        if sp_type == "Haversine":  # the exact formula: computed once per dataset
            lat, lon, cos = point_arrays(data)
            nxt = first + 1
            dist = haversine_km(lat[first], lon[first], cos[first], lat[nxt], lon[nxt], cos[nxt])
        else:
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


def block_chunks(rows: np.ndarray, cols: np.ndarray, depth: int
                 ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Sub-blocks of ``rows × cols`` whose ``depth``-deep tensors hold about CHUNK_ELEMENTS."""
    per_col = max(CHUNK_ELEMENTS // max(depth, 1), 1)
    col_size = min(len(cols), per_col)
    row_size = max(per_col // max(col_size, 1), 1)
    for cs in chunks(len(cols), col_size):
        for rs in chunks(len(rows), row_size):
            yield rows[rs], cols[cs]


#: A piece of pair work: trajectory positions ``rows`` (length n1) × ``cols`` (length n2).
Piece = tuple[np.ndarray, int, np.ndarray, int]


def pair_blocks(groups: list[tuple[int, np.ndarray]], depth: Callable[[int, int], int],
                budget: int) -> list[list[Piece]]:
    """The pairs of length groups ``gi ≤ gj`` (each unordered pair of groups once) cut into
    blocks of about ``budget`` point pairs: a large group pair is split by rows (and columns),
    small ones are packed together. The blocks depend on the data and the budget only."""
    blocks: list[list[Piece]] = []
    current: list[Piece] = []
    filled = 0
    for gi, (n1, rows) in enumerate(groups):
        for n2, cols in groups[gi:]:
            per_pair = max(depth(n1, n2), 1)
            col_size = min(len(cols), max(budget // per_pair, 1))
            row_size = max(budget // (per_pair * col_size), 1)
            for cs in chunks(len(cols), col_size):
                for rs in chunks(len(rows), row_size):
                    cost = (rs.stop - rs.start) * (cs.stop - cs.start) * per_pair
                    if current and filled + cost > budget:
                        blocks.append(current)
                        current, filled = [], 0
                    current.append((rows[rs], n1, cols[cs], n2))
                    filled += cost
    if current:
        blocks.append(current)
    return blocks


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


def workers() -> int:
    """Threads for pair work: the CPUs this process may use (numpy releases the GIL), one
    inside an engine task (the engine spreads the tasks over the cores)."""
    return task_threads()


def parallel_map(fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
    """``map(fn, items)`` on :func:`workers` threads, results in input order (deterministic)."""
    n = workers()
    if n == 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(n) as pool:
        yield from pool.map(fn, items)


class TrajectoryDistance(Distance):
    """Base of the trajectory distances: grouping by length pair, chunking and threads.

    Subclasses implement :meth:`_kernel` for trajectories of fixed lengths ``n1`` and ``n2``:
    ``xa`` and ``yb`` are broadcastable arrays of trajectory positions (``(na, 1)`` and
    ``(1, nb)`` for a block, ``(P,)`` and ``(P,)`` for pairs); it returns their broadcast shape.
    """

    accepts = ("trajectories",)

    def _depth(self, n1: int, n2: int) -> int:
        """Elements of the per-pair temporaries (sizes the chunks)."""
        return n1 * n2

    def _kernel(self, x: Trajectories, xa: np.ndarray, y: Trajectories, yb: np.ndarray,
                n1: int, n2: int) -> np.ndarray:
        raise NotImplementedError

    def _check(self, x: Dataset, y: Dataset) -> tuple[Trajectories, Trajectories]:
        tx, ty = as_trajectories(x, "first"), as_trajectories(y, "second")
        check_points(tx, "first")
        check_points(ty, "second")
        return tx, ty

    def pairwise(self, x: Dataset, y: Dataset, rows: np.ndarray | None = None,
                 cols: np.ndarray | None = None) -> np.ndarray:
        """Distances between trajectories ``rows`` of ``x`` and ``cols`` of ``y`` (a matrix)."""
        tx, ty = self._check(x, y)
        rows, cols = resolve(tx, rows), resolve(ty, cols)
        out = np.empty((len(rows), len(cols)))
        tasks = [(rp, cp, n1, n2)
                 for n1, rpos in length_groups(tx.lengths[rows])
                 for n2, cpos in length_groups(ty.lengths[cols])
                 for rp, cp in block_chunks(rpos, cpos, self._depth(n1, n2))]

        def run(task: tuple[np.ndarray, np.ndarray, int, int]) -> None:
            rp, cp, n1, n2 = task
            out[np.ix_(rp, cp)] = self._kernel(tx, rows[rp][:, None], ty, cols[cp][None, :],
                                               n1, n2)

        for _ in parallel_map(run, tasks):
            pass
        return out

    def paired(self, x: Dataset, y: Dataset, xi: np.ndarray, yi: np.ndarray) -> np.ndarray:
        """Distance between trajectory ``xi[k]`` of ``x`` and ``yi[k]`` of ``y`` for every k."""
        tx, ty = self._check(x, y)
        xi, yi = resolve(tx, xi), resolve(ty, yi)
        if len(xi) != len(yi):
            raise ValueError(f"paired distances need index arrays of equal length, got "
                             f"{len(xi)} and {len(yi)}")
        out = np.empty(len(xi))
        tasks = [(pos[part], n1, n2)
                 for n1, n2, pos in pair_groups(tx.lengths[xi], ty.lengths[yi])
                 for part in chunks(len(pos), CHUNK_ELEMENTS // self._depth(n1, n2))]

        def run(task: tuple[np.ndarray, int, int]) -> None:
            p, n1, n2 = task
            out[p] = self._kernel(tx, xi[p], ty, yi[p], n1, n2)

        for _ in parallel_map(run, tasks):
            pass
        return out
