"""The mobility anonymizer's ``ScikitMeasures``: an skmob mean per side, original vs anonymized."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    LossMeasure,
    MeasureResult,
    Params,
    Trajectories,
)
from anoneval.plugins.mobility._tiles import TileSpec, make_grid
from anoneval.plugins.mobility.individual_mobility import haversine_km

Which = Literal["visits_per_location", "distance_straight_line",
                "uncorrelated_location_entropy", "random_location_entropy",
                "mean_square_displacement"]
#: Measures computed on tiles (the others on the raw points).
ON_TILES = ("visits_per_location", "uncorrelated_location_entropy", "random_location_entropy")


class ScikitMeasures(LossMeasure):
    """One of the MobiDataLab anonymizer's ``ScikitMeasures``, averaged on each side.

    The MobiDataLab ``mdl-anonymizer`` (``measures_methods/ScikitMeasures.py``) reports, for
    each of five scikit-mobility 1.3.1 measures, the mean on the original and the mean on the
    anonymized data side by side. Every point counts (its data frame is all points, sorted by
    time; ties keep the input order here). Definitions (reference/mobility_semantics.md §4–§5;
    skmob's haversine, R = 6371.0 km):

    * on square tiles of ``tile_size`` EPSG:3857 units (upstream 250) over the ORIGINAL data's
      extent (the anonymized points mapped onto the same tiles, points outside dropped):
      ``visits_per_location`` = mean over visited tiles of the number of points (skmob
      ``collective.visits_per_location``); ``random_location_entropy`` = mean over tiles of
      log2(#distinct users) (Cho et al. 2011, skmob ``random_location_entropy``);
      ``uncorrelated_location_entropy`` = mean over tiles of −Σ_u p_u ln p_u, p_u the share of
      the tile's points made by user u (natural log, scipy's entropy, unnormalised as upstream
      calls it);
    * on the raw points: ``distance_straight_line`` = mean over users of the summed haversine
      km between a user's consecutive points in time order (skmob individual measure);
      ``mean_square_displacement`` = mean over users of d(r(0), r(t))² in km², r(0) the user's
      first point and r(t) its last point at or before t(0) + ``msd_seconds`` (upstream's
      skmob default 1 h; Brockmann et al. 2006; skmob ``collective.mean_square_displacement``).

    The value is ``|anonymized − original|`` (``compare: "abs_diff"``) or that over
    ``|original|`` (``"rel_diff"``); details keep both sides and upstream's result keys
    (``<measure>_original``/``_anonymized``, rounded to 4 decimals as upstream).
    ``compat: "mdl"`` rounds coordinates to float32 first, as the newer upstream ``to_tdf``
    does (≈ 0.4 m); by default they stay float64. Where skmob's ``within`` join drops a point
    lying exactly on the grid's outer edge (the original's westmost/southmost points), it is
    kept here.
    """

    name = "ScikitMeasures"
    description = ("MobiDataLab's ScikitMeasures: an skmob mean (visits per location, location "
                   "entropies, straight-line distance, MSD) on each side.")
    accepts = ("trajectories",)

    class Params(Params):
        measure: Which = Field("visits_per_location", description="Upstream measure name.")
        tile_size: float = Field(250.0, gt=0, description=(
            "Square tile side, EPSG:3857 units (upstream tesselation_meters, 250)."))
        msd_seconds: float = Field(3600.0, gt=0, description=(
            "mean_square_displacement's time from the reference position (upstream: 1 h)."))
        compare: Literal["abs_diff", "rel_diff"] = Field("abs_diff", description=(
            "abs_diff: |anonymized − original|; rel_diff: that over |original|."))
        compat: Literal["mdl"] | None = Field(None, description=(
            "mdl: float32 coordinates as the newer upstream; null: float64."))

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(original, Trajectories) and isinstance(anonymized, Trajectories)
        p = self.params
        sides = {"original": original, "anonymized": anonymized}
        for side, data in sides.items():
            if data.n_points == 0:
                raise DataError(f"{self.name}: the {side} data has no points")
        grid = make_grid(TileSpec(size=p.tile_size), original) if p.measure in ON_TILES else None
        values: dict[str, float] = {}
        for side, data in sides.items():
            lon, lat = data.lon, data.lat
            if p.compat == "mdl":
                lon = lon.astype(np.float32).astype(np.float64)
                lat = lat.astype(np.float32).astype(np.float64)
            _, ucode = np.unique(data.user_id.astype(str), return_inverse=True)
            user = ucode.ravel()[np.repeat(np.arange(len(data)), data.lengths)]
            if grid is not None:
                tile = grid.tile_of(lon, lat)
                inside = tile >= 0
                if not inside.any():
                    raise DataError(f"{self.name}: no {side} point falls on the original's "
                                    "tiles")
                values[side] = _on_tiles(p.measure, tile[inside], user[inside])
            else:
                values[side] = _on_points(p.measure, user, data.t, lat, lon, p.msd_seconds)
        o, a = values["original"], values["anonymized"]
        diff = abs(a - o)
        if p.compare == "rel_diff":
            if o == 0:
                raise DataError(f"{self.name}: the original {p.measure} is 0; rel_diff is "
                                "undefined (use compare 'abs_diff')")
            diff /= abs(o)
        details: dict[str, Any] = {
            "measure": p.measure, "compare": p.compare, "original": o, "anonymized": a,
            f"{p.measure}_original": round(o, 4), f"{p.measure}_anonymized": round(a, 4),
        }
        if grid is not None:
            details["tiles"] = grid.describe()
        return MeasureResult(value=float(diff), details=details)


def _on_tiles(measure: str, tile: np.ndarray, user: np.ndarray) -> float:
    """Mean over visited tiles of the per-tile measure."""
    tiles, tcode = np.unique(tile, return_inverse=True)
    tcode = tcode.ravel()
    n_tiles = len(tiles)
    if measure == "visits_per_location":
        return float(len(tile) / n_tiles)
    pairs, counts = np.unique(tcode.astype(np.int64) * (int(user.max()) + 1) + user,
                              return_counts=True)
    ptile = pairs // (int(user.max()) + 1)
    if measure == "random_location_entropy":
        return float(np.mean(np.log2(np.bincount(ptile, minlength=n_tiles))))
    total = np.bincount(ptile, weights=counts, minlength=n_tiles)
    share = counts / total[ptile]
    entropy = np.bincount(ptile, weights=-share * np.log(share), minlength=n_tiles)
    return float(np.mean(entropy))


def _on_points(measure: str, user: np.ndarray, t: np.ndarray, lat: np.ndarray,
               lon: np.ndarray, msd_seconds: float) -> float:
    """Mean over users of the straight-line distance or the square displacement."""
    order = np.lexsort((t, user))  # stable: equal times keep the input order
    user, t, lat, lon = user[order], t[order], lat[order], lon[order]
    n_users = int(user.max()) + 1
    starts = np.searchsorted(user, np.arange(n_users))
    has = np.bincount(user, minlength=n_users) > 0
    if measure == "distance_straight_line":
        same = user[1:] == user[:-1]
        jumps = np.where(same, haversine_km(lat[:-1], lon[:-1], lat[1:], lon[1:]), 0.0)
        total = np.bincount(user[1:], weights=jumps, minlength=n_users)
        return float(np.mean(total[has]))
    first = starts[has]
    # the last point of each user with t ≤ t0 + Δ: one search on the (user, time) order
    span = int(t.max() - t.min()) + int(msd_seconds) + 2
    key = user.astype(np.int64) * span + (t - t.min())
    limit = np.flatnonzero(has).astype(np.int64) * span + (t[first] - t.min()) + int(msd_seconds)
    last = np.searchsorted(key, limit, side="right") - 1
    d = haversine_km(lat[first], lon[first], lat[last], lon[last])
    return float(np.mean(d ** 2))
