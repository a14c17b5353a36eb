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

Run: ``python benchmarks/bench_two_sample.py [--quick]`` (``--quick``: 5,000 records).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from anoneval.core.api import Context, Microdata
from anoneval.registry import default_registry

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


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="5,000 records")
    args = parser.parse_args(argv)
    n = 5_000 if args.quick else 100_000
    ori, syn = records(n, 0, 0.0), records(n, 1, 0.2)
    reg = default_registry()
    o, s = Microdata(ori), Microdata(syn)

    def ours(name: str, **params: object) -> Callable[[], object]:
        measure = reg.create("loss_measure", name, params)
        return lambda: measure.compute(o, s, Context(seed=0))

    from sdmetrics.single_column import (
        BoundaryAdherence,
        CategoryAdherence,
        MissingValueSimilarity,
    )
    from sdmetrics.single_table import LogisticDetection
    numeric = [c for c in ori if c.startswith("x")]
    categorical = [c for c in ori if c.startswith("c")]
    peers = {
        "DetectionAUC": lambda: LogisticDetection.compute(ori, syn),
        "BoundaryAdherence": lambda: [BoundaryAdherence.compute(ori[c], syn[c])
                                      for c in numeric],
        "CategoryAdherence": lambda: [CategoryAdherence.compute(ori[c], syn[c])
                                      for c in categorical],
        "MissingValueSimilarity": lambda: [MissingValueSimilarity.compute(ori[c], syn[c])
                                           for c in ori],
    }
    print(f"{n:,} × 15 mixed records per side")
    for name in OURS:
        mine = timed(ours(name))  # interleaved: ours, then the peer, measure by measure
        flag = "ok" if mine < TARGET else "SLOW"
        line = f"{name:<24} {mine:8.2f} s  target < {TARGET:.0f} s {flag}"
        if name in peers:
            theirs = timed(peers[name])
            line += f"   SDMetrics {theirs:8.2f} s   ratio {theirs / mine:7.2f}×"
        print(line)
    for name in ESTIMATED:
        low, full = timed(ours(name, n_boot=10)), timed(ours(name))
        print(f"{name:<24} n_boot 200 / n_boot 10 {full / low:6.2f}× (limit 5×)")
    synthcity(ori, syn, ours)


def synthcity(ori: pd.DataFrame, syn: pd.DataFrame,
              ours: Callable[..., Callable[[], object]]) -> None:
    """synthcity's PRDC and AlphaPrecision on our 5,000-record samples' embedding, when it is
    installed (it pins torch < 2.3 and numpy < 2, so it is not in the test extra)."""
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
        mine, other = timed(ours(name)), timed(theirs)
        print(f"{name:<24} {mine:8.2f} s   synthcity {other:8.2f} s   ratio {other / mine:7.2f}×")


if __name__ == "__main__":
    main()
