"""Passes over records where they lie: block by block, or class by class after a shuffle.

A measure whose result needs more than one reduction over the records (per-record values from
figures of the whole data, or a join of two groupings of them) reads them as :class:`Records`:
``map(fn, by=keys)`` transforms each block into a frame, the blocks first hash-partitioned on
the ``keys`` columns when they are given, so that each block holds whole classes of them; and
``reduce(partial, combine)`` combines the partials of the blocks. In memory the records are one
block (:class:`FrameRecords`); on a cluster (:class:`PairedRecords`) the blocks are the paired
partitions (:func:`~anoneval.core.data.pairs.paired_pieces`), the shuffle is Dask's own
(``DataFrame.shuffle(on=keys)``: p2p, which spills to disk, else the task shuffle), every
frame stays on the workers, and only the partials reach this process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd

from anoneval.core.data.kinds import Dataset
from anoneval.core.data.sharded import canonical_keys
from anoneval.core.errors import DataError

T = TypeVar("T")
Block = Callable[[pd.DataFrame], pd.DataFrame]


@dataclass(frozen=True)
class _Step:
    fn: Block
    by: tuple[str, ...]


class Records:
    """Records to pass over, lazily: :meth:`map` adds a step, :meth:`reduce` runs them all.

    ``fn`` and ``partial`` must be picklable top-level functions (or partials of them) that
    accept empty frames (a block, or a shuffled partition, may hold no rows); ``combine`` must
    be associative. The first step maps the records' own frames (paired frames, whose columns
    are pairs) to frames of plain column names, which later steps may group ``by``.
    """

    def __init__(self, steps: tuple[_Step, ...] = ()) -> None:
        self.steps = steps

    def map(self, fn: Block, by: Sequence[str] = ()) -> Records:
        """These records with ``fn`` applied to each block; with ``by``, the blocks are first
        hash-partitioned on those columns (values compared as class summaries compare them),
        so each block ``fn`` sees holds every record of its classes."""
        if by and not self.steps:
            raise ValueError("map the records to frames of plain columns before grouping them")
        return self._with((*self.steps, _Step(fn, tuple(by))))

    def reduce(self, partial: Callable[[pd.DataFrame], T],
               combine: Callable[[list[T]], T]) -> T:
        """``combine`` of ``partial`` of each block after the steps."""
        raise NotImplementedError

    def _with(self, steps: tuple[_Step, ...]) -> Records:
        raise NotImplementedError


class FrameRecords(Records):
    """Records in memory: one block, the frame (or what ``frame`` returns, made on first use)."""

    def __init__(self, frame: pd.DataFrame | Callable[[], pd.DataFrame],
                 steps: tuple[_Step, ...] = ()) -> None:
        super().__init__(steps)
        self._frame = frame

    def _with(self, steps: tuple[_Step, ...]) -> Records:
        return FrameRecords(self._frame, steps)

    def reduce(self, partial: Callable[[pd.DataFrame], T],
               combine: Callable[[list[T]], T]) -> T:
        if callable(self._frame):
            self._frame = self._frame()
        frame = self._frame
        for step in self.steps:  # one block holds every class
            frame = step.fn(canonical_keys(frame, step.by) if step.by else frame)
        return combine([partial(frame)])


class PairedRecords(Records):
    """The paired records of two datasets, one or both partitioned on a cluster (the pairing
    of :func:`~anoneval.core.data.pairs.paired_reduce`: by row order or by ``key``)."""

    def __init__(self, original: Dataset, anonymized: Dataset, columns: Mapping[str, Any],
                 key: str | None, steps: tuple[_Step, ...] = ()) -> None:
        super().__init__(steps)
        self.original, self.anonymized = original, anonymized
        self.columns, self.key = columns, key

    def _with(self, steps: tuple[_Step, ...]) -> Records:
        return PairedRecords(self.original, self.anonymized, self.columns, self.key, steps)

    def reduce(self, partial: Callable[[pd.DataFrame], T],
               combine: Callable[[list[T]], T]) -> T:
        from anoneval.core.data.pairs import paired_reduce

        if not self.steps:
            return paired_reduce(self.original, self.anonymized, self.columns, self.key,
                                 partial, combine)
        methods: list[str | None] = ["p2p", "tasks"] if self._client() is not None else [None]
        if not any(step.by for step in self.steps):
            methods = methods[:1]
        for i, method in enumerate(methods):
            try:
                return self._reduce(partial, combine, method)
            except DataError:
                raise
            except Exception:  # p2p cannot carry every column (mixed objects): the tasks
                if i == len(methods) - 1:
                    raise
        raise AssertionError("unreachable")

    def _client(self) -> Any:
        from anoneval.core.data.partitioned import Partitioned

        lazy = next(d for d in (self.original, self.anonymized) if isinstance(d, Partitioned))
        return lazy.client

    def _reduce(self, partial: Callable[[pd.DataFrame], T], combine: Callable[[list[T]], T],
                method: str | None) -> T:
        import dask.dataframe as dd
        from dask import delayed

        from anoneval.core.data.pairs import no_stray, paired_pieces
        from anoneval.core.data.partitioned import TASKS_PER_WORKER, Partitioned, _tree

        first, *rest = self.steps
        pieces, compute, empty = paired_pieces(self.original, self.anonymized, self.columns,
                                               self.key, first.fn)
        if self.key is not None:
            pieces = [delayed(no_stray)(p, self.key) for p in pieces]
        meta = first.fn(empty)
        frame = dd.from_delayed(pieces, meta=meta, verify_meta=False)
        lazy = next(d for d in (self.original, self.anonymized) if isinstance(d, Partitioned))
        # as a sharded summary: at least one output partition per block and a few per worker
        npartitions = max(frame.npartitions, TASKS_PER_WORKER * lazy._workers())
        for step in rest:
            if step.by:
                keys = list(step.by)
                meta = canonical_keys(meta, keys)
                frame = frame.map_partitions(canonical_keys, keys, meta=meta).shuffle(
                    on=keys, npartitions=npartitions,
                    **({"shuffle_method": method} if method else {}))
            meta = step.fn(meta)
            frame = frame.map_partitions(step.fn, meta=meta)
        parts = [delayed(partial)(p) for p in frame.to_delayed()]
        return compute(_tree(parts, combine))[0]  # type: ignore[no-any-return]


__all__ = ["FrameRecords", "PairedRecords", "Records"]
