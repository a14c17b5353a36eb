"""Benchmark: where a parallel engine starts to pay, against a serial run of the same job.

    python benchmarks/bench_breakeven.py [--quick] [--repeat N]

A job is ``variants`` anonymized variants of a ``rows``-row original (drawn from the adult
extract, seed 0; the variants generalized with the shipped hierarchies) and ``measures``
measures (the first 1 or 4 of KAnonymity, DM, AECS, NonUniformEntropy). Each job runs
serially, on the local engine with 2 worker processes and on the dask engine with a 2-worker
LocalCluster started for the run (as ``anoneval run`` does: its start-up counts). Printed: the
best of ``--repeat`` wall-clock times in seconds, each engine's speed-up over serial (> 1: it
pays) and the job's size in variants x rows x measures. The load average is printed first:
on a shared machine the figures move with it.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _adult import generalize, measures, read_adult

from anoneval.core import evaluate_many

LEVELS = [([0, 1, 0, 0, 0, 0, 0], 2), ([0, 1, 0, 1, 1, 1, 1], 5), ([0, 2, 0, 1, 1, 1, 1], 5),
          ([0, 2, 1, 1, 2, 1, 1], 10), ([1, 2, 1, 1, 2, 1, 1], 10), ([1, 3, 1, 1, 2, 2, 1], 10),
          ([1, 3, 1, 2, 2, 2, 2], 20), ([1, 3, 1, 2, 3, 2, 2], 20)]
ENGINES = {"serial": None, "local": {"name": "local", "workers": 2},
           "dask": {"name": "dask", "workers": 2}}


def best_time(original, variants, chosen, engine, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        evaluate_many(original, variants, chosen, engine=engine)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one repeat")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--rows", type=int, nargs="+", default=[5_000, 50_000])
    parser.add_argument("--variants", type=int, nargs="+", default=[2, 8],
                        help=f"at most {len(LEVELS)}")
    parser.add_argument("--measures", type=int, nargs="+", default=[1, 4], help="1 to 4")
    args = parser.parse_args()
    grid_rows = [2_000] if args.quick else args.rows
    grid_variants = [2] if args.quick else args.variants
    grid_measures = [1] if args.quick else args.measures
    repeat = 1 if args.quick else args.repeat
    adult = read_adult()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; best of {repeat}")
    print(f"{'variants':>8} {'rows':>7} {'measures':>8} {'size':>10} {'serial s':>9} "
          f"{'local s':>8} {'x':>5} {'dask s':>7} {'x':>5}")
    for rows in grid_rows:
        original = adult.iloc[np.random.default_rng(0).integers(0, len(adult), rows)]
        original = original.reset_index(drop=True)
        for n_variants in grid_variants:
            variants = {f"v{i}": generalize(original, lv, k)[0]
                        for i, (lv, k) in enumerate(LEVELS[:n_variants])}
            for n_measures in grid_measures:
                chosen = measures()[:n_measures]
                t = {name: best_time(original, variants, chosen, engine, repeat)
                     for name, engine in ENGINES.items()}
                size = n_variants * rows * n_measures
                print(f"{n_variants:>8} {rows:>7} {n_measures:>8} {size:>10,} "
                      f"{t['serial']:>9.2f} {t['local']:>8.2f} {t['serial'] / t['local']:>5.2f} "
                      f"{t['dask']:>7.2f} {t['serial'] / t['dask']:>5.2f}", flush=True)


if __name__ == "__main__":
    main()
