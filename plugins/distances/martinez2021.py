"""The spatio-temporal trajectory distance of the MobiDataLab mobility anonymizer (Martinez2021)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import Context, DataError, Dataset, Params, Trajectories
from anoneval.plugins.distances._traj import (
    EARTH_RADIUS_KM,
    Piece,
    TrajectoryDistance,
    as_trajectories,
    average_speeds,
    block_chunks,
    check_points,
    chord_haversine,
    half_vectors,
    haversine_km,
    length_groups,
    pair_blocks,
    parallel_map,
    point_distance,
    times,
)

#: Above this many trajectories upstream estimates λ on a random sample (Cochran's formula).
SAMPLE_ABOVE = 10_000
#: Point pairs per block of λ's estimation (about 50 ms of work; chunked inside).
LAMBDA_BLOCK = 1 << 22


@lru_cache(maxsize=4096)
def aligned_indices(n1: int, n2: int) -> tuple[np.ndarray, np.ndarray]:
    """The point indices Martinez2021 compares for trajectories of ``n1`` and ``n2`` points.

    h = round((n1+n2)/2) (half to even, as Python's ``round``); steps g = n/h; index k is
    round(a_k) with a_0 = 0 and a_k = a_{k−1} + g a *running* floating-point sum (``cumsum``
    reproduces it bit for bit), rounded half to even, an index equal to n clamped to n−1.
    """
    h = round((n1 + n2) / 2)
    out = []
    for n in (n1, n2):
        steps = np.full(h, n / h)
        steps[0] = 0.0
        idx = np.rint(np.cumsum(steps)).astype(np.int64)
        np.minimum(idx, n - 1, out=idx)
        idx.flags.writeable = False
        out.append(idx)
    return out[0], out[1]


def sample_size(n: int) -> int:
    """Cochran's sample size with finite-population correction, as upstream (z = 2.576, e = 3 %,
    p = 0.5): ⌊n0 / (1 + n0/n)⌋ with n0 = z²·p(1−p)/e²."""
    n0 = 2.576**2 * 0.25 / 0.03**2
    return int(n0 / (1 + n0 / n))


def lambda_block(shared: tuple[Trajectories, np.ndarray, str], block: list[Piece]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Sums (pairs of different lengths counted twice) and maxima of Sp (m) and Tp over the
    pieces of ``block``; chunks run on :func:`parallel_map`'s threads and add up in order."""
    data, speed, sp_type = shared
    t = times(data)

    def piece(job: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]
              ) -> tuple[np.ndarray, np.ndarray]:
        r, c, i, j, weight = job
        h = len(i)
        px = data.offsets[r][None, :, None] + i[:, None, None]
        py = data.offsets[c][None, None, :] + j[:, None, None]
        s = point_distance(data, px, data, py, sp_type)
        s *= s
        sp = np.sqrt(np.add.reduce(s, axis=0) / h) * 1000
        dt = t[px] - t[py]
        np.abs(dt, out=dt)
        dt *= ((speed[r][:, None] + speed[c][None, :]) / 2)[None]
        dt *= dt
        tp = np.sqrt(np.add.reduce(dt, axis=0) / h)
        return weight * np.array([sp.sum(), tp.sum()]), np.array([sp.max(), tp.max()])

    jobs = []
    for rows, n1, cols, n2 in block:
        i, j = aligned_indices(n1, n2)
        jobs += [(r, c, i, j, 1.0 if n1 == n2 else 2.0) for r, c in block_chunks(rows, cols,
                                                                                  len(i))]
    sums, maxima = np.zeros(2), np.zeros(2)
    for part_sums, part_max in parallel_map(piece, jobs):
        sums += part_sums
        maxima = np.maximum(maxima, part_max)
    return sums, maxima


class Martinez2021(TrajectoryDistance):
    """Spatio-temporal distance between trajectories (Martínez et al. 2021, MobiDataLab).

    Source: the mobility anonymizer's ``distances/trajectory/Martinez2021/Distance.py``
    (mdl-anonymizer, commit c1411a9), described in ``reference/mobility_rappor.md`` §A3.
    For trajectories T1, T2 with n1, n2 points the points ``aligned_indices(n1, n2)`` are paired
    and

        D(T1, T2) = sqrt( (1/h) · Σ_k ( s_k + λ · |t1_{i_k} − t2_{j_k}| · v )² )

    with s_k the haversine distance in metres of the k-th aligned pair (``Euclidean``: the
    distance of (lon, lat) in degrees × 1000), v = (speed(T1) + speed(T2)) / 2 / 3.6 the mean of
    the two trajectories' average speeds in m/s. ``normalized`` divides by ``max_dist``.

    λ (``p_lambda`` null) is fitted on the *original* data, as upstream, over all ordered pairs
    (a, b) of the sample (self-pairs included): λ = mean Sp / mean Tp with Sp = 1000·sqrt(mean_k
    hav_km²) and Tp = sqrt(mean_k (|Δt_k| · v)²), and max_dist = max Sp + λ · max Tp. The sample is
    every trajectory up to 10,000, else a Cochran-sized random sample drawn with the evaluation
    seed (upstream draws it unseeded).

    Upstream quirks kept on purpose (they change the numbers): the half-to-even rounding and the
    running-sum index stepping; the spatial and weighted temporal terms added before squaring;
    and λ fitted with v in km/h but applied with v in m/s, which weights the temporal part 3.6
    times less than "equal mean contributions" (``lambda_units="consistent"`` fits λ with m/s,
    i.e. λ and max_dist use the same units as the distance). Deviation: a given ``max_dist`` is
    used even when λ is estimated (upstream silently replaces it).
    Not a metric: D(T, T) = 0 and D is symmetric, but the triangle inequality can fail.

    Numerics: speeds and the bounding-box max_dist use the haversine formula exactly as the
    ``haversine`` package (R = 6371.0088 km); the point pairs of D and of λ's Sp use its chord
    form (:func:`chord_haversine`), which differs by < 2e-9 m per point pair, so values are not
    bit-identical to upstream's: upstream's test values (λ, D(1,2), D(3,4) with λ = 0.16, the
    normalized D(1,2)) are reproduced to < 1e-13 relative, well inside the 1e-9 the tests
    demand, and in general D agrees to 1e-9 relative when D ≳ 2 m. Record linkage (strict
    ``<``) can pick another nearest original than upstream only when two candidates' distances
    differ by less than ~2e-9 m.
    Speed: pairs are vectorised per length pair (the aligned indices depend only on the two
    lengths), chunked to ~4 MB temporaries and spread over the CPUs.
    """

    name = "Martinez2021"
    description = "Spatio-temporal trajectory distance of the MobiDataLab anonymizer (metres)."
    unit = "metres"

    class Params(Params):
        p_lambda: float | None = Field(
            None, ge=0, description="Weight of the temporal term; null: estimated from the "
            "original data as upstream.")
        max_dist: float | None = Field(
            None, gt=0, description="Divisor of `normalized` distances; null: estimated (with "
            "λ, or from the bounding box and time span when λ is given).")
        normalized: bool = Field(False, description="Divide distances by max_dist.")
        sp_type: Literal["Haversine", "Euclidean"] = Field(
            "Haversine", description="Spatial point distance: great-circle metres, or the plain "
            "distance of (lon, lat) degrees × 1000 (as upstream).")
        lambda_units: Literal["upstream", "consistent"] = Field(
            "upstream", description="'upstream' fits λ with speeds in km/h but applies it in m/s "
            "(reproduces upstream's values); 'consistent' fits it in m/s.")

    def __init__(self, params: Params | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(params, **kwargs)
        self.p_lambda: float | None = self.params.p_lambda
        self.max_dist: float | None = self.params.max_dist
        self.lambda_sample: int | None = None

    # -- fitting ---------------------------------------------------------------------------------

    def fit(self, reference: Dataset, ctx: Context) -> Martinez2021:
        """Estimate λ (and max_dist) on ``reference``, or max_dist alone when only it is needed."""
        data = as_trajectories(reference, "reference")
        check_points(data, "reference")
        if self.params.p_lambda is None:
            sample = data
            if len(data) > SAMPLE_ABOVE:
                keep = ctx.rng().choice(len(data), sample_size(len(data)), replace=False)
                sample = data.subset(np.sort(keep))
            self.lambda_sample = len(sample)
            lam, max_dist = self._estimate_lambda(sample, ctx)
            self.p_lambda = lam
            self.max_dist = self.params.max_dist if self.params.max_dist is not None else max_dist
        elif self.params.normalized and self.params.max_dist is None:
            self.max_dist = self._bbox_max_dist(data)
        return self

    def _estimate_lambda(self, data: Trajectories, ctx: Context) -> tuple[float, float]:
        """λ = mean Sp / mean Tp over all ordered pairs; max_dist = max Sp + λ · max Tp.

        Sp and Tp are symmetric and zero on self-pairs, so each unordered pair of length groups
        is computed once and counted twice. The pairs run as blocks (``ctx.map_blocks``) whose
        sums are added in block order: the same λ on every engine.
        """
        speed = average_speeds(data, self.params.sp_type)
        if self.params.lambda_units == "consistent":
            speed = speed / 3.6
        blocks = pair_blocks(length_groups(data.lengths), self._depth, LAMBDA_BLOCK)
        sums = np.zeros(2)
        maxima = np.zeros(2)
        with ctx.progress(len(blocks), "Martinez2021 λ") as bar:
            for part_sums, part_max in ctx.map_blocks(
                    lambda_block, blocks, (data, speed, self.params.sp_type)):
                sums += part_sums
                maxima = np.maximum(maxima, part_max)
            bar.update(len(blocks))
        if not sums[1] > 0:
            raise DataError(
                "Martinez2021 cannot estimate λ: every temporal distance is 0 (all Δt = 0 within "
                "the trajectories, so all speeds are 0, or a single trajectory); set p_lambda")
        lam = float(sums[0] / sums[1])
        return lam, float(maxima[0] + lam * maxima[1])

    def _bbox_max_dist(self, data: Trajectories) -> float:
        """Upstream's max_dist for a given λ: half the longer bounding-box diagonal (haversine m)
        plus λ · mean speed (m/s) · half the time span."""
        lat = np.radians([data.lat.min(), data.lat.max()])
        lon = np.radians([data.lon.min(), data.lon.max()])
        cos = np.cos(lat)
        d1, d2 = haversine_km(lat[[0, 0]], lon[[0, 1]], cos[[0, 0]], lat[[1, 1]], lon[[1, 0]],
                              cos[[1, 1]])
        half_diag = max(float(d1), float(d2)) * 1000 / 2
        mean_speed = float(average_speeds(data).mean()) / 3.6
        half_span = (int(data.t.max()) - int(data.t.min())) / 2
        assert self.p_lambda is not None
        return half_diag + half_span * mean_speed * self.p_lambda

    def summary(self) -> dict[str, object]:
        """The fitted constants, for reports."""
        return {"p_lambda": self.p_lambda, "max_dist": self.max_dist,
                "lambda_estimated": self.params.p_lambda is None,
                "lambda_sample": self.lambda_sample, "lambda_units": self.params.lambda_units}

    def _require_fitted(self) -> tuple[float, float | None]:
        if self.p_lambda is None:
            raise RuntimeError("Martinez2021 with p_lambda null must be fitted on the original "
                               "data first (fit(reference, ctx))")
        if self.params.normalized and not self.max_dist:
            raise RuntimeError("Martinez2021 normalized needs max_dist: fit it or set max_dist")
        return self.p_lambda, self.max_dist if self.params.normalized else None

    # -- distances -------------------------------------------------------------------------------

    def _depth(self, n1: int, n2: int) -> int:
        return round((n1 + n2) / 2)

    def _kernel(self, x: Trajectories, xa: np.ndarray, y: Trajectories, yb: np.ndarray,
                n1: int, n2: int) -> np.ndarray:
        """D for broadcastable position arrays ``xa``, ``yb``; the sum over aligned points runs
        in order, as upstream's loop."""
        lam, max_dist = self._require_fitted()
        i, j = aligned_indices(n1, n2)
        shape = (len(i),) + (1,) * np.broadcast_shapes(xa.shape, yb.shape).__len__()
        px = x.offsets[xa] + i.reshape(shape)
        py = y.offsets[yb] + j.reshape(shape)
        sp = self.params.sp_type
        if sp == "Haversine":  # metres directly: one pass less
            term = chord_haversine(half_vectors(x), px, half_vectors(y), py,
                                   2000 * EARTH_RADIUS_KM)
        else:
            term = point_distance(x, px, y, py, sp)
            term *= 1000
        weight = (average_speeds(x, sp)[xa] + average_speeds(y, sp)[yb]) / 2 / 3.6 * lam
        dt = times(x)[px] - times(y)[py]
        np.abs(dt, out=dt)
        dt *= weight
        term += dt
        term *= term
        d = np.sqrt(np.add.reduce(term, axis=0) / len(i))
        if max_dist is not None:
            d /= max_dist
        return d
