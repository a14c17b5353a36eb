"""Benchmark: ``evaluate_many`` on 10 anonymized variants of a 100,000-row table.

    python benchmarks/bench_many.py [--quick]

The table is drawn (with replacement, seed 0) from the adult extract; the variants generalize
its quasi-identifiers with the shipped hierarchies at 10 level vectors and suppress classes
smaller than k (``examples/make_adult_variants.py``). Measures: KAnonymity, DM, AECS and
NonUniformEntropy with hierarchies.

Printed, in seconds:

- original-side work: ``Evaluator.prepare()`` (every measure's ``prepare`` and the original's
  content hash), done once;
- per-variant work: ``Evaluator.evaluate`` for each variant on the prepared evaluator (the first
  variant also fills the original's lazily cached column codes);
- the total of ``evaluate_many`` on a fresh evaluator, against 10 independent ``evaluate`` calls
  (each redoes the original-side work) measured in the same run: the ratio is the baseline's
  time over evaluate_many's.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd
from _adult import generalize, measures, read_adult

from anoneval.core import Evaluator, evaluate

LEVELS = [  # sex, age, race, marital-status, education, native-country, workclass; then k
    ([0, 1, 0, 0, 0, 0, 0], 2), ([0, 1, 0, 1, 1, 1, 1], 2), ([0, 1, 0, 1, 1, 1, 1], 5),
    ([0, 2, 0, 1, 1, 1, 1], 5), ([0, 2, 0, 1, 2, 1, 1], 5), ([0, 2, 1, 1, 2, 1, 1], 10),
    ([1, 2, 1, 1, 2, 1, 1], 10), ([1, 3, 1, 1, 2, 2, 1], 10), ([1, 3, 1, 2, 2, 2, 2], 20),
    ([1, 3, 1, 2, 3, 2, 2], 20),
]


def make_data(rows: int) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    adult = read_adult()
    take = np.random.default_rng(0).integers(0, len(adult), rows)
    original = adult.iloc[take].reset_index(drop=True)
    variants = {f"L{''.join(map(str, lv))}_k{k}": generalize(original, lv, k)[0]
                for lv, k in LEVELS}
    return original, variants


def row(label: str, seconds: float, note: str = "") -> None:
    print(f"  {label:<44}: {seconds:8.3f} s" + (f" ({note})" if note else ""))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="evaluate_many against independent evaluate")
    parser.add_argument("--quick", action="store_true", help="5,000 rows instead of 100,000")
    args = parser.parse_args(argv)
    rows = 5_000 if args.quick else 100_000
    original, variants = make_data(rows)
    ms = measures()
    print(f"evaluate_many: {len(variants)} variants of a {rows:,}-row table, "
          f"measures {', '.join(str(m['name']) for m in ms)}")

    ev = Evaluator(original, ms)
    t0 = time.perf_counter()
    ev.prepare()
    t_original = time.perf_counter() - t0
    per_variant = []
    for name, frame in variants.items():
        t0 = time.perf_counter()
        report = ev.evaluate(frame, variant=name)
        per_variant.append(time.perf_counter() - t0)
        if not report.ok:
            failed = [f"{m.label}: {m.error}" for m in report.measures if m.error]
            raise SystemExit(f"{name}: measures failed: {failed}")

    t0 = time.perf_counter()
    multi = Evaluator(original, ms).evaluate_many(variants)
    t_many = time.perf_counter() - t0
    t0 = time.perf_counter()
    singles = [evaluate(original, frame, ms) for frame in variants.values()]
    t_independent = time.perf_counter() - t0
    same = all(a.to_frame()["value"].equals(b.to_frame()["value"])
               for a, b in zip(multi.variants, singles, strict=True))

    n = len(variants)
    row("original-side work (prepare + hash), once", t_original)
    row("per-variant work, first variant", per_variant[0],
        "also fills the original's cached column codes")
    row("per-variant work, median of the others", statistics.median(per_variant[1:]))
    row(f"prepare + {n} variants", t_original + sum(per_variant))
    row("evaluate_many total (fresh evaluator)", t_many)
    row(f"baseline: {n} independent evaluate calls", t_independent)
    print(f"  {'ratio baseline / evaluate_many':<44}: {t_independent / t_many:8.2f}x "
          "(target: > 1, original-side work done once)")
    print(f"  {'same values as the independent calls':<44}: {same}")


if __name__ == "__main__":
    main()
