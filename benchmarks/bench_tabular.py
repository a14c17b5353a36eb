"""Benchmark of the tabular sensitivity rules (issue 4).

Target: 10,000,000 contributions in 100,000 cells, every rule under 5 s with peak memory under
3 GB. Each rule is timed through ``anoneval.Evaluator(None, [rule]).evaluate(contributions)``
on a fresh copy of the loaded frame (so the cell ids are built in every call), as the median of
``--rounds`` calls after a warm-up call; memory is the tracemalloc peak of that warm-up call
(numpy and pandas report their buffers to tracemalloc). The baseline, a naive pandas
groupby-apply of the same rule, is interleaved with ours on a smaller table with the same
number of contributions per cell (one untimed call each first); printed: the per-round ratio
ours/baseline as min/median/max (see docs/scaling.md, "How benchmarks measure").

    python benchmarks/bench_tabular.py [--quick] [--rounds N]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from _common import evaluate_one, header, interleaved, timed_rounds

TARGET_S = 5.0
TARGET_GB = 3.0
CELLS = ["region", "activity"]


def make_data(n_records: int, n_cells: int, seed: int = 0) -> pd.DataFrame:
    """Contributions in ``n_cells`` cells (region × activity) of skewed sizes, lognormal values."""
    rng = np.random.default_rng(seed)
    n_act = 100
    cell = (n_cells * rng.random(n_records) ** 2).astype(np.int64)  # skewed: many small cells
    return pd.DataFrame({
        "region": (cell // n_act).astype(np.int32),
        "activity": (cell % n_act).astype(np.int16),
        "turnover": rng.lognormal(8.0, 1.5, n_records),
        "weight": rng.uniform(1.0, 5.0, n_records),
        "enterprise": rng.integers(0, n_records // 5, n_records),
    })


BASE = {"cells": CELLS, "magnitude": "turnover", "max_rows": 1000}
CASES: list[tuple[str, dict[str, Any]]] = [
    ("Dominance(1,75)", {"name": "Dominance", "params": {**BASE, "n": 1, "k": 75}}),
    ("Dominance(3,75)+freq(3)", {"name": "Dominance", "params": {
        **BASE, "n": 3, "k": 75, "min_contributors": 3}}),
    ("PPercent(10,n=1)", {"name": "PPercent", "params": {**BASE, "p": 10}}),
    ("PQRule(25,50,n=1)", {"name": "PQRule", "params": {**BASE, "p": 25, "q": 50}}),
    ("Threshold(3)", {"name": "Threshold", "params": {
        "cells": CELLS, "min_contributors": 3, "max_rows": 1000}}),
    ("SensitivityRules nk(3,75)+p(10)+freq(3)", {"name": "SensitivityRules", "params": {
        **BASE, "rules": [{"rule": "nk", "n": 3, "k": 75}, {"rule": "p", "p": 10},
                          {"rule": "freq", "min_contributors": 3}]}}),
    ("PPercent(10) holdings", {"name": "PPercent", "params": {
        **BASE, "p": 10, "contributor": "enterprise"}}),
    ("Dominance(1,75) weighted", {"name": "Dominance", "params": {**BASE, "weight": "weight"}}),
]


def naive(name: str) -> Callable[[pd.DataFrame], pd.Series]:
    """The same rule as a per-cell Python function under groupby-apply."""
    def nk(n: int, k: float) -> Callable[[pd.Series], bool]:
        return lambda s: s.nlargest(n).sum() > k / 100 * s.sum()

    def p_rule(p: float, q: float, n: int) -> Callable[[pd.Series], bool]:
        def f(s: pd.Series) -> bool:
            top = s.nlargest(n + 1)
            return s.sum() - top.sum() < p / q * top.iloc[0]
        return f

    def weighted_nk(g: pd.DataFrame) -> bool:
        g = g.sort_values("turnover", ascending=False)
        prev = g["weight"].cumsum() - g["weight"]
        top = (g["turnover"] * np.clip(1 - prev, 0, g["weight"])).sum()
        return top > 0.75 * (g["turnover"] * g["weight"]).sum()

    rules: dict[str, Callable[[pd.DataFrame], pd.Series]] = {
        "Dominance(1,75)": lambda d: d.groupby(CELLS)["turnover"].apply(nk(1, 75)),
        "Dominance(3,75)+freq(3)": lambda d: d.groupby(CELLS)["turnover"].apply(
            lambda s: nk(3, 75)(s) or len(s) < 3),
        "PPercent(10,n=1)": lambda d: d.groupby(CELLS)["turnover"].apply(p_rule(10, 100, 1)),
        "PQRule(25,50,n=1)": lambda d: d.groupby(CELLS)["turnover"].apply(p_rule(25, 50, 1)),
        "Threshold(3)": lambda d: d.groupby(CELLS)["turnover"].apply(lambda s: len(s) < 3),
        "SensitivityRules nk(3,75)+p(10)+freq(3)": lambda d: d.groupby(CELLS)["turnover"].apply(
            lambda s: nk(3, 75)(s) or p_rule(10, 100, 1)(s) or len(s) < 3),
        "PPercent(10) holdings": lambda d: d.groupby([*CELLS, "enterprise"])["turnover"].sum()
        .groupby(level=CELLS).apply(p_rule(10, 100, 1)),
        "Dominance(1,75) weighted": lambda d: d.groupby(CELLS)[["turnover", "weight"]].apply(
            weighted_nk),
    }
    return rules[name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--rounds", type=int, help="rounds (default 3, --quick 1)")
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    n_records, n_cells = (200_000, 2_000) if args.quick else (10_000_000, 100_000)
    b_records, b_cells = (20_000, 200) if args.quick else (200_000, 2_000)
    frame = make_data(n_records, n_cells)
    small = make_data(b_records, b_cells, seed=1)
    header(f"{n_records:,} contributions in {n_cells:,} cells through evaluate(); baseline: "
           f"naive groupby-apply, interleaved with ours on {b_records:,} in {b_cells:,} cells",
           rounds)
    print(f"{'case':42} {'ours s':>7} {'cpu s':>7} {'target':>7} {'peak GB':>8}   "
          f"{'ratio ours/baseline at the small size':>38}  value")
    for name, spec in CASES:
        tracemalloc.start()  # the warm-up call, traced
        value = evaluate_one(None, frame.copy(), spec)
        peak = tracemalloc.get_traced_memory()[1] / 1e9
        tracemalloc.stop()
        wall, cpu = timed_rounds(lambda d, spec=spec: evaluate_one(None, d, spec), rounds,
                                 lambda: (frame.copy(),), warm_up=False)
        c = interleaved(lambda d, spec=spec: evaluate_one(None, d, spec), naive(name), rounds,
                        lambda: (small.copy(),), name)
        r = c.ratios
        ratio = f"{min(r):.3g} / {statistics.median(r):.3g} / {max(r):.3g}"
        ok = "ok" if wall < TARGET_S and peak < TARGET_GB else "MISS"
        print(f"{name:42} {wall:7.2f} {cpu:7.2f} {TARGET_S:6.1f}s {peak:8.2f}   {ratio:>38}  "
              f"{value:.4f} {ok}", flush=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"process peak RSS (data included): {rss:.2f} GB")


if __name__ == "__main__":
    main()
