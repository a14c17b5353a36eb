"""A peer in another process for the interleaved harness: it loads its data once, then runs
one named operation per request and reports the seconds it measured around that call only.

Peers that cannot run in the benchmark's Python (sdcMicro and sdcTable in R, scikit-mobility
in a Python 3.9 environment) would otherwise be timed in one run of their own, not interleaved
with ours. :class:`RemotePeer` starts such a process once; each call of :meth:`RemotePeer.run`
is one timed call of the harness (``_common.interleaved``), which takes the peer's own wall and
CPU seconds from the returned :class:`Measured` (this process cannot see the CPU time of a
child that has not exited).

Protocol, one line each way (a line from the peer that does not start with ``@@`` is ignored,
so that a library printing to stdout cannot break it):

* the peer prints ``@@READY`` once its data is loaded;
* for each request ``OP<TAB>ARG<TAB>...`` it runs operation ``OP`` once and prints
  ``@@OK<TAB>wall<TAB>cpu<TAB>json`` (seconds measured inside, around the call only; ``json``
  the operation's result, ``null`` when it returns nothing) or ``@@ERROR<TAB>message``;
* ``QUIT`` or the end of its input ends it.

:func:`serve` is the peer's side for a Python child; ``benchmarks/_remote.R`` is the same for
R (``source()`` it and call ``serve(ops)``). This module needs only the standard library and
runs on Python 3.9+ (annotations are not evaluated), so a peer's own environment can import it.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MARK = "@@"


@dataclass(frozen=True)
class Measured:
    """Wall and CPU seconds a side measured itself, and its result: returned by a timed
    callable, the harness takes these times instead of the ones it measured around the call."""

    wall: float
    cpu: float
    value: Any = None


class PeerError(RuntimeError):
    """The peer process failed, reported an error or did not answer in time."""


class RemotePeer:
    """A persistent peer process speaking the protocol above.

    ``argv`` starts it (e.g. ``["Rscript", "peer.R", data_dir]``); the constructor waits for
    ``@@READY`` (at most ``timeout`` seconds, ``None``: no limit). Its stderr goes to a temporary
    file whose tail is quoted in errors. Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 timeout: float | None = None, name: str = "peer") -> None:
        self.name = name
        self._stderr = tempfile.TemporaryFile(mode="w+b")  # noqa: SIM115 - closed in close()
        self._proc = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            env=None if env is None else dict(env), text=True, bufsize=1)
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._answer(timeout, "READY")

    def _read(self) -> None:
        """Forward the peer's protocol lines to the queue; ``None`` when its stdout closes."""
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if line.startswith(MARK):
                self._lines.put(line[len(MARK):].rstrip("\n"))
        self._lines.put(None)

    def _fail(self, why: str) -> PeerError:
        """The error to raise: ``why`` and the tail of the peer's stderr."""
        tail = ""
        if not self._stderr.closed:
            self._stderr.seek(0)
            tail = self._stderr.read().decode(errors="replace").strip()[-2000:]
        return PeerError(f"{self.name}: {why}" + (f"\n{tail}" if tail else ""))

    def _answer(self, timeout: float | None, expect: str) -> list:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            error = self._fail(f"no answer within {timeout:g} s")
            self.close(kill=True)
            raise error from None
        if line is None:
            code = self._proc.wait()
            raise self._fail(f"the process ended (exit status {code})")
        fields = line.split("\t")
        if fields[0] == "ERROR":
            raise self._fail("error: " + "\t".join(fields[1:]))
        if fields[0] != expect:
            raise self._fail(f"unexpected answer {line[:200]!r}")
        return fields[1:]

    def run(self, op: str, *args: object, timeout: float | None = None) -> Measured:
        """Run ``op`` once in the peer: its wall and CPU seconds, measured there, and result."""
        if self._proc.poll() is not None or self._proc.stdin is None:
            raise self._fail("the process is not running")
        words = [op, *map(str, args)]
        if any("\t" in w or "\n" in w for w in words):
            raise ValueError(f"{self.name}: an operation or argument contains a tab or newline")
        self._proc.stdin.write("\t".join(words) + "\n")
        self._proc.stdin.flush()
        wall, cpu, *value = self._answer(timeout, "OK")
        return Measured(float(wall), float(cpu), json.loads(value[0]) if value else None)

    def op(self, op: str, *args: object, timeout: float | None = None
           ) -> Callable[[], Measured]:
        """A callable running ``op`` once, for the harness (``interleaved(ours, peer.op(...))``);
        it ignores the arguments the harness makes for our side (``fresh``): the peer holds its
        own copy of the data."""
        return lambda *_: self.run(op, *args, timeout=timeout)

    def close(self, kill: bool = False) -> None:
        """End the peer: ``QUIT`` and a wait, or a kill when ``kill`` or it does not quit."""
        proc = self._proc
        if proc.poll() is None and not kill and proc.stdin is not None:
            try:
                proc.stdin.write("QUIT\n")
                proc.stdin.close()
                proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        self._stderr.close()

    def __enter__(self) -> RemotePeer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(kill=exc[0] is not None)


def serve(ops: dict[str, Callable[..., Any]], inp: Any = None, out: Any = None) -> None:
    """The peer's side in Python: announce ``@@READY``, then run one operation of ``ops`` per
    request line of ``inp`` (stdin), its arguments as strings, and answer on ``out`` (stdout)
    with the wall (``perf_counter``) and CPU (``process_time``, every thread) seconds around
    the call and its JSON result. Anything the operations print goes to stderr."""
    inp = sys.stdin if inp is None else inp
    out = sys.stdout if out is None else out
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        print(MARK + "READY", file=out, flush=True)
        for line in inp:
            words = line.rstrip("\n").split("\t")
            if words == ["QUIT"]:
                break
            fn = ops.get(words[0])
            if fn is None:
                print(f"{MARK}ERROR\tunknown operation {words[0]!r}; known: "
                      f"{', '.join(sorted(ops))}", file=out, flush=True)
                continue
            try:
                c0, t0 = time.process_time(), time.perf_counter()
                value = fn(*words[1:])
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                answer = f"OK\t{wall:.9f}\t{cpu:.9f}\t{json.dumps(value)}"
            except Exception as e:  # the peer reports every failure
                answer = "ERROR\t" + f"{type(e).__name__}: {e}".replace("\n", " ")
            print(MARK + answer, file=out, flush=True)
    finally:
        sys.stdout = saved


def child_env(**extra: str) -> dict[str, str]:
    """This process's environment with ``extra`` set (e.g. ``R_LIBS`` for an R peer)."""
    return {**os.environ, **extra}


#: The R library holding the R peers (sdcMicro, sdcTable and what they need; installed as
#: docs/scaling.md, "Peers in other processes", says), searched before R's own libraries.
R_LIB = os.environ.get("SDCMICRO_LIB", "/work/oracles/sdcmicro/lib")
#: This folder: ``_remote.R``, which an R peer sources.
HERE = Path(__file__).resolve().parent


def start_r_peer(script: str, args: Sequence[object], folder: str | Path, *, name: str,
                 timeout: float | None = 600.0) -> RemotePeer | str:
    """Start ``Rscript`` on ``script`` (R code, written to ``folder``) with the path of
    ``_remote.R`` then ``args`` as its arguments (``commandArgs(TRUE)``) and :data:`R_LIB`
    first in ``R_LIBS``: the peer, or why it could not start (no Rscript, a package missing)."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        return "no Rscript on this machine"
    path = Path(folder) / f"{name}_peer.R"
    path.write_text(script)
    libs = os.pathsep.join(p for p in (R_LIB, os.environ.get("R_LIBS", "")) if p)
    try:
        return RemotePeer([rscript, str(path), str(HERE / "_remote.R"), *map(str, args)],
                          env=child_env(R_LIBS=libs), timeout=timeout, name=name)
    except PeerError as e:
        lines = [w for w in str(e).splitlines() if w.strip() not in ("", "Execution halted")]
        return lines[-1]
