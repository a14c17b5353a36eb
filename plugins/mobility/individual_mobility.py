"""Individual mobility measures (skmob's), original against anonymized, per user."""

from __future__ import annotations

import math
import os
from typing import Any, Literal

import numpy as np
from pydantic import Field
from scipy import stats

try:
    import numba
except ImportError:  # pragma: no cover - the Python loop runs instead
    numba = None

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    LossMeasure,
    MeasureResult,
    Params,
    Trajectories,
)
from anoneval.plugins.mobility._collective import home_tiles, jsd
from anoneval.plugins.mobility._tiles import (
    STAYS_HELP,
    VISITS_HELP,
    StaySpec,
    TileSpec,
    Tiling,
    VisitRule,
    VisitTable,
    make_grid,
    user_codes,
    visit_table,
)

R_KM = 6371.0  # skmob gislib.getDistanceByHaversine
LISTS = ("jump_lengths", "waiting_times")
Which = Literal["radius_of_gyration", "k_radius_of_gyration", "number_of_locations",
                "number_of_visits", "distance_straight_line", "maximum_distance",
                "uncorrelated_entropy", "random_entropy", "real_entropy",
                "max_distance_from_home", "jump_lengths", "waiting_times"]


def haversine_km(lat1: np.ndarray, lng1: np.ndarray, lat2: np.ndarray,
                 lng2: np.ndarray) -> np.ndarray:
    """skmob's haversine (R = 6371.0 km, the atan2 form)."""
    p1, p2 = np.radians(lat1), np.radians(lat2)
    a = (np.sin((p2 - p1) / 2) ** 2
         + np.cos(p1) * np.cos(p2) * np.sin(np.radians(lng2 - lng1) / 2) ** 2)
    return R_KM * 2 * np.arctan2(np.sqrt(a), np.sqrt(1 - a))


def lz_entropy(codes: np.ndarray) -> float:
    """skmob's ``_true_entropy`` (Lempel-Ziv estimator, reference §4): n·log2(n) / S."""
    n = len(codes)
    if n < 2:
        return 0.0
    text = "".join(chr(0x100 + int(c)) for c in codes)  # one character per location
    total = 3
    for i in range(1, n - 1):
        j = i + 1
        while j < n and text[i:j] in text[:i]:
            j += 1
        if j == n:
            j = n + 1
        total += j - i
    return n * math.log2(n) / total


def _build_lz():
    @numba.njit(cache=True, nogil=True)
    def lz_all(codes, starts):  # pragma: no cover - compiled
        out = np.zeros(len(starts) - 1)
        for u in range(len(starts) - 1):
            a = starts[u]
            n = starts[u + 1] - a
            if n < 2:
                continue
            total = 3
            for i in range(1, n - 1):
                j = i + 1
                while j < n:
                    length = j - i
                    found = False
                    for s in range(0, i - length + 1):
                        same = True
                        for k in range(length):
                            if codes[a + s + k] != codes[a + i + k]:
                                same = False
                                break
                        if same:
                            found = True
                            break
                    if not found:
                        break
                    j += 1
                if j == n:
                    j = n + 1
                total += j - i
            out[u] = n * math.log2(n) / total
        return out

    return lz_all


_LZ_ALL = _build_lz() if numba is not None else None


def lz_entropies(codes: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """:func:`lz_entropy` of every user's rows ``starts[u]:starts[u+1]`` (compiled with numba,
    the ``fast`` extra, unless ``ANONEVAL_JIT`` is ``0``)."""
    if _LZ_ALL is not None and os.environ.get("ANONEVAL_JIT", "1") != "0":
        return _LZ_ALL(np.ascontiguousarray(codes, dtype=np.int64),
                       np.ascontiguousarray(starts, dtype=np.int64))
    return np.array([lz_entropy(codes[starts[u]:starts[u + 1]])
                     for u in range(len(starts) - 1)])


def per_user(which: str, table: VisitTable, grid: Tiling, k: int) -> list[Any]:
    """The measure for every user code of ``table``, on the tile centres of its visits."""
    lng, lat = grid.centroid(table.tile)
    home = None
    if which == "max_distance_from_home":
        users, tiles = home_tiles(table, grid)
        hlng, hlat = grid.centroid(tiles)
        home = np.full((len(table.users), 2), np.nan)
        home[users] = np.stack([hlat, hlng], 1)
    return user_values(which, table.starts, lat, lng, table.t, table.tile, k, home)


def user_values(which: str, starts: np.ndarray, lat: np.ndarray, lng: np.ndarray,
                t: np.ndarray, loc: np.ndarray, k: int = 2,
                home: np.ndarray | None = None) -> list[Any]:
    """skmob's ``which`` per user: rows sorted by (user, time), user u in
    ``starts[u]:starts[u+1]``, locations ``loc`` (equal code = same place) at (lat, lng);
    ``home`` (lat, lng) per user for max_distance_from_home. NaN ([] for lists) without rows.
    """
    out: list[Any] = []
    n_rows = len(loc)
    if which == "real_entropy":
        lz = lz_entropies(loc, starts)
        return [float(v) if starts[u + 1] > starts[u] else float("nan")
                for u, v in enumerate(lz)]
    uid = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
    same = np.r_[False, uid[1:] == uid[:-1]] if n_rows else np.zeros(0, bool)
    jumps = np.full(n_rows, np.nan)
    waits = np.full(n_rows, np.nan)
    if n_rows > 1:
        jumps[same] = haversine_km(lat[:-1], lng[:-1], lat[1:], lng[1:])[same[1:]]
        waits[same] = np.diff(t)[same[1:]]
    if which in VECTORISED:
        return _vectorised(which, starts, uid, lat, lng, loc, jumps, home)
    for u in range(len(starts) - 1):
        s = slice(starts[u], starts[u + 1])
        n = starts[u + 1] - starts[u]
        if n == 0:
            out.append([] if which in LISTS else float("nan"))
            continue
        if which == "k_radius_of_gyration":
            _, first, counts = np.unique(loc[s], return_index=True, return_counts=True)
            order = np.lexsort((first, -counts))[:k]  # visits desc, earliest first visit
            w = counts[order].astype(np.float64)
            la, ln = lat[s][first[order]], lng[s][first[order]]
            d = haversine_km(la, ln, np.sum(w * la) / w.sum(), np.sum(w * ln) / w.sum())
            out.append(float(np.sqrt(np.sum(w * d ** 2) / w.sum())))
        elif which == "jump_lengths":
            out.append(jumps[s][1:].tolist())
        else:
            out.append(waits[s][1:].tolist())
    return out


VECTORISED = ("number_of_visits", "number_of_locations", "random_entropy",
              "uncorrelated_entropy", "radius_of_gyration", "distance_straight_line",
              "maximum_distance", "max_distance_from_home")


def _vectorised(which: str, starts: np.ndarray, uid: np.ndarray, lat: np.ndarray,
                lng: np.ndarray, loc: np.ndarray, jumps: np.ndarray,
                home: np.ndarray | None) -> list[Any]:
    """The per-user measures that reduce over rows, with group-wise numpy reductions (the
    same definitions as the loop of :func:`user_values`)."""
    n_users = len(starts) - 1
    n = np.diff(starts).astype(np.float64)
    has = n > 0
    out = np.full(n_users, np.nan)
    if which == "number_of_visits":
        out[has] = n[has]
    elif which in ("number_of_locations", "random_entropy", "uncorrelated_entropy"):
        n_loc = int(loc.max()) + 1 if len(loc) else 1
        keys, counts = np.unique(uid.astype(np.int64) * n_loc + loc, return_counts=True)
        owner = keys // n_loc
        distinct = np.bincount(owner, minlength=n_users).astype(np.float64)
        if which == "number_of_locations":
            out[has] = distinct[has]
        elif which == "random_entropy":
            out[has] = np.log2(distinct[has])
        else:
            p = counts / n[owner]
            out[has] = np.bincount(owner, weights=-p * np.log2(p), minlength=n_users)[has]
    elif which == "radius_of_gyration":
        safe = np.maximum(n, 1)
        clat = np.bincount(uid, weights=lat, minlength=n_users) / safe
        clng = np.bincount(uid, weights=lng, minlength=n_users) / safe
        d = haversine_km(lat, lng, clat[uid], clng[uid])
        out[has] = np.sqrt(np.bincount(uid, weights=d ** 2, minlength=n_users)[has] / n[has])
    elif which in ("distance_straight_line", "maximum_distance"):
        ok = np.isfinite(jumps)
        if which == "distance_straight_line":
            out[has] = np.bincount(uid[ok], weights=jumps[ok], minlength=n_users)[has]
        else:
            best = np.full(n_users, -np.inf)
            np.maximum.at(best, uid[ok], jumps[ok])
            out = np.where(np.isfinite(best), best, np.nan)
    else:
        assert home is not None
        d = haversine_km(lat, lng, home[uid, 0], home[uid, 1])
        best = np.full(n_users, -np.inf)
        np.maximum.at(best, uid, d)
        out[has] = best[has]
    return [float(v) for v in out]


class IndividualMobility(LossMeasure):
    """A scikit-mobility individual measure per user, original against anonymized.

    Measures (scikit-mobility 1.3.1 ``skmob/measures/individual.py``; reference/
    mobility_semantics.md §4), on the visit table (locations are tile centres; distances by
    skmob's haversine, R = 6371.0 km, in km): ``radius_of_gyration`` (Gonzalez et al. 2008;
    centre = mean (lat, lng) in degrees), ``k_radius_of_gyration`` (Pappalardo et al. 2015; the
    ``k`` most visited locations, ties by earliest first visit, visit-weighted),
    ``number_of_locations``, ``number_of_visits``, ``distance_straight_line`` (Σ jumps, 0 for
    one visit), ``maximum_distance`` (largest jump, NaN for one visit), ``uncorrelated_entropy``
    and ``random_entropy`` (log 2; Song et al. 2010), ``real_entropy`` (Lempel-Ziv estimator
    n·log2 n / S, skmob's ``_true_entropy``), ``max_distance_from_home`` (home: skmob's night
    location, see ``_collective.home_tiles``), ``jump_lengths`` (km) and ``waiting_times`` (s)
    between consecutive visits.

    Users are paired by ``user_id`` (those on one side only are counted in the details).
    ``compare``: ``mean_abs_diff`` = mean |o − a|; ``mean_rel_diff`` = mean |o − a| / |o| over
    users with o ≠ 0; ``ks`` (two-sample Kolmogorov–Smirnov statistic), ``wasserstein`` (W1)
    and ``jsd`` (Jensen–Shannon divergence, log base 2, of 20 equal bins on [min, max] of both
    sides, numpy.histogram) between the distributions of the values over users. NaN values are
    left out. For ``jump_lengths`` and ``waiting_times`` the distributions pool every value and
    the differences use each user's mean.
    """

    name = "IndividualMobility"
    description = "A scikit-mobility individual measure, original against anonymized, per user."
    accepts = ("trajectories",)

    class Params(Params):
        measure: Which = Field("radius_of_gyration", description="skmob individual measure.")
        k: int = Field(2, ge=1, description="k of k_radius_of_gyration.")
        compare: Literal["mean_abs_diff", "mean_rel_diff", "jsd", "ks", "wasserstein"] = Field(
            "mean_abs_diff", description="How the two sides' values are compared.")
        tiles: TileSpec = Field(default_factory=TileSpec, description="Tiles of the visits.")
        visits: VisitRule = Field("last_point", description=VISITS_HELP)
        stays: StaySpec = Field(default_factory=StaySpec, description=STAYS_HELP)

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(original, Trajectories) and isinstance(anonymized, Trajectories)
        p = self.params
        grid = make_grid(p.tiles, original, anonymized)
        to = visit_table(original, grid, p.visits, p.stays)
        ta = visit_table(anonymized, grid, p.visits, p.stays)
        vo = per_user(p.measure, to, grid, p.k)
        va = per_user(p.measure, ta, grid, p.k)
        pos = user_codes(ta, to.users)
        pairs = [(str(to.users[i]), vo[i], va[j]) for i, j in enumerate(pos) if j >= 0]
        if not pairs:
            raise DataError("IndividualMobility: no user_id is on both sides")
        lists = p.measure in LISTS

        def scalar(v: Any) -> float:
            return float(np.mean(v)) if lists and len(v) else (
                float("nan") if lists else float(v))

        o = np.array([scalar(x) for _, x, _ in pairs])
        a = np.array([scalar(y) for _, _, y in pairs])
        if lists:
            do = np.array([z for _, x, _ in pairs for z in x], dtype=np.float64)
            da = np.array([z for _, _, y in pairs for z in y], dtype=np.float64)
        else:
            do, da = o, a
        do, da = do[np.isfinite(do)], da[np.isfinite(da)]
        ok = np.isfinite(o) & np.isfinite(a)
        if p.compare == "mean_rel_diff":
            ok &= o != 0
        if p.compare in ("mean_abs_diff", "mean_rel_diff") and not ok.any():
            raise DataError(f"IndividualMobility: no user has a finite {p.measure} on both "
                            "sides" + (" (and a non-zero original)" if p.compare ==
                                       "mean_rel_diff" else ""))
        if p.compare == "mean_abs_diff":
            value = float(np.mean(np.abs(o[ok] - a[ok])))
        elif p.compare == "mean_rel_diff":
            value = float(np.mean(np.abs(o[ok] - a[ok]) / np.abs(o[ok])))
        elif not len(do) or not len(da):
            raise DataError(f"IndividualMobility: no finite {p.measure} on one side")
        elif p.compare == "ks":
            value = float(stats.ks_2samp(do, da).statistic)
        elif p.compare == "wasserstein":
            value = float(stats.wasserstein_distance(do, da))
        else:
            lo, hi = min(do.min(), da.min()), max(do.max(), da.max())
            edges = np.linspace(lo, hi if hi > lo else lo + 1, 21)
            value = jsd(np.histogram(do, edges)[0].astype(float),
                        np.histogram(da, edges)[0].astype(float))
        details: dict[str, Any] = {
            "measure": p.measure, "compare": p.compare, "users": len(pairs),
            "original_only": int((pos < 0).sum()),
            "anonymized_only": int(len(ta.users) - (pos >= 0).sum()),
            "mean": {"original": float(np.nanmean(o)) if np.isfinite(o).any() else None,
                     "anonymized": float(np.nanmean(a)) if np.isfinite(a).any() else None},
            "per_user": {u: [_num(x), _num(y)] for u, x, y in pairs},
        }
        return MeasureResult(value=value, details=details)


def _num(v: Any) -> Any:
    if isinstance(v, list):
        return [float(z) for z in v]
    return None if not math.isfinite(v) else float(v)
