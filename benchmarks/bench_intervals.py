"""Benchmark: what the bootstrap intervals cost beside their point estimates.

    python benchmarks/bench_intervals.py [--rows 100000] [--n-boot 200] [--quick]

Data: ``--rows`` records of 6 standard-normal columns and a binary target (seed 0), the
release a noisy copy. For DistanceToClosestRecord (share mode) the point estimate is the
nearest-neighbour search (:func:`dcr_share`) and the bootstrap :func:`share_replicates`; for
MLEfficacy (linear) the point estimate is the measure's run without its bootstrap and the
bootstrap :func:`loss_replicates` on the same test set. Printed, in seconds: each part and the
ratio bootstrap / point estimate (target at most 5, issue 28).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from anoneval.core.api import Context, Microdata
from anoneval.plugins.fidelity.ml_efficacy import MLEfficacy, loss_replicates
from anoneval.plugins.similarity.distance_to_closest_record import dcr_share, share_replicates


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="cost of the bootstrap intervals")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="5,000 rows")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows = 5_000
    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.rows, 6))
    Y = X + rng.normal(0, 0.3, X.shape)

    t0 = time.perf_counter()
    _, _, dcr, nn_actual, _ = dcr_share(X, Y, 5.0)
    point = time.perf_counter() - t0
    t0 = time.perf_counter()
    share_replicates(nn_actual, dcr, 5.0, args.n_boot, np.random.default_rng(1))
    boot = time.perf_counter() - t0
    print(f"DistanceToClosestRecord  point {point:8.3f} s  bootstrap {boot:8.3f} s  "
          f"ratio {boot / point:6.3f}")

    cols = [f"x{i}" for i in range(6)]
    target = (X[:, 0] + X[:, 1] > 0).astype(int).astype(str)
    ori = pd.DataFrame(X, columns=cols).assign(y=target)
    rel = pd.DataFrame(Y, columns=cols).assign(y=target)
    measure = MLEfficacy(target="y", metric="accuracy", n_boot=args.n_boot)
    t0 = time.perf_counter()
    result = measure.compute(Microdata(ori), Microdata(rel), Context())
    total = time.perf_counter() - t0
    n_test = int(result.details["n_test"])
    y = rng.choice(["0", "1"], n_test)
    pred_a, pred_b = rng.choice(["0", "1"], n_test), rng.choice(["0", "1"], n_test)
    t0 = time.perf_counter()
    loss_replicates("accuracy", y, pred_a, pred_b, args.n_boot, np.random.default_rng(2))
    boot = time.perf_counter() - t0
    point = max(total - boot, 1e-9)
    print(f"MLEfficacy (linear)      point {point:8.3f} s  bootstrap {boot:8.3f} s  "
          f"ratio {boot / point:6.3f}")


if __name__ == "__main__":
    main()
