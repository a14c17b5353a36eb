"""Speed of SuppressionAudit on a 3-D hierarchical table (issue #27 target: 10,000 cells with
1,000 suppressed audited in under 60 s), against sdcTable's ``attack()``, interleaved.

The table: three hierarchical dimensions (25 × 20 × 20 codes, totals and subtotals included),
random non-negative inner values, 1,000 suppressed cells: 2 × 2 × 2 boxes of sibling leaves
(which protect each other, so most intervals are wide and the components are large where boxes
overlap) and a tenth at random (mostly exactly disclosed). ``--quick``: 12 × 10 × 10 codes, 100
suppressed.

Ours: what a user calls, ``Evaluator(original, [SuppressionAudit]).evaluate_release(table,
engine={"name": "local", "workers": w})`` (the original: the inner cells as microdata, no
sensitivity rule set) (the worker processes start inside the timing, as
sdcTable's ``future`` sessions do), with highspy when installed (extra ``lp``: one warm-started
model per task of 100 variables). Peer: sdcTable's ``attack()`` in a persistent R process
(``benchmarks/bench_table_audit_attack.R`` through ``benchmarks/_remote.py``): it reads the
table and builds the sdcTable problem once, then runs one ``attack()`` per request, timed
inside R. Compared on 2 workers and on 1 (``--workers``), ``--rounds`` interleaved rounds after
one untimed call per side, printed as the per-round ratio ours/sdcTable min / median / max with
the CPU ratio (docs/scaling.md, "How benchmarks measure"; with 2 workers the CPU seconds of
sdcTable's worker sessions are not counted, read the 1-worker CPU ratio). The grand total stays
published, so ``attack()``'s max(Freq) cap is implied and its intervals must equal ours: the
largest difference is printed. Also timed, ours alone: the scipy fallback (a fresh HiGHS solve
per bound, one worker, one call) against the warm-started solver. sdcTable is installed from
its GitHub source with a GLPK stand-in for the R package ``highs`` (docs/scaling.md, "Peers in
other processes"), so its times are ``attack()`` with GLPK. Without R or sdcTable the script
says so and times ours alone.
Also ours on 2 local workers against ours on 1, interleaved, after the first call (which
starts the worker processes; the local engine keeps them for the next call, as an embedder's
next ``evaluate`` finds them): wall and CPU seconds, the CPU of the worker processes included
(target: 2 workers never slower than 1, ratio ≤ 1.05 allowing for noise). ``--engine-only``:
that comparison alone (at least 5 rounds).
Run: ``python benchmarks/bench_table_audit.py [--quick] [--rounds N] [--workers 2,1]
[--no-fallback] [--no-sdctable] [--peer-timeout SECONDS] [--engine-only]``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _common import header, interleaved, show, timed_rounds
from _remote import Measured, PeerError, RemotePeer, start_r_peer

import anoneval
from anoneval.core.api import Table

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


def audit(frame: pd.DataFrame, dims: dict, workers: int) -> dict[str, Any]:
    """What a user calls: the audit of the table ``frame`` (cells, ``leaf`` marking the inner
    ones) through the public API on ``workers`` local processes; the measure's details (its
    error, if any, is raised). The original side is the inner cells as microdata (one
    contributor each, magnitude ``value``); no sensitivity rule is set, so it does not change
    the intervals."""
    original = frame.loc[frame["leaf"], ["a", "b", "c", "value"]].reset_index(drop=True)
    spec = {"name": "SuppressionAudit", "params": {"dimensions": dims, "magnitude": "value"}}
    report = anoneval.Evaluator(original, [spec]).evaluate_release(
        Table(frame.drop(columns="leaf")), engine={"name": "local", "workers": workers})
    entry = report.measures[0]
    if entry.error:
        raise RuntimeError(f"SuppressionAudit: {entry.error}")
    return entry.details


def _pool_cpu() -> float:
    """CPU seconds so far of the local engine's kept worker processes (children of the fork
    server, so not in this process's children's rusage; read from ``/proc``, 0 without it or
    without them)."""
    from anoneval.core.run import engine

    kept = engine._KEPT
    if kept is None or not kept.starting.done() or kept.starting.exception() is not None:
        return 0.0
    total = 0.0
    for pid in list(kept.starting.result()._processes):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def audit_measured(frame: pd.DataFrame, dims: dict, workers: int) -> Measured:
    """:func:`audit`, timed: wall seconds, and the CPU seconds of this process and of the kept
    worker processes (which start before the first timed call and are reused)."""
    c0, p0, t0 = time.process_time(), _pool_cpu(), time.perf_counter()
    audit(frame, dims, workers)
    wall = time.perf_counter() - t0
    return Measured(wall, time.process_time() - c0 + max(_pool_cpu() - p0, 0.0))


def workers_against_serial(frame: pd.DataFrame, dims: dict, workers: int, rounds: int) -> None:
    """Ours on ``workers`` local processes against ours serially, interleaved (the kept
    processes started by the warm-up call, as an embedder's second call finds them)."""
    header(f"SuppressionAudit on {workers} local workers against 1 (ours both sides; CPU "
           "includes the worker processes)", rounds)
    c = interleaved(lambda: audit_measured(frame, dims, workers),
                    lambda: audit_measured(frame, dims, 1), rounds,
                    name=f"{workers} workers / 1 worker")
    show(c, "1 worker", target=1.05)  # equal work on both sides: 1 ± noise


def suppressed(details: dict[str, Any]) -> pd.DataFrame:
    """The audited cells that are not published, with their intervals."""
    cells = pd.DataFrame(details["cells"])
    return cells[cells["status"] != "published"].reset_index(drop=True)


def fallback(frame: pd.DataFrame, dims: dict) -> tuple[float, pd.DataFrame]:
    """Seconds and suppressed cells of one serial audit with highspy hidden (the scipy
    fallback; serial, since worker processes would import highspy afresh)."""
    saved = sys.modules.get("highspy")
    sys.modules["highspy"] = None  # type: ignore[assignment]  # import -> ImportError
    try:
        start = time.perf_counter()
        details = audit(frame, dims, 1)
        took = time.perf_counter() - start
    finally:
        sys.modules.pop("highspy", None)
        if saved is not None:
            sys.modules["highspy"] = saved
    return took, suppressed(details)


def same_intervals(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    return bool(np.allclose(a["lower"], b["lower"], rtol=0, atol=1e-6) and np.allclose(
        a["upper"].astype(float), b["upper"].astype(float), rtol=0, atol=1e-6, equal_nan=True))


def sdctable(frame: pd.DataFrame, dims: dict, folder: str) -> RemotePeer | str:
    """sdcTable in R with the table loaded and its problem built (or why not)."""
    frame.to_csv(Path(folder) / "cells.csv", index=False)
    for d, e in dims.items():
        pd.DataFrame(e, columns=["parent", "child"]).to_csv(Path(folder) / f"hier_{d}.csv",
                                                            index=False)
    return start_r_peer(PEER.read_text(), [folder], folder, name="sdcTable")


def largest_difference(ours: pd.DataFrame, path: Path) -> tuple[int, float]:
    """Cells compared and the largest difference of sdcTable's intervals (``path``) from ours."""
    got = pd.read_csv(path, dtype={"a": str, "b": str, "c": str})
    merged = ours.merge(got, on=["a", "b", "c"])
    diff = max(float(np.abs(merged["lower"] - merged["low"]).max()),
               float(np.abs(merged["upper"].astype(float) - merged["up"]).max()))
    return len(merged), diff


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 3, --quick 1)")
    parser.add_argument("--workers", default="2,1",
                        help="worker counts compared, comma-separated (default 2,1)")
    parser.add_argument("--no-fallback", action="store_true", help="skip the scipy fallback")
    parser.add_argument("--no-sdctable", action="store_true", help="skip sdcTable's attack()")
    parser.add_argument("--peer-timeout", type=float, default=3600.0,
                        help="seconds one attack() may take (default 3600)")
    parser.add_argument("--engine-only", action="store_true",
                        help="only ours on the most workers against ours on 1 (no peer)")
    args = parser.parse_args()
    sizes, k = ([(3, 8), (3, 6), (0, 9)], 100) if args.quick else ([(4, 20), (4, 15), (0, 19)],
                                                                     1000)
    rounds = args.rounds or (1 if args.quick else 3)
    workers = [int(w) for w in args.workers.split(",")]
    frame, dims = table(sizes, k)
    warm = _has_highspy()
    solver = "highspy, warm-started" if warm else "scipy: highspy (extra 'lp') not installed"
    start = time.perf_counter()
    d = audit(frame, dims, workers[0])  # also our side's warm-up
    took = time.perf_counter() - start
    ours = suppressed(d)
    print(f"SuppressionAudit ({solver}): {len(frame)} cells, {d['n_suppressed']} suppressed, "
          f"{d['n_components']} components, {d['n_exact']} exact, {d['n_unbounded']} "
          f"unbounded; first call on {workers[0]} worker(s) {took:.2f} s (target < 60 s)")
    if max(workers) > 1:
        workers_against_serial(frame, dims, max(workers), rounds if not args.engine_only
                               else max(rounds, 5))
    if args.engine_only:
        return
    if warm and not args.no_fallback:
        cold, cold_cells = fallback(frame, dims)
        print(f"  scipy fallback (a fresh solve per bound), 1 worker, one call: {cold:.2f} s; "
              f"same intervals: {same_intervals(cold_cells, ours)}")
    with tempfile.TemporaryDirectory() as tmp:
        peer = "not run (--no-sdctable)" if args.no_sdctable else sdctable(frame, dims, tmp)
        if isinstance(peer, str):
            print(f"sdcTable attack(): {peer}; ours alone")
            header("SuppressionAudit alone", rounds, peers=False)
            for w in workers:
                wall, cpu = timed_rounds(lambda w=w: audit(frame, dims, w), rounds)
                print(f"  ours on {w} worker(s): {wall:.2f} s (cpu {cpu:.2f})")
            return
        with peer:
            header("SuppressionAudit against sdcTable's attack() (GLPK; timed inside R)",
                   rounds)
            for w in workers:
                try:
                    used = peer.run("attack", w, timeout=args.peer_timeout).value  # warm-up
                except PeerError as e:
                    print(f"sdcTable attack() on {w} worker(s): {str(e).splitlines()[0]}")
                    return
                peer.run("save", Path(tmp) / "attack.csv")
                n, diff = largest_difference(ours, Path(tmp) / "attack.csv")
                audit(frame, dims, w)  # warm-up
                c = interleaved(lambda w=w: audit(frame, dims, w),
                                peer.op("attack", w, timeout=args.peer_timeout), rounds,
                                name=f"ours {w} / attack() {used} worker(s)", warm_up=False)
                same = n == len(ours) and diff <= 1e-6
                show(c, "sdcTable", note=f"  {n} cells compared, largest difference "
                                         f"{diff:.2e}: agree {'yes' if same else 'NO'}")


def _has_highspy() -> bool:
    try:
        import highspy  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
