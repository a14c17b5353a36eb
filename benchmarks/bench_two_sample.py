"""Speed of the two-sample fidelity measures (plugins/fidelity: detection, wasserstein, mmd,
prdc, alpha_precision, diagnostics).

Case: 100,000 × 15 mixed records (8 numeric with missing values, 7 categorical of 2–12
categories; seed 0) against an independent release of 100,000 drawn from a slightly shifted
model, each measure with its defaults (the quadratic ones on their seeded 5,000-record
samples; DetectionAUC on its default seeded 50,000-record sample per side): target < 30 s
each. Peers, run interleaved on the same data: SDMetrics' LogisticDetection (its 3 folds on
all records, which it cannot subsample), BoundaryAdherence, CategoryAdherence and
MissingValueSimilarity (one compute per column); synthcity's PRDC and AlphaPrecision when it
is installed (on 5,000-record samples, as ours). The interval's cost: each estimated measure
with its default ``n_boot`` (200) against ``n_boot = 10``, a ratio that must stay under 5×.

Ours is timed through ``anoneval.Evaluator(original, [measure]).evaluate(release)``, every side
on fresh copies of the loaded frames made outside the clock, after one untimed warm-up call per
side, the sides interleaved over ``--rounds`` rounds; printed: both medians with CPU seconds
and the per-round ratio ours/peer (or n_boot 200 / n_boot 10) as min/median/max (see
docs/scaling.md, "How benchmarks measure"). Run: ``python benchmarks/bench_two_sample.py
[--quick] [--rounds N]`` (``--quick``: 2,000 records, one round).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from _common import compare, evaluate_one, header, interleaved, show, timed_rounds

TARGET = 30.0
OURS = ["DetectionAUC", "WassersteinDistance", "MMD", "PRDC", "AlphaPrecision",
        "BoundaryAdherence", "CategoryAdherence", "MissingValueSimilarity"]
ESTIMATED = ["PRDC", "AlphaPrecision"]  # bootstrap intervals (the others are closed form)


def records(n: int, seed: int, shift: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cols: dict[str, np.ndarray] = {}
    base = rng.normal(size=n)
    for i in range(8):
        v = base * 0.5 + rng.normal(size=n) * (1 + i / 4) + shift * i / 8
        v[rng.random(n) < 0.02] = np.nan
        cols[f"x{i}"] = v
    for i in range(7):
        k = 2 + (i * 5) % 11
        p = rng.dirichlet(np.ones(k) * (1 + shift))
        cols[f"c{i}"] = np.array([f"v{j}" for j in range(k)], dtype=object)[
            rng.choice(k, size=n, p=p)]
    return pd.DataFrame(cols)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2,000 records")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 3, --quick 1)")
    args = parser.parse_args(argv)
    n = 2_000 if args.quick else 100_000
    rounds = args.rounds or (1 if args.quick else 3)
    ori, syn = records(n, 0, 0.0), records(n, 1, 0.2)

    def fresh() -> tuple[pd.DataFrame, pd.DataFrame]:
        return ori.copy(), syn.copy()

    def ours(name: str, **params: Any) -> Callable[[pd.DataFrame, pd.DataFrame], object]:
        spec = {"name": name, "params": params}
        return lambda o, s: evaluate_one(o, s, spec)

    from sdmetrics.single_column import (
        BoundaryAdherence,
        CategoryAdherence,
        MissingValueSimilarity,
    )
    from sdmetrics.single_table import LogisticDetection
    numeric = [c for c in ori if c.startswith("x")]
    categorical = [c for c in ori if c.startswith("c")]
    peers: dict[str, Callable[[pd.DataFrame, pd.DataFrame], object]] = {
        "DetectionAUC": lambda o, s: LogisticDetection.compute(o, s),
        "BoundaryAdherence": lambda o, s: [BoundaryAdherence.compute(o[c], s[c])
                                           for c in numeric],
        "CategoryAdherence": lambda o, s: [CategoryAdherence.compute(o[c], s[c])
                                           for c in categorical],
        "MissingValueSimilarity": lambda o, s: [MissingValueSimilarity.compute(o[c], s[c])
                                                for c in o],
    }
    header(f"{n:,} × 15 mixed records per side, evaluate() vs SDMetrics", rounds)
    for name in OURS:
        if name in peers:
            c = interleaved(ours(name), peers[name], rounds, fresh, name)
            mine = statistics.median(c.ours)
            show(c, "SDMetrics", width=24,
                 note=f"  ours < {TARGET:.0f} s {'ok' if mine < TARGET else 'SLOW'}")
        else:
            mine, cpu = timed_rounds(ours(name), rounds, fresh)
            print(f"{name:<24} ours {mine:8.3f} s (cpu {cpu:7.3f})  (no peer)  ours < "
                  f"{TARGET:.0f} s {'ok' if mine < TARGET else 'SLOW'}", flush=True)
    header("the interval's cost: n_boot 200 against n_boot 10 (ratio limit 5)", rounds)
    for name in ESTIMATED:
        compare(name, ours(name), ours(name, n_boot=10), rounds, peer_name="n_boot 10",
                target=5, fresh=fresh, width=24)
    synthcity(ori, syn, ours, rounds)


def synthcity(ori: pd.DataFrame, syn: pd.DataFrame,
              ours: Callable[..., Callable[[pd.DataFrame, pd.DataFrame], object]],
              rounds: int) -> None:
    """synthcity's PRDC and AlphaPrecision on our 5,000-record samples' embedding, when it is
    installed (it pins torch < 2.3 and numpy < 2, so it is not in the test extra); ours is the
    whole measure through evaluate()."""
    try:
        from synthcity.metrics.eval_statistical import AlphaPrecision, PRDCScore
    except ImportError:
        print("synthcity: not installed, skipped")
        return
    from anoneval.plugins.fidelity._embed import embed
    rng = np.random.default_rng(0)
    n = min(5000, len(ori), len(syn))
    x, y = embed(ori.iloc[rng.choice(len(ori), n, replace=False)],
                 syn.iloc[rng.choice(len(syn), n, replace=False)], list(ori.columns))
    for name, theirs in (("PRDC", lambda: PRDCScore(nearest_k=5)._compute_prdc(x, y)),
                         ("AlphaPrecision", lambda: AlphaPrecision().metrics(x, y))):
        compare(name, ours(name), lambda o, s, fn=theirs: fn(), rounds, peer_name="synthcity",
                fresh=lambda: (ori.copy(), syn.copy()), width=24)


if __name__ == "__main__":
    main()
