"""Scale-out: 1 vs 2 workers (one thread each) on record linkage and on 200 variants of adult.

    python benchmarks/bench_scale.py [--quick] [--part linkage|variants|all]
    python benchmarks/bench_scale.py --census [--raw] [--rows N] [--memory-limit GiB] [--folder DIR]

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
(target ≥ 1.7×), and whether every report equals the serial one. With ``--repeats N`` each
local run's time is printed too: a session's first one also waits for the imports of the fork
server that the local engine's processes are forked from.

Census (``--census [--rows N] [--memory-limit GiB] [--partition-rows N] [--folder DIR]``):
writes a synthetic census of ``--rows`` records (default 5×10^7; 8 quasi-identifiers of
census-like banded cardinalities, a sensitive income band, sampling weights, 16 survey answers
no measure reads) as a Parquet dataset of ``--partition-rows``-row files (default 10^6), chunk
by chunk (never whole in memory), then runs every group-by measure on it in one run on a
``LocalCluster`` of 2 workers (one thread each, started with anoneval's worker environment)
whose ``memory_limit`` is below the dataset's in-memory size, and prints the wall time, each
worker's peak RSS (sampled every 0.2 s) and peak managed memory (as the scheduler saw it), how
many worker processes ran (restarts), and the measures' values or errors. The dataset is
deleted afterwards.

``--census --raw``: the same census with raw (ungeneralized) quasi-identifiers (about 10^7
classes among 5×10^7 records), on a ``dask scheduler`` and two ``dask worker`` processes on
127.0.0.1 (``--memory-limit`` each): summaries too large for a worker's budget are grouped
hash-partitioned on the workers (docs/scaling.md, "Any cardinality on Dask"); also printed: the
client's peak RSS and how each summary was computed. Every group-by measure runs; SUDA, which
reads the records, gathers them up to the gather limit and above it gives its reason as an
error.

The load average (``os.getloadavg``) is printed before each part: on a shared machine the
figures are only as good as the load lets them be.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
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

    from anoneval.core.run.engine import dask_worker_env

    with dask_worker_env(), LocalCluster(n_workers=workers, threads_per_worker=1,
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
    if repeats > 1:  # the first run also waits for the fork server's imports
        print(f"  {'  each run':<44}: " + ", ".join(f"{s:.2f} s" for s, _ in local))
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
        if repeats > 1:  # the first run also waits for the fork server's imports
            print(f"  {'  each run':<44}: " + ", ".join(f"{s:.2f} s" for s, _ in runs[2]))
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


#: Census columns: quasi-identifiers with their number of values, and a skew (Zipf exponent).
CENSUS_QI = {"age_band": (10, 0.3), "sex": (2, 0.0), "region": (8, 0.5), "marital": (4, 1.0),
             "education": (5, 0.6), "household": (5, 1.2), "citizenship": (3, 2.0),
             "employment": (3, 0.8)}
#: ``--raw``: the same columns with raw (ungeneralized) values: 1-year ages, 16 regions, full
#: education and household codes; about 10^7 distinct combinations among 5×10^7 records.
CENSUS_RAW = {"age_band": (100, 0.3), "sex": (2, 0.0), "region": (16, 0.8),
              "marital": (6, 1.0), "education": (8, 0.8), "household": (8, 1.2),
              "citizenship": (8, 2.0), "employment": (5, 0.8)}
#: Survey answers no measure reads (column pruning leaves them on disk).
CENSUS_OTHER = [f"q{i:02d}" for i in range(1, 17)]
CENSUS_CHUNK = 1_000_000


def write_census(folder: Path, rows: int, chunk: int = CENSUS_CHUNK, raw: bool = False) -> None:
    """The census as ``part-NNNNN.parquet`` files of ``chunk`` rows (int64 codes, float64
    weights), one chunk in memory at a time; ``raw``: ungeneralized quasi-identifiers."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    for i, start in enumerate(range(0, rows, chunk)):
        n = min(chunk, rows - start)
        cols = {}
        for name, (card, skew) in (CENSUS_RAW if raw else CENSUS_QI).items():
            p = 1.0 / np.arange(1, card + 1) ** skew
            cols[name] = rng.choice(card, n, p=p / p.sum()).astype(np.int64)
        cols["income_band"] = np.minimum(rng.poisson(3 + cols["education"]), 11)
        cols["weight"] = rng.uniform(50.0, 150.0, n)
        for name in CENSUS_OTHER:
            cols[name] = rng.integers(0, 100, n)
        pq.write_table(pa.table(cols), folder / f"part-{i:05d}.parquet")


def census_measures() -> list[dict[str, object]]:
    """Every group-by measure. SUDA reads the records: above the gather limit its entry is an
    error that says why."""
    qi = {"quasi_identifiers": list(CENSUS_QI)}
    sensitive = {**qi, "sensitive": "income_band"}
    attribute = [{"name": name, "params": sensitive}
                 for name in ("TCloseness", "DeltaDisclosure", "BetaLikeness", "AlphaKAnonymity")]
    # unweighted: the census's continuous weights give every unique a quadrature of its own
    reid = [{"name": "IndividualRisk", "params": qi},
            {"name": "PopulationUniqueness", "params": {**qi, "sampling_fraction": 0.5}},
            {"name": "ReidentificationRisk", "params": qi}, {"name": "SUDA", "params": qi}]
    quality = [{"name": name, "params": qi} for name in (
        "Discernibility", "Ambiguity", "Granularity", "SSESST", "Missings",
        "AttributeSquaredError", "RecordSquaredError", "HierarchyKLDivergence", "Height",
        "GeneralizationIntensity")]
    return [*attribute, *reid, *quality, {"name": "AECS", "label": "AECS quality",
                    "params": {**qi, "suppressed": "ignore"}},
            {"name": "KAnonymity", "params": {**qi, "k": 5, "weights": "weight"}},
            {"name": "LDiversity", "params": {**qi, "sensitive": "income_band", "l": 2}},
            {"name": "DM", "params": qi}, {"name": "DMStar", "params": qi},
            {"name": "AECS", "params": qi}, {"name": "NonUniformEntropy", "params": qi},
            {"name": "DeltaPresence", "params": qi},  # the population: the census itself
            {"name": "EntropyRisk", "params": {"cells": ["region", "age_band", "education"]}},
            {"name": "SensitivityRules", "params": {
                "cells": ["region", "age_band"], "magnitude": "income_band",
                "rules": [{"rule": "nk", "n": 2, "k": 80}, {"rule": "p", "p": 10},
                          {"rule": "freq", "min_contributors": 3}]}}]


class Sampler:
    """Each worker's peak RSS (sampled on the workers every 0.2 s), the peak managed memory the
    scheduler saw, and how many worker processes there were (more than started: restarts)."""

    def __init__(self, client: Any) -> None:
        import threading

        self.client = client
        self.rss: dict[str, int] = {}
        self.managed: dict[str, int] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psutil

        def managed(dask_scheduler: Any) -> dict[str, int]:
            return {a: ws.memory.managed for a, ws in dask_scheduler.workers.items()}

        while not self.done.wait(0.2):
            try:
                rss = self.client.run(lambda: psutil.Process().memory_info().rss)
                held = self.client.run_on_scheduler(managed)
            except OSError:  # a worker restarting: sample the next time
                continue
            for table, values in ((self.rss, rss), (self.managed, held)):
                for w, v in values.items():
                    table[w] = max(table.get(w, 0), v)

    def __enter__(self) -> Sampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


@contextlib.contextmanager
def census_cluster(limit: int, processes: bool) -> Iterator[Any]:
    """A client of 2 single-threaded workers with ``limit`` bytes each, started with anoneval's
    worker environment: ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1
    (``processes``, as a cluster is run), else a LocalCluster."""
    import sys

    from distributed import Client, LocalCluster

    from anoneval.core.run.engine import WORKER_ENV, dask_worker_env

    if not processes:
        with dask_worker_env(), LocalCluster(n_workers=2, threads_per_worker=1,
                                             memory_limit=limit, host="127.0.0.1",
                                             dashboard_address=":0") as cluster, \
                Client(cluster, set_as_default=False) as client:
            yield client
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from _dask_processes import dask_processes

    env = {**os.environ, **WORKER_ENV, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    with dask_processes(2, ["--nworkers", "1", "--memory-limit", str(limit)], env=env) as (
            address, _), Client(address, timeout=60, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=120)
        yield client


def census(rows: int, folder: Path, limit: int, chunk: int = CENSUS_CHUNK,
           raw: bool = False, keep: bool = False) -> None:
    """Write the census, evaluate every group-by measure on 2 workers, print figures;
    ``keep``: leave the files (and reuse those of an earlier ``keep`` run of the same recipe)."""
    import resource
    import shutil

    from anoneval.core import evaluate
    from anoneval.core.data.partitioned import Partitioned
    from anoneval.core.data.sharded import ShardedSummary

    recipe = {"rows": rows, "chunk": chunk, "raw": raw}
    marker = folder / "census.json"
    reuse = keep and marker.exists() and json.loads(marker.read_text()) == recipe
    if not reuse and folder.exists() and any(folder.iterdir()):
        raise SystemExit(f"{folder} is not empty: give an empty or new --folder (the census is "
                         "written there and deleted after, unless --keep)")
    t0 = time.perf_counter()
    kind = "raw (ungeneralized)" if raw else "generalized (banded)"
    print(f"census: {rows:,} rows, {kind} quasi-identifiers, in files of {chunk:,} rows "
          f"({load()})")
    if reuse:
        print(f"  reusing the census written to {folder} by an earlier --keep run")
    else:
        write_census(folder, rows, chunk, raw)
        print(f"  written to {folder} in {time.perf_counter() - t0:.1f} s")
        if keep:  # beside the data files, not one of them (the dataset reads *.parquet)
            marker.write_text(json.dumps(recipe))
    try:
        data = Partitioned(folder / "*.parquet")
        in_memory = rows * (len(CENSUS_QI) + 2 + len(CENSUS_OTHER)) * 8
        print(f"  in memory {in_memory / 2**30:.2f} GiB, on disk "
              f"{sum(f.stat().st_size for f in folder.glob('*.parquet')) / 2**30:.2f} GiB; "
              f"2 workers × 1 thread, memory_limit {limit / 2**30:.2f} GiB each"
              + (" (dask scheduler + 2 dask worker processes)" if raw else " (LocalCluster)"))
        with census_cluster(limit, processes=raw) as client, Sampler(client) as sampler:
            t0 = time.perf_counter()
            report = evaluate(data, data, census_measures(), engine=client)
            wall = time.perf_counter() - t0
        print(f"  all group-by measures in one run: {wall:.1f} s wall ({load()})")
        for w, v in sorted(sampler.rss.items()):
            print(f"  worker {w}: peak RSS {v / 2**30:.2f} GiB, peak managed "
                  f"{sampler.managed.get(w, 0) / 2**30:.2f} GiB (limit {limit / 2**30:.2f})")
        print(f"  worker processes: {len(sampler.rss)} for 2 started "
              f"({max(len(sampler.rss) - 2, 0)} restarted)")
        client_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(f"  client (this process): peak RSS {client_rss / 2**30:.2f} GiB")
        summaries = [(key[1], s) for key, s in data._cache.items() if key[0] == "class_summary"]
        for spec, s in summaries:
            how = (f"hash-partitioned in {len(s.parts)} parts" if isinstance(s, ShardedSummary)
                   else "tree reduction") if not isinstance(s, BaseException) else "failed"
            classes = "" if isinstance(s, BaseException) else f"{s.n_classes:,} classes, "
            extra = [*([spec.weights] if spec.weights else []), *spec.sensitive]
            print(f"  summary of {spec.side} by {len(spec.keys)} keys (+{extra}): "
                  f"{classes}{how}")
        print(f"  inputs: {report.inputs['original']}")
        for m in report.measures:
            status = f"error: {m.error}" if m.error else f"{m.value}"
            print(f"  {m.label or m.name:<20} {m.seconds:8.1f} s  {status}")
            for w in m.warnings:
                print(f"      warning: {w}")
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="1,000 trajectories and 40 variants instead of 5,000 and 200")
    ap.add_argument("--part", choices=["linkage", "variants", "all"], default="all")
    ap.add_argument("--repeats", type=int, default=1, help="runs per engine (the best counts)")
    ap.add_argument("--census", action="store_true", help="the census group-by run instead")
    ap.add_argument("--raw", action="store_true",
                    help="census with raw quasi-identifiers (about 10^7 classes at 5×10^7 rows) "
                         "on dask scheduler and worker processes")
    ap.add_argument("--rows", type=int, default=50_000_000, help="census rows (5×10^7)")
    ap.add_argument("--memory-limit", type=float, default=2.0,
                    help="each census worker's memory_limit in GiB")
    ap.add_argument("--partition-rows", type=int, default=CENSUS_CHUNK,
                    help="census rows per Parquet file (one partition each)")
    ap.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "anoneval-census",
                    help="where the census is written (deleted after, unless --keep)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the census files, and reuse those of an earlier --keep run")
    args = ap.parse_args(argv)
    if args.census:
        census(args.rows, args.folder, int(args.memory_limit * 2**30), args.partition_rows,
               args.raw, args.keep)
        return
    if args.part in ("linkage", "all"):
        bench_linkage(1_000 if args.quick else 5_000, args.repeats)
    if args.part in ("variants", "all"):
        bench_variants(40 if args.quick else 200, args.repeats)


if __name__ == "__main__":
    main()
