"""Benchmark: all-pairs trajectory distances through ``anoneval.trajectory_distances`` (issue 25).

    python benchmarks/bench_trajectory_distances.py [--quick] [--n N] [--only NAME ...]
        [--no-peers]

Target: every distance on 2,000 × 2,000 trajectories of 10–60 points in under 60 s on two
cores (the "ok" column, scaled by pairs from smaller ``--n``; numba, the ``fast`` extra, makes
every kernel compiled; ``ANONEVAL_JIT=0`` measures the numpy kernels). The CPU seconds of the
process (all threads) are printed too: on a shared machine they say more than the wall time
(two idle cores: wall ≈ CPU / 2). Each figure is the median of ``--rounds`` calls after one
untimed warm-up call (numba's compilation, ours and the peers', is warm-up). Peers in the same
run, on the same trajectories (plane coordinates, since not every peer has a sphere), each
interleaved with ours on the same pairs (see docs/scaling.md, "How benchmarks measure"):
traj-dist-rs ``cdist`` (Rust, parallel) on the full matrix, and tslearn ``cdist_dtw``,
dtaidistance ``dtw_ndim.distance_matrix`` and similaritymeasures (one pair at a time) on a
subset of ``n / 20`` (similaritymeasures: 10) trajectories per side, ours on the same subset.
Printed per peer: the per-round ratio ours/peer as min/median/max (< 1: anoneval is faster)
and the CPU ratio. ``--quick`` runs 60 × 60 in a few seconds. Continuous Fréchet is exact here
(critical values of all three kinds); without numba its numpy kernel is timed on a subset and
extrapolated; traj-dist-rs' ``frechet`` is not exact (see the plugin's docstring) and is timed
only for reference.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from _common import Comparison, interleaved, timed_rounds

import anoneval
from anoneval.core.api import Trajectories
from anoneval.plugins.distances import _geojit

CASES = [("SSPD", {}, "sspd", {}), ("OWD", {}, None, {}),
         ("SegmentHausdorff", {}, "hausdorff", {}), ("Hausdorff", {}, None, {}),
         ("DiscreteFrechet", {}, "discret_frechet", {}), ("DTW", {}, "dtw", {}),
         ("DTW", {"convention": "rms"}, None, {}),
         ("LCSS", {"eps_m": 0.002}, "lcss", {"eps": 0.002}),
         ("EDR", {"eps_m": 0.002, "variant": "traj-dist"}, "edr", {"eps": 0.002}),
         ("ERP", {"g": [2.3, 48.85], "variant": "traj-dist"}, "erp", {"g": [2.3, 48.85]}),
         ("Frechet", {}, "frechet", {})]


def trajectories(n: int, seed: int) -> Trajectories:
    """n random-walk trajectories of 10–60 points around Paris."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(10, 61, n)
    offsets = np.r_[0, np.cumsum(lengths)]
    p = int(offsets[-1])
    step = rng.normal(0, 0.0007, (p, 2))
    step[offsets[:-1]] = 0
    walk = np.cumsum(step, axis=0)
    walk -= np.repeat(walk[offsets[:-1]], lengths, axis=0)
    lon = np.repeat(rng.uniform(2.2, 2.45, n), lengths) + walk[:, 0]
    lat = np.repeat(rng.uniform(48.8, 48.92, n), lengths) + walk[:, 1]
    return Trajectories(np.arange(n), np.arange(n), offsets, lon, lat, np.arange(p) * 30)


def arrays(data: Trajectories) -> list[np.ndarray]:
    return [np.ascontiguousarray(np.column_stack(data.points(i)[:2])) for i in range(len(data))]


def ratio_text(peer: str, c: Comparison, pairs_ratio: float = 1.0) -> str:
    """``peer s, ours/peer min/median/max (cpu r)`` of an interleaved comparison; the ratios
    are per pair, ``pairs_ratio`` being the peer's pairs over ours."""
    r = sorted(x * pairs_ratio for x in c.ratios)
    cpu = pairs_ratio * float(np.median(c.ours_cpu)) / max(float(np.median(c.peer_cpu)), 1e-9)
    return (f"{peer} {np.median(c.peer):.2f}s, ours/peer {r[0]:.2g}/{np.median(r):.2g}/"
            f"{r[-1]:.2g} (cpu {cpu:.2g})")


def pairs(fn, xs, ys) -> list[float]:
    return [fn(p, q) for p in xs for q in ys]


def sm_dtw(p, q) -> float:
    import similaritymeasures as sm
    return sm.dtw(p, q)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="60 × 60 trajectories")
    ap.add_argument("--n", type=int, default=None, help="trajectories per side (2000)")
    ap.add_argument("--only", nargs="*", default=None, help="distance names to run")
    ap.add_argument("--rounds", type=int, help="rounds (default 3, --quick 1)")
    ap.add_argument("--no-peers", action="store_true",
                    help="time anoneval only (the peers take tens of minutes at 2,000²)")
    args = ap.parse_args()
    n = args.n or (60 if args.quick else 2000)
    rounds = args.rounds or (1 if args.quick else 3)
    A, B = trajectories(n, 1), trajectories(n, 2)
    a_arr, b_arr = arrays(A), arrays(B)
    sub = max(n // 20, 8)  # subset side for the per-pair peers and for Frechet
    A_sub, B_sub = trajectories(sub, 1), trajectories(sub, 2)
    few = min(sub, 10)
    A_few, B_few = trajectories(few, 1), trajectories(few, 2)
    try:
        import traj_dist_rs as tdr
    except ImportError:
        tdr = None
    if args.no_peers:
        tdr = None
    print(f"{n} × {n} trajectories of 10–60 points ({A.n_points + B.n_points} points); "
          f"numba kernels: {'on' if _geojit.enabled() else 'off'}; load average "
          f"{os.getloadavg()[0]:.1f}; median of {rounds} rounds after a warm-up call")
    print(f"{'distance':<26}{'sphere s':>10}{'plane s':>10}{'cpu s':>16}{'ok':>4}   "
          "peers (median peer s, ratio ours/peer per round min/median/max)")
    for name, params, rs_name, rs_params in CASES:
        if args.only and name not in args.only:
            continue
        label = name + (f" {params['convention']}" if "convention" in params else "")
        exact_subset = name == "Frechet" and n > sub and not _geojit.enabled()
        size = sub if exact_subset else n
        As, Bs = (A_sub, B_sub) if exact_subset else (A, B)
        scale = (n / size) ** 2
        sphere_params = {k: v for k, v in params.items() if k not in ("eps_m",)}
        if "eps_m" in params:
            sphere_params["eps_m"] = 200.0

        def plane(a, b, name=name, params=params):  # type: ignore[no-untyped-def]
            return lambda: anoneval.trajectory_distances(name, a, b, space="plane", **params)
        t_sph, c_sph = timed_rounds(lambda name=name, p=sphere_params, a=As, b=Bs:
                                    anoneval.trajectory_distances(name, a, b, **p), rounds)
        peers = []
        if tdr is not None and rs_name is not None:  # ours in the plane, interleaved with it
            metric = getattr(tdr.Metric, rs_name)(**rs_params)
            xs, ys = (arrays(As), arrays(Bs)) if exact_subset else (a_arr, b_arr)
            c = interleaved(plane(As, Bs), lambda xs=xs, ys=ys, m=metric: tdr.cdist(
                xs, ys, metric=m), rounds, name=label)
            t_pl, c_pl = float(np.median(c.ours)), float(np.median(c.ours_cpu))
            peers.append(ratio_text("traj-dist-rs", c))
        else:
            t_pl, c_pl = timed_rounds(plane(As, Bs), rounds)
        t_sph, c_sph, t_pl, c_pl = t_sph * scale, c_sph * scale, t_pl * scale, c_pl * scale
        if name == "DTW" and params.get("convention") == "rms" and not args.no_peers:
            xs, ys = arrays(A_sub), arrays(B_sub)
            try:
                from tslearn.metrics import cdist_dtw
                peers.append(ratio_text(f"tslearn ({sub}²)", interleaved(
                    plane(A_sub, B_sub), lambda xs=xs, ys=ys: cdist_dtw(xs, ys), rounds)))
            except ImportError:
                pass
            try:
                from dtaidistance import dtw_ndim
                # its matrix is of both sets together: (2s)(2s − 1)/2 pairs against our s²
                both = xs + ys
                peers.append(ratio_text(f"dtaidistance ({sub}², per pair)", interleaved(
                    plane(A_sub, B_sub), lambda both=both: dtw_ndim.distance_matrix(
                        both, use_c=True), rounds), (2 * sub - 1) / sub))
            except ImportError:
                pass
        if (name in ("DTW", "DiscreteFrechet") and "convention" not in params
                and not args.no_peers):
            try:
                import similaritymeasures as sm
                fn = sm_dtw if name == "DTW" else sm.frechet_dist
                xs, ys = arrays(A_few), arrays(B_few)
                peers.append(ratio_text(f"similaritymeasures ({few}²)", interleaved(
                    plane(A_few, B_few), lambda fn=fn, xs=xs, ys=ys: pairs(fn, xs, ys),
                    rounds)))
            except ImportError:
                pass
        # the target is for 2000 × 2000: smaller runs are scaled up by the number of pairs
        ok = "yes" if max(t_sph, t_pl) * (2000 / n) ** 2 < 60 else "no"
        est = " (est.)" if exact_subset else ""
        cpu = f"{c_sph:.1f}/{c_pl:.1f}"
        print(f"{label + est:<26}{t_sph:>10.1f}{t_pl:>10.1f}{cpu:>16}{ok:>4}   "
              + "; ".join(peers), flush=True)


if __name__ == "__main__":
    main()
