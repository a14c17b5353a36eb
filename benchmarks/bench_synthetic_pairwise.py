"""Benchmark: the pairwise measures (DistanceToClosestRecord's share, RecordLinkage on microdata)
exhaustive and sampled, against the previous search and SDMetrics' DCR.

    python benchmarks/bench_synthetic_pairwise.py [--rows 100000 300000] [--sample 10000]
                                                  [--sdmetrics-rows 5000]
                                                  [--linkage-rows 30000 100000]
                                                  [--target-rows 1000000] [--quick]

Data: ``--rows`` records of 8 numeric and 7 categorical columns correlated through a latent
factor (the recipe of ``bench_synthetic.py``), original and release drawn independently (seed
0); DCR compares the 8 numeric columns, standardized, as the measure does by default. Each line
is timed in CPU seconds of this process (``time.process_time``: every thread counted; the
machine is shared, so wall time is noisy), through the public API (``evaluate``), except the
"before" search: the previous implementation's KD-tree queries on one thread, on the same
scaled arrays. Printed: CPU seconds of each, the ratios before/after and SDMetrics/ours (its
``calculate_dcr``, the distance behind its DCR metrics, on ``--sdmetrics-rows`` rows, against
ours on the same rows), RecordLinkage with Euclidean on ``--linkage-rows`` (a noisy copy;
exhaustive through the index, sampled, and the blockwise ``cdist`` matrix search that
``ties="distance"`` still takes), and the exponent b of t ∝ n^b between the sizes, with the 10⁶-row
extrapolation. ``--target-rows N`` then times issue 30's targets at N rows a side in wall seconds
(the exhaustive share under 600 s on 2 cores, ``--sample`` rows under 30 s; PASS/FAIL, with
the load average: wall time needs an idle machine). ``--quick``: 4,000 and 8,000 rows (linkage
2,000 and 4,000), a 1,000-row sample, targets at 20,000 rows.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from _common import NUMERIC, records
from scipy.spatial import cKDTree

from anoneval.core import evaluate


def cpu(fn: Callable[[], object]) -> tuple[float, object]:
    """CPU seconds of ``fn()`` (all threads of this process) and its result."""
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def before_dcr(ori: pd.DataFrame, rel: pd.DataFrame) -> float:
    """The previous share-mode search: one-thread KD-tree queries (actual k=2, replica k=1)."""
    X, Y = ori[NUMERIC].to_numpy(float), rel[NUMERIC].to_numpy(float)
    sd = X.std(axis=0, ddof=1)
    X, Y = X / sd, Y / sd
    tree = cKDTree(X)
    nn = tree.query(X, k=2)[0][:, 1]
    dcr = tree.query(Y, k=1)[0]
    t = np.percentile(nn, 5)
    return float(np.mean((dcr < t) | (dcr == 0)))


def wall(fn: Callable[[], object]) -> tuple[float, float, object]:
    """Wall and CPU seconds of ``fn()`` and its result."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0, out


def ours(ori: pd.DataFrame, rel: pd.DataFrame, name: str, params: dict) -> object:
    m = evaluate(ori, rel, [{"name": name, "params": params}]).measures[0]
    if m.error:
        raise RuntimeError(m.error)
    return m


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[100_000, 300_000])
    parser.add_argument("--sample", type=int, default=10_000)
    parser.add_argument("--linkage-rows", type=int, nargs="*", default=[30_000, 100_000])
    parser.add_argument("--sdmetrics-rows", type=int, default=5_000)
    parser.add_argument("--target-rows", type=int)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.sample, args.sdmetrics_rows = [4_000, 8_000], 1_000, 2_000
        args.linkage_rows, args.target_rows = [2_000, 4_000], 20_000
    dcr = {"columns": NUMERIC}
    times: dict[str, list[float]] = {"before": [], "after": [], "sampled": [], "rl": [],
                                  "matrix": []}
    warm = records(500, np.random.default_rng(1))  # imports and first calls, untimed
    before_dcr(warm, warm)
    ours(warm, warm, "DistanceToClosestRecord", {**dcr, "sample": 100})
    for n in args.rows:
        rng = np.random.default_rng(0)
        ori, rel = records(n, rng), records(n, rng)
        t_before, v_before = cpu(lambda o=ori, r=rel: before_dcr(o, r))
        t_after, m = cpu(lambda o=ori, r=rel: ours(o, r, "DistanceToClosestRecord", dcr))
        assert m.value == v_before, (m.value, v_before)  # the same share
        t_sample, s = cpu(lambda o=ori, r=rel: ours(o, r, "DistanceToClosestRecord",
                                                     {**dcr, "sample": args.sample}))
        for key, t in (("before", t_before), ("after", t_after), ("sampled", t_sample)):
            times[key].append(t)
        print(f"{n:>9} rows  DCR share: before {t_before:8.2f} CPU-s  after {t_after:8.2f} "
              f"CPU-s  before/after {t_before / t_after:5.2f}  value {m.value:.5f}")
        print(f"{'':>9}       DCR sampled ({args.sample} rows): {t_sample:6.2f} CPU-s  value "
              f"{s.value:.5f} ci [{s.ci[0]:.5f}, {s.ci[1]:.5f}]", flush=True)
    rl = {"distance": {"name": "Euclidean", "params": {"columns": NUMERIC}}}
    for n in args.linkage_rows:
        rng = np.random.default_rng(0)
        ori = records(n, rng)
        link = ori.copy()
        link[NUMERIC] = ori[NUMERIC] + np.round(rng.normal(0, 0.5, (n, 8)), 3)
        t_rl, r = cpu(lambda o=ori, a=link: ours(o, a, "RecordLinkage", rl))
        size = min(args.sample, n // 10)  # a sample of every row would be no sample
        t_rs, rs = cpu(lambda o=ori, a=link, k=size: ours(o, a, "RecordLinkage",
                                                          {**rl, "sample": k}))
        t_mx, mx = cpu(lambda o=ori, a=link: ours(o, a, "RecordLinkage",
                                                  {**rl, "ties": "distance"}))
        times["rl"].append(t_rl)
        times["matrix"].append(t_mx)
        print(f"{n:>9} rows  RecordLinkage (Euclidean): exhaustive {t_rl:8.2f} CPU-s value "
              f"{r.value:.5f}; sampled ({size}) {t_rs:6.2f} CPU-s value {rs.value:.5f} "
              f"ci [{rs.ci[0]:.5f}, {rs.ci[1]:.5f}]; cdist blocks {t_mx:8.2f} CPU-s "
              f"(value {mx.value:.5f}), cdist/index {t_mx / t_rl:6.1f}", flush=True)
    for key, label, sizes in (("before", "DCR before", args.rows),
                              ("after", "DCR after", args.rows),
                              ("rl", "RecordLinkage", args.linkage_rows),
                              ("matrix", "RL cdist", args.linkage_rows)):
        if len(sizes) > 1:
            n0, n1 = sizes[0], sizes[-1]
            b = math.log(times[key][-1] / times[key][0]) / math.log(n1 / n0)
            at = times[key][-1] * (1_000_000 / n1) ** b
            print(f"{label:<14} t ∝ n^{b:.2f}; extrapolated to 10⁶ rows: {at:8.0f} CPU-s "
                  f"({at / 2:6.0f} s on 2 cores)", flush=True)
    if args.target_rows:
        targets(args.target_rows, args.sample, dcr)
    try:
        from sdmetrics.single_table.privacy.dcr_utils import calculate_dcr
    except ImportError:
        print("SDMetrics not installed: no peer")
        return
    n = args.sdmetrics_rows
    rng = np.random.default_rng(0)
    ori, rel = records(n, rng)[NUMERIC], records(n, rng)[NUMERIC]
    meta = {"columns": {c: {"sdtype": "numerical"} for c in NUMERIC}}
    t_peer, _ = cpu(lambda: calculate_dcr(rel, ori, meta))
    t_ours, _ = cpu(lambda: ours(ori, rel, "DistanceToClosestRecord", dcr))
    t_sdm, _ = cpu(lambda: ours(ori, rel, "DistanceToClosestRecord", {"mode": "baseline"}))
    print(f"{n:>9} rows  SDMetrics calculate_dcr {t_peer:8.2f} CPU-s; ours share "
          f"{t_ours:6.2f} CPU-s (ours/peer {t_ours / t_peer:.3f}); ours SDMetrics-mode baseline "
          f"(two searches) {t_sdm:6.2f} CPU-s (ours/peer {t_sdm / t_peer:.3f})")


def targets(n: int, sample: int, dcr: dict) -> None:
    """Issue 30's DCR targets at ``n`` rows a side, in wall seconds."""
    rng = np.random.default_rng(0)
    ori, rel = records(n, rng), records(n, rng)
    print(f"targets at {n:,} rows a side [load {os.getloadavg()[0]:.2f}]")
    for label, params, limit in (("exhaustive", dcr, 600.0),
                                 (f"sample {sample}", {**dcr, "sample": sample}, 30.0)):
        t, c, m = wall(lambda p=params: ours(ori, rel, "DistanceToClosestRecord", p))
        verdict = "PASS" if t < limit else "FAIL"
        print(f"  DCR share {label:<14} {t:8.1f} s wall ({c:8.1f} CPU-s)  value {m.value:.5f}"
              f"  target < {limit:.0f} s  {verdict}", flush=True)


if __name__ == "__main__":
    main()
