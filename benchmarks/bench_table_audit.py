"""Speed of SuppressionAudit on a 3-D hierarchical table (issue #27 target: 10,000 cells with
1,000 suppressed audited in under 60 s), against its scipy fallback and sdcTable's ``attack()``.

The table: three hierarchical dimensions (25 × 20 × 20 codes, totals and subtotals included),
random non-negative inner values, 1,000 suppressed cells: 2 × 2 × 2 boxes of sibling leaves
(which protect each other, so most intervals are wide and the components are large where boxes
overlap) and a tenth at random (mostly exactly disclosed). ``--quick``: 12 × 10 × 10 codes, 100
suppressed.

Timed in the same run: anoneval with highspy (extra ``lp``: one warm-started model per task of
100 variables) on two worker processes (started before the clock, as an evaluation starts them
once for all its measures) and on one, anoneval's scipy fallback (a fresh HiGHS solve per bound,
one worker), and, when ``Rscript`` with sdcTable is on this machine,
sdcTable's ``attack()`` (``benchmarks/bench_table_audit_attack.R``) on both cores, or on one
where its R's ``future`` is too old for ``n_workers``. The grand total stays published, so
``attack()``'s max(Freq) cap is implied and its intervals must equal ours. Ratios are peer
time / anoneval time.
Run: ``python benchmarks/bench_table_audit.py [--quick] [--no-fallback] [--no-sdctable]
[--peer-timeout SECONDS]``.
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from anoneval.core.api import Context, Table
from anoneval.core.run.engine import LocalEngine
from anoneval.plugins.tabular.suppression_audit import SuppressionAudit

PEER = Path(__file__).with_name("bench_table_audit_attack.R")


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
    """The protected table (every cell, ``leaf`` marks inner cells) and its hierarchies."""
    rng = np.random.default_rng(seed)
    hier = [hierarchy(p, g, n) for p, (g, n) in zip("abc", sizes, strict=True)]
    codes = [["Tot", *[k for ks in h.values() for k in ks]] for h in hier]
    leaves = [[c for c in cs if c not in h] for cs, h in zip(codes, hier, strict=True)]
    inner = rng.integers(1, 100, size=[len(x) for x in leaves]).astype(float)
    arr = inner
    for d, (cs, lv, h) in enumerate(zip(codes, leaves, hier, strict=True)):
        def under(c, h=h):
            return [c] if c not in h else [x for k in h[c] for x in under(k)]
        m = np.array([[leaf in under(c) for leaf in lv] for c in cs], dtype=float)
        arr = np.moveaxis(np.tensordot(m, np.moveaxis(arr, d, 0), axes=1), 0, d)
    frame = pd.DataFrame(list(itertools.product(*codes)), columns=["a", "b", "c"])
    frame["value"] = arr.ravel()
    frame["status"] = "s"
    is_leaf = [np.isin(cs, lv) for cs, lv in zip(codes, leaves, strict=True)]
    ia, ib, ic = is_leaf
    frame["leaf"] = (ia[:, None, None] & ib[None, :, None] & ic[None, None, :]).ravel()
    shape = [len(cs) for cs in codes]
    pos = [{c: i for i, c in enumerate(cs)} for cs in codes]
    siblings = [[ks for ks in h.values() if all(k not in h for k in ks)] for h in hier]
    flat = set(rng.choice(len(frame), n_suppressed // 10, replace=False).tolist())
    while len(flat) < n_suppressed:
        pick = []
        for d in range(3):
            group = siblings[d][rng.integers(len(siblings[d]))]
            pick.append([pos[d][k] for k in rng.choice(group, 2, replace=False)])
        flat.update(np.ravel_multi_index(np.ix_(*pick), shape).ravel().tolist())
    frame.loc[sorted(flat)[:n_suppressed], "status"] = "u"
    dims = {k: [[p, c] for p, cs in h.items() for c in cs]
            for k, h in zip("abc", hier, strict=True)}
    return frame, dims


def run_anoneval(frame: pd.DataFrame, dims: dict, workers: int,
                 fallback: bool = False) -> tuple[float, pd.DataFrame, dict]:
    """Seconds, suppressed cells and details of one audit; ``fallback`` hides highspy (serial
    runs only: worker processes import it afresh)."""
    saved = sys.modules.get("highspy")
    if fallback:
        sys.modules["highspy"] = None  # type: ignore[assignment]  # import -> ImportError
    engine = LocalEngine(workers)
    try:
        if workers > 1:  # started before the clock: an evaluation starts them once for all
            engine.pool()
        ctx = Context(block_runner=engine.blocks())
        start = time.perf_counter()
        res = SuppressionAudit(dimensions=dims).compute(
            None, Table(frame.drop(columns="leaf")), ctx)
        took = time.perf_counter() - start
    finally:
        engine.close()
        if fallback:
            sys.modules.pop("highspy", None)
            if saved is not None:
                sys.modules["highspy"] = saved
    cells = pd.DataFrame(res.details["cells"])
    return took, cells[cells["status"] != "published"].reset_index(drop=True), res.details


def run_sdctable(frame: pd.DataFrame, dims: dict,
                 timeout: float) -> tuple[int, float, pd.DataFrame] | str:
    """sdcTable's attack() on two workers (one where its R lacks what that needs): workers,
    seconds and intervals, or why it did not run."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        return "no Rscript on this machine"
    check = subprocess.run([rscript, "-e", "library(sdcTable)"], capture_output=True, text=True)
    if check.returncode:
        return "R has no sdcTable"
    with tempfile.TemporaryDirectory() as tmp:
        frame.to_csv(Path(tmp) / "cells.csv", index=False)
        for d, e in dims.items():
            pd.DataFrame(e, columns=["parent", "child"]).to_csv(Path(tmp) / f"hier_{d}.csv",
                                                                index=False)
        try:
            out = subprocess.run([rscript, str(PEER), tmp, "2"], capture_output=True, text=True,
                                 timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"attack() did not finish within {timeout:g} s"
        if out.returncode:
            return f"attack() failed: {out.stderr.strip()[-300:]}"
        got = pd.read_csv(Path(tmp) / "attack.csv", dtype={"a": str, "b": str, "c": str})
        workers, secs = out.stdout.strip().splitlines()[-1].split()
        return int(workers), float(secs), got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-fallback", action="store_true", help="skip the scipy fallback")
    parser.add_argument("--no-sdctable", action="store_true", help="skip sdcTable's attack()")
    parser.add_argument("--peer-timeout", type=float, default=3600.0,
                        help="seconds sdcTable's attack() may take (default 3600)")
    args = parser.parse_args()
    sizes, k = ([(3, 8), (3, 6), (0, 9)], 100) if args.quick else ([(4, 20), (4, 15), (0, 19)],
                                                                     1000)
    frame, dims = table(sizes, k)
    warm = _has_highspy()
    solver = "highspy, warm-started" if warm else "scipy: highspy (extra 'lp') not installed"
    took, ours, d = run_anoneval(frame, dims, workers=2)
    print(f"SuppressionAudit ({solver}, 2 workers): {len(frame)} cells, {d['n_suppressed']} "
          f"suppressed, {d['n_components']} components, {d['n_exact']} exact, "
          f"{d['n_unbounded']} unbounded: {took:.2f} s (target < 60 s)")
    one, _, _ = run_anoneval(frame, dims, workers=1)
    print(f"  the same on 1 worker: {one:.2f} s, ratio {one / took:.2f}x")
    if warm and not args.no_fallback:
        cold, cold_cells, _ = run_anoneval(frame, dims, workers=1, fallback=True)
        same = np.allclose(cold_cells["lower"], ours["lower"], rtol=0, atol=1e-6) and \
            np.allclose(cold_cells["upper"].astype(float), ours["upper"].astype(float), rtol=0,
                        atol=1e-6, equal_nan=True)
        print(f"  scipy fallback (a fresh solve per bound), 1 worker: {cold:.2f} s, ratio "
              f"{cold / one:.1f}x the warm-started 1 worker; same intervals: {same}")
    if args.no_sdctable:
        return
    peer = run_sdctable(frame, dims, args.peer_timeout)
    if isinstance(peer, str):
        print(f"  sdcTable attack(): not run ({peer})")
        return
    workers, secs, got = peer
    merged = ours.merge(got, on=["a", "b", "c"])
    diff = max(float(np.abs(merged["lower"] - merged["low"]).max()),
               float(np.abs(merged["upper"].astype(float) - merged["up"]).max()))
    print(f"  sdcTable attack() ({workers} worker(s)): {secs:.2f} s, ratio {secs / took:.1f}x, "
          f"{len(merged)} cells compared, largest difference {diff:.2e}")


def _has_highspy() -> bool:
    try:
        import highspy  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
