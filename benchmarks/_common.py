"""Helpers shared by the benchmarks: the interleaved timing harness, peak memory, adult data.

A benchmark imports them as ``from _common import ...`` (``python benchmarks/bench_X.py`` puts
this folder first on ``sys.path``). How the harness measures is described in docs/scaling.md
("How benchmarks measure"): what a user waits for (the public API or the CLI, inputs loaded
before the clock), one untimed warm-up call per side, the sides interleaved, and the per-round
ratio ours/peer printed as min/median/max beside both medians and their CPU seconds.
"""

from __future__ import annotations

import functools
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _remote import Measured

import anoneval

ADULT = Path(__file__).resolve().parents[1] / "examples" / "data" / "adult"
#: adult's eight quasi-identifiers, in ARX's order (the order of generalization levels).
QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
      "salary-class"]
#: adult's sensitive attribute.
SA = "occupation"

#: The mixed-type records' categorical columns and their numbers of categories.
CATS = {"c0": 2, "c1": 5, "c2": 7, "c3": 9, "c4": 16, "c5": 40, "c6": 3}
NUMERIC = [f"x{j}" for j in range(8)]


def records(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` × 15 mixed-type records: 8 numeric and 7 categorical columns (``CATS``),
    correlated through a latent factor."""
    z = rng.normal(size=n)
    cols: dict[str, object] = {}
    for j in range(8):
        cols[f"x{j}"] = np.round(z * (j % 3) + rng.normal(size=n) * (1 + j), 3)
    for name, k in CATS.items():
        p = np.arange(k, 0, -1, dtype=float)
        cols[name] = np.array([f"{name}_{i}" for i in range(k)], dtype=object)[
            np.minimum((np.abs(z + rng.normal(size=n)) * k / 3).astype(int), k - 1)
            if k > 2 else rng.choice(k, size=n, p=p / p.sum())]
    return pd.DataFrame(cols)


def read_adult() -> pd.DataFrame:
    """The adult extract (30,162 rows) as shipped in ``examples/data/adult``."""
    return pd.read_csv(ADULT / "adult.csv", sep=";")


def hierarchies(columns: Sequence[str]) -> dict[str, str]:
    """Paths of adult's ARX hierarchies for ``columns``."""
    return {c: str(ADULT / f"adult_hierarchy_{c}.csv") for c in columns}


def resampled(adult: pd.DataFrame, n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` rows, each column drawn from adult's independently (many small classes)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({c: adult[c].to_numpy()[rng.integers(0, len(adult), n)]
                         for c in adult.columns})


def generalize(df: pd.DataFrame, levels: Sequence[int], k: int) -> pd.DataFrame:
    """``df`` with the QIs at ARX node ``levels`` and classes smaller than ``k`` suppressed."""
    out = df.copy()
    for c, path in hierarchies(QI).items():
        h = pd.read_csv(path, sep=";", header=None, dtype=str, keep_default_na=False)
        out[c] = df[c].astype(str).map(dict(zip(h[0], h[levels[QI.index(c)]], strict=True)))
    small = out.groupby(QI)["sex"].transform("size") < k
    out.loc[small, QI] = "*"
    return out


# -- the harness: what a user waits for, ours against a peer, interleaved ---------------------


def load_average() -> float:
    """The machine's 1-minute load average (other jobs slow every timed run)."""
    return os.getloadavg()[0]


def header(title: str, rounds: int, peers: bool = True) -> None:
    """A section's title, with the load average and the number of (interleaved) rounds."""
    how = ("interleaved rounds after one warm-up call each; ratio ours/peer per round: "
           "min / median / max" if peers else "timed calls after a warm-up call; median")
    print(f"\n{title}\n[load {load_average():.2f}, {rounds} {how}]", flush=True)


def _cpu() -> float:
    """CPU seconds of this process (all threads) and of its waited-for children."""
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + child.ru_utime + child.ru_stime


def _call(fn: Callable[..., object], fresh: Callable[[], tuple[Any, ...]] | None
          ) -> tuple[float, float]:
    """Wall and CPU seconds of one call of ``fn`` (on ``fresh()``'s inputs, made untimed), or
    the seconds it returns as a :class:`_remote.Measured` (a peer process timing itself)."""
    args = fresh() if fresh is not None else ()
    c0, t0 = _cpu(), time.perf_counter()
    got = fn(*args)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    if isinstance(got, Measured):  # a peer in another process timed itself
        return got.wall, got.cpu
    return wall, cpu


@dataclass
class Comparison:
    """Per-round wall and CPU seconds of both sides; ``ratios`` are ours/peer per round."""

    name: str
    ours: list[float]
    peer: list[float]
    ours_cpu: list[float]
    peer_cpu: list[float]

    @property
    def ratios(self) -> list[float]:
        return [o / p for o, p in zip(self.ours, self.peer, strict=True)]

    @property
    def median_ratio(self) -> float:
        return statistics.median(self.ratios)


def interleaved(ours: Callable[..., object], peer: Callable[..., object], rounds: int,
                fresh: Callable[[], tuple[Any, ...]] | None = None,
                name: str = "", warm_up: bool = True) -> Comparison:
    """Time ``ours`` and ``peer`` in ``rounds`` interleaved rounds, after one untimed call of
    each (imports, JIT compilation and caches of first use are warm-up on both sides).

    Round ``r`` runs ours then the peer when ``r`` is even, the peer first when it is odd, so
    neither side always inherits the other's cache state or a drift of the machine's load.
    ``fresh``, when given, makes each call's arguments outside the timing (e.g. copies of the
    loaded frames, so that no cache keyed on an object survives into the next call).
    ``warm_up=False`` when the caller has just called both sides itself (to compare values).
    """
    if warm_up:
        _call(ours, fresh)
        _call(peer, fresh)
    out = Comparison(name, [], [], [], [])
    for r in range(rounds):
        order = ((ours, out.ours, out.ours_cpu), (peer, out.peer, out.peer_cpu))
        for fn, wall, cpu in order if r % 2 == 0 else order[::-1]:
            w, c = _call(fn, fresh)
            wall.append(w)
            cpu.append(c)
    return out


def verdict(value: float, target: float | None, at_most: bool = True) -> str:
    """``PASS``/``FAIL`` against ``target`` (``value ≤ target`` unless ``at_most`` is false),
    blank without one."""
    if target is None:
        return ""
    ok = value <= target if at_most else value >= target
    return f"target {'≤' if at_most else '≥'} {target:g}  {'PASS' if ok else 'FAIL'}"


def show(c: Comparison, peer_name: str = "peer", target: float | None = None,
         width: int = 34, note: str = "") -> Comparison:
    """Print one comparison: both medians (wall and CPU seconds), the per-round ratio
    ours/peer as min/median/max, the ratio of the CPU medians (the steadier figure on a busy
    machine), PASS/FAIL of the median wall ratio against ``target`` (≤), then ``note``."""
    r = c.ratios
    med = statistics.median
    cpu = med(c.ours_cpu) / med(c.peer_cpu) if med(c.peer_cpu) > 0 else float("nan")
    print(f"{c.name:<{width}} ours {med(c.ours):8.3f} s (cpu {med(c.ours_cpu):7.3f})  "
          f"{peer_name} {med(c.peer):8.3f} s (cpu {med(c.peer_cpu):7.3f})  "
          f"ratio {min(r):7.3g} / {med(r):7.3g} / {max(r):7.3g} (cpu {cpu:7.3g})  "
          f"{verdict(med(r), target)}{note}", flush=True)
    return c


def compare(name: str, ours: Callable[..., object], peer: Callable[..., object], rounds: int,
            *, peer_name: str = "peer", target: float | None = None,
            fresh: Callable[[], tuple[Any, ...]] | None = None,
            width: int = 34, note: str = "") -> Comparison:
    """:func:`interleaved`, then :func:`show`."""
    return show(interleaved(ours, peer, rounds, fresh, name), peer_name, target, width, note)


def timed_rounds(fn: Callable[..., object], rounds: int,
                 fresh: Callable[[], tuple[Any, ...]] | None = None,
                 warm_up: bool = True) -> tuple[float, float]:
    """Median wall and CPU seconds of ``rounds`` calls after one untimed warm-up call (for a
    measure without a peer, printed against an absolute target); ``warm_up=False`` when the
    caller has just made that call itself (to read the value, say)."""
    if warm_up:
        _call(fn, fresh)
    runs = [_call(fn, fresh) for _ in range(rounds)]
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def evaluate_one(original: Any, anonymized: Any, spec: Any, control: Any = None) -> Any:
    """What a user calls: ``anoneval.Evaluator(original, [spec]).evaluate(anonymized)``; the
    measure's error, if any, is raised (a benchmark must not time a failure)."""
    report = anoneval.Evaluator(original, [spec], control=control).evaluate(anonymized)
    entry = report.measures[0]
    if entry.error:
        raise RuntimeError(f"{spec}: {entry.error}")
    return entry.value


@functools.cache
def compile_bytecode() -> None:
    """Compile anoneval's modules to bytecode (``__pycache__``), once, as ``pip install`` does
    and as a user's first import does: a command timed here then loads them, as a user's
    does. Where ``PYTHONDONTWRITEBYTECODE`` is set (this machine sets it) and nothing compiled
    them, every process would compile every module of anoneval from its source (about 80 ms
    of each ``anoneval`` command; the peers' packages were compiled when pip installed them)."""
    import compileall

    import anoneval.core
    import anoneval.plugins
    import anoneval.registry

    for package in (anoneval.core, anoneval.plugins, anoneval.registry):
        for folder in package.__path__:
            compileall.compile_dir(folder, quiet=1)


def cli_command(*args: str) -> list[str]:
    """The ``anoneval`` command line a user types, run by this Python (its bytecode compiled
    first: :func:`compile_bytecode`)."""
    compile_bytecode()
    return [sys.executable, "-m", "anoneval.core", *args]


def run_command(cmd: Sequence[str]) -> None:
    """Run ``cmd`` (e.g. :func:`cli_command`'s) as a child process, as one side of a timed
    comparison (its CPU seconds count, see ``_cpu``); its output is discarded, a failure
    raised."""
    proc = subprocess.run(list(cmd), capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")


@dataclass
class Peak:
    """A child process's peak resident memory (bytes), wall and CPU seconds."""

    rss: int
    wall: float
    cpu: float


#: Runs argv[1:] and prints its peak RSS (KiB), wall and CPU seconds. The child is spawned by
#: this small interpreter, not by the benchmark: Linux keeps the pre-exec memory of a forked
#: (or vforked) child in its ``ru_maxrss``, which would report the benchmark's own size.
_LAUNCHER = """
import os, subprocess, sys, time
t = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, use = os.wait4(proc.pid, 0)
print(os.waitstatus_to_exitcode(status), use.ru_maxrss, time.perf_counter() - t,
      use.ru_utime + use.ru_stime)
"""


def peak_rss(cmd: Sequence[str]) -> Peak:
    """Run ``cmd`` and return its own peak RSS (``ru_maxrss`` from ``wait4`` on that child,
    spawned by a small launcher so that no larger process's memory is counted), wall and CPU
    seconds; a failure is raised with the child's error output."""
    proc = subprocess.run([sys.executable, "-c", _LAUNCHER, *cmd], capture_output=True,
                          text=True)
    fields = proc.stdout.split()
    if proc.returncode or len(fields) != 4 or fields[0] != "0":
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return Peak(int(fields[1]) * 1024, float(fields[2]), float(fields[3]))
