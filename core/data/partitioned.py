"""Partitioned inputs: a dataset read lazily as Dask partitions, and reductions over them.

A :class:`Partitioned` dataset is a file, a folder (a Parquet dataset, hive partitions
included) or a glob, as :func:`anoneval.core.data.kinds.load` reads it, but kept on disk: each data
file is one partition of a ``dask.dataframe``, read on the workers with the same reader, the
same column types (hive keys as columns, typed as pyarrow types them) and only the columns asked
for. Its row count, content hash and per-column memory are computed partition-wise
(:meth:`Partitioned.scan`); :meth:`Partitioned.reduce` runs any partial/combine pair as a tree
reduction on the cluster, and class summaries too large for that are grouped hash-partitioned
(:meth:`Partitioned.class_summaries`). The local engine turns it into an ordinary dataset
(:meth:`load`).

The content hash differs from the in-memory one (SHA-256 of all row hashes in order, which
cannot be split): it is the SHA-256 of the column header, the row count and a polynomial hash
of the same 64-bit row hashes (:class:`RowHash`), so it is the same for any partitioning of
the same rows in the same order, and changes with any value, type, column or row order.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from anoneval.core.data.kinds import (
    Conversion,
    DataKind,
    Dataset,
    Microdata,
    ReadOptions,
    ValueSurvey,
    block_kind,
    from_frame,
    joint_kind,
    load,
    read_file,
    read_options,
    require_columns,
    source_format,
)
from anoneval.core.data.sharded import ShardedSummary, as_read, gathered
from anoneval.core.data.sources import Source, integer_partition, locate
from anoneval.core.data.summary import ClassSummary, SummarySpec
from anoneval.core.errors import DataError

T = TypeVar("T")
#: Primes below 2**31 and the base of the polynomial row hash (products fit in 63 bits).
PRIMES = np.array([2147483647, 2147483629, 2147483587, 2147483579, 2147483563, 2147483549,
                   2147483543, 2147483497], dtype=np.uint64)
BASE = 1_000_003
#: How many partials one combine task merges (it holds them all in memory).
FAN_IN = 4
#: The largest share of a worker's ``memory_limit`` one class summary may take: a reduction
#: holds a few summaries and the temporaries of combining them (several times their size).
SUMMARY_SHARE = 0.05
#: Bytes per record and column below which a class summary is not projected before its tree
#: reduction (a summary holds at most a class per record: keys, counts and histograms).
SMALL_CELL_BYTES = 256
#: Columns a scan reads from a Parquet file at a time.
SCAN_COLUMNS = 4
#: Reduction tasks per worker: each folds a run of consecutive partitions (see
#: :meth:`Partitioned.reduce`), so a worker holds this many partials, whatever the partitions.
TASKS_PER_WORKER = 2


# -- the partition-wise row hash ----------------------------------------------------------------


@dataclass(frozen=True)
class RowHash:
    """Rows counted and their polynomial hash ``Σ h_i · BASE^(n-1-i) mod p`` per prime."""

    rows: int
    sums: tuple[int, ...]

    @classmethod
    def of_frame(cls, frame: pd.DataFrame) -> RowHash:
        """The hash of ``frame``'s rows (pandas' 64-bit row hashes, as the in-memory hash)."""
        return cls.of_hashes(pd.util.hash_pandas_object(frame, index=False).to_numpy(np.uint64))

    @classmethod
    def of_hashes(cls, h: np.ndarray) -> RowHash:
        """The hash of rows whose 64-bit hashes are ``h``."""
        n = len(h)
        if not n:
            return cls(0, (0,) * len(PRIMES))
        sums = []
        for p in PRIMES:
            powers = np.ones(1, dtype=np.uint64)  # BASE^0 .. BASE^(n-1) mod p, by doubling
            while len(powers) < n:
                step = np.uint64(pow(BASE, len(powers), int(p)))
                powers = np.concatenate([powers, powers * step % p])
            terms = (h % p) * powers[:n][::-1] % p
            sums.append(int(terms.sum(dtype=np.uint64) % p))
        return cls(n, tuple(sums))

    @classmethod
    def combine(cls, parts: Sequence[RowHash]) -> RowHash:
        """The hash of the parts' rows one after the other (associative, order-sensitive)."""
        rows, sums = 0, [0] * len(PRIMES)
        for part in parts:
            rows += part.rows
            sums = [(s * pow(BASE, part.rows, int(p)) + t) % int(p)
                    for s, t, p in zip(sums, part.sums, PRIMES, strict=True)]
        return cls(rows, tuple(sums))


class RowHasher:
    """pandas' 64-bit row hashes of a frame fed one column at a time, in column order: each
    column's ``hash_pandas_object`` folded in as CPython's former tuple hash (the xor-multiply
    recurrence with multiplier 1000003 and seed 0x345678) combines the items of a tuple, which is
    how pandas combines a frame's column hashes, so the result equals
    ``hash_pandas_object(frame, index=False)`` without the frame ever being whole."""

    def __init__(self, n_columns: int) -> None:
        self.n_columns = n_columns
        self.seen = 0
        self.mult = np.uint64(1_000_003)
        self.out: np.ndarray | None = None

    def add(self, column: pd.Series) -> None:
        h = pd.util.hash_pandas_object(column, index=False).to_numpy(np.uint64)
        if self.out is None:
            self.out = np.full(len(h), 0x345678, dtype=np.uint64)
        self.out ^= h
        self.out *= self.mult
        self.mult += np.uint64(82520 + 2 * (self.n_columns - self.seen))
        self.seen += 1

    def hashes(self) -> np.ndarray:
        if self.seen != self.n_columns or self.out is None:
            raise ValueError(f"{self.seen} of {self.n_columns} columns hashed")
        return self.out + np.uint64(97531)


@dataclass(frozen=True)
class Scan:
    """What one pass over every partition tells: rows, row hash, bytes in memory per column."""

    hash: RowHash
    memory: dict[str, int]

    @classmethod
    def of_frame(cls, frame: pd.DataFrame) -> Scan:
        usage = frame.memory_usage(deep=True, index=False)
        return cls(RowHash.of_frame(frame), {str(c): int(v) for c, v in usage.items()})

    @classmethod
    def combine(cls, parts: Sequence[Scan]) -> Scan:
        memory: dict[str, int] = {}
        for part in parts:
            for c, v in part.memory.items():
                memory[c] = memory.get(c, 0) + v
        return cls(RowHash.combine([p.hash for p in parts]), memory)


def _scan_piece(file: Path, hive: dict[str, Any], fmt: str, opts: ReadOptions,
                dtypes: dict[str, Any], conversions: dict[str, Conversion] | None = None) -> Scan:
    """The scan of one partition. A Parquet file is read :data:`SCAN_COLUMNS` columns at a
    time, each hashed as it comes (:class:`RowHasher`): the task holds a few columns, never the
    whole partition (which a scan of every column would otherwise need, several times over
    while it is converted and hashed)."""
    own = [c for c in dtypes if c not in hive]
    if fmt != "parquet" or not own:
        return Scan.of_frame(_read_piece(file, hive, fmt, opts, None, dtypes, conversions))
    hasher = RowHasher(len(dtypes))
    memory: dict[str, int] = {}
    for start in range(0, len(dtypes), SCAN_COLUMNS):
        group = list(dtypes)[start:start + SCAN_COLUMNS]
        # hive keys (last in the column order) are read with a file column, for the row count
        frame = _read_piece(file, hive, fmt, opts, [*group, own[0]] if set(group) <= set(hive)
                            else group, dtypes, conversions)
        for c in group:
            hasher.add(frame[c])
            memory[str(c)] = int(frame[c].memory_usage(deep=True, index=False))
        del frame
    return Scan(RowHash.of_hashes(hasher.hashes()), memory)


# -- reading ----------------------------------------------------------------------------------


def _hive_values(source: Source) -> list[dict[str, Any]]:
    """Each file's hive partition values, integers when every value of a key is an integer's
    canonical text (as the local reader, :func:`anoneval.core.data.sources.type_partitions`)."""
    raw = [source.partitions(f) for f in source.files]
    keys = list(raw[0]) if raw else []
    typed = {key: integer_partition(r.get(key) for r in raw) for key in keys}
    return [{k: int(v) if typed.get(k) else v for k, v in r.items()} for r in raw]


def _read_piece(file: Path, hive: dict[str, Any], fmt: str, opts: ReadOptions,
                wanted: Sequence[str] | None, dtypes: dict[str, Any],
                conversions: dict[str, Conversion] | None = None) -> pd.DataFrame:
    """One partition: the file's ``wanted`` columns (all when None) with its hive keys, typed
    as the whole dataset is (as pandas types the concatenation of every file), then read as
    ``conversions`` say (see :func:`anoneval.core.data.kinds.unify_kinds`)."""
    own = None if wanted is None else [c for c in wanted if c not in hive]
    frame = read_file(file, fmt, opts, own)
    clash = sorted(set(hive) & {str(c) for c in frame.columns})
    if clash:
        raise DataError(f"{file}: partition key(s) {clash} are also columns of the file")
    keys = {k: v for k, v in hive.items() if wanted is None or k in wanted}
    if keys:
        frame = frame.assign(**{k: pd.Series([v] * len(frame), index=frame.index,
                                             dtype=dtypes.get(k)) for k, v in keys.items()})
    order = [c for c in dtypes if c in frame.columns]
    frame = frame[order].reset_index(drop=True)
    cast = {c: dtypes[c] for c in order if frame[c].dtype != dtypes[c]}
    frame = frame.astype(cast) if cast else frame
    if conversions:
        frame = frame.assign(**{c: conv.apply(frame[c]) for c, conv in conversions.items()
                                if c in frame.columns})
    return frame


def _reduce_piece(partial: Callable[[pd.DataFrame], T], file: Path, hive: dict[str, Any],
                  fmt: str, opts: ReadOptions, wanted: Sequence[str] | None,
                  dtypes: dict[str, Any], conversions: dict[str, Conversion] | None = None) -> T:
    """``partial`` of one partition, read here."""
    return partial(_read_piece(file, hive, fmt, opts, wanted, dtypes, conversions))


def _fold_pieces(piece: Callable[[Path, dict[str, Any]], T], combine: Callable[[list[T]], T],
                 pieces: Sequence[tuple[Path, dict[str, Any]]]) -> T:
    """``combine`` of ``piece`` of consecutive partitions, one at a time, each folded into the
    running result at once: the task holds one partition and two partials at most."""
    folded: list[T] = []
    for file, hive in pieces:
        part = piece(file, hive)
        folded = [combine([*folded, part])] if folded else [part]
    return folded[0]


def _head(file: Path, hive: dict[str, Any], fmt: str, opts: ReadOptions) -> tuple[
        pd.DataFrame, int]:
    """A file's first row (column names and types) and its number of rows."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        with pq.ParquetFile(file) as meta:
            head = meta.schema_arrow.empty_table().to_pandas()
            rows = meta.metadata.num_rows
    else:
        frame = read_file(file, fmt, opts)
        head, rows = frame.iloc[:1], len(frame)
    clash = sorted(set(hive) & {str(c) for c in head.columns})
    if clash:  # as the local reader says (a projection may not read the column)
        raise DataError(f"{file}: partition key(s) {clash} are also columns of the file")
    if hive:
        head = head.assign(**{k: pd.Series([v] * len(head), index=head.index,
                                           dtype=np.int64 if isinstance(v, int) else object)
                              for k, v in hive.items()})
    return head, rows


def _summary_budget() -> int | None:
    """The most bytes one class summary may take on this worker: :data:`SUMMARY_SHARE` of its
    ``memory_limit`` (None outside a worker or without a limit)."""
    try:
        from distributed import get_worker

        limit = get_worker().memory_manager.memory_limit
    except (ImportError, ValueError):  # not in a Dask worker
        return None
    return int(limit * SUMMARY_SHARE) if limit else None


@dataclass(frozen=True)
class Oversized:
    """What the tree reduction returns for a spec whose summary outgrew a worker's budget:
    the switch to the hash-partitioned group-by (:mod:`anoneval.core.data.sharded`)."""

    spec: SummarySpec
    classes: int
    records: int
    bytes: int


def _bounded(found: list[Any]) -> list[Any]:
    """``found`` with each summary larger than this worker's budget replaced by
    :class:`Oversized`, so the tree reduction of a spec whose classes approach the rows stops
    early and the spec is grouped hash-partitioned instead."""
    budget = _summary_budget()
    if budget is None:
        return found
    out: list[Any] = []
    for summary in found:
        size = summary.__sizeof__() if isinstance(summary, ClassSummary) else 0
        if size > budget:
            summary = Oversized(summary.spec, summary.n_classes, summary.n_records, size)
        out.append(summary)
    return out


def _string_columns(file: Path) -> set[str]:
    """The columns a Parquet file types as text (read from its footer)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    return {f.name for f in pq.read_schema(file)
            if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)}


def _block_kinds(frame: pd.DataFrame) -> dict[str, set[str]]:
    return {str(c): {block_kind(frame[c])} for c in frame.columns}


def _union_kinds(parts: list[dict[str, set[str]]]) -> dict[str, set[str]]:
    return {c: set().union(*(p[c] for p in parts)) for c in parts[0]}


def _surveys(frame: pd.DataFrame) -> dict[str, ValueSurvey]:
    return {str(c): ValueSurvey.of_values(frame[c]) for c in frame.columns}


def _combine_surveys(parts: list[dict[str, ValueSurvey]]) -> dict[str, ValueSurvey]:
    return {c: ValueSurvey.combine([p[c] for p in parts]) for c in parts[0]}


def _summaries(specs: tuple[SummarySpec, ...], frame: pd.DataFrame) -> list[Any]:
    """Each spec's summary of one partition, or the error computing it; the rows are grouped
    once per tuple of keys (the partition as a dataset caches its groupings)."""
    data = Microdata(frame)
    out: list[Any] = []
    for spec in specs:
        try:
            out.append(ClassSummary.of_frame(data, spec))
        except Exception as exc:  # reported to the measures asking for this spec only
            out.append(exc)
    return _bounded(out)


def _covers(wide: SummarySpec, spec: SummarySpec) -> bool:
    """Whether ``spec``'s summary is a projection of ``wide``'s (same side and keys)."""
    return (wide.side == spec.side and wide.keys == spec.keys
            and spec.weights == wide.weights and set(spec.sensitive) <= set(wide.sensitive))


def _widened(specs: Sequence[SummarySpec]) -> list[SummarySpec]:
    """Fewer specs covering ``specs``: those of one side, keys and weights merge into one
    with every sensitive column, so one grouping serves them all."""
    wide: list[SummarySpec] = []
    for spec in specs:
        for i, w in enumerate(wide):
            if w.side == spec.side and w.keys == spec.keys and w.weights == spec.weights:
                wide[i] = SummarySpec(w.side, w.keys, w.weights,
                                      tuple(dict.fromkeys([*w.sensitive, *spec.sensitive])))
                break
        else:
            wide.append(spec)
    return wide


def _narrowed(summary: ClassSummary, spec: SummarySpec) -> ClassSummary:
    """The summary of ``spec`` from that of a spec covering it (see :func:`_covers`)."""
    if summary.spec == spec:
        return summary
    if isinstance(summary, ShardedSummary):
        return summary.narrowed(spec)
    return ClassSummary(spec, summary.keys, summary.counts, summary.weights,
                        {s: summary.histograms[s] for s in spec.sensitive}, summary.low_weights)


def _combine_all(parts: list[list[Any]]) -> list[Any]:
    """Spec by spec, the combined summary, or the first error of a part."""
    out: list[Any] = []
    for pieces in zip(*parts, strict=True):
        failed = [p for p in pieces if isinstance(p, (BaseException, Oversized))]
        out.append(failed[0] if failed else ClassSummary.combine(pieces))
    return _bounded(out)


def _tree(parts: list[Any], combine: Callable[[list[T]], T]) -> Any:
    """Delayed ``combine`` over ``parts`` in a tree of :data:`FAN_IN`, keeping their order."""
    from dask import delayed

    while len(parts) > 1:
        parts = [delayed(combine)(parts[i:i + FAN_IN]) for i in range(0, len(parts), FAN_IN)]
    return parts[0]


class Partitioned(Dataset):
    """A dataset kept on disk and read as Dask partitions, one per data file (sorted path
    order). ``kind``, ``fmt`` and ``options`` are those of :func:`anoneval.core.data.kinds.load`."""

    #: The Dask scheduler of its computations without a client (None: Dask's default).
    local_scheduler: str | None = None

    def __init__(self, path: str | Path, kind: str = "microdata", fmt: str | None = None,
                 options: dict[str, Any] | ReadOptions | None = None) -> None:
        super().__init__(str(path))
        self.located = locate(path)
        self.fmt = source_format(self.located, fmt)
        self.opts = read_options(path, kind, options)
        self.kind = kind
        self.hive = _hive_values(self.located)
        self.client: Any = None
        self._meta: pd.DataFrame | None = None
        self._rows: list[int] | None = None
        #: How columns are read after the files' types (:meth:`converted`).
        self.conversions: dict[str, Conversion] = {}

    @property
    def data_kind(self) -> DataKind:  # type: ignore[override]
        return self.kind  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"Partitioned({self.source!r}, {len(self.located.files)} files)"

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the client (a task rebuilding it loads the files eagerly)."""
        return {**super().__getstate__(), "client": None}

    def attach(self, client: Any) -> Partitioned:
        """Compute on ``client`` (a ``distributed.Client``) from now on."""
        self.client = client
        return self

    def load(self) -> Dataset:
        """The whole dataset in memory, as :func:`anoneval.core.data.kinds.load` reads it."""
        return load(self.source or self.located.given, self.kind, self.fmt, self.opts)

    def _compute(self, *delayed_values: Any) -> Any:
        import dask

        with as_read():
            if self.client is not None:
                return gathered(self.client, self.client.compute(list(delayed_values)))
            return list(dask.compute(*delayed_values, scheduler=self.local_scheduler))

    def _survey(self) -> None:
        from dask import delayed

        heads = self._compute(*[delayed(_head)(f, h, self.fmt, self.opts)
                                for f, h in zip(self.located.files, self.hive, strict=True)])
        first = list(heads[0][0].columns)
        for file, (head, _) in zip(self.located.files, heads, strict=True):
            if list(head.columns) != first:
                raise DataError(f"{file}: its columns {list(head.columns)} differ from those "
                                f"of {self.located.files[0]} ({first})")
        frames = [h for h, _ in heads]
        self._meta = (frames[0] if len(frames) == 1
                      else pd.concat(frames, ignore_index=True)).iloc[:0]
        self._rows = [r for _, r in heads]

    @property
    def file_meta(self) -> pd.DataFrame:
        """An empty frame with the dataset's columns and types as its files give them."""
        if self._meta is None:
            self._survey()
        assert self._meta is not None
        return self._meta

    @property
    def meta(self) -> pd.DataFrame:
        """An empty frame with the dataset's columns and types (after :attr:`conversions`)."""
        if not self.conversions:
            return self.file_meta
        return self.file_meta.astype({c: object if conv.to == "text" else conv.to
                                      for c, conv in self.conversions.items()})

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.meta.columns]

    @property
    def partition_rows(self) -> list[int]:
        """Rows of each partition (from Parquet metadata, else counted once on the cluster)."""
        if self._rows is None:
            self._survey()
        assert self._rows is not None
        return self._rows

    def __len__(self) -> int:
        return sum(self.partition_rows)

    def require(self, columns: Collection[str], role: str = "column") -> None:
        """Raise a :class:`DataError` naming every missing column, as frames do."""
        require_columns(self, list(self.meta.columns), columns, role)

    def _projection(self, columns: Collection[str] | None) -> tuple[
            pd.DataFrame, list[str] | None, dict[str, Any]]:
        """The meta of ``columns`` (in the dataset's order), their names and their types in
        the files."""
        files = self.file_meta
        if columns is None:
            return self.meta, None, dict(files.dtypes.items())
        self.require(columns)
        cols = [c for c in files.columns if c in set(columns)]
        return self.meta[cols], cols, dict(files[cols].dtypes.items())

    def _conversions(self, columns: list[str] | None) -> dict[str, Conversion] | None:
        """The conversions of ``columns`` (all when None), None when there is none."""
        out = {c: v for c, v in self.conversions.items() if columns is None or c in columns}
        return out or None

    def frame(self, columns: Collection[str] | None = None) -> Any:
        """The lazy ``dask.dataframe`` of ``columns`` (all when None), one partition per file."""
        import dask.dataframe as dd

        meta, cols, dtypes = self._projection(columns)
        with as_read():
            return dd.from_map(_read_piece, list(self.located.files), self.hive,
                               args=(self.fmt, self.opts, cols, dtypes,
                                     self._conversions(cols)), meta=meta,
                               enforce_metadata=False, label="anoneval-read")

    def _workers(self) -> int:
        """Workers of the client (this machine's cores without one)."""
        if self.client is None:
            return os.cpu_count() or 1
        return max(len(self.client.scheduler_info(n_workers=-1).get("workers", {})), 1)

    def reduce(self, columns: Collection[str] | None, partial: Callable[[pd.DataFrame], T],
               combine: Callable[[list[T]], T]) -> T:
        """``combine`` of ``partial`` of every partition of ``columns`` in path order; only the
        combined result reaches this process. The partitions are split into
        :data:`TASKS_PER_WORKER` runs of consecutive files per worker; each task reads its
        files one at a time and folds each partial into its result at once, and the runs'
        results combine in a tree of :data:`FAN_IN`. So a worker holds one partition and a few
        partials, however many partitions there are (a tree over every partition would leave
        its leaves' partials waiting on the workers)."""
        _, cols, dtypes = self._projection(columns)
        piece = functools.partial(_reduce_piece, partial, fmt=self.fmt, opts=self.opts,
                                  wanted=cols, dtypes=dtypes,
                                  conversions=self._conversions(cols))
        return self._fold(piece, combine)

    def _fold(self, piece: Callable[[Path, dict[str, Any]], T],
              combine: Callable[[list[T]], T]) -> T:
        """``combine`` of ``piece(file, hive)`` of every partition, as :meth:`reduce` says."""
        from dask import delayed

        pieces = list(zip(self.located.files, self.hive, strict=True))
        runs = np.array_split(np.arange(len(pieces)),
                              min(len(pieces), TASKS_PER_WORKER * self._workers()))
        parts = [delayed(_fold_pieces)(piece, combine, [pieces[i] for i in run])
                 for run in runs]
        return self._compute(_tree(parts, combine))[0]  # type: ignore[no-any-return]

    def gather(self, columns: Collection[str] | None = None) -> Dataset:
        """``columns`` of every partition as one in-memory dataset of this kind, concatenated in
        this process: partitions travel one per worker at a time, so a worker holds about one
        partition, whatever the gathered size."""
        pieces = self.frame(columns).to_delayed()
        batch = self._workers()
        frames: list[pd.DataFrame] = []
        for start in range(0, len(pieces), batch):
            frames.extend(self._compute(*pieces[start:start + batch]))
        frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        return from_frame(frame.reset_index(drop=True), self.kind, self.opts, source=self.source)

    def scan(self) -> Scan:
        """Rows, row hash and memory per column, computed partition-wise once."""
        piece = functools.partial(_scan_piece, fmt=self.fmt, opts=self.opts,
                                  dtypes=self._projection(None)[2],
                                  conversions=self._conversions(None))
        return self.cached(("scan",), lambda: self._fold(piece, Scan.combine))

    def gathered_bytes(self, columns: Collection[str] | None = None) -> int:
        """The in-memory size of ``columns`` (all when None) of the whole dataset."""
        memory = self.scan().memory
        return sum(v for c, v in memory.items() if columns is None or c in columns)

    def class_summaries(self, specs: Collection[SummarySpec]) -> None:
        """Compute the summaries of ``specs`` not yet cached, all in one partition-wise pass
        (a spec that fails keeps its error, raised when it is asked for).

        With a cluster whose workers have a ``memory_limit``, a spec whose summary would take
        more than :data:`SUMMARY_SHARE` of it (projected from the first partition, or found
        during the tree reduction) is grouped hash-partitioned on the cluster instead
        (:class:`~anoneval.core.data.sharded.ShardedSummary`): the share is the switch point
        between the two, never a limit."""
        todo = [s for s in dict.fromkeys(specs) if ("class_summary", s) not in self._cache]
        if not todo:
            return
        columns = list(dict.fromkeys(c for s in todo for c in s.columns))
        self.require(columns)
        wide = _widened(todo)
        budget = self.summary_budget()
        # no projection for one file (its tree reduction is the projection) or when even one
        # class per record could not reach the budget (the fold still switches if it does)
        small = budget is None or len(self) * len(columns) * SMALL_CELL_BYTES < budget
        projected = ({} if small or len(self.located.files) == 1
                     else self._projected(wide, columns))
        shard = {w for w, b in projected.items() if w.keys and budget is not None and b > budget}
        tree = [w for w in wide if w not in shard]
        computed: dict[SummarySpec, Any] = {}
        if tree:
            tree_columns = list(dict.fromkeys(c for s in tree for c in s.columns))
            found = self.reduce(tree_columns, functools.partial(_summaries, tuple(tree)),
                                _combine_all)
            computed = dict(zip(tree, found, strict=True))
        for w in wide:
            found = computed.get(w)
            if w in shard or isinstance(found, Oversized):
                size = projected.get(w, 0)
                if isinstance(found, Oversized) and found.records:
                    size = max(size, found.bytes * len(self) // found.records)
                try:
                    computed[w] = self.sharded_summary(w, size)
                except Exception as exc:  # reported to the measures asking for this spec
                    computed[w] = exc
        for spec in todo:
            source = next(w for w in wide if _covers(w, spec))
            found = computed[source]
            self._cache[("class_summary", spec)] = (
                found if isinstance(found, BaseException) else _narrowed(found, spec))

    def summary_budget(self) -> int | None:
        """The most bytes the tree reduction may fold one class summary into:
        :data:`SUMMARY_SHARE` of the smallest worker ``memory_limit`` (None without a client
        or without limits)."""
        if self.client is None:
            return None
        workers = self.client.scheduler_info(n_workers=-1).get("workers", {}).values()
        limits = [w.get("memory_limit") or 0 for w in workers]
        if not limits or min(limits) <= 0:
            return None
        return int(min(limits) * SUMMARY_SHARE)

    def _projected(self, specs: Sequence[SummarySpec], columns: list[str]
                   ) -> dict[SummarySpec, int]:
        """Each spec's projected summary bytes from the first partition: its summary's bytes
        per record, times the records, times the share of its records that are distinct
        classes (near 1 for raw microdata, near 0 for a generalized release)."""
        from dask import delayed

        _, cols, dtypes = self._projection(columns)
        file, hive = self.located.files[0], self.hive[0]
        task = delayed(_reduce_piece)(functools.partial(_summaries, tuple(specs)), file, hive,
                                      self.fmt, self.opts, cols, dtypes,
                                      self._conversions(cols))
        found = self._compute(task)[0]
        total = len(self)
        out: dict[SummarySpec, int] = {}
        for spec, summary in zip(specs, found, strict=True):
            if isinstance(summary, Oversized):
                out[spec] = summary.bytes * total // max(summary.records, 1)
            elif isinstance(summary, ClassSummary) and summary.n_records:
                share = summary.n_classes / summary.n_records
                out[spec] = int(summary.__sizeof__() * total / summary.n_records * share)
        return out

    def sharded_summary(self, spec: SummarySpec, size: int = 0) -> ShardedSummary:
        """``spec``'s summary as a hash-partitioned group-by on the cluster (Dask's p2p
        shuffle, the task shuffle where p2p cannot carry the columns), its parts left on the
        workers: at least one output partition per input one, and enough that each part's
        summary stays within :meth:`summary_budget` (``size`` is the projected whole)."""
        from anoneval.core.data.sharded import shuffled_summaries

        budget = self.summary_budget() or max(size, 1)
        parts = max(len(self.located.files), TASKS_PER_WORKER * self._workers(),
                    -(-size // budget))
        methods = ["p2p", "tasks"] if self.client is not None else [None]
        for i, method in enumerate(methods):
            with as_read():
                delayed_parts = shuffled_summaries(self.frame(spec.columns), spec, parts,
                                                   method)
                try:
                    if self.client is None:
                        import dask

                        return ShardedSummary(spec, dask.compute(*delayed_parts))
                    futures = self.client.compute(delayed_parts)
                    return ShardedSummary(spec, futures, self.client)
                except Exception:
                    if i == len(methods) - 1:
                        raise
        raise AssertionError("unreachable")

    def class_summary(self, spec: SummarySpec) -> ClassSummary:
        """The class summary of ``spec`` over every partition (computed once)."""
        self.require(spec.columns)
        self.class_summaries([spec])
        found = self._cache[("class_summary", spec)]
        if isinstance(found, BaseException):
            raise found
        return found  # type: ignore[no-any-return]

    def value_kinds(self, columns: Collection[str] | None = None) -> dict[str, str]:
        """Each column's kind of values: from its type, or for object columns from the kinds
        of its partitions (one partition-wise pass over those columns, once; ``columns``
        selects among them afterwards)."""

        def compute() -> dict[str, str]:
            meta = self.meta
            kinds = {str(c): block_kind(meta[c]) for c in meta.columns}
            loose = [str(c) for c in meta.columns if meta[c].dtype.kind == "O"]
            text = self._text_columns(loose)
            kinds.update(dict.fromkeys(text, "text"))
            loose = [c for c in loose if c not in text]
            if loose:
                seen = self.reduce(loose, _block_kinds, _union_kinds)
                kinds.update({c: joint_kind(seen[c]) for c in loose})
            return kinds

        kinds = self.cached(("value_kinds",), compute)
        return kinds if columns is None else {c: k for c, k in kinds.items() if c in columns}

    def _text_columns(self, columns: list[str]) -> set[str]:
        """Those of the object ``columns`` known to hold text without reading them: converted
        to text, hive keys of text values, and Parquet strings in every file."""
        known = {c for c in columns if c in self.conversions
                 or (self.hive and all(isinstance(h.get(c), str) for h in self.hive))}
        if self.fmt != "parquet" or not set(columns) - known:
            return known
        from dask import delayed

        found = self._compute(*[delayed(_string_columns)(f) for f in self.located.files])
        return known | (set(columns) & set.intersection(*found))

    def value_surveys(self, columns: Sequence[str]) -> dict[str, ValueSurvey]:
        """The :class:`~anoneval.core.data.kinds.ValueSurvey` of ``columns``, partition-wise."""
        todo = [c for c in columns if ("value_survey", c) not in self._cache]
        if todo:
            found = self.reduce(todo, _surveys, _combine_surveys)
            for c in todo:
                self._cache[("value_survey", c)] = found[c]
        return {c: self._cache[("value_survey", c)] for c in columns}

    def column_dtype(self, column: str) -> Any:
        return self.meta[column].dtype

    def converted(self, conversions: dict[str, Conversion]) -> Partitioned:
        """This dataset with ``conversions`` applied as each partition is read."""
        new = copy.copy(self)
        new.conversions = {**self.conversions, **conversions}
        new._cache = {}
        return new

    def _hash_parts(self) -> list[bytes]:
        scan = self.scan()
        head = repr([(str(c), str(t)) for c, t in self.meta.dtypes.items()]).encode()
        return [head, str(scan.hash.rows).encode(), repr(scan.hash.sums).encode()]

    def content_hash(self) -> str:
        """SHA-256 of the header, the row count and the partition-wise row hash."""
        return "partitioned-" + super().content_hash()


__all__ = ["Partitioned", "RowHash", "Scan"]
