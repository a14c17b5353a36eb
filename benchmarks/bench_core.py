"""Framework overhead per measure call, against calling the measure directly.

Target: under 1 ms per measure call. Both paths are timed in the same run on the same data,
interleaved over ``--rounds`` rounds of ``number`` calls each, after one untimed warm-up batch
per side (see docs/scaling.md, "How benchmarks measure"): ``direct`` calls
``measure.compute(original, anonymized, ctx)`` on fresh ``Microdata``; ``framework`` is what a
user calls, ``anoneval.Evaluator(frame, measures).evaluate(frame)`` (validation, the lifecycle
hooks, timing, error capture, input hashing and report assembly), and, for a loop over
variants, ``evaluate`` on one evaluator built before the clock. Printed per case: both
medians per call, the overhead per measure call (median framework − median direct, divided by
the measures) against the target, and the per-round ratio framework/direct as
min/median/max. Usage: ``python benchmarks/bench_core.py [--quick] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
import pandas as pd
from _common import header, interleaved

from anoneval.core import Evaluator
from anoneval.core.api import Context, MeasureResult, Microdata, RiskMeasure
from anoneval.registry import build_registry


class Noop(RiskMeasure):
    name = "Noop"
    description = "Does almost nothing, so that only the framework is timed."
    inputs = "either"

    def compute(self, original, anonymized, ctx) -> MeasureResult:  # type: ignore[no-untyped-def]
        return MeasureResult(value=float(len(anonymized)))


def batch(fn, number: int):  # type: ignore[no-untyped-def]
    """``number`` calls of ``fn`` as one timed call (a single call is too short to time)."""
    def run() -> None:
        for _ in range(number):
            fn()
    return run


def case(label: str, registry, frame: pd.DataFrame,  # type: ignore[no-untyped-def]
         n_measures: int, number: int, rounds: int, reuse: bool) -> None:
    """One printed line: ``n_measures`` Noop measures on ``frame``, per call."""
    measures = [{"name": "Noop", "label": f"m{i}"} for i in range(n_measures)]
    ev = Evaluator(frame, measures, registry=registry)
    planned = [p.measure for p in ev.measures]

    def direct() -> None:
        original, anonymized = Microdata(frame), Microdata(frame)
        ctx = Context(registry=registry)
        for m in planned:
            m.compute(original, anonymized, ctx)

    def framework() -> None:
        # a new anonymized DataFrame each call, as a loop over variants would pass
        (ev if reuse else Evaluator(frame, measures, registry=registry)).evaluate(frame.copy())
    c = interleaved(batch(framework, number), batch(direct, number), rounds, name=label)
    ours, theirs = statistics.median(c.ours) / number, statistics.median(c.peer) / number
    overhead = (ours - theirs) / n_measures * 1e3
    r = c.ratios
    print(f"{label:<48} {theirs * 1e3:>10.4f} {ours * 1e3:>13.4f} {overhead:>12.4f} "
          f"{'< 1':>7} {'ok' if overhead < 1 else 'SLOW':>5}   {min(r):6.1f} / "
          f"{statistics.median(r):6.1f} / {max(r):6.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5, --quick 2)")
    args = parser.parse_args()
    number = 20 if args.quick else 200
    rounds = args.rounds or (2 if args.quick else 5)
    registry = build_registry(entry_points=False)
    registry.register(Noop)
    rng = np.random.default_rng(0)
    header(f"framework vs direct, batches of {number} calls", rounds)
    print(f"{'case':<48} {'direct ms':>10} {'framework ms':>13} {'overhead ms':>12} "
          f"{'target':>7} {'':>5}   ratio min / median / max")
    for rows, n_measures in [(100, 1), (100, 10), (10_000, 10)]:
        frame = pd.DataFrame({"a": rng.integers(0, 5, rows), "b": rng.integers(0, 5, rows)})
        for reuse in (False, True):
            label = (f"{rows} rows, {n_measures} measures, "
                     + ("evaluator reused" if reuse else "Evaluator(...).evaluate"))
            case(label, registry, frame, n_measures, number, rounds, reuse)
    print("overhead = (framework - direct) / measures; includes validating and hashing the "
          "inputs on every evaluate call")


if __name__ == "__main__":
    main()
