"""Speed of SuppressionAudit on a 3-D hierarchical table (issue #27 target: 10,000 cells with
1,000 suppressed in under 60 s).

The table: three hierarchical dimensions (25 × 20 × 20 codes, totals and subtotals included),
random non-negative inner values, 1,000 suppressed cells, half at random and half in
2 × 2 × 2 boxes (``--quick``: 12 × 10 × 10 codes, 100 suppressed). No peer is timed:
sdcTable's ``attack()`` could not be built here in
the time available (see the report of issue #27); the anoneval time is printed alone.
Run: ``python benchmarks/bench_table_audit.py [--quick]``.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd

from anoneval.core.api import Context, Table
from anoneval.plugins.tabular.suppression_audit import SuppressionAudit


def hierarchy(prefix: str, groups: int, leaves: int) -> dict[str, list[str]]:
    """Tot -> groups -> leaves (leaves spread evenly over the groups); Tot -> leaves when
    ``groups`` is 0."""
    if groups == 0:
        return {"Tot": [f"{prefix}{i}" for i in range(leaves)]}
    kids: dict[str, list[str]] = {"Tot": [f"{prefix}G{g}" for g in range(groups)]}
    for i in range(leaves):
        kids.setdefault(f"{prefix}G{i % groups}", []).append(f"{prefix}{i}")
    return kids


def table(sizes: list[tuple[int, int]], n_suppressed: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    hier = [hierarchy(p, g, n) for p, (g, n) in zip("abc", sizes, strict=True)]
    codes = [["Tot", *[k for ks in h.values() for k in ks]] for h in hier]
    leaves = [[c for c in cs if c not in h] for cs, h in zip(codes, hier, strict=True)]
    inner = rng.integers(0, 100, size=[len(x) for x in leaves]).astype(float)
    # aggregate each dimension with a 0/1 matrix code x leaf
    arr = inner
    for d, (cs, lv, h) in enumerate(zip(codes, leaves, hier, strict=True)):
        def under(c, h=h):
            return [c] if c not in h else [x for k in h[c] for x in under(k)]
        m = np.array([[leaf in under(c) for leaf in lv] for c in cs], dtype=float)
        arr = np.moveaxis(np.tensordot(m, np.moveaxis(arr, d, 0), axes=1), 0, d)
    cells = list(itertools.product(*codes))
    frame = pd.DataFrame(cells, columns=["a", "b", "c"])
    frame["value"] = arr.ravel()
    frame["status"] = "s"
    # half the suppressions random, half as 2 x 2 x 2 boxes of cells (which protect each other)
    shape = [len(cs) for cs in codes]
    flat = set(rng.choice(len(frame), n_suppressed // 2, replace=False).tolist())
    while len(flat) < n_suppressed:
        pick = [rng.choice(n, 2, replace=False) for n in shape]
        flat.update(np.ravel_multi_index(np.ix_(*pick), shape).ravel().tolist())
    frame.loc[sorted(flat)[:n_suppressed], "status"] = "u"
    dims = {k: [[p, c] for p, cs in h.items() for c in cs] for k, h in zip("abc", hier,
                                                                            strict=True)}
    return frame, dims


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes, k = ([(3, 8), (3, 6), (0, 9)], 100) if args.quick else ([(4, 20), (4, 15), (0, 19)],
                                                                     1000)
    frame, dims = table(sizes, k)
    measure = SuppressionAudit(dimensions=dims)
    start = time.perf_counter()
    res = measure.compute(None, Table(frame), Context())
    took = time.perf_counter() - start
    d = res.details
    print(f"SuppressionAudit: {len(frame)} cells, {d['n_suppressed']} suppressed, "
          f"{d['n_components']} components, {d['n_exact']} exact: {took:.2f} s "
          f"(target < 60 s; no peer: sdcTable not built)")


if __name__ == "__main__":
    main()
