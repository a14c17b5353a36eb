"""Speed of the ME family's inspections (issue 7): ``python benchmarks/bench_maxent.py [--quick]``.

Cases (targets from the issue), each timed through the public API (``anoneval.core.evaluate``)
and compared, in the same run, with a baseline at a size the baseline can handle:

- EnergyStatistic, n = m = 20,000 in 5-D: < 10 s and peak memory < 1 GB (tracemalloc peak of
  the call). Baseline: ``dcor.homogeneity.energy_test_statistic`` (its default path broadcasts
  an N×N×d array; out of memory at 24 GB for this size) at n = m = 2,000.
- EnergyStatistic in 1-D, n = m = 1,000,000: < 2 s. Baseline: dcor at n = m = 4,000.
- ClosePairs, 100,000 × 100,000 points in 2-D: < 5 s. Baseline: a naive blocked n×m distance
  count at 10,000 × 10,000.
The ratio is baseline time / our time at the baseline's size (> 1: we are faster).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import pandas as pd

from anoneval.core import evaluate


def timed(fn: Callable[[], object], memory: bool = False) -> tuple[float, float, object]:
    """(seconds, peak MB traced during the call or nan, result)."""
    if memory:
        tracemalloc.start()
    t = time.perf_counter()
    out = fn()
    sec = time.perf_counter() - t
    peak = float("nan")
    if memory:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return sec, peak, out


def frames(rng: np.random.Generator, n: int, m: int, d: int) -> tuple[pd.DataFrame, ...]:
    cols = [f"c{j}" for j in range(d)]
    return (pd.DataFrame(rng.normal(size=(n, d)), columns=cols),
            pd.DataFrame(rng.normal(0.05, 1.0, size=(m, d)), columns=cols))


def measure(a: pd.DataFrame, b: pd.DataFrame, spec: dict) -> float:
    m = evaluate(a, b, [spec]).measures[0]
    if m.error:
        raise RuntimeError(m.error)
    return float(m.value)


def energy_case(rng, n: int, d: int, base_n: int, target: float, mem_target: float | None):
    import dcor

    spec = {"name": "EnergyStatistic", "params": {"resamples": 0}}
    a, b = frames(rng, n, n, d)
    sec, peak, value = timed(lambda: measure(a, b, spec), memory=mem_target is not None)
    sa, sb = frames(rng, base_n, base_n, d)
    ours, _, v_ours = timed(lambda: measure(sa, sb, spec))
    ref, _, v_ref = timed(lambda: float(dcor.homogeneity.energy_test_statistic(
        sa.to_numpy(), sb.to_numpy())))
    assert abs(v_ours - v_ref) <= 1e-8 * abs(v_ref), (v_ours, v_ref)
    mem = f", peak {peak:.0f} MB (target < {mem_target:.0f} MB)" if mem_target else ""
    print(f"EnergyStatistic {d}-D n=m={n:,}: {sec:.2f} s (target < {target} s){mem}; "
          f"E = {value:.4g}; vs dcor at n=m={base_n:,}: dcor {ref:.3f} s, ours {ours:.3f} s, "
          f"ratio {ref / ours:.1f}x")


def naive_close_pairs(x: np.ndarray, y: np.ndarray, d0: float, block: int = 1000) -> int:
    total = 0
    for s in range(0, len(x), block):
        dist = np.sqrt(((x[s:s + block, None, :] - y[None, :, :]) ** 2).sum(axis=2))
        total += int((dist <= d0).sum())
    return total


def close_pairs_case(rng, n: int, base_n: int, target: float):
    spec = {"name": "ClosePairs", "params": {"d0": 0.01}}
    a, b = frames(rng, n, n, 2)
    sec, _, value = timed(lambda: measure(a, b, spec))
    sa, sb = frames(rng, base_n, base_n, 2)
    ours, _, v_ours = timed(lambda: measure(sa, sb, spec))
    ref, _, count = timed(lambda: naive_close_pairs(sa.to_numpy(), sb.to_numpy(), 0.01))
    assert abs(v_ours - count / base_n**2) < 1e-15
    print(f"ClosePairs 2-D {n:,}x{n:,}: {sec:.2f} s (target < {target} s); pi_d = {value:.3g}; "
          f"vs naive blocked n×m at {base_n:,}: naive {ref:.3f} s, ours {ours:.3f} s, "
          f"ratio {ref / ours:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    if args.quick:
        energy_case(rng, 2_000, 5, 500, 10, 1024)
        energy_case(rng, 50_000, 1, 1_000, 2, None)
        close_pairs_case(rng, 10_000, 1_000, 5)
    else:
        energy_case(rng, 20_000, 5, 2_000, 10, 1024)
        energy_case(rng, 1_000_000, 1, 4_000, 2, None)
        close_pairs_case(rng, 100_000, 10_000, 5)


if __name__ == "__main__":
    main()
