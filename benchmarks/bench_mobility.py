"""Benchmark: Martinez2021 λ estimation plus record linkage (issue 5).

    python benchmarks/bench_mobility.py [--quick]

Cases (synthetic taxi-like trajectories in San Francisco, about 14 points each, anonymized by
~350 m of noise and a time shift of up to 10 min):

1. λ + exhaustive linkage of 1,200 trajectories: target < 1.5 s and ≥ 90× faster than upstream
   (the "ok" column checks both; the speed-up is not checked at ``--quick`` sizes).
2. λ + linkage of 10,000 trajectories (a day of taxi traffic) with upstream's default window
   (w = 100) and exhaustively: target < 60 s and peak memory < 2 GB.

Each case runs in a child process so that its peak memory (max RSS) is its own. The baseline is
a naive per-pair pure-Python implementation of upstream's algorithm (location objects, the
``haversine`` formula with ``math``, speeds recomputed inside every pair call, as upstream),
timed on a subset of the trajectories IN THE SAME RUN and extrapolated linearly in the number of
pairs; it is an estimate, not a full run. ``--quick`` runs small sizes in a few seconds.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import resource
import subprocess
import sys
import time
from bisect import bisect_left

import numpy as np

from anoneval.core import Evaluator
from anoneval.core.api import Context, Trajectories
from anoneval.plugins.distances.martinez2021 import Martinez2021

R_KM = 6371.0088


def taxi_like(n: int, seed: int, mean_points: int = 14) -> tuple[Trajectories, Trajectories]:
    """n trajectories (original, anonymized) with about ``mean_points`` points each."""
    rng = np.random.default_rng(seed)
    lengths = np.maximum(rng.poisson(mean_points - 1, n) + 1, 1)
    offsets = np.r_[0, np.cumsum(lengths)]
    p = int(offsets[-1])
    first = offsets[:-1]
    dt = rng.integers(20, 90, p)
    dt[first] = 0
    t = np.repeat(rng.integers(1_212_000_000, 1_212_000_000 + 86_400, n), lengths)
    t = t + np.cumsum(dt) - np.repeat(np.cumsum(dt)[first], lengths)
    step_lon = rng.normal(0, 0.0015, p)
    step_lat = rng.normal(0, 0.0012, p)
    step_lon[first] = step_lat[first] = 0
    walk_lon = np.cumsum(step_lon) - np.repeat(np.cumsum(step_lon)[first], lengths)
    walk_lat = np.cumsum(step_lat) - np.repeat(np.cumsum(step_lat)[first], lengths)
    lon = np.repeat(rng.uniform(-122.50, -122.38, n), lengths) + walk_lon
    lat = np.repeat(rng.uniform(37.70, 37.81, n), lengths) + walk_lat
    ids = np.arange(n) + 1
    orig = Trajectories(ids, ids, offsets, lon, lat, t)
    anon = Trajectories(ids, ids, offsets, lon + rng.normal(0, 0.004, p),
                        lat + rng.normal(0, 0.003, p), t + rng.integers(-600, 600, n).repeat(
                            lengths))
    return orig, anon


# -- naive baseline: upstream's algorithm, one pair at a time ---------------------------------


class Loc:
    def __init__(self, t: int, x: float, y: float) -> None:
        self.timestamp, self.x, self.y = t, x, y

    def spatial(self, o: Loc) -> float:
        lat1, lng1, lat2, lng2 = map(math.radians, (self.y, self.x, o.y, o.x))
        d = math.sin((lat2 - lat1) * 0.5) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin(
            (lng2 - lng1) * 0.5) ** 2
        return 2 * R_KM * math.asin(math.sqrt(d))


def as_objects(data: Trajectories, count: int) -> list[list[Loc]]:
    out = []
    for i in range(count):
        lon, lat, t = data.points(i)
        out.append([Loc(int(a), float(b), float(c)) for a, b, c in zip(t, lon, lat,
                                                                       strict=True)])
    return out


def naive_speed(locs: list[Loc]) -> float:
    s = 0.0
    for a, b in itertools.pairwise(locs):
        dt = abs(b.timestamp - a.timestamp)
        s += a.spatial(b) / dt if dt else 0.0
    return s / (len(locs) - 1) * 3600 if len(locs) > 1 else 0.0


def naive_pair(t1: list[Loc], t2: list[Loc], lam: float | None) -> tuple[float, float]:
    """(Sp, Tp) when lam is None (λ estimation), else (D, 0)."""
    v = (naive_speed(t1) + naive_speed(t2)) / 2
    h = round((len(t1) + len(t2)) / 2)
    g1, g2 = len(t1) / h, len(t2) / h
    a = b = 0.0
    i = j = 0
    s = tt = 0.0
    for _ in range(h):
        i, j = min(i, len(t1) - 1), min(j, len(t2) - 1)
        d1 = t1[i].spatial(t2[j])
        dt = abs(t1[i].timestamp - t2[j].timestamp)
        if lam is None:
            s += d1 * d1
            tt += (dt * v) ** 2
        else:
            s += (d1 * 1000 + lam * dt * v / 3.6) ** 2
        a += g1
        b += g2
        i, j = round(a), round(b)
    if lam is None:
        return 1000 * math.sqrt(s / h), math.sqrt(tt / h)
    return math.sqrt(s / h), 0.0


def naive_seconds_per_pair(orig: Trajectories, anon: Trajectories, subset: int) -> tuple[float,
                                                                                         float]:
    """Seconds per pair of upstream-style λ estimation and of linkage, timed on a subset."""
    o, a = as_objects(orig, subset), as_objects(anon, subset)
    start = time.perf_counter()
    sp = tp = 0.0
    for t1 in o:
        for t2 in o:
            x, y = naive_pair(t1, t2, None)
            sp, tp = sp + x, tp + y
    lam_per_pair = (time.perf_counter() - start) / subset**2
    lam = sp / tp
    start = time.perf_counter()
    ref = [min(t1, key=lambda q: q.timestamp) for t1 in o][:1]
    keys = sorted(naive_pair(t1, ref, lam)[0] for t1 in o)
    for t2 in a:
        bisect_left(keys, naive_pair(t2, ref, lam)[0])
        best = math.inf
        for t1 in o:
            best = min(best, naive_pair(t1, t2, lam)[0])
    link_per_pair = (time.perf_counter() - start) / subset**2
    return lam_per_pair, link_per_pair


# -- cases --------------------------------------------------------------------------------------


def run_case(n: int, search: str) -> dict[str, float]:
    """Time λ (fit) and record linkage through the evaluator; returns seconds and max RSS."""
    orig, anon = taxi_like(n, seed=n)
    params = {"exact": True} if search == "exhaustive" else {}
    ev = Evaluator(orig, [{"name": "RecordLinkage", "params": params}],
                   show_progress=sys.stderr.isatty())
    start = time.perf_counter()
    report = ev.evaluate(anon)  # prepare (λ on the original) + linkage, cold caches
    total = time.perf_counter() - start
    entry = report.measures[0]
    if entry.error:
        raise RuntimeError(entry.error)
    fresh, _ = taxi_like(n, seed=n)
    start = time.perf_counter()
    fitted = Martinez2021().fit(fresh, Context())
    lam_seconds = time.perf_counter() - start
    return {"n": n, "lambda_s": lam_seconds, "total_s": total, "value": entry.value,
            "p_lambda": fitted.p_lambda, "candidates": entry.details["window_size"],
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def child(n: int, search: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--case", str(n), search],
                         stdout=subprocess.PIPE, text=True, check=True)  # stderr: progress
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--case", nargs=2, metavar=("N", "SEARCH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(int(args.case[0]), args.case[1])))
        return
    small, large, subset = (200, 1000, 40) if args.quick else (1200, 10_000, 150)
    orig, anon = taxi_like(small, seed=small)
    lam_pp, link_pp = naive_seconds_per_pair(orig, anon, subset)
    print(f"baseline: naive per-pair Python port of upstream, timed on {subset}×{subset} pairs "
          f"in this run: {lam_pp * 1e6:.1f} µs/pair (λ), {link_pp * 1e6:.1f} µs/pair (linkage); "
          "full-size times below are EXTRAPOLATED from these, not measured")
    # (N, search, seconds target, peak MB target, minimum speed-up over the baseline); the 90×
    # of the issue is for N = 1,200 (at --quick sizes fixed costs dominate: not checked)
    rows = [(small, "exhaustive", 1.5, 2048, None if args.quick else 90.0),
            (large, "window", 60.0, 2048, None)]
    if not args.quick:
        rows.append((large, "exhaustive", 60.0, 2048, None))
    print(f"{'case':<34}{'seconds':>9}{'target':>9}{'baseline~':>11}{'ratio':>8}"
          f"{'peak MB':>9}{'RL':>8}")
    for n, search, target, mem, min_ratio in rows:
        res = child(n, search)
        pairs_lambda = n * n  # upstream estimates λ on all N² ordered pairs up to 10,000
        cand = res["candidates"]
        baseline = lam_pp * pairs_lambda + link_pp * n * cand
        ratio = baseline / res["total_s"]
        ok = (res["total_s"] < target and res["max_rss_mb"] < mem
              and (min_ratio is None or ratio >= min_ratio))
        label = f"λ + {search} RL, N={n} (w={cand:g})"
        print(f"{label:<34}{res['total_s']:>9.2f}{'<' + format(target, 'g'):>9}"
              f"{baseline:>10.0f}s{ratio:>7.0f}×{res['max_rss_mb']:>9.0f}"
              f"{res['value']:>8.3f}  {'ok' if ok else 'MISSED'} (λ alone {res['lambda_s']:.2f}s)")


if __name__ == "__main__":
    main()
