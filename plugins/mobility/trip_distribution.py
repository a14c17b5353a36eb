"""Jensen–Shannon divergence of trip length, duration and diameter distributions."""

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
from anoneval.plugins.mobility._collective import jsd

R_M = 6_371_008.8  # reference §7
ATTRIBUTES = ("length", "duration", "diameter")


def _hav_m(lat1: np.ndarray, lon1: np.ndarray, lat2: np.ndarray, lon2: np.ndarray) -> np.ndarray:
    p1, p2 = np.radians(lat1), np.radians(lat2)
    a = (np.sin((p2 - p1) / 2) ** 2
         + np.cos(p1) * np.cos(p2) * np.sin(np.radians(lon2 - lon1) / 2) ** 2)
    return R_M * 2 * np.arctan2(np.sqrt(a), np.sqrt(np.maximum(1 - a, 0)))


def trip_features(data: Trajectories) -> dict[str, np.ndarray]:
    """Per trajectory: length (m, Σ consecutive haversine), duration (s), diameter (m)."""
    off = data.offsets
    n = len(data)
    step = np.zeros(data.n_points)
    if data.n_points > 1:
        step[1:] = _hav_m(data.lat[:-1], data.lon[:-1], data.lat[1:], data.lon[1:])
    step[off[:-1][data.lengths > 0]] = 0.0  # no step into a trajectory's first point
    length = np.add.reduceat(step, off[:-1]) if data.n_points else np.zeros(n)
    length = np.where(data.lengths > 0, length, 0.0)
    last = np.maximum(off[1:] - 1, off[:-1])
    duration = np.where(data.lengths > 0, (data.t[last] - data.t[off[:-1]]).astype(float), 0.0)
    return {"length": length, "duration": duration, "diameter": diameters(data)}


def diameters(data: Trajectories) -> np.ndarray:
    """Largest great-circle distance over all point pairs of each trajectory (m).

    The haversine distance grows with the chord between unit vectors, so the farthest pair is
    the one with the smallest dot product: per trajectory, the argmin of X·Xᵀ (batched matrix
    products over trajectories of one length, in blocks of ≤ 2^24 entries); the value is the
    haversine distance of that pair. Rounding of the dot products can pick a pair shorter than
    the farthest by at most ~0.1 m (√(2ε)·R).
    """
    lam, phi = np.radians(data.lon), np.radians(data.lat)
    xyz = np.stack([np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)], 1)
    out = np.zeros(len(data))
    lengths = data.lengths
    for m in np.unique(lengths[lengths > 1]):
        trips = np.flatnonzero(lengths == m)
        per = max(1, (1 << 24) // int(m * m))
        for i in range(0, len(trips), per):
            t = trips[i:i + per]
            pos = data.offsets[t][:, None] + np.arange(m)[None, :]
            x = xyz[pos]  # (g, m, 3)
            flat = np.matmul(x, x.transpose(0, 2, 1)).reshape(len(t), -1).argmin(axis=1)
            a = pos[np.arange(len(t)), flat // m]
            b = pos[np.arange(len(t)), flat % m]
            out[t] = _hav_m(data.lat[a], data.lon[a], data.lat[b], data.lon[b])
    return out


class TripDistribution(LossMeasure):
    """JSD between the original's and the anonymized data's distribution of a trip feature.

    Per trajectory (reference/mobility_semantics.md §7, after AdaTrace, Gursoy et al. 2018,
    "Utility-aware synthesis of differentially private and attack-resilient location traces",
    CCS): length = Σ haversine of consecutive points (R = 6 371 008.8 m), duration = last −
    first timestamp (s), diameter = the largest haversine distance over all point pairs. Each
    side's values go into ``bins`` equal-width bins on [0, max over both sides] (numpy.histogram:
    the last bin closed), normalised; JSD = ½KL(P‖M) + ½KL(Q‖M), M = (P+Q)/2, log base 2 (in
    [0, 1]), 0·log 0 = 0 — the square of scipy's ``jensenshannon(base=2)``. The value is the
    JSD of ``attribute``; the details give all three.
    """

    name = "TripDistribution"
    description = "Jensen–Shannon divergence (base 2) of trip length, duration or diameter."
    accepts = ("trajectories",)
    unit = "bits"

    class Params(Params):
        attribute: Literal["length", "duration", "diameter"] = Field(
            "length", description="Trip feature whose distributions are compared.")
        bins: int = Field(20, ge=1, le=10_000, description="Equal-width bins on [0, max].")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(original, Trajectories) and isinstance(anonymized, Trajectories)
        if not len(original) or not len(anonymized):
            raise DataError("TripDistribution needs trajectories on both sides")
        fo, fa = trip_features(original), trip_features(anonymized)
        details: dict[str, Any] = {"bins": self.params.bins}
        for attr in ATTRIBUTES:
            top = max(float(fo[attr].max()), float(fa[attr].max()))
            if top <= 0:
                details[attr] = 0.0  # every trip is 0 on both sides: identical
                continue
            ho = np.histogram(fo[attr], bins=self.params.bins, range=(0.0, top))[0]
            ha = np.histogram(fa[attr], bins=self.params.bins, range=(0.0, top))[0]
            details[attr] = jsd(ho.astype(float), ha.astype(float))
        return MeasureResult(value=details[self.params.attribute], details=details)
