"""Speed of the numeric risk and loss measures against sdcMicro, measured in the same run.

Cases: four correlated continuous variables and the same with additive noise. Each anoneval
measure is timed through ``anoneval.evaluate`` at 10⁶ records (``--quick``: 10⁵) and, against
sdcMicro, at 20,000 records: when ``Rscript`` with sdcMicro is available (``R_LIBS`` pointing
at its library), the same calls (``dUtility``, ``IL_correl``, ``IL_variables``, ``dRisk``,
``dRiskRMD``) are timed inside R on the same data (read before the clock) and the ratio
ours/sdcMicro of the medians is printed (< 1: anoneval is faster). Both sides: one untimed
warm-up call, then the median of ``--rounds`` calls (R runs in its own process, so the sides
are not interleaved; see docs/scaling.md, "How benchmarks measure"). (sdcMicro's ``dRiskRMD``
builds an n × n distance matrix, and its other calls grew to 10 GB at 10⁵ records here, so the
comparison stays at 20,000.) Run: ``python benchmarks/bench_numeric.py [--quick] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile

import numpy as np
import pandas as pd
from _common import timed_rounds

from anoneval.core import evaluate

MEASURES = {
    "IL1": "dUtility(x, xm = xm, method = 'IL1')",
    "IL1s": "dUtility(x, xm = xm, method = 'IL1s')",
    "EigenvalueLoss": "dUtility(x, xm = xm, method = 'eigen')",
    "CorrelationLoss": "IL_correl(x, xm)",
    "VariableDistanceLoss": "IL_variables(x, xm)",
    "IntervalDisclosure": "dRisk(x, xm = xm)",
}


def data(n: int, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 4)) @ np.triu(np.full((4, 4), 0.4)) + rng.normal(size=(n, 4))
    x = pd.DataFrame(z * [10, 5, 2, 50] + [50, 20, 10, 200], columns=["v1", "v2", "v3", "v4"])
    return x, x + rng.normal(scale=[1.5, 0.8, 0.5, 6], size=x.shape)


def ours(name: str, x: pd.DataFrame, xm: pd.DataFrame, rounds: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``evaluate`` after a warm-up call (which checks it)."""
    entry = evaluate(x, xm, [name])[name]
    assert entry.error is None, entry.error
    return timed_rounds(lambda: evaluate(x.copy(), xm.copy(), [name]), rounds, warm_up=False)


def sdcmicro(calls: dict[str, str], x: pd.DataFrame, xm: pd.DataFrame,
             rounds: int) -> dict[str, float]:
    """Seconds of each sdcMicro call (median of ``rounds`` after a warm-up call), or {}
    without Rscript."""
    if shutil.which("Rscript") is None:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        x.to_csv(f"{tmp}/x.csv", index=False)
        xm.to_csv(f"{tmp}/xm.csv", index=False)
        timed = "\n".join(
            f"invisible({v}); "
            f"t['{k}'] <- median(sapply(1:{rounds}, function(i) system.time({v})[['elapsed']]))"
            for k, v in calls.items())
        script = (f"suppressMessages(library(sdcMicro)); x <- read.csv('{tmp}/x.csv'); "
                  f"xm <- read.csv('{tmp}/xm.csv'); t <- list()\n{timed}\n"
                  "cat(jsonlite::toJSON(t, auto_unbox = TRUE))")
        proc = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"(sdcMicro not available: {proc.stderr.strip().splitlines()[-1:]})")
            return {}
        return json.loads(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="10⁵ records instead of 10⁶")
    ap.add_argument("--rounds", type=int, help="timed calls per side (default 3, --quick 1)")
    args = ap.parse_args()
    n = 100_000 if args.quick else 1_000_000
    rounds = args.rounds or (1 if args.quick else 3)
    x, xm = data(n)
    print(f"{n:,} records × 4 numeric columns, evaluate(), median of {rounds} after a warm-up")
    for name in MEASURES:
        wall, cpu = ours(name, x, xm, rounds)
        print(f"  {name:24} {wall:8.3f} s (cpu {cpu:7.3f})", flush=True)
    x, xm = data(20_000)
    calls = {**MEASURES, "RobustIntervalDisclosure": "dRiskRMD(x, xm = xm)"}
    theirs = sdcmicro(calls, x, xm, rounds)
    print(f"20,000 records: {'measure':24} {'anoneval s':>11} {'sdcMicro s':>11} "
          f"{'ours/sdcMicro':>14}")
    for name in calls:
        t, _ = ours(name, x, xm, rounds)
        r = theirs.get(name)
        ratio = f"{t / r:14.3g}" if r else f"{'n/a':>14}"
        print(f"                {name:24} {t:11.4f} {r if r else float('nan'):11.4f} {ratio}")


if __name__ == "__main__":
    main()
