"""Time-synchronised spatial distortion: original points against the anonymized position then."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import DataError, Dataset, LossMeasure, MeasureResult, Params, Trajectories
from anoneval.plugins.mobility._pairing import pair_by_id

EARTH_RADIUS_M = 6_371_008.8


def _units(data: Trajectories) -> np.ndarray:
    lat, lon = np.radians(data.lat), np.radians(data.lon)
    c = np.cos(lat)
    return np.stack([c * np.cos(lon), c * np.sin(lon), np.sin(lat)], axis=-1)


class TimeSyncedDistortion(LossMeasure):
    """Distance from each original point to where its anonymized trajectory is at that time.

    For every trajectory id on both sides and every original point (t, p): the anonymized
    position at time t is interpolated between the anonymized points bracketing t, along the
    great circle (slerp) in proportion of time; the distortion is the haversine distance
    (metres, radius 6 371 008.8 m) from p to it. The synchronized Euclidean distance of
    trajectory compression (Meratnia & de By 2004, "Spatiotemporal compression techniques for
    moving point objects", EDBT), applied between a trajectory and its release.

    Conventions: times before the first or after the last anonymized point take that point
    (``outside="clamp"``, counted in ``details.outside``) or are left out (``"skip"``). At
    duplicate anonymized timestamps the last point of that time is used from that time on
    (positions jump there). The value is the mean over all original points (``statistic``:
    ``mean`` or ``max``); details give both and per-trajectory means' median.
    """

    name = "TimeSyncedDistortion"
    description = "Mean distance from original points to the anonymized position at their time."
    accepts = ("trajectories",)
    unit = "metres"

    class Params(Params):
        statistic: Literal["mean", "max"] = Field("mean", description="Summary over points.")
        outside: Literal["clamp", "skip"] = Field(
            "clamp", description="Original times outside the anonymized trajectory's span: "
            "'clamp' to its first/last point, or 'skip' them.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Any) -> MeasureResult:
        if not isinstance(original, Trajectories) or not isinstance(anonymized, Trajectories):
            raise DataError("TimeSyncedDistortion needs trajectories on both sides")
        xi, yi, warnings, counts = pair_by_id(original, anonymized, self.name)
        lx, ly = original.lengths[xi], anonymized.lengths[yi]
        if (ly == 0).any() or (lx == 0).any():
            raise DataError("TimeSyncedDistortion: a paired trajectory has no points")
        # original points of the matched trajectories, with their pair number
        owner = np.repeat(np.arange(len(xi)), lx)
        start = np.repeat(original.offsets[xi], lx)
        rank = np.arange(int(lx.sum())) - np.repeat(np.r_[0, np.cumsum(lx)[:-1]], lx)
        px = start + rank
        t = original.t[px]
        # anonymized points of the pairs, as one sorted key: pair number, then time
        aowner = np.repeat(np.arange(len(yi)), ly)
        astart = np.repeat(anonymized.offsets[yi], ly)
        arank = np.arange(int(ly.sum())) - np.repeat(np.r_[0, np.cumsum(ly)[:-1]], ly)
        pa = astart + arank
        ta = anonymized.t[pa]
        tmin = min(int(t.min()), int(ta.min()))
        span = max(int(t.max()), int(ta.max())) - tmin + 1
        akey = aowner.astype(np.int64) * span + (ta - tmin)
        key = owner.astype(np.int64) * span + (t - tmin)
        first = np.r_[0, np.cumsum(ly)[:-1]][owner]
        last = first + ly[owner] - 1
        right = np.searchsorted(akey, key, side="right")  # first anonymized point after t
        hi = np.clip(right, first, last)
        lo = np.clip(right - 1, first, last)
        outside = (right <= first) | (right > last)
        t0, t1 = ta[lo].astype(np.float64), ta[hi].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            f = np.where(t1 > t0, (t - t0) / (t1 - t0), 0.0)
        f = np.clip(f, 0.0, 1.0)
        ua, uo = _units(anonymized), _units(original)
        a, b = ua[pa[lo]], ua[pa[hi]]
        omega = 2 * np.arcsin(np.minimum(np.linalg.norm(a - b, axis=1) / 2, 1.0))
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.sin(omega)
            wa = np.where(s > 1e-12, np.sin((1 - f) * omega) / s, 1 - f)
            wb = np.where(s > 1e-12, np.sin(f * omega) / s, f)
        pos = wa[:, None] * a + wb[:, None] * b
        pos /= np.linalg.norm(pos, axis=1)[:, None]
        d = 2 * EARTH_RADIUS_M * np.arcsin(np.minimum(np.linalg.norm(uo[px] - pos, axis=1) / 2,
                                                      1.0))
        keep = ~outside if self.params.outside == "skip" else np.ones(len(d), bool)
        if not keep.any():
            raise DataError("TimeSyncedDistortion: no original point falls within the time "
                            "span of its anonymized trajectory (outside='skip')")
        d, owner = d[keep], owner[keep]
        per_traj = np.bincount(owner, d, len(xi)) / np.maximum(np.bincount(owner, None, len(xi)),
                                                                1)
        details = {**counts, "points": int(keep.sum()), "outside": int(outside.sum()),
                   "mean": float(d.mean()), "max": float(d.max()),
                   "median_trajectory_mean": float(np.median(per_traj[np.bincount(
                       owner, None, len(xi)) > 0]))}
        value = details[self.params.statistic]
        return MeasureResult(value=float(value), details=details, warnings=warnings)
