"""Blocks of one measure's pairwise work, and whether code runs inside an engine task.

A measure splits its pairwise work into independent blocks and hands them to
``Context.map_blocks(fn, blocks, shared)``: ``fn(shared, block)`` is a picklable top-level
function, ``shared`` what every block reads (shipped once per worker). The runner is the
engine's (:mod:`anoneval.core.run.engine`): a plain loop here by default, the local engine's
processes, or Dask workers. Results come back in block order, so a measure that combines them
in that order gets the same result on every engine and worker count.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

S = TypeVar("S")
B = TypeVar("B")
R = TypeVar("R")


# -- where code runs ----------------------------------------------------------------------


_TASK = threading.local()
_TASK_PROCESS = False  # set in the local engine's worker processes


@contextlib.contextmanager
def as_task() -> Iterator[None]:
    """Mark the code run in this block (this thread) as an engine task."""
    previous = getattr(_TASK, "active", False)
    _TASK.active = True
    try:
        yield
    finally:
        _TASK.active = previous


def in_task() -> bool:
    """True in an engine's task (a worker process or a Dask task): plugins then use one thread,
    as the engine already spreads the tasks over the cores."""
    return _TASK_PROCESS or bool(getattr(_TASK, "active", False))


def task_threads() -> int:
    """Threads a plugin may use for its own work: 1 inside an engine task, else the CPUs this
    process may run on."""
    if in_task():
        return 1
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # pragma: no cover - not on Linux
        return max(os.cpu_count() or 1, 1)


# -- blocks of one measure ----------------------------------------------------------------


class Blocks:
    """Runs the blocks of one measure's work: ``fn(shared, block)`` for each block.

    The serial runner: a plain loop in this process. Results come back in block order whatever
    the runner, so a measure that combines them in that order gets the same result on every
    engine and worker count.
    """

    #: How many blocks can run at once (a hint for measures sizing their blocks).
    parallelism = 1

    def map(self, fn: Callable[[S, B], R], blocks: Sequence[B], shared: S) -> list[R]:
        return [fn(shared, block) for block in blocks]


SERIAL_BLOCKS = Blocks()


def mark_task_process() -> None:
    """Mark this whole process as an engine task process (the local engine's workers)."""
    global _TASK_PROCESS
    _TASK_PROCESS = True


def spans(n: int, size: int) -> list[tuple[int, int]]:
    """``[start, stop)`` spans of at most ``size`` (≥ 1) covering ``range(n)``, in order."""
    size = max(int(size), 1)
    return [(start, min(start + size, n)) for start in range(0, n, size)]


__all__ = ["SERIAL_BLOCKS", "Blocks", "as_task", "in_task", "mark_task_process", "spans",
           "task_threads"]
