"""Loading very wide CSV files (thousands of columns), against pandas reading the same file.

anoneval's loader adds the separator sniffing, the duplicate-column check, the NUL check and,
in a run, the content hash and value kinds of every column; each must stay linear in the
number of columns (the duplicate check was quadratic: 100,000 columns did not load in 400 s).
Printed per width: pandas' ``read_csv`` seconds, anoneval's ``load`` and ``load`` + content
hash + value kinds, and their ratios to pandas; the ratio should not grow with the width.
Usage: ``python benchmarks/bench_wide.py [--quick]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd

from anoneval.core.data.kinds import load


def write_wide(path: Path, columns: int, rows: int = 20) -> Path:
    """A CSV of ``rows`` rows of small integers under ``columns`` distinct names."""
    line = ",".join(str(i % 7) for i in range(columns)) + "\n"
    path.write_text(",".join(f"c{i}" for i in range(columns)) + "\n" + line * rows)
    return path


def seconds(fn) -> float:  # type: ignore[no-untyped-def]
    """Best of three runs of ``fn()``."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    widths = (2_000, 8_000) if args.quick else (10_000, 40_000, 100_000)
    print(f"{'columns':>8} {'pandas s':>9} {'load s':>7} {'ratio':>6} {'+hash,kinds s':>14} "
          f"{'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in widths:
            path = write_wide(Path(tmp) / f"w{n}.csv", n)
            peer = seconds(lambda path=path: pd.read_csv(path))
            ours = seconds(lambda path=path: load(path))

            def full(path: Path = path) -> None:
                data = load(path)
                data.content_hash()
                data.value_kinds()

            whole = seconds(full)
            print(f"{n:>8,} {peer:>9.3f} {ours:>7.3f} {ours / peer:>6.2f} {whole:>14.3f} "
                  f"{whole / peer:>6.2f}")


if __name__ == "__main__":
    main()
