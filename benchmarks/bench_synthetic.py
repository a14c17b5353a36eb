"""Speed of the attacks and fidelity measures, against anonymeter and SDMetrics when installed.

Targets: each attack with 2,000 attack queries on 50,000 × 15 mixed-type records in under
30 s; each fidelity measure on 10⁶ records in under 10 s. The peers run in the same process
on the same data, interleaved with ours (see docs/scaling.md, "How benchmarks measure"):
anonymeter's evaluators (built and run, n_jobs=2) for the attacks, SDMetrics' column and
column-pair metrics (looped over the same columns and pairs) for the fidelity measures; a peer
that is not installed is reported as such (anonymeter pins numpy < 1.27; beside numpy 2 it
runs when installed with ``pip install --no-deps anonymeter polars polars-runtime-32``). Ours
is what a user calls, ``anoneval.Evaluator(original, [measure], control=...).evaluate(release)``
(preparation, validation and the report's content hashes included), on fresh copies of the
loaded frames made outside the clock; each side gets one untimed warm-up call. Printed per
measure: both medians (wall and CPU seconds), the per-round ratio ours/peer as
min/median/max, and our median against the absolute target. The model-based measures
(PropensityMSE, MLEfficacy) fit on a seeded sample of ``max_rows`` records per data set; the
sizes used are printed. Usage: ``python benchmarks/bench_synthetic.py [--quick]
[--only attacks|fidelity] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from _common import CATS, evaluate_one, header, interleaved, records, show, timed_rounds

import anoneval


def fresh_of(*frames: pd.DataFrame) -> Callable[[], tuple[pd.DataFrame, ...]]:
    """Each call's inputs: copies of the loaded frames (made outside the clock)."""
    return lambda: tuple(f.copy() for f in frames)


def measure(name: str, spec: dict[str, Any], peer: Callable[..., object] | None,
            peer_name: str, fresh: Callable[[], tuple[pd.DataFrame, ...]], rounds: int,
            target: float, note: str = "") -> None:
    """One line: ours against the peer (interleaved) or, without one, ours alone and why
    (``peer_name``); then whether our median meets the absolute ``target`` (seconds)."""
    def ours(o: pd.DataFrame, s: pd.DataFrame, c: pd.DataFrame | None = None) -> object:
        return evaluate_one(o, s, spec, control=c)

    def absolute(wall: float) -> str:
        return f"  ours < {target:g} s {'ok' if wall < target else 'SLOW'}{note}"
    if peer is not None:
        c = interleaved(ours, peer, rounds, fresh, name)
        show(c, peer_name, width=24, note=absolute(statistics.median(c.ours)))
    else:
        wall, cpu = timed_rounds(ours, rounds, fresh)
        print(f"{name:<24} ours {wall:8.3f} s (cpu {cpu:7.3f})  ({peer_name}){absolute(wall)}",
              flush=True)


def bench_attacks(n: int, n_attacks: int, rounds: int) -> None:
    rng = np.random.default_rng(0)
    ori, ctl = records(n, rng), records(n, rng)
    syn = ori.copy()
    for j in range(8):
        syn[f"x{j}"] = syn[f"x{j}"] + np.round(rng.normal(size=n) * 0.5, 3)
    aux = [["x0", "x1", "c1", "c2"], ["x2", "x3", "c3", "c4"]]
    inference_aux = [c for c in ori.columns if c != "c5"]
    specs = {
        "SinglingOut": {"n_attacks": n_attacks, "n_cols": 3, "max_attempts": 200_000},
        "Linkability": {"n_attacks": n_attacks, "aux_cols": aux},
        "AttributeInference": {"n_attacks": n_attacks, "secret": "c5",
                               "aux_cols": inference_aux},
        "MembershipInference": {"n_attacks": n_attacks},
    }
    try:
        import anonymeter.evaluators as am
    except ImportError:
        am = None
    peers: dict[str, Callable[..., object]] = {} if am is None else {
        "SinglingOut": lambda o, s, c: am.SinglingOutEvaluator(
            o, s, n_attacks=n_attacks, n_cols=3, control=c, max_attempts=200_000).evaluate(
            mode="multivariate"),
        "Linkability": lambda o, s, c: am.LinkabilityEvaluator(
            o, s, aux_cols=aux, n_attacks=n_attacks, control=c).evaluate(n_jobs=2),
        "AttributeInference": lambda o, s, c: am.InferenceEvaluator(
            o, s, aux_cols=inference_aux, secret="c5", n_attacks=n_attacks,
            control=c).evaluate(n_jobs=2),
    }
    header(f"attacks: {n} × {ori.shape[1]} records, {n_attacks} attacks, ours vs anonymeter",
           rounds)
    for name, params in specs.items():
        measure(name, {"name": name, "params": params}, peers.get(name),
                "anonymeter" if name in peers else
                "anonymeter not installed" if am is None else "no peer",
                fresh_of(ori, syn, ctl), rounds, 30)


def bench_fidelity(n: int, rounds: int) -> None:
    rng = np.random.default_rng(1)
    ori, syn = records(n, rng), records(n, rng)
    numeric = [f"x{j}" for j in range(8)]
    cats = list(CATS)
    pair_cols = ["x0", "x1", "c1", "c2", "c4"]
    try:
        from sdmetrics.column_pairs import ContingencySimilarity, CorrelationSimilarity
        from sdmetrics.single_column import (
            CategoryCoverage,
            KSComplement,
            RangeCoverage,
            StatisticSimilarity,
            TVComplement,
        )
    except ImportError:
        peers: dict[str, Callable[..., object]] = {}
    else:
        peers = {
            "TVDistance": lambda o, s: [TVComplement.compute(o[c], s[c]) for c in cats],
            "ContingencyDistance": lambda o, s: [ContingencySimilarity.compute(
                o[[a, b]], s[[a, b]],
                continuous_column_names=[c for c in (a, b) if c in numeric] or None)
                for a, b in combinations(pair_cols, 2)],
            "CorrelationDifference": lambda o, s: [CorrelationSimilarity.compute(
                o[[a, b]], s[[a, b]]) for a, b in combinations(numeric, 2)],
            "StatisticDifference": lambda o, s: [StatisticSimilarity.compute(
                o[c], s[c], statistic="median") for c in numeric],
            "RangeCoverageLoss": lambda o, s: [RangeCoverage.compute(o[c], s[c])
                                               for c in numeric],
            "CategoryCoverageLoss": lambda o, s: [CategoryCoverage.compute(o[c], s[c])
                                                  for c in cats],
            "KSDistance": lambda o, s: [KSComplement.compute(o[c], s[c]) for c in numeric],
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
    header(f"fidelity: {n} × {ori.shape[1]} records per side, ours vs SDMetrics", rounds)
    for label, params in specs.items():
        name = label.split(" ")[0]
        spec = {"name": name, "label": label, "params": params}
        details = anoneval.Evaluator(ori, [spec]).evaluate(syn).measures[0].details
        sizes = details.get("model_rows") or details.get("n_train_release")
        measure(label, spec, peers.get(label),
                "SDMetrics" if label in peers else
                "no SDMetrics peer" if peers else "SDMetrics not installed",
                fresh_of(ori, syn), rounds, 10, f"  (model rows {sizes})" if sizes else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=["attacks", "fidelity"])
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 3, --quick 1)")
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    if args.only != "fidelity":
        bench_attacks(5_000 if args.quick else 50_000, 200 if args.quick else 2_000, rounds)
    if args.only != "attacks":
        bench_fidelity(20_000 if args.quick else 1_000_000, rounds)


if __name__ == "__main__":
    main()
