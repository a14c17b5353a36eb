"""Speed of the ME family's inspections (issue 7): ``python benchmarks/bench_maxent.py [--quick]
[--rounds N]``.

Cases (targets from the issue), each timed through the public API (``anoneval.core.evaluate``)
and compared, in the same run, with a baseline at a size the baseline can handle:

- EnergyStatistic, n = m = 20,000 in 5-D: < 10 s and peak memory < 1 GB (tracemalloc peak of
  the call). Baseline: ``dcor.homogeneity.energy_test_statistic`` (its default path broadcasts
  an N×N×d array; out of memory at 24 GB for this size) at n = m = 2,000.
- EnergyStatistic in 1-D, n = m = 1,000,000: < 2 s. Baseline: dcor at n = m = 4,000.
- ClosePairs, 100,000 × 100,000 points in 2-D: < 5 s. Baseline: a naive blocked n×m distance
  count at 10,000 × 10,000.
At the baseline's size the two sides run interleaved on the same (already loaded) frames, after
the untimed call of each that checks the values agree; printed are both medians with CPU
seconds and the per-round ratio ours/baseline as min/median/max (< 1: we are faster; see
docs/scaling.md, "How benchmarks measure"). At the target's size, the traced call (memory) is
the warm-up and the median of ``--rounds`` untimed-by-tracemalloc calls is checked.
"""

from __future__ import annotations

import argparse
import tracemalloc
from collections.abc import Callable

import numpy as np
import pandas as pd
from _common import header, interleaved, show, timed_rounds

from anoneval.core import evaluate


def traced(fn: Callable[[], object]) -> tuple[float, object]:
    """(peak MiB traced during the call, result)."""
    tracemalloc.start()
    try:
        out = fn()
        return tracemalloc.get_traced_memory()[1] / 2**20, out
    finally:
        tracemalloc.stop()


def frames(rng: np.random.Generator, n: int, m: int, d: int) -> tuple[pd.DataFrame, ...]:
    cols = [f"c{j}" for j in range(d)]
    return (pd.DataFrame(rng.normal(size=(n, d)), columns=cols),
            pd.DataFrame(rng.normal(0.05, 1.0, size=(m, d)), columns=cols))


def measure(a: pd.DataFrame, b: pd.DataFrame, spec: dict) -> float:
    m = evaluate(a, b, [spec]).measures[0]
    if m.error:
        raise RuntimeError(m.error)
    return float(m.value)


def target_size(name: str, a: pd.DataFrame, b: pd.DataFrame, spec: dict, target: float,
                rounds: int, mem_target: float | None = None) -> float:
    """Our median at the target's size (a first, traced call as the warm-up); the value."""
    peak, value = traced(lambda: measure(a, b, spec))
    wall, cpu = timed_rounds(lambda: measure(a, b, spec), rounds, warm_up=False)
    mem = f", peak {peak:.0f} MiB (target < {mem_target:.0f})" if mem_target else ""
    print(f"{name:<34} ours {wall:8.3f} s (cpu {cpu:7.3f})  target < {target} s "
          f"{'ok' if wall < target else 'SLOW'}{mem}; value {float(value):.4g}", flush=True)
    return float(value)


def energy_case(rng, n: int, d: int, base_n: int, target: float, mem_target: float | None,
                rounds: int):
    import dcor

    spec = {"name": "EnergyStatistic", "params": {"resamples": 0}}
    a, b = frames(rng, n, n, d)
    target_size(f"EnergyStatistic {d}-D n=m={n:,}", a, b, spec, target, rounds, mem_target)
    sa, sb = frames(rng, base_n, base_n, d)

    def ref() -> float:
        return float(dcor.homogeneity.energy_test_statistic(sa.to_numpy(), sb.to_numpy()))
    v_ours, v_ref = measure(sa, sb, spec), ref()  # also each side's warm-up (dcor's numba)
    assert abs(v_ours - v_ref) <= 1e-8 * abs(v_ref), (v_ours, v_ref)
    show(interleaved(lambda: measure(sa, sb, spec), ref, rounds, name=f"  vs dcor at n=m="
                     f"{base_n:,}", warm_up=False), "dcor")


def close_pairs_case(rng, n: int, base_n: int, target: float, rounds: int):
    spec = {"name": "ClosePairs", "params": {"d0": 0.01}}
    a, b = frames(rng, n, n, 2)
    target_size(f"ClosePairs 2-D {n:,}x{n:,}", a, b, spec, target, rounds)
    sa, sb = frames(rng, base_n, base_n, 2)

    def ref() -> int:
        return naive_close_pairs(sa.to_numpy(), sb.to_numpy(), 0.01)
    v_ours, count = measure(sa, sb, spec), ref()
    assert abs(v_ours - count / base_n**2) < 1e-15
    show(interleaved(lambda: measure(sa, sb, spec), ref, rounds,
                     name=f"  vs naive blocked at {base_n:,}", warm_up=False), "naive")


def naive_close_pairs(x: np.ndarray, y: np.ndarray, d0: float, block: int = 1000) -> int:
    total = 0
    for s in range(0, len(x), block):
        dist = np.sqrt(((x[s:s + block, None, :] - y[None, :, :]) ** 2).sum(axis=2))
        total += int((dist <= d0).sum())
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--rounds", type=int, help="rounds (default 3, --quick 1)")
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    rng = np.random.default_rng(0)
    header("ME inspections through evaluate(); against a baseline at its size", rounds)
    if args.quick:
        energy_case(rng, 2_000, 5, 500, 10, 1024, rounds)
        energy_case(rng, 50_000, 1, 1_000, 2, None, rounds)
        close_pairs_case(rng, 10_000, 1_000, 5, rounds)
    else:
        energy_case(rng, 20_000, 5, 2_000, 10, 1024, rounds)
        energy_case(rng, 1_000_000, 1, 4_000, 2, None, rounds)
        close_pairs_case(rng, 100_000, 10_000, 5, rounds)


if __name__ == "__main__":
    main()
