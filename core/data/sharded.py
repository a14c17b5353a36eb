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

A second hash partitioning, by other keys, joins or merges classes that the first put in
different parts, again with Dask's shuffle: :func:`cogrouped` turns the parts of several
summaries into rows keyed alike (e.g. a population generalized to a release's levels and the
release's classes) and reduces each group of rows where it meets; :func:`regrouped` merges the
classes whose keys a function maps alike into a new sharded summary.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from anoneval.core.data.held import Held, dask_config
from anoneval.core.data.summary import ClassSummary, SummarySpec, _plain
from anoneval.core.errors import DataError

T = TypeVar("T")

#: Seconds a wait on the cluster goes on while every worker is paused and no task finishes.
PAUSED_PATIENCE = 30.0
#: Seconds between two looks at the workers' status while waiting.
POLL_SECONDS = 1.0
#: Seconds a wait on the cluster goes on while it has no worker at all (they died and were not
#: restarted, or were stopped) and no task finishes: as long as a run waits for a scheduler's
#: first worker.
NO_WORKER_PATIENCE = 120.0
#: Dask keeps the column types the reader gives (no conversion of text to pyarrow), held while
#: any caller in any thread builds or computes a collection (:class:`Held`).
as_read = Held(dask_config({"dataframe.convert-string": False}))


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
    limits. Likewise after :data:`NO_WORKER_PATIENCE` seconds without any worker (tasks wait
    for one forever)."""
    import asyncio
    import time
    from concurrent.futures import CancelledError

    from distributed import wait

    patience = PAUSED_PATIENCE if patience is None else patience
    futures = list(futures)
    done, state, since = -1, "working", time.monotonic()
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
        now = ("none" if not workers else
               "paused" if all(w.get("status") == "paused" for w in workers.values())
               else "working")
        if finished != done or now != state or now == "working":
            done, state, since = finished, now, time.monotonic()
        elif now == "paused" and time.monotonic() - since >= patience:
            raise _paused_error(workers, patience)
        elif now == "none" and time.monotonic() - since >= NO_WORKER_PATIENCE:
            raise DataError(
                f"the Dask cluster has had no worker for {NO_WORKER_PATIENCE:.0f} s and no "
                f"task finished ({finished} of {len(futures)} done): its workers died and were "
                "not restarted, or were stopped. Look at the workers' logs (a worker killed "
                "for its memory: give them a larger memory_limit), start workers, or run on "
                "the local engine")


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


# -- joins and regroupings of summaries: a second hash partitioning, by other keys ------------


def _pieces(summary: ClassSummary) -> list[Any]:
    """The parts of ``summary``: a sharded summary's parts, else the summary itself."""
    return list(summary.parts) if isinstance(summary, ShardedSummary) else [summary]


def _text(values: pd.Series) -> np.ndarray:
    """Each value as text, the same for equal values of any type (``39``, ``39.0`` and
    ``np.int8(39)`` give ``"39"``; missing values ``"\x00NA"``): where a row goes must not
    depend on how a part types its column (a part with a missing value holds its integers as
    floats)."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    texts = np.array(["\x00NA" if v is None or v is pd.NA or (isinstance(v, float) and v != v)
                      else str(int(v)) if isinstance(v, (float, np.floating)) and float(
                          v).is_integer() else str(v) for v in uniques], dtype=object)
    return texts[codes] if len(codes) else texts[:0]


def _keyed(part: Any, rows: Callable[[Any], pd.DataFrame], on: Sequence[str]) -> pd.DataFrame:
    """``rows(part)`` with the hash of its ``on`` values (as :func:`_text`, but an unsigned
    64-bit column, the same type in every part, as it is) in ``_key``."""
    frame = rows(part)
    texts = pd.DataFrame({c: frame[c].to_numpy() if frame[c].dtype == np.uint64
                          else _text(frame[c]) for c in on}, index=frame.index)
    return frame.assign(_key=pd.util.hash_pandas_object(texts, index=False).to_numpy())


def _shuffled(sources: Sequence[tuple[ClassSummary, Callable[[ClassSummary], pd.DataFrame]]],
              on: Sequence[str], meta: pd.DataFrame, finish: Callable[[pd.DataFrame], T],
              method: str | None) -> tuple[list[Any], Any]:
    """``finish`` of each partition of the rows of every part of every source (``rows(part)``,
    made where the part lies), hash-partitioned together on the ``on`` values with Dask's
    shuffle: the futures of the results on the cluster and the client; without a sharded
    source on a cluster, the one result of all the rows, made here, and None."""
    client = next((s.client for s, _ in sources
                   if isinstance(s, ShardedSummary) and s.client is not None), None)
    if client is None:
        frames = [rows(part) for summary, rows in sources for part in _pieces(summary)]
        frame = pd.concat(frames, ignore_index=True) if frames else meta
        return [finish(frame.reset_index(drop=True))], None
    import dask.dataframe as dd
    from dask import delayed

    futures = [client.submit(_keyed, part, rows, list(on), pure=False)
               for summary, rows in sources for part in _pieces(summary)]
    npartitions = max(len(_pieces(s)) for s, _ in sources)
    with as_read():  # values as the rows hold them
        frame = dd.from_delayed(futures, meta=meta.assign(_key=np.zeros(0, dtype=np.uint64)),
                                verify_meta=False)
        shuffled = frame.shuffle(on=["_key"], npartitions=npartitions,
                                 **({"shuffle_method": method} if method else {}))
        out = client.compute([delayed(_finished)(p, finish) for p in shuffled.to_delayed()])
    return out, client


def _finished(frame: pd.DataFrame, finish: Callable[[pd.DataFrame], T]) -> T:
    return finish(frame.drop(columns="_key").reset_index(drop=True))


def cogrouped(sources: Sequence[tuple[ClassSummary, Callable[[ClassSummary], pd.DataFrame]]],
              on: Sequence[str], meta: pd.DataFrame, partial: Callable[[pd.DataFrame], T],
              combine: Callable[[list[T]], T]) -> T:
    """``combine`` of ``partial`` of each group of rows: a join of class tables by other keys.

    Each part of each source summary becomes rows (``rows(part)``, the columns of ``meta``)
    where it lies; the rows of every source are hash-partitioned together on the ``on``
    columns with Dask's shuffle (``DataFrame.shuffle``), so rows of equal ``on`` values, of
    any source and any part, meet in one partition, where ``partial`` runs; only its results
    reach this process. ``rows`` and ``partial`` must pickle. With no source sharded on a
    cluster the rows are made and joined here (one partition)."""
    futures, client = _shuffled(sources, on, meta, partial, None)
    return combine(futures if client is None else gathered(client, futures))


def _summary_rows(part: ClassSummary, keyer: Callable[[pd.DataFrame], pd.DataFrame]
                  ) -> pd.DataFrame:
    """A part as rows to regroup: each class (``_table`` 0: its count and weight sum) and each
    (class, value) pair of each sensitive column (``_table`` 1, 2, …: its count), with the
    class's keys and ``keyer`` of them (``_m0``, ``_m1``, …)."""
    spec = part.spec
    keys = part.keys[list(spec.keys)].reset_index(drop=True).astype(object)
    mapped = keyer(part.keys).reset_index(drop=True)
    keys = keys.assign(**{f"_m{j}": mapped[k].astype(object).to_numpy()
                          for j, k in enumerate(spec.keys)})
    n = len(keys)
    weights = part.weights if part.weights is not None else np.zeros(n)
    frames = [keys.assign(_table=np.zeros(n, dtype=np.int64), _count=part.counts.astype(
        np.int64), _weight=np.asarray(weights, dtype=np.float64),
        _value=pd.Series([None] * n, dtype=object))]
    for j, s in enumerate(spec.sensitive, start=1):
        hist = part.histograms[s]
        m = len(hist)
        frames.append(keys.take(hist["class"].to_numpy()).reset_index(drop=True).assign(
            _table=np.full(m, j, dtype=np.int64), _count=hist["count"].to_numpy(np.int64),
            _weight=np.zeros(m), _value=hist["value"].astype(object).to_numpy()))
    return pd.concat(frames, ignore_index=True)


def _regrouped_part(frame: pd.DataFrame, spec: SummarySpec) -> ClassSummary:
    """The summary of the rows of :func:`_summary_rows` of one partition: classes of equal
    mapped keys merged (counts and weights added, histograms merged), each keeping the first
    of its keys in the summary's order, classes sorted by those."""
    from anoneval.core.data.summary import _histogram, class_codes

    keys = list(spec.keys)
    table = frame["_table"].to_numpy()
    merged = class_codes(frame[[f"_m{j}" for j in range(len(keys))]],
                         [f"_m{j}" for j in range(len(keys))]).ids.astype(np.int64)
    n = int(merged.max()) + 1 if len(merged) else 0
    classes = np.flatnonzero(table == 0)
    rank = class_codes(frame[keys].iloc[classes], keys).ids.astype(np.int64)  # key order
    first = np.full(n, np.iinfo(np.int64).max)
    np.minimum.at(first, merged[classes], rank)
    order = np.argsort(first, kind="stable")
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    ids = position[merged]
    by_rank = classes[np.argsort(rank, kind="stable")][::-1]
    lead = np.empty(n, dtype=np.int64)  # the class row holding each merged class's first key
    lead[ids[by_rank]] = by_rank
    counts = np.bincount(ids[classes], weights=frame["_count"].to_numpy()[classes],
                         minlength=n).astype(np.int64)
    weights = None
    if spec.weights is not None:
        weights = np.bincount(ids[classes], weights=frame["_weight"].to_numpy()[classes],
                              minlength=n)
    hists = {}
    for j, s in enumerate(spec.sensitive, start=1):
        mine = table == j
        hists[s] = _histogram(ids[mine], frame["_value"][mine].reset_index(drop=True),
                              frame["_count"].to_numpy()[mine])
    key_frame = frame[keys].iloc[lead].reset_index(drop=True)
    low = (np.inf, 0) if spec.weights is not None else None
    return ClassSummary(spec, key_frame, counts, weights, hists, low)


def regrouped(summary: ClassSummary,
              keyer: Callable[[pd.DataFrame], pd.DataFrame]) -> ClassSummary:
    """The summary of the same records with classes merged where ``keyer`` (a keys frame to
    one of mapped key values, same columns, row for row; picklable) maps their keys alike;
    each merged class keeps the first of its keys (classes are sorted by key, each column
    ascending, missing values last), and the classes are sorted by those.

    A sharded summary's classes are hash-partitioned again, on the mapped keys, with Dask's
    (task) shuffle, which keeps every value as it is, and stay on the workers as the parts of
    a new sharded summary; an in-memory summary is regrouped here. ``low_weights`` are the
    summary's."""
    spec = summary.spec
    meta = pd.DataFrame({**{k: pd.Series(dtype=object) for k in spec.keys},
                         **{f"_m{j}": pd.Series(dtype=object) for j in range(len(spec.keys))},
                         "_table": np.zeros(0, dtype=np.int64),
                         "_count": np.zeros(0, dtype=np.int64), "_weight": np.zeros(0),
                         "_value": pd.Series(dtype=object)})
    finish = functools.partial(_regrouped_part, spec=spec)
    rows = functools.partial(_summary_rows, keyer=keyer)
    on = [f"_m{j}" for j in range(len(spec.keys))]
    futures, client = _shuffled([(summary, rows)], on, meta, finish, "tasks")
    if client is None:
        out = futures[0]
        out.low_weights = summary.low_weights
        return out
    found = ShardedSummary(spec, futures, client)
    found.low_weights = summary.low_weights
    return found


__all__ = [
    "ShardedSummary",
    "all_paused",
    "canonical_keys",
    "cogrouped",
    "gathered",
    "regrouped",
    "shuffled_summaries",
    "wait_unpaused",
]
