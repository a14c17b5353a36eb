"""Scale-out: 200 variants of adult as independent tasks, on 1 and 2 workers of each engine.

    python benchmarks/bench_scale.py [--quick]

The variants generalize adult's quasi-identifiers at random level vectors of its ARX lattice
(the shipped hierarchies; seed 0) and suppress the classes smaller than k ∈ {2, 5, 10}; each is
written once to a Parquet file, and each task loads its file where it runs, as a benchmark farm
would. Measures: KAnonymity, DM, AECS and NonUniformEntropy with hierarchies. Printed: wall time
of ``evaluate_many`` serially, with the local engine's ``workers: 2`` (processes), and on a Dask
``LocalCluster`` of 1 and of 2 workers (one thread each), the speed-ups of 2 workers over 1
(target ≥ 1.7× on a 2-core machine), and whether every report equals the serial one.
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="40 variants instead of 200")
    count = 40 if ap.parse_args(argv).quick else 200
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
