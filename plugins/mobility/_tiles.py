"""The shared tile and visit layer of the mobility measures: points → square tiles → visit table.

One visit table per dataset, tile grid and visit rule, cached on the dataset, so every attack and
utility measure of a run reads the same table (reference/mobility_semantics.md §1).

Tiles are scikit-mobility's squared tessellation (``SquaredTessellationTiler``): the bounding box
``[lon_min, lat_min, lon_max, lat_max]`` is projected to EPSG:3857 (spherical Web Mercator,
R = 6 378 137 m), cut into ``ceil(width/size) × ceil(height/size)`` squares of ``size`` units,
and square ``(i, j)`` gets the id ``i·ny + j`` (x outer, y inner). A point falls in tile
``(floor((X − Xmin)/size), floor((Y − Ymin)/size))``; points outside the grid are dropped and
counted. A Web Mercator unit is ``cos φ`` ground metres (a 500-unit tile is ≈ 329 m at
48.86° N); ``projection: "ground"`` uses true metres instead (local equirectangular projection
about the box's central latitude, R = 6 371 008.8 m). A point exactly on an inner tile edge
belongs to the tile above/right of it (skmob's ``within`` join drops it: a measure-zero case).
Without ``bbox`` the box is the union of the given datasets' points, so both sides share a grid.

Visits: ``"last_point"`` is skmob's visit table as the reference builds it: one visit per
trajectory, at its arrival (last point, its time); ``"points"`` makes every point a visit;
``"stays"`` makes every detected stay a visit (skmob's ``stay_locations``, see ``_stays.py``):
at its median point, at its arrival time. Rows are sorted by (user, time), stable (equal times
keep trajectory-id order).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator

from anoneval.core.api import DataError, Trajectories
from anoneval.plugins.mobility._stays import StaySpec, detect_stays

R_MERCATOR = 6_378_137.0  # EPSG:3857 sphere radius (m)
R_MEAN = 6_371_008.8  # mean Earth radius (m) for the "ground" projection

VisitRule = Literal["last_point", "points", "stays"]
#: The ``visits`` param's description, shared by the measures.
VISITS_HELP = ("last_point: one visit per trajectory at its arrival (skmob's visit table); "
               "points: every point; stays: every stay point (see stays).")
STAYS_HELP = "Stay-point detection of visits: \"stays\" (radius_m, min_duration_s, ...)."


class TileSpec(BaseModel):
    """Square tiles: ``{"kind": "square", "size": 500, "projection": ..., "bbox": [...]}``."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    kind: Literal["square"] = Field("square", description="Tessellation: square tiles.")
    size: float = Field(500.0, gt=0, description="Tile side in projection units (metres).")
    projection: Literal["web_mercator", "ground"] = Field(
        "web_mercator", description="web_mercator: skmob's EPSG:3857 units; ground: true metres.")
    bbox: list[float] | None = Field(
        None, description="[lon_min, lat_min, lon_max, lat_max]; default: the data's extent.")

    @field_validator("bbox")
    @classmethod
    def _box(cls, bbox: list[float] | None) -> list[float] | None:
        if bbox is None:
            return None
        if len(bbox) != 4:
            raise ValueError("bbox must be [lon_min, lat_min, lon_max, lat_max]")
        lon0, lat0, lon1, lat1 = bbox
        if not (-180 <= lon0 < lon1 <= 180 and -85.05 < lat0 < lat1 < 85.05):
            raise ValueError("bbox needs lon_min < lon_max in [-180, 180] and "
                             "lat_min < lat_max inside (-85.05, 85.05)")
        return bbox


@dataclass(frozen=True)
class Grid:
    """A square grid: origin, tile side, tile counts and the projection."""

    projection: str
    size: float
    x0: float
    y0: float
    nx: int
    ny: int
    phi0: float  # central latitude (radians) of the "ground" projection

    @property
    def n_tiles(self) -> int:
        return self.nx * self.ny

    def project(self, lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _project(self.projection, self.phi0, lon, lat)

    def tile_of(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        """Tile id of each point, -1 outside the grid."""
        x, y = self.project(lon, lat)
        i = np.floor((x - self.x0) / self.size)
        j = np.floor((y - self.y0) / self.size)
        inside = (i >= 0) & (i < self.nx) & (j >= 0) & (j < self.ny)
        return np.where(inside, i * self.ny + j, -1).astype(np.int64)

    def centroid(self, tile: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lon, lat)`` of tile centres (the inverse projection of the square's centre)."""
        tile = np.asarray(tile, dtype=np.int64)
        x = self.x0 + (tile // self.ny + 0.5) * self.size
        y = self.y0 + (tile % self.ny + 0.5) * self.size
        if self.projection == "web_mercator":
            return (np.degrees(x / R_MERCATOR),
                    np.degrees(2 * np.arctan(np.exp(y / R_MERCATOR)) - np.pi / 2))
        return np.degrees(x / (R_MEAN * math.cos(self.phi0))), np.degrees(y / R_MEAN)


def _project(projection: str, phi0: float, lon: np.ndarray,
             lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lam, phi = np.radians(lon), np.radians(lat)
    if projection == "web_mercator":
        return R_MERCATOR * lam, R_MERCATOR * np.log(np.tan(np.pi / 4 + phi / 2))
    return R_MEAN * lam * math.cos(phi0), R_MEAN * phi


def make_grid(spec: TileSpec, *datasets: Trajectories | None) -> Grid:
    """The grid of ``spec``; without a bbox, the union extent of the given datasets."""
    data = [d for d in datasets if d is not None and d.n_points]
    if spec.bbox is not None:
        lon0, lat0, lon1, lat1 = spec.bbox
        derived = False
    else:
        if not data:
            raise DataError("no points to build tiles from (and no tiles.bbox given)")
        lon0 = min(float(d.lon.min()) for d in data)
        lon1 = max(float(d.lon.max()) for d in data)
        lat0 = min(float(d.lat.min()) for d in data)
        lat1 = max(float(d.lat.max()) for d in data)
        derived = True
    phi0 = math.radians((lat0 + lat1) / 2)
    (x0, x1), (y0, y1) = _project(spec.projection, phi0, np.array([lon0, lon1]),
                                  np.array([lat0, lat1]))
    w, h = (x1 - x0) / spec.size, (y1 - y0) / spec.size
    # skmob: ceil; a box from the data must also hold its extreme points (on the far edge)
    nx = math.floor(w) + 1 if derived else max(math.ceil(w), 1)
    ny = math.floor(h) + 1 if derived else max(math.ceil(h), 1)
    return Grid(spec.projection, float(spec.size), float(x0), float(y0), nx, ny, phi0)


@dataclass(frozen=True)
class VisitTable:
    """Visits sorted by (user, time): user code, time (epoch s), tile id, trajectory position.

    ``users`` holds the user ids (code ``c`` is ``users[c]``); ``starts`` the first row of each
    user code (length ``len(users) + 1``); ``dropped`` the visits outside the grid.
    """

    users: np.ndarray
    uid: np.ndarray
    t: np.ndarray
    tile: np.ndarray
    traj: np.ndarray
    starts: np.ndarray
    dropped: int

    def __len__(self) -> int:
        return len(self.uid)


def visit_table(data: Trajectories, grid: Grid, visits: VisitRule = "last_point",
                stays: StaySpec | None = None) -> VisitTable:
    """The visit table of ``data`` on ``grid`` (cached on the dataset per grid and rule)."""
    spec = (stays or StaySpec()) if visits == "stays" else None
    key = ("mobility_visits", grid, visits, spec)
    return data.cached(key, lambda: _build(data, grid, visits, spec))


def stay_points(data: Trajectories, spec: StaySpec) -> Any:
    """The stays of ``data`` (cached on the dataset per detection parameters)."""
    return data.cached(("mobility_stays", spec), lambda: detect_stays(data, spec))


def _build(data: Trajectories, grid: Grid, visits: VisitRule,
           spec: StaySpec | None) -> VisitTable:
    if len(data) == 0 or data.n_points == 0:
        raise DataError("the trajectory data has no points")
    lengths = data.lengths
    if visits == "stays":
        assert spec is not None
        found = stay_points(data, spec)
        traj, lon, lat, t = found.traj, found.lon, found.lat, found.arrive
    else:
        if visits == "last_point":
            keep = lengths > 0
            pos = data.offsets[1:][keep] - 1
            traj = np.flatnonzero(keep)
        else:
            pos = np.arange(data.n_points)
            traj = np.repeat(np.arange(len(data)), lengths)
        lon, lat, t = data.lon[pos], data.lat[pos], data.t[pos]
    tile = grid.tile_of(lon, lat)
    inside = tile >= 0
    users, ucode = np.unique(data.user_id.astype(str), return_inverse=True)
    uid = ucode.ravel()[traj][inside]
    t = t[inside]
    traj = traj[inside]
    order = np.lexsort((traj, t, uid))
    uid = uid[order]
    starts = np.searchsorted(uid, np.arange(len(users) + 1))
    return VisitTable(users, uid, t[order], tile[inside][order], traj[order], starts,
                      int((~inside).sum()))


def user_codes(table: VisitTable, users: np.ndarray) -> np.ndarray:
    """Code of each of ``users`` in ``table`` (-1 where the table lacks the user)."""
    index = pd.Index(table.users)
    return index.get_indexer(pd.Index(users)).astype(np.int64)
