"""The shared tile and visit layer of the mobility measures: points → tiles → visit table.

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
``kind: "h3"`` uses H3 hexagons instead (:class:`H3Grid`, the optional ``h3`` extra).

Visits: ``"last_point"`` is skmob's visit table as the reference builds it: one visit per
trajectory, at its arrival (last point, its time); ``"points"`` makes every point a visit;
``"stays"`` makes every detected stay a visit (skmob's ``stay_locations``, see ``_stays.py``):
at its median point, at its arrival time. Rows are sorted by (user, time), stable (equal times
keep trajectory-id order).
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from anoneval.core.api import DataError, Trajectories
from anoneval.plugins.mobility._stays import Stays, StaySpec, detect_stays

R_MERCATOR = 6_378_137.0  # EPSG:3857 sphere radius (m)
R_MEAN = 6_371_008.8  # mean Earth radius (m) for the "ground" projection

VisitRule = Literal["last_point", "points", "stays"]
#: The ``visits`` param's description, shared by the measures.
VISITS_HELP = ("last_point: one visit per trajectory at its arrival (skmob's visit table); "
               "points: every point; stays: every stay point (see stays).")
STAYS_HELP = "Stay-point detection of visits: \"stays\" (radius_m, min_duration_s, ...)."


class TileSpec(BaseModel):
    """Tiles: ``{"kind": "square", "size": 500, "projection": ..., "bbox": [...]}`` or
    ``{"kind": "h3", "resolution": 9, "bbox": [...]}``."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    kind: Literal["square", "h3"] = Field("square", description=(
        "square: skmob's squared tessellation; h3: Uber's H3 hexagons (the h3 extra)."))
    size: float = Field(500.0, gt=0, description="Square tile side in projection units.")
    projection: Literal["web_mercator", "ground"] = Field(
        "web_mercator", description="web_mercator: skmob's EPSG:3857 units; ground: true metres.")
    resolution: int | None = Field(None, ge=0, le=15, description=(
        "H3 resolution (kind h3; default 9, edges ≈ 201 m)."))
    bbox: list[float] | None = Field(
        None, description="[lon_min, lat_min, lon_max, lat_max]; default: the data's extent.")

    @model_validator(mode="after")
    def _kind_fields(self) -> TileSpec:
        given = self.model_fields_set
        if self.kind == "square" and "resolution" in given:
            raise ValueError("resolution applies to kind 'h3' only")
        if self.kind == "h3":
            wrong = sorted({"size", "projection"} & given)
            if wrong:
                raise ValueError(f"{', '.join(wrong)} applies to kind 'square' only")
            if importlib.util.find_spec("h3") is None:
                raise ValueError("kind 'h3' needs the h3 package: pip install 'anoneval[h3]'")
        return self

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

    def rank(self, tile: np.ndarray) -> np.ndarray:
        """Position of each tile in (centre lat, centre lng) order (skmob's group-by order)."""
        tile = np.asarray(tile, dtype=np.int64)
        return (tile % self.ny) * self.nx + tile // self.ny

    def describe(self) -> dict[str, Any]:
        return {"kind": "square", "nx": self.nx, "ny": self.ny, "size": self.size,
                "projection": self.projection}

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


def make_grid(spec: TileSpec, *datasets: Trajectories | None) -> Tiling:
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
    if spec.kind == "h3":
        return h3_grid(9 if spec.resolution is None else spec.resolution,
                       (lon0, lat0, lon1, lat1))
    phi0 = math.radians((lat0 + lat1) / 2)
    (x0, x1), (y0, y1) = _project(spec.projection, phi0, np.array([lon0, lon1]),
                                  np.array([lat0, lat1]))
    w, h = (x1 - x0) / spec.size, (y1 - y0) / spec.size
    # skmob: ceil; a box from the data must also hold its extreme points (on the far edge)
    nx = math.floor(w) + 1 if derived else max(math.ceil(w), 1)
    ny = math.floor(h) + 1 if derived else max(math.ceil(h), 1)
    return Grid(spec.projection, float(spec.size), float(x0), float(y0), nx, ny, phi0)


MAX_H3_CELLS = 4_000_000  # cells of an H3 grid: bounds memory and build time


class H3Grid:
    """H3 cells overlapping a bounding box (Uber's hexagonal hierarchical index, Brodsky 2018;
    an aperture-7 discrete global grid, Sahr et al. 2003).

    Tile ids are dense: tile ``k`` is the ``k``-th cell in (centre lat, centre lng) order, so
    the measures' integer tile arithmetic holds; ``cells`` are their H3 indexes. A point gets
    ``h3.latlng_to_cell`` at ``resolution`` (coordinates deduplicated first; the h3 package
    has no array API, so this is one C call per distinct point); points outside the box, or
    in a cell not overlapping it, get -1. Equal when resolution and box are equal.
    """

    projection = "h3"

    def __init__(self, resolution: int, bbox: tuple[float, float, float, float],
                 cells: np.ndarray, lat: np.ndarray, lng: np.ndarray) -> None:
        self.resolution, self.bbox = resolution, bbox
        self.cells, self.lat, self.lng = cells, lat, lng
        self._sorted = np.argsort(cells)
        self.nx, self.ny = len(cells), 1

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, H3Grid) and other.resolution == self.resolution
                and other.bbox == self.bbox)

    def __hash__(self) -> int:
        return hash(("h3", self.resolution, self.bbox))

    @property
    def n_tiles(self) -> int:
        return len(self.cells)

    @property
    def size(self) -> float:
        import h3

        return float(h3.average_hexagon_edge_length(self.resolution, "m"))

    def rank(self, tile: np.ndarray) -> np.ndarray:
        return np.asarray(tile, dtype=np.int64)

    def describe(self) -> dict[str, Any]:
        return {"kind": "h3", "resolution": self.resolution, "cells": self.n_tiles,
                "edge_m": self.size}

    def tile_of(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        """Tile id of each point, -1 outside the box or its cells."""
        from h3.api import numpy_int as h3n

        lon, lat = np.asarray(lon, np.float64), np.asarray(lat, np.float64)
        out = np.full(len(lon), -1, dtype=np.int64)
        lon0, lat0, lon1, lat1 = self.bbox
        inside = (lon >= lon0) & (lon <= lon1) & (lat >= lat0) & (lat <= lat1)
        if not inside.any():
            return out
        # distinct points by hashing (lat, lon) as one complex number (exact equality)
        back, pts = pd.factorize(lat[inside] + 1j * lon[inside])
        res = [self.resolution] * len(pts)
        cell = np.fromiter(map(h3n.latlng_to_cell, pts.real.tolist(), pts.imag.tolist(), res),
                           dtype=np.uint64, count=len(pts))
        pos = np.minimum(np.searchsorted(self.cells, cell, sorter=self._sorted),
                         len(self.cells) - 1)
        found = self.cells[self._sorted[pos]] == cell
        dense = np.where(found, self._sorted[pos], -1)
        out[inside] = dense[back]
        return out

    def centroid(self, tile: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lon, lat)`` of the cells' centres (``h3.cell_to_latlng``)."""
        tile = np.asarray(tile, dtype=np.int64)
        return self.lng[tile], self.lat[tile]


def h3_grid(resolution: int, bbox: tuple[float, float, float, float]) -> H3Grid:
    """The H3 cells at ``resolution`` overlapping ``bbox``, in (centre lat, lng) order."""
    try:
        import h3
        from h3.api import numpy_int as h3n
    except ImportError as exc:  # pragma: no cover - the params validator says it first
        raise DataError("tiles kind 'h3' needs the h3 package: "
                        "pip install 'anoneval[h3]'") from exc
    lon0, lat0, lon1, lat1 = (float(v) for v in bbox)
    area = ((math.radians(lon1 - lon0) * (math.sin(math.radians(lat1))
                                          - math.sin(math.radians(lat0)))) * (R_MEAN / 1e3) ** 2)
    estimate = area / h3.average_hexagon_area(resolution, "km^2")
    if estimate > MAX_H3_CELLS:
        raise DataError(f"tiles: H3 resolution {resolution} needs about {estimate:,.0f} cells "
                        f"for the box {list(bbox)} (at most {MAX_H3_CELLS:,}); lower "
                        "tiles.resolution or narrow tiles.bbox")
    poly = h3.LatLngPoly([(lat0, lon0), (lat0, lon1), (lat1, lon1), (lat1, lon0)])
    cells = np.unique(np.asarray(h3n.polygon_to_cells_experimental(poly, resolution,
                                                                    contain="overlap"),
                                 dtype=np.uint64))
    centre = np.array(list(map(h3n.cell_to_latlng, cells.tolist()))).reshape(-1, 2)
    order = np.lexsort((centre[:, 1], centre[:, 0]))
    return H3Grid(resolution, (lon0, lat0, lon1, lat1), cells[order], centre[order, 0],
                  centre[order, 1])


Tiling = Grid | H3Grid


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


def visit_table(data: Trajectories, grid: Tiling, visits: VisitRule = "last_point",
                stays: StaySpec | None = None) -> VisitTable:
    """The visit table of ``data`` on ``grid`` (cached on the dataset per grid and rule)."""
    spec = (stays or StaySpec()) if visits == "stays" else None
    key = ("mobility_visits", grid, visits, spec)
    return data.cached(key, lambda: _build(data, grid, visits, spec))


def stay_points(data: Trajectories, spec: StaySpec) -> Stays:
    """The stays of ``data`` (cached on the dataset per detection parameters)."""
    return data.cached(("mobility_stays", spec), lambda: detect_stays(data, spec))


def _build(data: Trajectories, grid: Tiling, visits: VisitRule,
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
