"""The fixed cost of ``evaluate()`` (issue 30): every target of it as an interleaved ratio.

Three parts, each line ending in PASS or FAIL against its target (the median of the per-round
ratios; see docs/scaling.md, "How benchmarks measure"):

1. Framework cost: ``anoneval.Evaluator(original, [measure]).evaluate(release)`` against the
   measure's bare ``compute`` on fresh ``Microdata`` of the same frames, for RangeCoverageLoss,
   CategoryCoverageLoss, KSDistance and KAnonymity on 10⁵ and 10⁶ × 15 mixed-type records per
   side (``--quick``: 10³ and 10⁴). Target: ratio evaluate/compute ≤ 1.2.
2. Against the peers, through ``evaluate()``: SDMetrics' RangeCoverage, CategoryCoverage and
   KSComplement (one ``compute`` per column, over the same columns) and pyCANON's
   ``k_anonymity`` (on the same five categorical quasi-identifiers), at 100, 10⁵ and 10⁶ rows
   (``--quick``: 100, 10³, 10⁴). Target: ours ≥ 5× faster, i.e. ratio ours/peer ≤ 0.2. Ours
   is given the original too, as in a config, also for KAnonymity (which reads the release
   only): the issue's fixed cost is that of both inputs.
3. Memory: peak RSS of ``anoneval run`` (KAnonymity, DM and NonUniformEntropy on an original
   and a generalized release of 10⁷ rows × 8 quasi-identifiers, as Parquet files, as CSV files
   or both: ``--format``, default both) against a pandas script that reads the same files
   (``read_parquet``; ``read_csv`` with its defaults, the C parser) and does the three
   measures' group-bys (``--quick``: 10⁵ rows). Target: ratio ≤ 1.2 in memory; the time ratio
   is printed beside it (aim: ≤ 1.2 too). Each runs once as a child process; its own
   ``ru_maxrss`` is read with ``wait4``. These runs are the warm-up (the files in the page
   cache) for ``--cli-rounds`` (default 1) interleaved rounds timing both commands.

Every timed call gets fresh copies of the loaded frames (made outside the clock), so a cache
keyed on the frame object (a content hash, say) cannot turn the first evaluation of a dataset,
the one a user waits for, into a lookup; ``--same-objects`` times repeated calls on the same
frames instead. Usage: ``python benchmarks/bench_fixed_cost.py [--quick] [--rounds N]
[--only framework|peers|memory] [--measures NAME,...] [--format parquet|csv|both]
[--memory-rows N] [--cli-rounds N] [--same-objects]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _common import (
    CATS,
    NUMERIC,
    cli_command,
    compare,
    evaluate_one,
    header,
    interleaved,
    load_average,
    peak_rss,
    records,
    run_command,
    show,
    verdict,
)
from sdmetrics.single_column import CategoryCoverage, KSComplement, RangeCoverage

from anoneval.core.api import Context, Microdata
from anoneval.registry import default_registry

try:  # the test extra has no pyCANON build for Python 3.13
    from pycanon import anonymity
except ImportError:
    anonymity = None

CAT_COLS = list(CATS)
#: KAnonymity's quasi-identifiers (1,890 combinations: classes of every size at 10⁵ rows).
KQI = ["c0", "c1", "c2", "c3", "c6"]
MEASURES: dict[str, tuple[dict[str, Any], Callable[[pd.DataFrame, pd.DataFrame], object], str]] = {
    "RangeCoverageLoss": (
        {"name": "RangeCoverageLoss"},
        lambda o, s: [RangeCoverage.compute(o[c], s[c]) for c in NUMERIC], "SDMetrics"),
    "CategoryCoverageLoss": (
        {"name": "CategoryCoverageLoss"},
        lambda o, s: [CategoryCoverage.compute(o[c], s[c]) for c in CAT_COLS], "SDMetrics"),
    "KSDistance": (
        {"name": "KSDistance", "params": {"columns": NUMERIC}},
        lambda o, s: [KSComplement.compute(o[c], s[c]) for c in NUMERIC], "SDMetrics"),
    "KAnonymity": (
        {"name": "KAnonymity", "params": {"quasi_identifiers": KQI, "k": 5}},
        lambda o, s: anonymity.k_anonymity(s, KQI), "pyCANON"),
}


def pair(n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """An original and an independent release of ``n`` × 15 records (seeded)."""
    rng = np.random.default_rng(n)
    return records(n, rng), records(n, rng)


def fresh_of(ori: pd.DataFrame, syn: pd.DataFrame,
             same: bool) -> Callable[[], tuple[pd.DataFrame, pd.DataFrame]]:
    """Each call's inputs: copies of the loaded frames, or the frames themselves."""
    if same:
        return lambda: (ori, syn)
    return lambda: (ori.copy(), syn.copy())


def bare(spec: dict[str, Any]) -> Callable[[pd.DataFrame, pd.DataFrame], object]:
    """The measure's ``compute`` on fresh ``Microdata``, without the evaluator around it."""
    reg = default_registry()
    name = spec["name"]
    measure = reg.create(reg.kinds_of(name)[0], name, spec.get("params", {}))

    def run(o: pd.DataFrame, s: pd.DataFrame) -> object:
        return measure.compute(Microdata(o), Microdata(s), Context()).value
    return run


def framework(sizes: list[int], rounds: int, same: bool, names: list[str]) -> list[bool]:
    """Part 1: evaluate() against the bare compute."""
    header("1. evaluate() vs the bare compute (target: ratio ≤ 1.2)", rounds)
    passed = []
    for n in sizes:
        ori, syn = pair(n)
        for name in names:
            spec = MEASURES[name][0]
            c = compare(f"{name} {n:,} × 15", lambda o, s, spec=spec: evaluate_one(o, s, spec),
                        bare(spec), rounds, peer_name="compute", target=1.2,
                        fresh=fresh_of(ori, syn, same), width=34)
            passed.append(c.median_ratio <= 1.2)
    return passed


def peers(sizes: list[int], rounds: int, same: bool, names: list[str]) -> list[bool]:
    """Part 2: evaluate() against SDMetrics and pyCANON."""
    header("2. evaluate() vs the peer (target: ours ≥ 5× faster, ratio ≤ 0.2)", rounds)
    passed = []
    for n in sizes:
        ori, syn = pair(n)
        for name in names:
            spec, peer, peer_name = MEASURES[name]
            if peer_name == "pyCANON" and anonymity is None:
                print(f"{name} {n:,} rows: pyCANON not installed, no comparison")
                continue
            c = compare(f"{name} {n:,} rows", lambda o, s, spec=spec: evaluate_one(o, s, spec),
                        peer, rounds, peer_name=peer_name, target=0.2,
                        fresh=fresh_of(ori, syn, same), width=34)
            passed.append(c.median_ratio <= 0.2)
    return passed


#: The pandas side of part 3: the same files read, the three measures' group-bys.
PANDAS_SCRIPT = """
import sys
import numpy as np
import pandas as pd
qi = sys.argv[3].split(",")
read = pd.read_csv if sys.argv[1].endswith(".csv") else pd.read_parquet
raw, rel = read(sys.argv[1]), read(sys.argv[2])
sup = (rel[qi] == "*").all(axis=1)
f = rel[~sup].groupby(qi, observed=True).size()
n, s = len(rel), int(sup.sum())
k_share = (float(f[f < 5].sum()) + s) / n
dm = float((f[f >= 5] ** 2).sum() + n * (f[f < 5].sum() + s))
nue = 0.0
for c in qi:
    j = pd.DataFrame({"a": raw[c].to_numpy(), "b": rel[c].to_numpy()})
    p = j.groupby(["a", "b"]).size()
    nue -= float((p * np.log2(p / p.groupby(level="b").transform("sum"))).sum())
print(k_share, dm, nue)
"""


def memory_files(n: int, folder: Path, fmt: str) -> tuple[Path, Path, list[str]]:
    """An original of ``n`` rows × 8 text quasi-identifiers and its release (each value
    coarsened to one of about half as many labels, classes < 5 suppressed), as Parquet or CSV
    files (``fmt``; the same seeded records either way)."""
    rng = np.random.default_rng(0)
    sizes = {"q0": 2, "q1": 74, "q2": 5, "q3": 7, "q4": 16, "q5": 41, "q6": 8, "q7": 2}
    raw, rel = {}, {}
    for c, k in sizes.items():
        codes = rng.integers(0, k, n)
        raw[c] = np.array([f"{c}_{i}" for i in range(k)], dtype=object)[codes]
        rel[c] = np.array([f"{c}_{i // 2}x" for i in range(k)], dtype=object)[codes]
    released = pd.DataFrame(rel)
    small = released.groupby(list(sizes))["q0"].transform("size").to_numpy() < 5
    released.loc[small, list(sizes)] = "*"
    paths = folder / f"original.{fmt}", folder / f"released.{fmt}"
    if fmt == "csv":
        pd.DataFrame(raw).to_csv(paths[0], index=False)
        released.to_csv(paths[1], index=False)
    else:
        pd.DataFrame(raw).to_parquet(paths[0])
        released.to_parquet(paths[1])
    return *paths, list(sizes)


def memory(n: int, rounds: int, fmt: str) -> list[bool]:
    """Part 3: peak RSS of the CLI against the pandas script, on files of format ``fmt``."""
    print(f"\n3. peak RSS: anoneval run (KAnonymity, DM, NonUniformEntropy) vs pandas read + "
          f"group-by, {n:,} rows × 8 QIs, {fmt} files  [load {load_average():.2f}; target: "
          "ratio ≤ 1.2]")
    with tempfile.TemporaryDirectory() as tmp:
        original, released, qi = memory_files(n, Path(tmp), fmt)
        config = Path(tmp) / "config.json"
        config.write_text(json.dumps({
            "original": {"path": str(original)}, "anonymized": {"path": str(released)},
            "defaults": {"quasi_identifiers": qi, "k": 5},
            "measures": ["KAnonymity", "DM", "NonUniformEntropy"],
            "output": str(Path(tmp) / "report.json")}))
        cli = cli_command("run", "-q", str(config))
        script = [sys.executable, "-c", PANDAS_SCRIPT, str(original), str(released),
                  ",".join(qi)]
        ours, theirs = peak_rss(cli), peak_rss(script)
        ratio = ours.rss / theirs.rss
        print(f"{'peak RSS, ' + fmt:<34} ours {ours.rss / 2**20:8.0f} MiB  pandas "
              f"{theirs.rss / 2**20:8.0f} MiB  ratio {ratio:6.3f}  {verdict(ratio, 1.2)}",
              flush=True)
        print(f"{'one run, ' + fmt:<34} ours {ours.wall:6.1f} s ({ours.cpu:6.1f} CPU s)  "
              f"pandas {theirs.wall:6.1f} s ({theirs.cpu:6.1f} CPU s)  ratio "
              f"{ours.wall / theirs.wall:6.3f} (CPU {ours.cpu / theirs.cpu:6.3f})", flush=True)
        # the memory runs were each side's warm-up (the files in the page cache)
        show(interleaved(lambda: run_command(cli), lambda: run_command(script), rounds,
                         name=f"time, anoneval run / pandas, {fmt}", warm_up=False), "pandas")
    return [ratio <= 1.2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 7, --quick 3)")
    ap.add_argument("--only", choices=["framework", "peers", "memory"])
    ap.add_argument("--measures", default=",".join(MEASURES),
                    help="comma-separated measures of parts 1 and 2 (default: all four)")
    ap.add_argument("--format", choices=["parquet", "csv", "both"], default="both",
                    help="the files of part 3 (default: both formats, one after the other)")
    ap.add_argument("--memory-rows", type=int,
                    help="rows of part 3's files (default 10⁷, --quick 10⁵)")
    ap.add_argument("--cli-rounds", type=int, default=1,
                    help="interleaved rounds timing the CLI against the pandas script")
    ap.add_argument("--same-objects", action="store_true",
                    help="time repeated calls on the same frames (no fresh copies)")
    args = ap.parse_args()
    rounds = args.rounds or (3 if args.quick else 7)
    names = [m for m in args.measures.split(",") if m]
    unknown = [m for m in names if m not in MEASURES]
    if unknown:
        ap.error(f"unknown measures {', '.join(unknown)}; allowed: {', '.join(MEASURES)}")
    passed: list[bool] = []
    if args.only in (None, "framework"):
        passed += framework([1_000, 10_000] if args.quick else [100_000, 1_000_000], rounds,
                            args.same_objects, names)
    if args.only in (None, "peers"):
        passed += peers([100, 1_000, 10_000] if args.quick else [100, 100_000, 1_000_000],
                        rounds, args.same_objects, names)
    if args.only in (None, "memory"):
        for fmt in ("parquet", "csv") if args.format == "both" else (args.format,):
            passed += memory(args.memory_rows or (100_000 if args.quick else 10_000_000),
                             args.cli_rounds, fmt)
    print(f"\n{sum(passed)} of {len(passed)} targets PASS")


if __name__ == "__main__":
    main()
