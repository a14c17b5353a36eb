"""Benchmark: the HTML report of a 500-variant ``evaluate_many`` run.

    python benchmarks/bench_html.py [--variants 500] [--rows 2000] [--quick]

The original is drawn (with replacement, seed 0) from the adult extract; the variants
generalize its quasi-identifiers at level vectors of the shipped hierarchies with k from 2 to
50 (``examples/make_adult_variants.py``), cycling until there are ``--variants`` of them.
Measures: KAnonymity, DM, AECS and NonUniformEntropy.

Printed, in seconds: the evaluation (for scale), :func:`render_html` with its default for many
variants (one chart per measure across variants, the summary table; target under 15 s), and
the per-variant rendering (``variant_sections=True``, every variant's plots and details, as
before) on a slice of 25 variants scaled to all of them, measured in the same run; the ratio
is per-variant over summary. The number of images is printed for both.
"""

from __future__ import annotations

import argparse
import itertools
import time

from _adult import generalize, measures, read_adult
from bench_many import LEVELS

from anoneval.core import Evaluator
from anoneval.core.report.html import render_html
from anoneval.core.report.model import MultiReport, build_risk_utility

SLICE = 25


def main(argv: list[str] | None = None) -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description="HTML report of many variants")
    parser.add_argument("--variants", type=int, default=500)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="30 variants of 500 rows")
    args = parser.parse_args(argv)
    if args.quick:
        args.variants, args.rows = 30, 500
    adult = read_adult()
    original = adult.iloc[np.random.default_rng(0).integers(0, len(adult), args.rows)]
    original = original.reset_index(drop=True)
    base = {(tuple(lv), k): generalize(original, lv, k)[0]
            for (lv, _), k in itertools.product(LEVELS, (2, 5, 10, 20, 50))}
    keys = list(itertools.islice(itertools.cycle(base), args.variants))
    variants = {f"v{i:03d}_L{''.join(map(str, lv))}_k{k}": base[(lv, k)]
                for i, (lv, k) in enumerate(keys)}
    t0 = time.perf_counter()
    report = Evaluator(original, measures()).evaluate_many(variants)
    t_eval = time.perf_counter() - t0
    t0 = time.perf_counter()
    page = render_html(report)
    t_summary = time.perf_counter() - t0
    part = report.variants[:SLICE]
    sliced = MultiReport(anoneval_version=report.anoneval_version, seed=report.seed,
                         inputs=report.inputs, variants=part,
                         risk_utility=build_risk_utility(part))
    t0 = time.perf_counter()
    full = render_html(sliced, variant_sections=True)
    t_slice = time.perf_counter() - t0
    t_full = t_slice * len(variants) / SLICE
    print(f"HTML report: {len(variants)} variants of a {args.rows:,}-row table, "
          f"{len(report.variants[0].measures)} measures (evaluation {t_eval:.1f} s)")
    print(f"  {'summary rendering (default), all variants':<48}: {t_summary:8.2f} s, "
          f"{page.count('<img '):,} images, {len(page) / 1e6:.1f} MB (target < 15 s)")
    print(f"  {'per-variant rendering, scaled from ' + str(SLICE):<48}: {t_full:8.2f} s, "
          f"{full.count('<img '):,} images for {SLICE}")
    print(f"  {'ratio per-variant / summary':<48}: {t_full / t_summary:8.1f}x")


if __name__ == "__main__":
    main()
