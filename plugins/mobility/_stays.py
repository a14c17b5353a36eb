"""Stay-point detection: where a person stayed within ``radius_m`` longer than ``min_duration_s``.

The definition is scikit-mobility 1.3.1's ``preprocessing.detection.stay_locations`` (after
Ramaswamy & Toyama 2004, "Project Lachesis", and Zheng 2015, "Trajectory data mining: an
overview", ACM TIST 6(3); the anchor rule of Li et al. 2008, "Mining user similarity based on
location history", ACM GIS), read as follows on each sequence of time-sorted points (a
trajectory, or with ``scope: "user"`` all of a user's points, as skmob without a trajectory
column):

* an *anchor* starts at the first point; the following points are scanned until the *exit*
  ``q``: the first point farther than ``radius_m`` from the anchor (haversine, R = 6371.0 km,
  strictly ``>``), the last point of the sequence, or a point after a gap of more than
  ``max_gap_s`` seconds from its predecessor (skmob's ``no_data_for_minutes``);
* the points anchor..q−1 form a stay when ``t[q] − t[anchor] > min_duration_s`` (strictly; the
  time of the exit point, skmob's ``leaving_datetime``) and ``q`` is not after a gap (a gap
  discards the open stay: "missing data, not a stop");
* the stay is at the median latitude and the median longitude of anchor..q−1 (numpy median:
  the mean of the two middle values for an even count), arrives at ``t[anchor]`` and leaves at
  ``t[q]``; the exit becomes the next anchor.

skmob's conventions kept on purpose: at the last point of a sequence the open stay ends even
when that point is inside the radius, and that last point is not part of the median; a
one-point sequence has no stay. skmob's ``min_speed_kmh`` trimming (off by default) is not
offered.

The chain of anchors is sequential; it runs as a compiled loop when numba (the ``fast`` extra)
is installed (and ``ANONEVAL_JIT`` is not ``0``), else vectorised over all sequences at once:
each round moves every sequence's anchor to its exit, found by scanning growing blocks of the
following points with numpy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from anoneval.core.api import Trajectories

try:
    import numba
except ImportError:  # pragma: no cover - the numpy path runs instead
    numba = None

R_KM = 6371.0  # skmob gislib.earthradius


class StaySpec(BaseModel):
    """Stay-point detection parameters (``visits: "stays"``)."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)
    radius_m: float = Field(200.0, gt=0, description=(
        "Radius around the anchor point (skmob's spatial_radius_km × 1000; default 0.2 km)."))
    min_duration_s: float = Field(1200.0, ge=0, description=(
        "A stay lasts strictly longer (skmob's minutes_for_a_stop × 60; default 20 min)."))
    max_gap_s: float | None = Field(None, gt=0, description=(
        "A gap longer than this between two points discards the open stay (skmob's "
        "no_data_for_minutes × 60); null: no limit."))
    scope: Literal["trajectory", "user"] = Field("trajectory", description=(
        "trajectory: stays inside each trajectory (skmob with a trajectory column); user: over "
        "all of a user's points in time order."))


@dataclass(frozen=True)
class Stays:
    """Detected stays: trajectory index (of the anchor), median lon/lat, arrival and leaving."""

    traj: np.ndarray
    lon: np.ndarray
    lat: np.ndarray
    arrive: np.ndarray
    leave: np.ndarray

    def __len__(self) -> int:
        return len(self.traj)


def detect_stays(data: Trajectories, spec: StaySpec, jit: bool | None = None) -> Stays:
    """The stays of ``data`` (see the module docstring), ordered by sequence and time."""
    n = data.n_points
    traj_of = np.repeat(np.arange(len(data)), data.lengths)
    if spec.scope == "user":
        _, ucode = np.unique(data.user_id.astype(str), return_inverse=True)
        seq = ucode.ravel()[traj_of]
        order = np.lexsort((traj_of, data.t, seq))  # stable: equal times keep trajectory order
        seq = seq[order]
    else:
        order = np.arange(n)
        seq = traj_of
    lon, lat, t = data.lon[order], data.lat[order], data.t[order]
    # last index of each point's sequence
    new = np.r_[True, seq[1:] != seq[:-1]] if n else np.zeros(0, bool)
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], n] - 1
    end = np.repeat(ends, np.diff(np.r_[starts, n]))
    gap = np.zeros(n, bool)
    if spec.max_gap_s is not None and n > 1:
        gap[1:] = (np.diff(t) > spec.max_gap_s) & ~new[1:]
    radius_km = spec.radius_m / 1000.0
    use_jit = jit if jit is not None else (numba is not None
                                           and os.environ.get("ANONEVAL_JIT", "1") != "0")
    if use_jit and _KERNEL is not None:
        a, q = _KERNEL(np.radians(lat), np.radians(lon), t, starts, ends, gap, radius_km,
                       float(spec.min_duration_s))
    else:
        a, q = _chain_numpy(np.radians(lat), np.radians(lon), t, starts, end, gap, radius_km,
                            float(spec.min_duration_s))
    mlat, mlon = _segment_medians(lat, lon, a, q)
    return Stays(traj_of[order][a], mlon, mlat, t[a], t[q])


def _haversine(p1: np.ndarray, l1: np.ndarray, p2: np.ndarray, l2: np.ndarray) -> np.ndarray:
    a = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin((l2 - l1) / 2) ** 2
    return R_KM * 2 * np.arctan2(np.sqrt(a), np.sqrt(1 - a))


def _chain_numpy(phi: np.ndarray, lam: np.ndarray, t: np.ndarray, starts: np.ndarray,
                 end: np.ndarray, gap: np.ndarray, radius_km: float,
                 min_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Stays as (anchor, exit) index pairs: every sequence's anchor advances once per round."""
    out_a, out_q = [], []
    anchor = starts[end[starts] > starts] if len(starts) else starts
    while len(anchor):
        last = end[anchor]
        exit_ = np.full(len(anchor), -1, dtype=np.int64)
        base = anchor.copy()
        pending = np.arange(len(anchor))
        width = 8
        while len(pending):
            q = base[pending, None] + np.arange(1, width + 1)
            lp = last[pending, None]
            valid = q <= lp
            q = np.minimum(q, lp)
            ap = anchor[pending, None]
            hit = valid & (gap[q] | (q == lp)
                           | (_haversine(phi[ap], lam[ap], phi[q], lam[q]) > radius_km))
            found = hit.any(axis=1)
            first = np.argmax(hit, axis=1)
            exit_[pending[found]] = q[found, first[found]]
            base[pending[~found]] += width
            pending = pending[~found]
            width = min(width * 2, 1 << 12)
        stay = ~gap[exit_] & ((t[exit_] - t[anchor]) > min_s)
        out_a.append(anchor[stay])
        out_q.append(exit_[stay])
        anchor = exit_[exit_ < last]
    if not out_a:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    a, q = np.concatenate(out_a), np.concatenate(out_q)
    o = np.argsort(a, kind="stable")
    return a[o], q[o]


def _segment_medians(lat: np.ndarray, lon: np.ndarray, a: np.ndarray,
                     q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Median lat and lon of the points a[i]..q[i]−1 of each stay (numpy's median rule)."""
    n = q - a
    if not len(n):
        return np.zeros(0), np.zeros(0)
    seg = np.repeat(np.arange(len(n)), n)
    pos = np.repeat(a - np.r_[0, np.cumsum(n)[:-1]], n) + np.arange(n.sum())
    first = np.r_[0, np.cumsum(n)[:-1]]
    lo, hi = first + (n - 1) // 2, first + n // 2
    out = []
    for v in (lat, lon):
        s = v[pos][np.lexsort((v[pos], seg))]
        out.append((s[lo] + s[hi]) / 2)
    return out[0], out[1]


def _build():
    @numba.njit(cache=True, nogil=True)
    def chain(phi, lam, t, starts, ends, gap, radius_km, min_s):  # pragma: no cover - compiled
        a_out = np.empty(len(t), np.int64)
        q_out = np.empty(len(t), np.int64)
        m = 0
        for s in range(len(starts)):
            a = starts[s]
            last = ends[s]
            q = a + 1
            while q <= last:
                far = False
                if not gap[q] and q < last:
                    h = (np.sin((phi[q] - phi[a]) / 2) ** 2 + np.cos(phi[a]) * np.cos(phi[q])
                         * np.sin((lam[q] - lam[a]) / 2) ** 2)
                    far = R_KM * 2 * np.arctan2(np.sqrt(h), np.sqrt(1 - h)) > radius_km
                if gap[q] or q == last or far:
                    if not gap[q] and t[q] - t[a] > min_s:
                        a_out[m] = a
                        q_out[m] = q
                        m += 1
                    a = q
                q += 1
        return a_out[:m].copy(), q_out[:m].copy()

    return chain


_KERNEL = _build() if numba is not None else None
