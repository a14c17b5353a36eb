"""Scale-out: 200 variants of adult as independent tasks, on 1 and 2 workers of each engine.

    python benchmarks/bench_scale.py [--quick]
    python benchmarks/bench_scale.py --census [--rows N] [--folder DIR]

The variants generalize adult's quasi-identifiers at random level vectors of its ARX lattice
(the shipped hierarchies; seed 0) and suppress the classes smaller than k ∈ {2, 5, 10}; each is
written once to a Parquet file, and each task loads its file where it runs, as a benchmark farm
would. Measures: KAnonymity, DM, AECS and NonUniformEntropy with hierarchies. Printed: wall time
of ``evaluate_many`` serially, with the local engine's ``workers: 2`` (processes), and on a Dask
``LocalCluster`` of 1 and of 2 workers (one thread each), the speed-ups of 2 workers over 1
(target ≥ 1.7× on a 2-core machine), and whether every report equals the serial one.

``--census`` writes a synthetic census of ``--rows`` records (default 5×10^7; 8 quasi-
identifiers of census-like banded cardinalities, a sensitive income band, sampling weights,
16 survey answers no measure reads) as a
Parquet dataset of 10^6-row files, chunk by chunk (never whole in memory), then runs every
group-by measure on it in one run on a ``LocalCluster`` of 2 workers (one thread each) whose
``memory_limit`` is below the dataset's in-memory size, and prints the wall time, each
worker's peak memory (RSS sampled every 0.2 s) and the measures' values. The dataset is
deleted afterwards.
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from make_adult_variants import QUASI_IDENTIFIERS, generalize  # noqa: E402

from anoneval.core import Evaluator  # noqa: E402

ADULT = ROOT / "examples" / "data" / "adult"
HEIGHTS = [1, 4, 1, 2, 3, 2, 2]  # top level of each quasi-identifier's hierarchy used here


def measures() -> list[dict[str, object]]:
    qi = {"quasi_identifiers": QUASI_IDENTIFIERS}
    hierarchies = {c: str(ADULT / f"adult_hierarchy_{c}.csv") for c in QUASI_IDENTIFIERS}
    return [{"name": "KAnonymity", "params": {**qi, "k": 10}},
            {"name": "DM", "params": qi},
            {"name": "AECS", "params": qi},
            {"name": "NonUniformEntropy", "params": {**qi, "hierarchies": hierarchies}}]


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


def timed(original: pd.DataFrame, variants: dict[str, Path], engine: object) -> tuple[float, dict]:
    loaders = {name: functools.partial(pd.read_parquet, path) for name, path in variants.items()}
    t0 = time.perf_counter()
    report = Evaluator(original, measures()).evaluate_many(loaders, engine=engine)
    seconds = time.perf_counter() - t0
    data = report.to_dict()
    for v in data["variants"]:
        for m in v["measures"]:
            m["seconds"] = 0.0
    return seconds, {"variants": data["variants"], "ru": data["risk_utility"]}


#: Census columns: quasi-identifiers with their number of values, and a skew (Zipf exponent).
CENSUS_QI = {"age_band": (10, 0.3), "sex": (2, 0.0), "region": (8, 0.5), "marital": (4, 1.0),
             "education": (5, 0.6), "household": (5, 1.2), "citizenship": (3, 2.0),
             "employment": (3, 0.8)}
#: Survey answers no measure reads (column pruning leaves them on disk).
CENSUS_OTHER = [f"q{i:02d}" for i in range(1, 17)]
CENSUS_CHUNK = 1_000_000


def write_census(folder: Path, rows: int) -> None:
    """The census as ``part-NNNNN.parquet`` files of :data:`CENSUS_CHUNK` rows (int64 codes,
    float64 weights), one chunk in memory at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    for i, start in enumerate(range(0, rows, CENSUS_CHUNK)):
        n = min(CENSUS_CHUNK, rows - start)
        cols = {}
        for name, (card, skew) in CENSUS_QI.items():
            p = 1.0 / np.arange(1, card + 1) ** skew
            cols[name] = rng.choice(card, n, p=p / p.sum()).astype(np.int64)
        cols["income_band"] = np.minimum(rng.poisson(3 + cols["education"]), 11)
        cols["weight"] = rng.uniform(50.0, 150.0, n)
        for name in CENSUS_OTHER:
            cols[name] = rng.integers(0, 100, n)
        pq.write_table(pa.table(cols), folder / f"part-{i:05d}.parquet")


def census_measures() -> list[dict[str, object]]:
    qi = {"quasi_identifiers": list(CENSUS_QI)}
    return [{"name": "KAnonymity", "params": {**qi, "k": 5, "weights": "weight"}},
            {"name": "LDiversity", "params": {**qi, "sensitive": "income_band", "l": 2}},
            {"name": "DM", "params": qi}, {"name": "DMStar", "params": qi},
            {"name": "AECS", "params": qi}, {"name": "NonUniformEntropy", "params": qi}]


def census(rows: int, folder: Path, limit: int) -> None:
    """Write the census, evaluate every group-by measure on 2 workers, print figures."""
    import shutil
    import threading

    from distributed import Client, LocalCluster

    from anoneval.core import evaluate
    from anoneval.core.partitioned import Partitioned

    t0 = time.perf_counter()
    if (folder / f"part-{(rows - 1) // CENSUS_CHUNK:05d}.parquet").exists():
        print(f"census: {rows:,} rows already in {folder}")
    else:
        write_census(folder, rows)
        print(f"census: {rows:,} rows written to {folder} in {time.perf_counter() - t0:.1f} s")
    try:
        data = Partitioned(folder)
        in_memory = rows * (len(CENSUS_QI) + 2 + len(CENSUS_OTHER)) * 8
        print(f"  in memory {in_memory / 2**30:.2f} GiB, on disk "
              f"{sum(f.stat().st_size for f in folder.iterdir()) / 2**30:.2f} GiB; "
              f"2 workers × 1 thread, memory_limit {limit / 2**30:.2f} GiB each")
        # Dask's default heap trimming: memory, not speed, is what this run measures
        with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=limit,
                          host="127.0.0.1", dashboard_address=":0") as cluster, \
                Client(cluster, set_as_default=False) as client:
            peaks: dict[str, int] = {}
            done = threading.Event()

            def sample() -> None:
                import psutil

                while not done.wait(0.2):
                    try:
                        rss = client.run(lambda: psutil.Process().memory_info().rss)
                    except OSError:  # a worker restarting: sample the next time
                        continue
                    for w, v in rss.items():
                        peaks[w] = max(peaks.get(w, 0), v)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            t0 = time.perf_counter()
            report = evaluate(data, data, census_measures(), engine=client)
            wall = time.perf_counter() - t0
            done.set()
            sampler.join()
        print(f"  all group-by measures in one run: {wall:.1f} s wall")
        for w, v in sorted(peaks.items()):
            print(f"  peak RSS of worker {w}: {v / 2**30:.2f} GiB (limit {limit / 2**30:.2f})")
        print(f"  inputs: {report.inputs['original']}")
        for m in report.measures:
            status = f"error: {m.error}" if m.error else f"{m.value}"
            print(f"  {m.name:<20} {m.seconds:8.1f} s  {status}")
            for w in m.warnings:
                print(f"      warning: {w}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="40 variants instead of 200")
    ap.add_argument("--census", action="store_true", help="the census group-by run instead")
    ap.add_argument("--rows", type=int, default=50_000_000, help="census rows (5×10^7)")
    ap.add_argument("--memory-limit", type=float, default=2.0,
                    help="each census worker's memory_limit in GiB")
    ap.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "anoneval-census",
                    help="where the census is written (deleted after)")
    args = ap.parse_args(argv)
    if args.census:
        census(args.rows, args.folder, int(args.memory_limit * 2**30))
        return
    count = 40 if args.quick else 200
    original = pd.read_csv(ADULT / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    with tempfile.TemporaryDirectory() as tmp:
        variants = write_variants(original, count, Path(tmp))
        print(f"{count} variants of adult ({len(original):,} rows), 4 measures each")
        serial, reference = timed(original, variants, None)
        print(f"  {'serial (one process)':<40}: {serial:8.2f} s")
        local2, same_local = timed(original, variants, {"name": "local", "workers": 2})
        print(f"  {'local engine, workers: 2':<40}: {local2:8.2f} s   speed-up "
              f"{serial / local2:5.2f}× (target ≥ 1.7)")
        from distributed import Client, LocalCluster

        from anoneval.core.engine import dask_trim_off

        dask = {}
        for workers in (1, 2):
            with dask_trim_off(), LocalCluster(n_workers=workers, threads_per_worker=1,
                                               host="127.0.0.1", dashboard_address=":0") as c, \
                    Client(c, set_as_default=False) as client:
                dask[workers] = timed(original, variants, client)
            print(f"  {f'dask LocalCluster, {workers} worker(s)':<40}: {dask[workers][0]:8.2f} s")
        print(f"  {'dask speed-up, 2 workers over 1':<40}: {dask[1][0] / dask[2][0]:8.2f}× "
              "(target ≥ 1.7)")
        same = same_local == reference and all(d[1] == reference for d in dask.values())
        print(f"  {'every report equals the serial one':<40}: {same}")


if __name__ == "__main__":
    main()
