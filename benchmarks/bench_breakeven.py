"""Benchmark: where a parallel engine starts to pay, against a serial run of the same config.

    python benchmarks/bench_breakeven.py [--quick] [--repeat N] [--rows ...] [--variants ...]

A job is a config of ``variants`` Parquet variants of a ``rows``-row original (drawn from the
adult extract with replacement, seed 0, written as CSV; the variants generalized with the
shipped hierarchies at random levels) and ``measures`` measures (the first 1 or 4 of
KAnonymity, DM, AECS, NonUniformEntropy), run as ``anoneval run CONFIG -q`` in a fresh process
(what a user waits for: imports, reading, the engine's start-up): serially, on the local engine
with 2 worker processes and on the dask engine with a 2-worker LocalCluster started for the run.
The three are interleaved over ``--repeat`` rounds; printed per job: the median wall-clock
seconds, each engine's median speed-up over serial (> 1: it pays) and the job's size
(variants x rows x measures). Then, per engine, the break-even size: the smallest size from
which every larger job of the grid paid; the lines between the ``BREAK-EVEN TABLE`` markers
are the table of docs/scaling.md, and the figures are ``BREAK_EVEN`` in core/run/engine.py.
The load average is printed before and after: on a shared machine the figures move with it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

import numpy as np
from _adult import ADULT, QUASI_IDENTIFIERS, generalize, read_adult
from bench_many import ENGINES, HEIGHTS, load, run_cli

MEASURES: list[object] = [{"name": "KAnonymity", "params": {"k": 10}}, "DM", "AECS",
                          {"name": "NonUniformEntropy", "params": {"hierarchies": {
                              c: str(ADULT / f"adult_hierarchy_{c}.csv")
                              for c in QUASI_IDENTIFIERS}}}]


def write_job(folder: Path, rows: int, variants: int, measures: int) -> Path:
    """The config of one job and its files in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    adult = read_adult()
    original = adult.iloc[np.random.default_rng(0).integers(0, len(adult), rows)]
    original = original.reset_index(drop=True)
    original.to_csv(folder / "original.csv", index=False)
    rng = np.random.default_rng(1)
    entries = []
    for i in range(variants):
        levels = [int(rng.integers(0, h + 1)) for h in HEIGHTS]
        k = int(rng.choice([2, 5, 10]))
        generalize(original, levels, k)[0].to_parquet(folder / f"v{i:03d}.parquet")
        entries.append({"name": f"v{i:03d}", "path": f"v{i:03d}.parquet"})
    config = {"original": {"path": "original.csv"}, "anonymized": entries,
              "defaults": {"quasi_identifiers": QUASI_IDENTIFIERS},
              "measures": MEASURES[:measures], "report": {"timings": False}, "seed": 0}
    (folder / "config.json").write_text(json.dumps(config))
    return folder / "config.json"


def break_even(results: list[tuple[int, float]]) -> int | None:
    """The smallest size from which every job paid (speed-up > 1); None: the largest did not."""
    paid = None
    for size, speedup in sorted(results, reverse=True):
        if speedup <= 1:
            break
        paid = size
    return paid


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one tiny job, one round")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds per job")
    parser.add_argument("--rows", type=int, nargs="+", default=[2_000, 30_000])
    parser.add_argument("--variants", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument("--measures", type=int, nargs="+", default=[1, 4], help="1 to 4")
    args = parser.parse_args(argv)
    grid_rows = [1_000] if args.quick else args.rows
    grid_variants = [4] if args.quick else args.variants
    grid_measures = [1] if args.quick else args.measures
    repeat = 1 if args.quick else args.repeat
    print(f"{os.cpu_count()} cores, {load()}; median of {repeat} interleaved round(s), "
          "anoneval run in a fresh process")
    print(f"{'variants':>8} {'rows':>7} {'measures':>8} {'size':>12} {'serial s':>9} "
          f"{'local s':>8} {'x':>5} {'dask s':>7} {'x':>5}")
    speedups: dict[str, list[tuple[int, float]]] = {"local": [], "dask": []}
    with tempfile.TemporaryDirectory(prefix="anoneval-breakeven-") as tmp:
        for rows in grid_rows:
            for n_variants in grid_variants:
                for n_measures in grid_measures:
                    folder = Path(tmp) / f"{rows}-{n_variants}-{n_measures}"
                    config = write_job(folder, rows, n_variants, n_measures)
                    wall: dict[str, list[float]] = {name: [] for name in ENGINES}
                    for _ in range(repeat):
                        for name, flags in ENGINES.items():
                            wall[name].append(run_cli(config, flags,
                                                      folder / f"{name}.json")[0])
                    t = {name: statistics.median(w) for name, w in wall.items()}
                    x = {name: statistics.median(s / w for s, w in
                                                 zip(wall["serial"], wall[name], strict=True))
                         for name in ("local", "dask")}
                    size = n_variants * rows * n_measures
                    for name in x:
                        speedups[name].append((size, x[name]))
                    print(f"{n_variants:>8} {rows:>7} {n_measures:>8} {size:>12,} "
                          f"{t['serial']:>9.2f} {t['local']:>8.2f} {x['local']:>5.2f} "
                          f"{t['dask']:>7.2f} {x['dask']:>5.2f}", flush=True)
    print(f"after: {load()}")
    print("<!-- BREAK-EVEN TABLE: start (benchmarks/bench_breakeven.py) -->")
    print("| engine | break-even (variants × rows × measures) | measured at |")
    print("| --- | --- | --- |")
    for name, label in (("local", "local, 2 workers"),
                        ("dask", "dask, LocalCluster of 2 started for the run")):
        found = break_even(speedups[name])
        text = (f"**{found:,}**" if found is not None
                else "above the largest job measured")
        print(f"| {label} | {text} | {load()} |")
    print("<!-- BREAK-EVEN TABLE: end -->")


if __name__ == "__main__":
    main()
