"""Speed of IdentifiabilityScore and DOMIAS on 10⁵ × 15 mixed rows, against synthcity if importable.

Target (issue 28): each under 30 s wall on the 2-core machine. The data: 8 numeric and 7
categorical columns correlated through a latent factor (``bench_synthetic.records``), an
original of ``--rows`` records, a release of as many (half perturbed copies, half fresh draws)
and a control set of as many fresh draws. Each measure runs ``--repeat`` times; the best wall
time and the CPU time of that run (``time.process_time``: this process, both threads) are
printed with the 1-minute load average before the runs. synthcity's ``IdentifiabilityScore``
(its ``score`` after its encoding) runs on the same data when synthcity imports (it pins an
old torch, so it is usually absent; then our times are printed alone). Usage:
``python benchmarks/bench_synthetic_privacy.py [--quick] [--rows N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from anoneval.core.api import Context, Microdata
from anoneval.registry import build_registry


def records(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """8 numeric and 7 categorical columns, correlated through a latent factor."""
    cats = {"c0": 2, "c1": 5, "c2": 7, "c3": 9, "c4": 16, "c5": 40, "c6": 3}
    z = rng.normal(size=n)
    cols: dict[str, object] = {}
    for j in range(8):
        cols[f"x{j}"] = np.round(z * (j % 3) + rng.normal(size=n) * (1 + j), 3)
    for name, k in cats.items():
        idx = np.minimum((np.abs(z + rng.normal(size=n)) * k / 3).astype(int), k - 1)
        cols[name] = np.array([f"{name}_{i}" for i in range(k)], dtype=object)[idx]
    return pd.DataFrame(cols)


def data(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Original, release (half perturbed copies, half fresh) and control, ``n`` rows each."""
    rng = np.random.default_rng(seed)
    ori = records(n, rng)
    half = n // 2
    copy = ori.sample(half, random_state=1).reset_index(drop=True)
    for j in range(8):
        copy[f"x{j}"] = copy[f"x{j}"] + np.round(rng.normal(scale=0.1, size=half), 3)
    syn = pd.concat([copy, records(n - half, rng)], ignore_index=True)
    return ori, syn, records(n, rng)


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """Best wall time of ``repeat`` runs, the CPU time of that run, the last result."""
    best, cpu, out = float("inf"), float("nan"), None
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        wall = time.perf_counter() - t0
        if wall < best:
            best, cpu = wall, time.process_time() - c0
    return best, cpu, out


def ours(name: str, ori: pd.DataFrame, syn: pd.DataFrame, ctl: pd.DataFrame,
         params: dict) -> Callable[[], object]:
    measure = build_registry(entry_points=False).create("risk_measure", name, params)

    def run() -> object:
        return measure.compute(Microdata(ori), Microdata(syn),
                               Context(seed=0, control=Microdata(ctl)))
    return run


def synthcity_runs(ori: pd.DataFrame, syn: pd.DataFrame,
                   ctl: pd.DataFrame) -> dict[str, Callable[[], object]]:
    """synthcity's two metrics on the same data, or nothing when it does not import."""
    try:
        from synthcity.metrics.eval_privacy import IdentifiabilityScore
        from synthcity.plugins.core.dataloader import GenericDataLoader, create_from_info
    except Exception as exc:  # any import failure means "not available"
        print(f"synthcity not available ({type(exc).__name__}: {exc}); our times only")
        return {}
    x, y = GenericDataLoader(ori), GenericDataLoader(syn)
    _, encoders = create_from_info(pd.concat([ori, syn]), x.info()).encode()
    xe, ye = x.encode(encoders)[0], y.encode(encoders)[0]
    score = IdentifiabilityScore(use_cache=False)  # its "score" (score_OC trains a network)
    return {"IdentifiabilityScore": lambda: score._compute_scores(xe, ye)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10⁴ rows, one run")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    n, repeat = (10_000, 1) if args.quick else (args.rows, args.repeat)
    ori, syn, ctl = data(n)
    print(f"{n:,} × {ori.shape[1]} rows each side; load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    cases = {"IdentifiabilityScore": {}, "DOMIAS": {"n_attacks": 2000}}
    theirs = synthcity_runs(ori, syn, ctl)
    for name, params in cases.items():
        wall, cpu, res = timed(ours(name, ori, syn, ctl, params), repeat)
        line = (f"{name:22s} ours {wall:7.2f} s wall {cpu:7.2f} s CPU  value "
                f"{res.value:.4f}")  # type: ignore[attr-defined]
        if name in theirs:
            t_wall, t_cpu, _ = timed(theirs[name], 1)
            line += f"  synthcity {t_wall:7.2f} s wall {t_cpu:7.2f} s CPU ({t_wall / wall:.1f}×)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
