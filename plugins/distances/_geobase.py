"""Base of the traj-dist family: the ``space`` params and the gathering of point batches.

A subclass implements :meth:`GeoDistance._batch` on a batch of trajectory pairs of fixed
lengths (see :mod:`anoneval.plugins.distances._geodp`); this base gathers the points (unit
vectors on the sphere, (lon, lat) on the plane) and the times, and scales angles to metres.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import Params, Trajectories
from anoneval.plugins.distances import _geojit
from anoneval.plugins.distances._geodp import unit_vectors
from anoneval.plugins.distances._traj import TrajectoryDistance, resolve, workers

#: Mean Earth radius in metres (IUGG), the default of ``earth_radius_m``.
EARTH_RADIUS_M = 6_371_008.8


class SpaceParams(Params):
    """The point distance: haversine metres on the sphere, or Euclidean on the plane."""

    space: Literal["sphere", "plane"] = Field(
        "sphere", description="'sphere': great-circle metres on (lon, lat) degrees; 'plane': "
        "Euclidean distance on the coordinates as given (projected data, degree grids).")
    earth_radius_m: float = Field(
        EARTH_RADIUS_M, gt=0, description="Earth radius in metres for space='sphere' "
        "(traj-dist uses 6378137).")


def _units(data: Trajectories) -> np.ndarray:
    return data.cached(("unit_vectors",), lambda: unit_vectors(data.lon, data.lat))


def _plane(data: Trajectories) -> np.ndarray:
    return data.cached(("plane_xy",), lambda: np.stack([data.lon, data.lat], axis=-1))


class GeoDistance(TrajectoryDistance):
    """A trajectory distance computed from batches of point coordinates (see module doc)."""

    Params = SpaceParams
    #: Whether the result is a length (scaled by the Earth radius on the sphere).
    scaled = True
    #: Whether the batch needs the points' times.
    needs_times = False
    #: Whether the compiled kernel needs the segments' geometry (on the sphere).
    needs_segments = False

    @property
    def sphere(self) -> bool:
        return self.params.space == "sphere"

    unit = "metres"

    @classmethod
    def unit_for(cls, params: Mapping[str, Any]) -> str | None:
        """Metres on the sphere, the coordinates' unit on the plane; None when unitless."""
        if not cls.scaled:
            return None
        return "metres" if params.get("space", "sphere") == "sphere" else "coordinate units"

    def _jit(self) -> tuple[int, float, float, int, np.ndarray | None] | None:
        """(code, eps, window, flag, g) of the compiled kernel, None when there is none."""
        return None

    def _compiled(self, x: Trajectories, xi: np.ndarray, y: Trajectories, yi: np.ndarray
                  ) -> np.ndarray | None:
        """The compiled path (numba installed, ``ANONEVAL_JIT`` not 0), else None."""
        spec = self._jit() if _geojit.KERNELS is not None and _geojit.enabled() else None
        if spec is None:
            return None
        code, eps, window, flag, g = spec
        cx, cy = (_units(x), _units(y)) if self.sphere else (_plane(x), _plane(y))
        tx = x.cached(("times_f8",), lambda: x.t.astype(np.float64))
        ty = y.cached(("times_f8",), lambda: y.t.astype(np.float64))
        gx = gy = None
        if self.sphere and self.needs_segments:
            gx, gy = (d.cached(("segment_geometry",), lambda d=d: _geojit.segment_geometry(
                _units(d))) for d in (x, y))
        out = _geojit.paired(code, cx, tx, x.offsets, xi, cy, ty, y.offsets, yi, self.sphere,
                             eps, window, flag, g, threads=workers(), GX=gx, GY=gy)
        if self.scaled and self.sphere:
            out *= self.params.earth_radius_m
        return out

    def pairwise(self, x, y, rows=None, cols=None) -> np.ndarray:
        """Distances between trajectories ``rows`` of ``x`` and ``cols`` of ``y``."""
        tx, ty = self._check(x, y)
        r, c = resolve(tx, rows), resolve(ty, cols)
        out = self._compiled(tx, np.repeat(r, len(c)), ty, np.tile(c, len(r)))
        if out is None:
            return super().pairwise(x, y, rows, cols)
        return out.reshape(len(r), len(c))

    def paired(self, x, y, xi, yi) -> np.ndarray:
        """Distance between trajectory ``xi[k]`` of ``x`` and ``yi[k]`` of ``y``."""
        tx, ty = self._check(x, y)
        a, b = resolve(tx, xi), resolve(ty, yi)
        if len(a) != len(b):
            return super().paired(x, y, xi, yi)  # its error
        out = self._compiled(tx, a, ty, b)
        return super().paired(x, y, xi, yi) if out is None else out

    def _kernel(self, x: Trajectories, xa: np.ndarray, y: Trajectories, yb: np.ndarray,
                n1: int, n2: int) -> np.ndarray:
        shape = np.broadcast_shapes(np.shape(xa), np.shape(yb))
        ia = np.broadcast_to(xa, shape).reshape(-1)
        ib = np.broadcast_to(yb, shape).reshape(-1)
        px = x.offsets[ia][:, None] + np.arange(n1)
        py = y.offsets[ib][:, None] + np.arange(n2)
        cx, cy = (_units(x), _units(y)) if self.sphere else (_plane(x), _plane(y))
        tx = ty = None
        if self.needs_times:
            tx, ty = x.t[px].astype(np.float64), y.t[py].astype(np.float64)
        out = self._batch(cx[px], cy[py], tx, ty)
        if self.scaled and self.sphere:
            out = out * self.params.earth_radius_m
        return np.asarray(out, dtype=np.float64).reshape(shape)

    def _batch(self, P: np.ndarray, Q: np.ndarray, TP: np.ndarray | None,
               TQ: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError
