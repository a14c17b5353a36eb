"""Speed of the numeric risk and loss measures against sdcMicro, interleaved in the same run.

Cases: four correlated continuous variables and the same with additive noise. Each anoneval
measure is timed through ``anoneval.evaluate`` at 10⁶ records (``--quick``: 10⁵) against an
absolute figure, and against sdcMicro at 20,000 records: an R process (``Rscript`` with
sdcMicro from ``SDCMICRO_LIB``, default ``/work/oracles/sdcmicro/lib``; install steps in
docs/scaling.md, "Peers in other processes") reads the data once and then runs one call per
request (``dUtility``, ``IL_correl``, ``IL_variables``, ``dRisk``, ``dRiskRMD``), timing it
itself (``benchmarks/_remote.py``). Both sides make one untimed call first, whose values are
compared (equal to 1e-9 relative; ``dRiskRMD`` draws random MCD subsets on both sides, so its
value is printed, not compared), then ``--rounds`` interleaved rounds; printed per measure:
both medians, the per-round ratio ours/sdcMicro min / median / max (< 1: anoneval is faster)
and the CPU ratio (docs/scaling.md, "How benchmarks measure"). Without R or sdcMicro it says so
and times anoneval alone. (sdcMicro's ``dRiskRMD`` builds an n × n distance matrix, and its
other calls grew to 10 GB at 10⁵ records here, so the comparison stays at 20,000.)
Run: ``python benchmarks/bench_numeric.py [--quick] [--rounds N] [--no-r]``.
"""

from __future__ import annotations

import argparse
import math
import tempfile

import numpy as np
import pandas as pd
from _common import header, interleaved, show, timed_rounds
from _remote import RemotePeer, start_r_peer

from anoneval.core import evaluate

#: Each measure and sdcMicro's call of it, as an R expression of its value.
MEASURES = {
    "IL1": "as.numeric(dUtility(x, xm = xm, method = 'IL1'))",
    "IL1s": "as.numeric(dUtility(x, xm = xm, method = 'IL1s'))",
    "EigenvalueLoss": "as.numeric(dUtility(x, xm = xm, method = 'eigen'))",
    "CorrelationLoss": "as.numeric(IL_correl(x, xm))",
    "VariableDistanceLoss": "as.numeric(IL_variables(x, xm))",
    "IntervalDisclosure": "as.numeric(dRisk(x, xm = xm))",
}
#: Measured against sdcMicro at 20,000 records only (its n × n matrix).
PEER_ONLY = {"RobustIntervalDisclosure": "dRiskRMD(x, xm = xm)$risk1"}
#: Random on both sides (MCD subsets): values printed, not compared.
RANDOM = {"RobustIntervalDisclosure"}

R_PEER = """
args <- commandArgs(TRUE)
source(args[1])
suppressPackageStartupMessages(library(sdcMicro))
x <- read.csv(args[2])
xm <- read.csv(args[3])
serve(list({ops}))
"""


def data(n: int, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 4)) @ np.triu(np.full((4, 4), 0.4)) + rng.normal(size=(n, 4))
    x = pd.DataFrame(z * [10, 5, 2, 50] + [50, 20, 10, 200], columns=["v1", "v2", "v3", "v4"])
    return x, x + rng.normal(scale=[1.5, 0.8, 0.5, 6], size=x.shape)


def value(name: str, x: pd.DataFrame, xm: pd.DataFrame) -> float:
    """What a user calls: ``evaluate(x, xm, [name])``; its value (an error is raised)."""
    entry = evaluate(x, xm, [name])[name]
    if entry.error is not None:
        raise RuntimeError(f"{name}: {entry.error}")
    return float(entry.value)


def sdcmicro(x: pd.DataFrame, xm: pd.DataFrame, folder: str) -> RemotePeer | str:
    """sdcMicro in R with ``x`` and ``xm`` loaded, one operation per measure (or why not)."""
    x.to_csv(f"{folder}/x.csv", index=False)
    xm.to_csv(f"{folder}/xm.csv", index=False)
    ops = ",\n  ".join(f"{k} = function() {v}" for k, v in {**MEASURES, **PEER_ONLY}.items())
    return start_r_peer(R_PEER.format(ops=ops), [f"{folder}/x.csv", f"{folder}/xm.csv"],
                        folder, name="sdcMicro")


def agree(name: str, ours: float, theirs: float) -> str:
    if name in RANDOM:
        return f"values {ours:.6g} and {theirs:.6g} (random MCD subsets on both sides)"
    same = math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12)
    return f"agree {'yes' if same else 'NO'} ({ours:.10g} vs {theirs:.10g})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="10⁵ records instead of 10⁶")
    ap.add_argument("--rounds", type=int, help="timed calls per side (default 3, --quick 1)")
    ap.add_argument("--no-r", action="store_true", help="do not run sdcMicro")
    args = ap.parse_args()
    n = 100_000 if args.quick else 1_000_000
    rounds = args.rounds or (1 if args.quick else 3)
    x, xm = data(n)

    def fresh() -> tuple[pd.DataFrame, pd.DataFrame]:
        return x.copy(), xm.copy()
    header(f"{n:,} records × 4 numeric columns, evaluate()", rounds, peers=False)
    for name in MEASURES:
        value(name, x, xm)
        wall, cpu = timed_rounds(lambda a, b, name=name: value(name, a, b), rounds, fresh,
                                 warm_up=False)
        print(f"  {name:24} {wall:8.3f} s (cpu {cpu:7.3f})", flush=True)

    x, xm = data(20_000)
    names = [*MEASURES, *PEER_ONLY]
    with tempfile.TemporaryDirectory() as tmp:
        peer = "not run (--no-r)" if args.no_r else sdcmicro(x, xm, tmp)
        if isinstance(peer, str):
            print(f"\nsdcMicro: {peer}; anoneval alone at 20,000 records")
            for name in names:
                wall, cpu = timed_rounds(lambda a, b, name=name: value(name, a, b), rounds,
                                         fresh)
                print(f"  {name:24} {wall:8.4f} s (cpu {cpu:7.4f})", flush=True)
            return
        with peer:
            header("20,000 records, evaluate() against sdcMicro (R, timed inside R)", rounds)
            for name in names:
                ours = value(name, x.copy(), xm.copy())  # the warm-up calls, compared
                theirs = float(peer.run(name).value)
                c = interleaved(lambda a, b, name=name: value(name, a, b), peer.op(name),
                                rounds, fresh, name, warm_up=False)
                show(c, "sdcMicro", width=26, note="  " + agree(name, ours, theirs))


if __name__ == "__main__":
    main()
