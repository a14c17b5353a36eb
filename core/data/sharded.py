"""Class summaries too large for one worker: a hash-partitioned group-by on Dask.

When the class summary of a partitioned dataset outgrows what the tree reduction of
:mod:`anoneval.core.data.partitioned` may hold on one worker, its rows are hash-partitioned on the
key columns with Dask's own shuffle (``DataFrame.shuffle(on=keys)``: the p2p shuffle on a
``distributed`` cluster, which spills to disk, else the task shuffle), so every class lands in
exactly one output partition; each output partition is then summarized where it lies
(:meth:`~anoneval.core.data.summary.ClassSummary.of_frame`). The parts stay on the workers as a
:class:`ShardedSummary`: their classes are disjoint, so reductions over classes (counts of classes
by size, sums, maxima, per-class value distributions) run part by part on the workers
(:meth:`ShardedSummary.reduce`) and only their small results travel. The measures that read a
summary's per-class arrays get the canonical table assembled from the parts in the process that
runs them (:meth:`ShardedSummary.assembled`), equal to the local engine's summary.
Every wait on the cluster goes through :func:`gathered`, which fails instead of hanging when
every worker is paused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from anoneval.core.data.summary import ClassSummary, SummarySpec, _plain
from anoneval.core.errors import DataError

T = TypeVar("T")

#: Seconds a wait on the cluster goes on while every worker is paused and no task finishes.
PAUSED_PATIENCE = 30.0
#: Seconds between two looks at the workers' status while waiting.
POLL_SECONDS = 1.0


def _paused_error(workers: dict[str, Any], patience: float) -> DataError:
    import dask

    pause = dask.config.get("distributed.worker.memory.pause", 0.8)
    shown = "; ".join(
        f"{addr}: {_mib(w.get('metrics', {}).get('memory'))} of memory_limit "
        f"{_mib(w.get('memory_limit'))}" for addr, w in sorted(workers.items()))
    return DataError(
        f"every Dask worker is paused ({len(workers)}: {shown})"
        + (f" and no task finished for {patience:.0f} s" if patience else "") +
        ": a worker pauses when its memory passes the pause threshold "
        f"(distributed.worker.memory.pause, {pause} of its memory_limit in this process's "
        "config), so the run cannot go on. Give the workers a larger memory_limit, use more "
        "workers or smaller partitions, or run on the local engine")


def _mib(n: Any) -> str:
    return "unknown" if not n else f"{n / 2**20:.0f} MiB"


def all_paused(client: Any) -> DataError | None:
    """The error of :func:`wait_unpaused` when every worker of ``client``'s cluster is paused
    now (a scatter to such a cluster finds no worker), else None."""
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    if workers and all(w.get("status") == "paused" for w in workers.values()):
        return _paused_error(workers, 0.0)
    return None


def wait_unpaused(client: Any, futures: Sequence[Any], patience: float | None = None) -> None:
    """Wait until every future is done (finished, failed or cancelled), no longer than ``patience``
    seconds (default :data:`PAUSED_PATIENCE`) while every worker of the cluster is paused
    (memory over the pause threshold) and no future finishes: a paused cluster never resumes
    by itself, so the wait fails with a :class:`DataError` naming the workers' memory and
    limits."""
    import asyncio
    import time
    from concurrent.futures import CancelledError

    from distributed import wait

    patience = PAUSED_PATIENCE if patience is None else patience
    futures = list(futures)
    done, since = -1, time.monotonic()
    while True:
        try:
            with client.as_current():
                wait(futures, timeout=POLL_SECONDS)
            return
        except CancelledError:  # every future done, some cancelled: the caller's to handle
            return
        except (TimeoutError, asyncio.TimeoutError):
            pass
        finished = sum(f.done() for f in futures)
        workers = client.scheduler_info(n_workers=-1).get("workers", {})
        paused = bool(workers) and all(w.get("status") == "paused" for w in workers.values())
        if finished != done or not paused:
            done, since = finished, time.monotonic()
        elif time.monotonic() - since >= patience:
            raise _paused_error(workers, patience)


def gathered(client: Any, futures: Sequence[Any], patience: float | None = None) -> list[Any]:
    """``client.gather(futures)`` after :func:`wait_unpaused`: fails instead of waiting
    forever on a cluster whose workers are all paused."""
    futures = list(futures)
    wait_unpaused(client, futures, patience)
    return client.gather(futures)  # type: ignore[no-any-return]


def canonical_keys(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``frame`` with its key columns as the summary compares them (categoricals as their
    values, ``-0.0`` as ``0.0``), so equal keys hash alike wherever they are."""
    return frame.assign(**{k: _plain(frame[k]) for k in keys})


def _part_summary(frame: pd.DataFrame, spec: SummarySpec) -> ClassSummary:
    return ClassSummary.of_frame(frame.reset_index(drop=True), spec)


def _part_facts(part: ClassSummary) -> tuple[int, int, int, tuple[float, int] | None]:
    return part.n_records, part.n_classes, part.__sizeof__(), part.low_weights


def shuffled_summaries(frame: Any, spec: SummarySpec, npartitions: int,
                       method: str | None = None) -> list[Any]:
    """Delayed class summaries of ``frame`` (a ``dask.dataframe`` with ``spec``'s columns)
    hash-partitioned on ``spec.keys`` into ``npartitions`` parts, whose classes are disjoint."""
    from dask import delayed

    if not spec.keys:
        raise ValueError("a summary without keys is one class: nothing to partition")
    keys = list(spec.keys)
    meta = canonical_keys(frame._meta, keys)
    canon = frame.map_partitions(canonical_keys, keys, meta=meta)
    shuffled = canon.shuffle(on=keys, npartitions=npartitions,
                             **({"shuffle_method": method} if method else {}))
    return [delayed(_part_summary)(p, spec) for p in shuffled.to_delayed()]


class ShardedSummary(ClassSummary):
    """A class summary kept as disjoint parts on the workers (futures), or in memory.

    ``spec``, :attr:`n_records`, :attr:`n_classes` and ``low_weights`` are known without
    moving a part; ``keys``, ``counts``, ``weights`` and ``histograms`` are those of the
    canonical summary (as :meth:`ClassSummary.of_frame` of the whole data), assembled from the
    parts on first use in this process (:meth:`assembled`).
    """

    __slots__ = ("_assembled", "_facts", "client", "parts")
    sharded = True

    def __init__(self, spec: SummarySpec, parts: Sequence[Any], client: Any = None) -> None:
        # the per-class arrays are the assembled summary's (properties below)
        self.spec = spec
        self.parts = list(parts)
        self.client = client
        self._assembled: ClassSummary | None = None
        facts = self._map(_part_facts)
        lows = [low or (np.inf, 0) for *_, low in facts]
        self.low_weights = ((min(m for m, _ in lows), sum(k for _, k in lows))
                            if spec.weights is not None else None)
        self._facts = [(r, c, b) for r, c, b, _ in facts]

    def __repr__(self) -> str:
        return (f"ShardedSummary({self.spec!r}, parts={len(self.parts)}, "
                f"classes={self.n_classes}, records={self.n_records})")

    def __sizeof__(self) -> int:
        """Bytes of the parts (held on the workers, not here)."""
        return sum(b for *_, b in self._facts)

    def __getstate__(self) -> Any:
        raise TypeError("a ShardedSummary lives on its cluster: reduce it "
                        "(ShardedSummary.reduce), or send its assembled() summary")

    @property
    def n_records(self) -> int:
        return sum(r for r, *_ in self._facts)

    @property
    def n_classes(self) -> int:
        return sum(c for _, c, _ in self._facts)

    def _map(self, fn: Callable[[ClassSummary], T]) -> list[T]:
        """``fn`` of each part, where the part lies; results in part order."""
        if self.client is None:
            return [fn(p) for p in self.parts]
        return gathered(self.client, [self.client.submit(fn, p, pure=False)
                                      for p in self.parts])

    def reduce(self, partial: Callable[[ClassSummary], T],
               combine: Callable[[list[T]], T]) -> T:
        """``combine`` of ``partial`` of each part: the parts' classes are disjoint, so any
        reduction over classes (counts by size, sums, maxima) is the whole table's."""
        return combine(self._map(partial))

    def assembled(self) -> ClassSummary:
        """The canonical summary of the whole data, assembled here from the parts (one
        grouping of all their classes) and kept."""
        if self._assembled is None:
            parts = (gathered(self.client, self.parts) if self.client is not None
                     else list(self.parts))
            whole = ClassSummary.combine(parts)
            self._assembled = ClassSummary(
                self.spec, whole.keys, whole.counts, whole.weights,
                {s: whole.histograms[s] for s in self.spec.sensitive}, whole.low_weights)
        return self._assembled

    def narrowed(self, spec: SummarySpec) -> ShardedSummary:
        """The summary of ``spec`` (same side, keys and weights, fewer sensitive columns)."""
        out = ShardedSummary.__new__(ShardedSummary)
        out.spec, out.parts, out.client = spec, self.parts, self.client
        out.low_weights, out._facts = self.low_weights, self._facts
        out._assembled = None
        if self._assembled is not None:
            whole = self._assembled
            out._assembled = ClassSummary(spec, whole.keys, whole.counts, whole.weights,
                                          {s: whole.histograms[s] for s in spec.sensitive},
                                          whole.low_weights)
        return out


def _assembled_attribute(name: str) -> property:
    def get(self: ShardedSummary) -> Any:
        return getattr(self.assembled(), name)

    return property(get, doc=f"``{name}`` of the assembled summary (:meth:`assembled`).")


for _name in ("keys", "counts", "weights", "histograms"):
    setattr(ShardedSummary, _name, _assembled_attribute(_name))


__all__ = [
    "ShardedSummary",
    "all_paused",
    "canonical_keys",
    "gathered",
    "shuffled_summaries",
    "wait_unpaused",
]
