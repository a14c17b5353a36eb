"""Python API of the trajectory distances: one pair of point arrays, or a blockwise matrix.

``trajectory_distance("Frechet", a, b)`` compares two trajectories given as point arrays
(``[[lon, lat], ...]`` or ``[[lon, lat, t], ...]``) or frames with ``lon``, ``lat`` and
optionally ``timestamp`` columns; ``trajectory_distances("DTW", A, B)`` returns the matrix
between two :class:`~anoneval.core.data.Trajectories` sets, computed in row blocks so memory
stays bounded by the output plus one block's temporaries.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from anoneval.core.api import ConfigError, Context, DataError, Distance, Trajectories
from anoneval.registry import Registry, build_registry

#: Rows of the matrix computed per block (bounds the temporaries of one block).
BLOCK_ROWS = 256


@functools.lru_cache(maxsize=1)
def _registry() -> Registry:
    """The built-in and installed plugins, built once per process."""
    return build_registry()


def _distance(name: str, params: dict[str, Any]) -> Distance:
    try:
        distance = _registry().create("distance", name, params or None)
    except ValidationError as exc:
        raise ConfigError((f"{name}.params.{'.'.join(map(str, e['loc']))}", e["msg"])
                          for e in exc.errors()) from None
    if not isinstance(distance, Distance) or "trajectories" not in distance.accepts:
        raise DataError(f"{name} is not a trajectory distance")
    return distance


def _points(points: Any, role: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(lon, lat, t or None) of one trajectory, checked (finite, in range, non-empty)."""
    if isinstance(points, pd.DataFrame):
        missing = [c for c in ("lon", "lat") if c not in points.columns]
        if missing:
            raise DataError(f"trajectory {role}: missing column(s) {missing}; a frame needs "
                            "'lon' and 'lat' (and optionally 'timestamp', epoch seconds)")
        frame = points
        t = None
        if "timestamp" in frame.columns:
            frame = frame.sort_values("timestamp", kind="stable")  # ties keep their order
            t = pd.to_numeric(frame["timestamp"], errors="coerce").to_numpy(np.float64)
        arr = np.column_stack([frame["lon"].to_numpy(np.float64),
                               frame["lat"].to_numpy(np.float64)])
    else:
        arr = np.asarray(points, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] not in (2, 3):
            raise DataError(f"trajectory {role} must be an array of [lon, lat] or "
                            f"[lon, lat, t] rows, got shape {arr.shape}")
        t = arr[:, 2] if arr.shape[1] == 3 else None
        arr = arr[:, :2]
    if len(arr) == 0:
        raise DataError(f"trajectory {role} has no points")
    bad = ~np.isfinite(arr).all(axis=1)
    if t is not None:
        bad |= ~np.isfinite(t)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(f"trajectory {role}, point {row}: non-finite coordinate or time "
                        f"{arr[row].tolist()}")
    return arr[:, 0], arr[:, 1], t


def _as_trajectories(lon: np.ndarray, lat: np.ndarray, t: np.ndarray | None,
                     role: str) -> Trajectories:
    times = np.zeros(len(lon), np.int64) if t is None else np.round(t).astype(np.int64)
    return Trajectories(np.array([role]), np.array([role]), np.array([0, len(lon)]), lon, lat,
                        times, source=role)


def _check_sphere(distance: Distance, data: Trajectories, role: str) -> None:
    if getattr(distance.params, "space", None) != "sphere":
        return
    bad = (np.abs(data.lat) > 90) | (np.abs(data.lon) > 180)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(f"{role}: point {row} (lon={data.lon[row]}, lat={data.lat[row]}) is "
                        "out of range for space='sphere' (|lon| <= 180, |lat| <= 90); use "
                        "space='plane' for projected coordinates")


def trajectory_distance(name: str, a: Any, b: Any, **params: Any) -> float:
    """Distance ``name`` (a distance plugin: ``"SSPD"``, ``"Frechet"``, ``"DTW"``, ...)
    between two trajectories, with the plugin's ``params``.

    ``a`` and ``b``: arrays of ``[lon, lat]`` or ``[lon, lat, t]`` rows in time order, or
    frames with ``lon``, ``lat`` and optionally ``timestamp`` (epoch seconds; sorted stably, so
    duplicate timestamps keep their given order). A time window (LCSS ``delta_s``) needs times.

    >>> import anoneval
    >>> anoneval.trajectory_distance("Frechet", [[0, 0], [10, 0]],
    ...                              [[0, 1], [8, 1], [2, 1], [10, 1]], space="plane")
    3.1622776601...
    """
    distance = _distance(name, params)
    sides = []
    for role, pts in (("a", a), ("b", b)):
        lon, lat, t = _points(pts, role)
        if t is None and getattr(distance.params, "delta_s", None) is not None:
            raise DataError(f"{name}: delta_s (a time window) needs timestamps; trajectory "
                            f"{role} has none (give [lon, lat, t] rows or a 'timestamp' column)")
        data = _as_trajectories(lon, lat, t, role)
        _check_sphere(distance, data, f"trajectory {role}")
        sides.append(data)
    distance.fit(sides[0], Context())
    return float(distance.pairwise(sides[0], sides[1])[0, 0])


def trajectory_distances(name: str, A: Trajectories, B: Trajectories | None = None, *,
                         block_rows: int = BLOCK_ROWS, **params: Any) -> np.ndarray:
    """The matrix of distance ``name`` between every trajectory of ``A`` (rows) and of ``B``
    (columns; ``A`` itself when None), in ``A``'s and ``B``'s trajectory order.

    Computed ``block_rows`` rows at a time (each block grouped by length pair and vectorised,
    on the process's cores), so memory is the output plus one block's temporaries.

    >>> import anoneval
    >>> trips = anoneval.load("trips.csv", kind="trajectories")  # doctest: +SKIP
    >>> m = anoneval.trajectory_distances("SSPD", trips)          # doctest: +SKIP
    """
    B = A if B is None else B
    for role, data in (("A", A), ("B", B)):
        if not isinstance(data, Trajectories):
            raise DataError(f"{role} must be Trajectories (anoneval.load(..., "
                            f"kind='trajectories')), got {type(data).__name__}")
        if len(data) == 0:
            raise DataError(f"{role} has no trajectories")
    distance = _distance(name, params)
    for role, data in (("A", A), ("B", B)):
        _check_sphere(distance, data, role)
    if block_rows < 1:
        raise ValueError(f"block_rows must be >= 1, got {block_rows}")
    distance.fit(A, Context())
    out = np.empty((len(A), len(B)))
    for start in range(0, len(A), block_rows):
        rows = np.arange(start, min(start + block_rows, len(A)))
        out[rows] = distance.pairwise(A, B, rows=rows)
    return out
