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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from anoneval.core.data.summary import ClassSummary, SummarySpec, _plain

T = TypeVar("T")


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
        return self.client.gather([self.client.submit(fn, p, pure=False)  # type: ignore[no-any-return]
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
            parts = (self.client.gather(self.parts) if self.client is not None
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


__all__ = ["ShardedSummary", "canonical_keys", "shuffled_summaries"]
