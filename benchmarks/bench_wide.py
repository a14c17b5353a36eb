"""Loading very wide CSV files (thousands of columns), against pandas reading the same file.

anoneval's loader adds the separator sniffing, the duplicate-column check, the NUL check and,
in a run, the content hash and value kinds of every column; each must stay linear in the
number of columns (the duplicate check was quadratic: 100,000 columns did not load in 400 s).
Printed per width, each side interleaved with pandas' ``read_csv`` of the same file after one
untimed warm-up call each (see docs/scaling.md, "How benchmarks measure"): anoneval's ``load``,
and ``load`` + content hash + value kinds, as medians with CPU seconds and the per-round ratio
ours/pandas as min/median/max; the ratio should not grow with the width. Usage:
``python benchmarks/bench_wide.py [--quick] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pandas as pd
from _common import compare, header

from anoneval import load


def write_wide(path: Path, columns: int, rows: int = 20) -> Path:
    """A CSV of ``rows`` rows of small integers under ``columns`` distinct names."""
    line = ",".join(str(i % 7) for i in range(columns)) + "\n"
    path.write_text(",".join(f"c{i}" for i in range(columns)) + "\n" + line * rows)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5, --quick 2)")
    args = parser.parse_args()
    widths = (2_000, 8_000) if args.quick else (10_000, 40_000, 100_000)
    rounds = args.rounds or (2 if args.quick else 5)
    header("loading wide CSV files: anoneval against pandas.read_csv", rounds)
    with tempfile.TemporaryDirectory() as tmp:
        for n in widths:
            path = write_wide(Path(tmp) / f"w{n}.csv", n)

            def full(path: Path = path) -> None:
                data = load(path)
                data.content_hash()
                data.value_kinds()
            compare(f"{n:,} columns, load", lambda path=path: load(path),
                    lambda path=path: pd.read_csv(path), rounds, peer_name="pandas", width=36)
            compare(f"{n:,} columns, load + hash + kinds", full,
                    lambda path=path: pd.read_csv(path), rounds, peer_name="pandas", width=36)


if __name__ == "__main__":
    main()
