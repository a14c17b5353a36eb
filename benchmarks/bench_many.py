"""Benchmark: variants in one run: ``evaluate_many`` on 10 variants, ``anoneval run`` on 100 files.

    python benchmarks/bench_many.py [--quick] [--part api|cli|all] [--repeat N]

The table is drawn (with replacement, seed 0) from the adult extract; the variants generalize
its quasi-identifiers with the shipped hierarchies at 10 level vectors and suppress classes
smaller than k (``examples/make_adult_variants.py``). Measures: KAnonymity, DM, AECS and
NonUniformEntropy with hierarchies.

Printed, in seconds:

- original-side work: ``Evaluator.prepare()`` (every measure's ``prepare`` and the original's
  content hash), done once;
- per-variant work: ``Evaluator.evaluate`` for each variant on the prepared evaluator (the first
  variant also fills the original's lazily cached column codes);
- the total of ``evaluate_many`` on a fresh evaluator, against 10 independent ``evaluate`` calls
  (each redoes the original-side work) measured in the same run: the ratio is the baseline's
  time over evaluate_many's.

``--part cli`` (run by default after the part above) is what a user of ``anoneval run`` waits
for: a config of 100 file variants of the adult extract (30,162 rows; Parquet files written to
a temporary folder; random generalization levels and k, seed 0; the same 4 measures), run as
``anoneval run CONFIG -q -o report.json`` in a fresh process serially, with the local engine of
2 worker processes and with the dask engine on a 2-worker LocalCluster started for the run
(its start-up counts, as for a user; the start alone is measured too, in a fresh process
that starts the cluster as the run does and waits for its workers) and with the dask engine
connecting to a running
``dask scheduler`` and two single-threaded ``dask worker`` processes on 127.0.0.1 (started
once before the rounds, with the environment and Dask settings of the workers anoneval starts,
and given one untimed run, in which its workers import anoneval and the measures: this
measures the engine without the cluster's start). anoneval's bytecode is compiled first, as
pip and a user's first import do (``_common.compile_bytecode``). The four are interleaved over
``--repeat`` rounds; printed per engine: min/median/max wall-clock seconds, the CPU seconds of
the process and its children (the dask workers' CPU included; for the running cluster, what
its scheduler, nannies and workers spent during the run), and the speed-up over serial
(serial's time / the engine's, per round; > 1: the engine pays; target ≥ 1.5 with 2 workers),
and in how many rounds the run with a LocalCluster was slower than serial by no more than the
cluster's start (the criterion that must hold when the work is too short to pay for it).
The load average is printed before and after: on a shared machine the figures move with it.
Every engine's report must equal the serial one's (values, errors, warnings, the
inputs' row counts and content hashes).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
from _adult import ADULT, QUASI_IDENTIFIERS, generalize, measures, read_adult
from _common import compile_bytecode

from anoneval.core import Evaluator, evaluate

LEVELS = [  # sex, age, race, marital-status, education, native-country, workclass; then k
    ([0, 1, 0, 0, 0, 0, 0], 2), ([0, 1, 0, 1, 1, 1, 1], 2), ([0, 1, 0, 1, 1, 1, 1], 5),
    ([0, 2, 0, 1, 1, 1, 1], 5), ([0, 2, 0, 1, 2, 1, 1], 5), ([0, 2, 1, 1, 2, 1, 1], 10),
    ([1, 2, 1, 1, 2, 1, 1], 10), ([1, 3, 1, 1, 2, 2, 1], 10), ([1, 3, 1, 2, 2, 2, 2], 20),
    ([1, 3, 1, 2, 3, 2, 2], 20),
]


def make_data(rows: int) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    adult = read_adult()
    take = np.random.default_rng(0).integers(0, len(adult), rows)
    original = adult.iloc[take].reset_index(drop=True)
    variants = {f"L{''.join(map(str, lv))}_k{k}": generalize(original, lv, k)[0]
                for lv, k in LEVELS}
    return original, variants


def row(label: str, seconds: float, note: str = "") -> None:
    print(f"  {label:<44}: {seconds:8.3f} s" + (f" ({note})" if note else ""))


def bench_api(quick: bool) -> None:
    rows = 5_000 if quick else 100_000
    original, variants = make_data(rows)
    ms = measures()
    print(f"evaluate_many: {len(variants)} variants of a {rows:,}-row table, "
          f"measures {', '.join(str(m['name']) for m in ms)}")

    ev = Evaluator(original, ms)
    t0 = time.perf_counter()
    ev.prepare()
    t_original = time.perf_counter() - t0
    per_variant = []
    for name, frame in variants.items():
        t0 = time.perf_counter()
        report = ev.evaluate(frame, variant=name)
        per_variant.append(time.perf_counter() - t0)
        if not report.ok:
            failed = [f"{m.label}: {m.error}" for m in report.measures if m.error]
            raise SystemExit(f"{name}: measures failed: {failed}")

    t0 = time.perf_counter()
    multi = Evaluator(original, ms).evaluate_many(variants)
    t_many = time.perf_counter() - t0
    t0 = time.perf_counter()
    singles = [evaluate(original, frame, ms) for frame in variants.values()]
    t_independent = time.perf_counter() - t0
    same = all(a.to_frame()["value"].equals(b.to_frame()["value"])
               for a, b in zip(multi.variants, singles, strict=True))

    n = len(variants)
    row("original-side work (prepare + hash), once", t_original)
    row("per-variant work, first variant", per_variant[0],
        "also fills the original's cached column codes")
    row("per-variant work, median of the others", statistics.median(per_variant[1:]))
    row(f"prepare + {n} variants", t_original + sum(per_variant))
    row("evaluate_many total (fresh evaluator)", t_many)
    row(f"baseline: {n} independent evaluate calls", t_independent)
    print(f"  {'ratio baseline / evaluate_many':<44}: {t_independent / t_many:8.2f}x "
          "(target: > 1, original-side work done once)")
    print(f"  {'same values as the independent calls':<44}: {same}")



# -- the CLI on 100 file variants ----------------------------------------------------------

HEIGHTS = [1, 4, 1, 2, 3, 2, 2]  # top level of each quasi-identifier's hierarchy used here
ENGINES: dict[str, list[str]] = {"serial": [],
                                 "local": ["--engine", "local", "--workers", "2"],
                                 "dask": ["--engine", "dask", "--workers", "2"]}


def write_config(folder: Path, count: int) -> Path:
    """``count`` Parquet variants of adult in ``folder`` and the config that evaluates them."""
    original = read_adult()
    rng = np.random.default_rng(0)
    variants = []
    for i in range(count):
        levels = [int(rng.integers(0, h + 1)) for h in HEIGHTS]
        k = int(rng.choice([2, 5, 10]))
        name = f"v{i:03d}_{''.join(map(str, levels))}_k{k}"
        generalize(original, levels, k)[0].to_parquet(folder / f"{name}.parquet")
        variants.append({"name": name, "path": f"{name}.parquet"})
    hierarchies = {c: str(ADULT / f"adult_hierarchy_{c}.csv") for c in QUASI_IDENTIFIERS}
    config = {"original": {"path": str(ADULT / "adult.csv")}, "anonymized": variants,
              "defaults": {"quasi_identifiers": QUASI_IDENTIFIERS},
              "measures": [{"name": "KAnonymity", "params": {"k": 10}}, "DM", "AECS",
                           {"name": "NonUniformEntropy", "params": {"hierarchies": hierarchies}}],
              "report": {"timings": False}, "seed": 0}
    path = folder / "config.json"
    path.write_text(json.dumps(config, indent=1))
    return path


def cluster_cpu(roots: list[int]) -> float:
    """CPU seconds spent so far by the processes ``roots`` and every process under them."""
    import psutil  # with Dask (the dask extra)

    total = 0.0
    for pid in roots:
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(pid)
            for p in [root, *root.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    times = p.cpu_times()
                    total += times.user + times.system
    return total


def run_cli(config: Path, engine: list[str], out: Path,
            cluster: list[int] | None = None) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one CLI run: the wall clock until the process ends (this
    thread waits for it), the CPU of its process and every process under it (fork server,
    worker processes, Dask nannies and workers), each as last seen by a thread polling every
    100 ms (a process's last < 100 ms may be missed), plus what the processes of a running
    ``cluster`` spent meanwhile."""
    import psutil

    compile_bytecode()
    before = cluster_cpu(cluster or [])
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "anoneval", "run", str(config), "-q",
                             "-o", str(out), *engine], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    root = psutil.Process(proc.pid)
    seen: dict[int, float] = {}
    ended = threading.Event()

    def poll() -> None:
        while not ended.wait(0.1):
            with contextlib.suppress(psutil.Error):
                for p in [root, *root.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        times = p.cpu_times()
                        seen[p.pid] = times.user + times.system

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    proc.wait()  # with -q it writes too little to stderr to fill the pipe
    wall = time.perf_counter() - started
    ended.set()
    poller.join()
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"anoneval run {' '.join(engine)} failed:\n{err}")
    return wall, sum(seen.values()) + cluster_cpu(cluster or []) - before


#: A fresh process that starts a LocalCluster of 2 as ``anoneval run --engine dask --workers 2``
#: does (``open_engine``: anoneval's worker environment and settings) and waits until each
#: worker has imported what a variant's task needs: what the run pays for the cluster beside a
#: serial run (the interpreter and anoneval's imports here excluded, both pay them; importing
#: distributed included). Prints the wall seconds and the CPU seconds of the process and its
#: worker processes.
START_CLUSTER = """
import time, psutil
from anoneval.core.run.engine import open_engine
t0, c0 = time.perf_counter(), time.process_time()
with open_engine({"name": "dask", "workers": 2}, tasks=100) as engine:
    engine.client.run(lambda: bool(__import__("anoneval.core.run.evaluator")))
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0 + sum(
        p.cpu_times().user + p.cpu_times().system
        for p in psutil.Process().children(recursive=True))
print(wall, cpu)
"""


def cluster_start() -> tuple[float, float]:
    """Wall-clock and CPU seconds of starting a LocalCluster of 2 workers for a run
    (:data:`START_CLUSTER`)."""
    out = subprocess.run([sys.executable, "-c", START_CLUSTER], capture_output=True,
                         text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


def report_values(path: Path) -> list[object]:
    """What must not depend on the engine: every measure's value, error and warnings, and
    every input's row count and content hash."""
    data = json.loads(path.read_text())
    hashes = [(v["variant"], side, i["rows"], i["hash"]) for v in data["variants"]
              for side, i in sorted(v["inputs"].items())]
    return [*hashes, *[(v["variant"], m["label"], m["value"], m["error"], m["warnings"])
                       for v in data["variants"] for m in v["measures"]]]


def spread(values: list[float], digits: int = 2) -> str:
    return (f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f} / "
            f"{max(values):.{digits}f}")


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


@contextlib.contextmanager
def running_cluster() -> Iterator[tuple[str, list[int]]]:
    """``(address, pids)``: a ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1
    with the environment and settings of the workers anoneval starts, once they have joined."""
    import psutil
    from distributed import Client

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from _dask_processes import dask_processes

    from anoneval.core.run.engine import WORKER_CONFIG, WORKER_ENV

    env = {**os.environ, **WORKER_ENV,
           **{"DASK_" + k.upper().replace(".", "__").replace("-", "_"): str(v)
              for k, v in WORKER_CONFIG.items()}}
    with dask_processes(2, ["--memory-limit", "2GB"], env=env) as (address, workers):
        with Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=120)
        scheduler = [p.pid for p in psutil.Process().children() if p.pid not in
                     {w.pid for w in workers} and "scheduler" in " ".join(p.cmdline())]
        yield address, [*scheduler, *(w.pid for w in workers)]


def bench_cli(quick: bool, repeat: int) -> None:
    count = 10 if quick else 100
    with tempfile.TemporaryDirectory(prefix="anoneval-bench-many-") as tmp, \
            running_cluster() as (address, cluster):
        folder = Path(tmp)
        config = write_config(folder, count)
        engines = {**ENGINES, "dask running": ["--engine", "dask", "--scheduler", address]}
        # the running cluster's warm-up: its workers import anoneval and the measures once, as
        # those of a cluster that has run anoneval before (untimed)
        run_cli(config, engines["dask running"], folder / "warm-up.json", cluster)
        print(f"\nanoneval run: {count} Parquet variants of adult (30,162 rows), 4 measures, "
              f"{repeat} interleaved round(s); {os.cpu_count()} cores, {load()}")
        wall: dict[str, list[float]] = {name: [] for name in engines}
        cpu: dict[str, list[float]] = {name: [] for name in engines}
        start_wall: list[float] = []
        start_cpu: list[float] = []
        same = True
        for _ in range(repeat):
            reference = None
            for name, flags in engines.items():
                out = folder / f"report-{name.replace(' ', '-')}.json"
                w, c = run_cli(config, flags, out, cluster if "--scheduler" in flags else None)
                wall[name].append(w)
                cpu[name].append(c)
                values = report_values(out)
                reference = values if reference is None else reference
                same = same and values == reference
            w, c = cluster_start()
            start_wall.append(w)
            start_cpu.append(c)
        print(f"  {'engine':<36} {'wall s min/median/max':>24} {'CPU s median':>13} "
              f"{'speed-up min/median/max':>25}")
        for name, flags in engines.items():
            ratios = [s / w for s, w in zip(wall["serial"], wall[name], strict=True)]
            shown = " ".join("ADDRESS" if f == address else f for f in flags)
            print(f"  {(name + ' ' + shown)[:36]:<36} {spread(wall[name]):>24} "
                  f"{statistics.median(cpu[name]):>13.2f} {spread(ratios):>25}")
        print(f"  {'a LocalCluster of 2 starting, alone':<36} {spread(start_wall):>24} "
              f"{statistics.median(start_cpu):>13.2f}   (in a fresh process: the start "
              "a run with it pays)")
        print("  target: local and dask with 2 workers >= 1.5x serial (dask: LocalCluster "
              "started for the run, and a running scheduler)")
        late = [d - s for d, s in zip(wall["dask"], wall["serial"], strict=True)]
        held = sum(x <= s for x, s in zip(late, start_wall, strict=True))
        print(f"  dask with a LocalCluster minus serial, s: {spread(late)}; the cluster's "
              f"start, s: {spread(start_wall)}; never slower than serial by more than the "
              f"start: {held} of {len(late)} rounds")
        print(f"  every engine's report equals the serial one: {same}   ({load()})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="evaluate_many and anoneval run on variants")
    parser.add_argument("--quick", action="store_true",
                        help="5,000 rows instead of 100,000; 10 file variants, one round")
    parser.add_argument("--part", choices=["api", "cli", "all"], default="all")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds of the CLI")
    args = parser.parse_args(argv)
    if args.part in ("api", "all"):
        bench_api(args.quick)
    if args.part in ("cli", "all"):
        bench_cli(args.quick, 1 if args.quick else args.repeat)


if __name__ == "__main__":
    main()
