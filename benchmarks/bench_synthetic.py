"""Speed of the attacks and fidelity measures, against anonymeter and SDMetrics when installed.

Targets: each attack with 2,000 attack queries on 50,000 × 15 mixed-type records in under
30 s; each fidelity measure on 10⁶ records in under 10 s. The peers run in the same process
on the same data: anonymeter's evaluators (n_jobs=2) for the attacks, SDMetrics' column and
column-pair metrics (looped over the same columns and pairs) for the fidelity measures; a peer
that is not installed is reported as such (anonymeter pins numpy < 1.27; beside numpy 2 it
runs when installed with ``pip install --no-deps anonymeter polars polars-runtime-32``). The
release's content hash (for the report) is computed before timing, as the original's is by
``Evaluator.prepare``. Each of our
measures runs ``--repeat`` times (default 3) and its best time is printed, with the machine's
1-minute load average before the runs (a shared machine's other jobs slow every run). The
model-based measures (PropensityMSE, MLEfficacy) fit on a seeded sample of ``max_rows``
records per data set; the sizes used are printed. Usage:
``python benchmarks/bench_synthetic.py [--quick] [--only attacks|fidelity] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from itertools import combinations

import numpy as np
import pandas as pd

from anoneval.core import Evaluator, Microdata

CATS = {"c0": 2, "c1": 5, "c2": 7, "c3": 9, "c4": 16, "c5": 40, "c6": 3}


def records(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """8 numeric and 7 categorical columns, correlated through a latent factor."""
    z = rng.normal(size=n)
    cols: dict[str, object] = {}
    for j in range(8):
        cols[f"x{j}"] = np.round(z * (j % 3) + rng.normal(size=n) * (1 + j), 3)
    for name, k in CATS.items():
        p = np.arange(k, 0, -1, dtype=float)
        cols[name] = np.array([f"{name}_{i}" for i in range(k)], dtype=object)[
            np.minimum((np.abs(z + rng.normal(size=n)) * k / 3).astype(int), k - 1)
            if k > 2 else rng.choice(k, size=n, p=p / p.sum())]
    return pd.DataFrame(cols)


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def ours(ev: Evaluator, released: Microdata, repeat: int) -> tuple[float, float, object]:
    """Best time of ``repeat`` evaluations, the load average before them, the last report."""
    load = os.getloadavg()[0]
    best, rep = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        rep = ev.evaluate(released)
        best = min(best, time.perf_counter() - t0)
    return best, load, rep


def row(name: str, ours: float, load: float, peer: float | str, target: float,
        note: str = "") -> None:
    """One line: our time and the load, the peer's time (or why there is none), peer/ours,
    the target."""
    ratio = f"{peer / ours:8.1f}x" if isinstance(peer, float) else f"   ({peer})"
    flag = "ok" if ours < target else "SLOW"
    print(f"{name:<24} {ours:8.2f} s (load {load:4.1f})  peer "
          f"{f'{peer:8.2f} s' if isinstance(peer, float) else ''} {ratio}  "
          f"target < {target:g} s {flag}{note}")


def bench_attacks(n: int, n_attacks: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    ori, ctl = records(n, rng), records(n, rng)
    syn = ori.copy()
    for j in range(8):
        syn[f"x{j}"] = syn[f"x{j}"] + np.round(rng.normal(size=n) * 0.5, 3)
    aux = [["x0", "x1", "c1", "c2"], ["x2", "x3", "c3", "c4"]]
    specs = {
        "SinglingOut": {"n_attacks": n_attacks, "n_cols": 3, "max_attempts": 200_000},
        "Linkability": {"n_attacks": n_attacks, "aux_cols": aux},
        "AttributeInference": {"n_attacks": n_attacks, "secret": "c5",
                               "aux_cols": [c for c in ori.columns if c != "c5"]},
        "MembershipInference": {"n_attacks": n_attacks},
    }
    try:
        import anonymeter.evaluators as am
    except ImportError:
        am = None
    print(f"attacks: {n} × {ori.shape[1]} records, {n_attacks} attacks")
    released = Microdata(syn)
    released.content_hash()
    for name, params in specs.items():
        ev = Evaluator(ori, [{"name": name, "params": params}], control=ctl)
        ev.prepare()
        t, load, _ = ours(ev, released, repeat)
        peer: float | str = "anonymeter not installed" if am is None else "no peer"
        if am is not None and name != "MembershipInference":
            if name == "SinglingOut":
                peer_ev = am.SinglingOutEvaluator(ori, syn, n_attacks=n_attacks, n_cols=3,
                                                  control=ctl, max_attempts=200_000)
                peer = timed(lambda e=peer_ev: e.evaluate(mode="multivariate"))
            elif name == "Linkability":
                peer_ev = am.LinkabilityEvaluator(ori, syn, aux_cols=aux, n_attacks=n_attacks,
                                                  control=ctl)
                peer = timed(lambda e=peer_ev: e.evaluate(n_jobs=2))
            else:
                peer_ev = am.InferenceEvaluator(ori, syn, aux_cols=params["aux_cols"],
                                                secret="c5", n_attacks=n_attacks, control=ctl)
                peer = timed(lambda e=peer_ev: e.evaluate(n_jobs=2))
        row(name, t, load, peer, 30)


def bench_fidelity(n: int, repeat: int) -> None:
    rng = np.random.default_rng(1)
    ori, syn = records(n, rng), records(n, rng)
    numeric = [f"x{j}" for j in range(8)]
    cats = list(CATS)
    pair_cols = ["x0", "x1", "c1", "c2", "c4"]
    try:
        from sdmetrics.column_pairs import ContingencySimilarity, CorrelationSimilarity
        from sdmetrics.single_column import (
            CategoryCoverage,
            RangeCoverage,
            StatisticSimilarity,
            TVComplement,
        )
    except ImportError:
        peers = {}
    else:
        peers = {
            "TVDistance": lambda: [TVComplement.compute(ori[c], syn[c]) for c in cats],
            "ContingencyDistance": lambda: [ContingencySimilarity.compute(
                ori[[a, b]], syn[[a, b]],
                continuous_column_names=[c for c in (a, b) if c in numeric] or None)
                for a, b in combinations(pair_cols, 2)],
            "CorrelationDifference": lambda: [CorrelationSimilarity.compute(
                ori[[a, b]], syn[[a, b]]) for a, b in combinations(numeric, 2)],
            "StatisticDifference": lambda: [StatisticSimilarity.compute(
                ori[c], syn[c], statistic="median") for c in numeric],
            "RangeCoverageLoss": lambda: [RangeCoverage.compute(ori[c], syn[c])
                                          for c in numeric],
            "CategoryCoverageLoss": lambda: [CategoryCoverage.compute(ori[c], syn[c])
                                             for c in cats],
        }
    specs = {
        "TVDistance": {}, "ContingencyDistance": {"columns": pair_cols},
        "CorrelationDifference": {}, "StatisticDifference": {"statistic": "median"},
        "RangeCoverageLoss": {}, "CategoryCoverageLoss": {},
        "CopiedRows": {},
        "KSDistance": {},
        "KLDivergence": {"columns": ["x0", "x1", "x2"]},
        "MomentDiscrepancy": {},
        "MutualInformationChange": {"columns": ["x0", "x1", "x2"]},
        "PropensityMSE": {"columns": ["x0", "x1", "x2", "c1", "c2"]},
        "PropensityMSE (cart)": {"columns": ["x0", "x1", "x2", "c1", "c2"], "model": "cart"},
        "MLEfficacy": {"target": "c1", "features": ["x0", "x1", "x2", "c2", "c3"]},
        "MLEfficacy (tree)": {"target": "x4", "features": ["x0", "x1", "x2", "c2", "c3"],
                              "model": "tree"},
    }
    print(f"fidelity: {n} × {ori.shape[1]} records per side")
    released = Microdata(syn)
    released.content_hash()
    for label, params in specs.items():
        name = label.split(" ")[0]
        ev = Evaluator(ori, [{"name": name, "label": label, "params": params}])
        ev.prepare()
        t, load, rep = ours(ev, released, repeat)
        measure = rep.measures[0]  # type: ignore[attr-defined]
        if measure.error:
            raise RuntimeError(f"{label}: {measure.error}")
        sizes = measure.details.get("model_rows") or measure.details.get("n_train_release")
        peer = timed(peers[label]) if label in peers else (
            "no SDMetrics peer" if peers else "SDMetrics not installed")
        row(label, t, load, peer, 10, f"  (model rows {sizes})" if sizes else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=["attacks", "fidelity"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.only != "fidelity":
        bench_attacks(5_000 if args.quick else 50_000, 200 if args.quick else 2_000,
                      args.repeat)
    if args.only != "attacks":
        bench_fidelity(20_000 if args.quick else 1_000_000, args.repeat)


if __name__ == "__main__":
    main()
