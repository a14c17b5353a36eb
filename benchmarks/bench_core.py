"""Framework overhead per measure call, against calling the measure directly.

Target: under 1 ms per measure call. Both paths are timed in the same run on the same data:
``direct`` calls ``measure.compute(original, anonymized, ctx)``; ``framework`` calls
``Evaluator.evaluate(anonymized)``, which adds the lifecycle hooks, timing, error capture,
input hashing and report assembly. Usage: ``python benchmarks/bench_core.py [--quick]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from anoneval.core import Evaluator
from anoneval.core.api import Context, MeasureResult, Microdata, RiskMeasure
from anoneval.registry import build_registry


class Noop(RiskMeasure):
    name = "Noop"
    description = "Does almost nothing, so that only the framework is timed."
    inputs = "either"

    def compute(self, original, anonymized, ctx) -> MeasureResult:  # type: ignore[no-untyped-def]
        return MeasureResult(value=float(len(anonymized)))


def best_of(fn, repeat: int, number: int) -> float:  # type: ignore[no-untyped-def]
    """Best mean seconds per call over ``repeat`` batches of ``number`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def time_case(registry, frame: pd.DataFrame, n_measures: int,  # type: ignore[no-untyped-def]
              number: int) -> tuple[float, float]:
    """(direct, framework) milliseconds for ``n_measures`` Noop measures on ``frame``."""
    measures = [{"name": "Noop", "label": f"m{i}"} for i in range(n_measures)]
    ev = Evaluator(frame, measures, registry=registry)
    original, anonymized = Microdata(frame), Microdata(frame)
    ctx = Context(registry=registry)
    direct = best_of(lambda: [p.measure.compute(original, anonymized, ctx)
                              for p in ev.measures], 5, number)
    # a new anonymized DataFrame each call, as a benchmark loop over variants would pass
    framework = best_of(lambda: ev.evaluate(frame), 5, number)
    return direct * 1e3, framework * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    number = 50 if args.quick else 500
    registry = build_registry(entry_points=False)
    registry.register(Noop)
    rng = np.random.default_rng(0)
    print(f"{'case':<40} {'direct ms':>10} {'framework ms':>13} {'overhead ms':>12} "
          f"{'target':>7} {'ratio':>6}")
    for rows, n_measures in [(100, 1), (100, 10), (10_000, 10)]:
        frame = pd.DataFrame({"a": rng.integers(0, 5, rows), "b": rng.integers(0, 5, rows)})
        direct_ms, framework_ms = time_case(registry, frame, n_measures, number)
        overhead = (framework_ms - direct_ms) / n_measures
        print(f"{f'{rows} rows, {n_measures} measures':<40} {direct_ms:>10.4f} "
              f"{framework_ms:>13.4f} {overhead:>12.4f} {'< 1':>7} "
              f"{framework_ms / direct_ms:>6.1f}")
    print("overhead = (framework - direct) / measures; includes hashing the anonymized input "
          "once per evaluate call")


if __name__ == "__main__":
    main()
