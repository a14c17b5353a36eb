"""Scale-out: 1 vs 2 workers (one thread each) on record linkage and on 200 variants of adult.

    python benchmarks/bench_scale.py [--quick] [--part linkage|variants|all]

Linkage: RecordLinkage (Martinez2021, λ estimated on the original, upstream's default window)
of 5,000 synthetic taxi-like trajectories (``bench_mobility.taxi_like``: about 14 points each,
anonymized by ~350 m of noise and a time shift), one variant: the evaluation runs here and the
measure's blocks (λ's pairs, the search) run on the engine's workers. Printed: the measure's own
``seconds`` (λ fit included) on a Dask ``LocalCluster`` of 1 and of 2 workers and with the local
engine's ``workers: 2`` against serial, the speed-ups (target ≥ 1.7× for 2 Dask workers over 1
on a 2-core machine), and whether the values equal the serial run's.

Variants: 200 variants of adult generalize its quasi-identifiers at random level vectors of its
ARX lattice (the shipped hierarchies; seed 0) and suppress the classes smaller than k ∈ {2, 5,
10}; each is written once to a Parquet file, and each task loads its file where it runs, as a
benchmark farm would. Measures: KAnonymity, DM, AECS and NonUniformEntropy with hierarchies.
Printed: wall time of ``evaluate_many`` serially, with the local engine's ``workers: 2``
(processes), and on a Dask ``LocalCluster`` of 1 and of 2 workers, the speed-ups of 2 workers
(target ≥ 1.7×), and whether every report equals the serial one.

The load average (``os.getloadavg``) is printed before each part: on a shared machine the
figures are only as good as the load lets them be.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _adult import generalize, measures, read_adult
from bench_mobility import taxi_like

from anoneval.core import Evaluator, evaluate

HEIGHTS = [1, 4, 1, 2, 3, 2, 2]  # top level of each quasi-identifier's hierarchy used here


@contextlib.contextmanager
def dask_client(workers: int) -> Iterator[Any]:
    """A LocalCluster of ``workers`` single-threaded worker processes and its client."""
    from distributed import Client, LocalCluster

    from anoneval.core.engine import dask_trim_off

    with dask_trim_off(), LocalCluster(n_workers=workers, threads_per_worker=1,
                                       host="127.0.0.1", dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def line(label: str, seconds: float, note: str = "") -> None:
    print(f"  {label:<44}: {seconds:8.2f} s" + (f"   {note}" if note else ""))


# -- record linkage of trajectories ---------------------------------------------------------


def linkage_seconds(orig: Any, anon: Any, engine: Any) -> tuple[float, dict[str, Any]]:
    """The measure's own seconds (λ fit included) and its value and details."""
    report = evaluate(orig, anon, [{"name": "RecordLinkage"}], engine=engine,
                      data_kind="trajectories")
    entry = report.measures[0]
    if entry.error:
        raise SystemExit(f"RecordLinkage failed: {entry.error}")
    return entry.seconds, {"value": entry.value, "details": entry.details}


def bench_linkage(n: int, repeats: int) -> None:
    orig, anon = taxi_like(n, seed=1)
    print(f"RecordLinkage of {n:,} trajectories (Martinez2021, λ fitted; {load()})")
    serial, reference = linkage_seconds(orig, anon, None)
    line("serial (this process, threads)", serial)
    local = [linkage_seconds(orig, anon, {"name": "local", "workers": 2}) for _ in range(repeats)]
    best_local = min(s for s, _ in local)
    line("local engine, workers: 2", best_local, f"{serial / best_local:.2f}× over serial")
    dask = {}
    for workers in (1, 2):
        with dask_client(workers) as client:
            dask[workers] = [linkage_seconds(orig, anon, client) for _ in range(repeats)]
        line(f"dask, {workers} worker(s) × 1 thread", min(s for s, _ in dask[workers]))
    ratio = min(s for s, _ in dask[1]) / min(s for s, _ in dask[2])
    print(f"  {'dask speed-up, 2 workers over 1':<44}: {ratio:8.2f}×   (target ≥ 1.7)")
    same = all(r == reference for runs in (local, *dask.values()) for _, r in runs)
    print(f"  {'every result equals the serial one':<44}: {same}   ({load()})")


# -- variants of adult ----------------------------------------------------------------------


def write_variants(original: pd.DataFrame, count: int, folder: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    out = {}
    for i in range(count):
        levels = [int(rng.integers(0, h + 1)) for h in HEIGHTS]
        k = int(rng.choice([2, 5, 10]))
        path = folder / f"v{i:03d}.parquet"
        generalize(original, levels, k)[0].to_parquet(path)
        out[f"v{i:03d}_{''.join(map(str, levels))}_k{k}"] = path
    return out


def variants_seconds(original: pd.DataFrame, variants: dict[str, Path], engine: object
                     ) -> tuple[float, dict]:
    loaders = {name: functools.partial(pd.read_parquet, path) for name, path in variants.items()}
    t0 = time.perf_counter()
    report = Evaluator(original, measures()).evaluate_many(loaders, engine=engine)
    seconds = time.perf_counter() - t0
    data = report.to_dict()
    for v in data["variants"]:
        for m in v["measures"]:
            m["seconds"] = 0.0
    return seconds, {"variants": data["variants"], "ru": data["risk_utility"]}


def bench_variants(count: int, repeats: int) -> None:
    original = read_adult()
    with tempfile.TemporaryDirectory() as tmp:
        variants = write_variants(original, count, Path(tmp))
        print(f"{count} variants of adult ({len(original):,} rows), 4 measures each ({load()})")
        serial, reference = variants_seconds(original, variants, None)
        line("serial (one process)", serial)
        runs = {w: [variants_seconds(original, variants, {"name": "local", "workers": w})
                    for _ in range(repeats)] for w in (2,)}
        local2 = min(s for s, _ in runs[2])
        line("local engine, workers: 2", local2,
             f"{serial / local2:.2f}× over serial (target ≥ 1.7)")
        dask = {}
        for workers in (1, 2):
            with dask_client(workers) as client:
                dask[workers] = [variants_seconds(original, variants, client)
                                 for _ in range(repeats)]
            line(f"dask, {workers} worker(s) × 1 thread", min(s for s, _ in dask[workers]))
        ratio = min(s for s, _ in dask[1]) / min(s for s, _ in dask[2])
        print(f"  {'dask speed-up, 2 workers over 1':<44}: {ratio:8.2f}×   (target ≥ 1.7)")
        same = all(r == reference for group in (runs[2], *dask.values()) for _, r in group)
        print(f"  {'every report equals the serial one':<44}: {same}   ({load()})")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="1,000 trajectories and 40 variants instead of 5,000 and 200")
    ap.add_argument("--part", choices=["linkage", "variants", "all"], default="all")
    ap.add_argument("--repeats", type=int, default=1, help="runs per engine (the best counts)")
    args = ap.parse_args(argv)
    if args.part in ("linkage", "all"):
        bench_linkage(1_000 if args.quick else 5_000, args.repeats)
    if args.part in ("variants", "all"):
        bench_variants(40 if args.quick else 200, args.repeats)


if __name__ == "__main__":
    main()
