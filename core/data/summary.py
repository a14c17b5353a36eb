"""Equivalence-class summaries: per-partition partials that combine into one canonical table.

A :class:`ClassSummary` holds one row per distinct tuple of key columns (a missing value is a
key of its own) with the record count, optionally the sum of a weight column, and for each
sensitive column a (class, value) → count table. :meth:`ClassSummary.of_frame` summarizes any
block of rows; :meth:`ClassSummary.combine` merges partials. Classes are sorted by key (each
column ascending, missing values last) and histogram rows by class then value, so combining the
partials of any partitioning of the rows, in any order, gives the summary of the whole frame:
keys, counts and histograms identically, weight sums up to floating-point summation order.

Group-by measures that declare :meth:`~anoneval.core.api.Measure.summaries` read these through
:meth:`~anoneval.core.api.Context.class_summary`; engines compute each summary once per run.
:func:`class_codes` is the one grouping of rows into classes: summaries of in-memory datasets and
the row-level classes of :func:`dataset_classes` share its result, once per dataset and keys.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np
import pandas as pd

from anoneval.core.data.kinds import Dataset, FrameData
from anoneval.core.data.objects import factorize_objects
from anoneval.core.errors import DataError

Side = Literal["original", "anonymized"]
T = TypeVar("T")


@dataclass(frozen=True)
class SummarySpec:
    """Which equivalence-class summary a measure needs."""

    side: Side
    #: Grouping columns (e.g. the quasi-identifiers), values as read.
    keys: tuple[str, ...]
    #: Column whose per-class sum is kept.
    weights: str | None = None
    #: Columns whose per-class value histograms are kept.
    sensitive: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.side not in ("original", "anonymized"):
            raise ValueError(f"SummarySpec.side must be 'original' or 'anonymized', "
                             f"not {self.side!r}")
        for name in ("keys", "sensitive"):  # lists given by callers become hashable tuples
            object.__setattr__(self, name, tuple(getattr(self, name)))

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column the summary reads, each once."""
        cols = [*self.keys, *([self.weights] if self.weights else []), *self.sensitive]
        return tuple(dict.fromkeys(cols))


def _plain(values: pd.Series) -> pd.Series:
    """A column with categoricals as their values and -0.0 as 0.0 (canonical keys)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        cats, codes = values.cat.categories, values.cat.codes.to_numpy()
        if not len(cats):
            return pd.Series(np.full(len(values), np.nan), index=values.index)
        values = pd.Series(cats.take(np.maximum(codes, 0)), index=values.index).where(codes >= 0)
    elif pd.api.types.is_float_dtype(values.dtype):
        values = values + 0.0
    return values


def _compact(codes: np.ndarray, bound: int) -> np.ndarray:
    """``codes`` (each ≤ ``bound``) as int32 when ``bound`` fits, else int64.

    Codes and class ids are cached per column and dataset for the whole run: int32 halves
    them (10^7 rows × 8 quasi-identifiers × 2 sides: 640 MB instead of 1.28 GB). Whoever
    combines them into a mixed-radix key (``key * card + codes``) starts from an int64 key,
    so that no product is formed in int32."""
    dtype = np.int32 if bound <= np.iinfo(np.int32).max else np.int64
    return codes.astype(dtype, copy=False)


def _factorize(values: pd.Series, objects: np.ndarray | None, sort: bool
               ) -> tuple[np.ndarray, Any]:
    """``pd.factorize(values, sort=sort)``; an object column through its distinct objects
    (:func:`~anoneval.core.data.objects.factorize_objects`), sorted as pandas sorts the
    uniques it found."""
    if values.dtype != object:
        return pd.factorize(values, sort=sort)
    codes, uniques = factorize_objects(values.to_numpy(), objects)
    if not sort:
        return codes, uniques
    rank, ordered = pd.factorize(uniques, sort=True)  # uniques are distinct: a ranking
    return np.append(rank, -1).take(codes), ordered  # code -1 (missing) takes the last


def _codes(values: pd.Series, objects: np.ndarray | None = None
           ) -> tuple[np.ndarray, pd.Index]:
    """Codes of the sorted distinct values, missing values last (code ``len(uniques)``);
    int32 when the values allow (:func:`_compact`). ``objects``: an object column's
    distinct objects, when known."""
    try:
        codes, uniques = _factorize(values, objects, sort=True)
    except TypeError:  # values that do not compare (numbers and text): by type, then text
        codes, uniques = _factorize(values, objects, sort=False)
        order = np.argsort(np.array([f"{type(v).__name__}:{v}" for v in uniques]),
                           kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        codes = np.where(codes >= 0, rank[np.maximum(codes, 0)], -1)
        uniques = pd.Index(uniques).take(order)
    uniques = pd.Index(uniques, copy=False)
    codes = _compact(codes, len(uniques))
    if (codes < 0).any():
        codes = np.where(codes < 0, codes.dtype.type(len(uniques)), codes)
    return codes, uniques


def _values(uniques: pd.Index, codes: np.ndarray) -> pd.Series:
    """The value of each code; the missing code gives the column's missing marker."""
    missing = codes >= len(uniques)
    if not missing.any():
        return pd.Series(uniques.take(codes), copy=False)
    if not len(uniques):
        return pd.Series(np.full(len(codes), np.nan))
    return pd.Series(uniques.take(np.minimum(codes, len(uniques) - 1))).where(~missing)


def _group(columns: Sequence[tuple[np.ndarray, pd.Index]],
           n: int) -> tuple[np.ndarray, list[tuple[np.ndarray, pd.Index]]]:
    """Sorted dense group id of each row over ``columns`` (each as :func:`_codes` codes it;
    int32 when there are fewer than 2^31 groups) and, per column, each group's code and the
    column's sorted distinct values (missing code ``len(values)``). The mixed-radix key is
    int64 from the start (codes may be int32) and re-densified before it could overflow."""
    if len(columns) == 1:  # the codes are the dense sorted ids: share them, no copy
        codes, uniques = columns[0]
        n_groups = int(codes.max()) + 1 if n else 0
        if n_groups in (len(uniques), len(uniques) + 1):  # dense by construction (_codes)
            return codes, [(np.arange(n_groups, dtype=np.int64), uniques)]
    key = np.zeros(n, dtype=np.int64)
    size = 1
    coded = []
    for codes, uniques in columns:
        card = len(uniques) + 1  # room for the missing value
        coded.append((codes, uniques))
        if size * card >= 2**62:  # re-densify before the mixed-radix key could overflow
            key, uniq = pd.factorize(key, sort=True)
            size = max(len(uniq), 1)
        key = key * card + codes
        size *= card
    ids, uniq = pd.factorize(key, sort=True)
    del key
    ids = _compact(ids, len(uniq))
    first = np.empty(len(uniq), dtype=np.int64)
    first[ids[::-1]] = np.arange(n - 1, -1, -1, dtype=np.int64)
    return ids, [(codes[first], uniques) for codes, uniques in coded]


@dataclass(frozen=True)
class RowClasses:
    """Rows grouped into classes by :func:`class_codes`.

    ``ids``: the class of each row (classes sorted by key); ``counts``: the records per class.
    Per key column ``names[j]``, ``codes[j]`` is each class's code into ``values[j]``, the
    column's distinct values sorted, code ``len(values[j])`` standing for a missing value.
    ``ids`` and ``codes`` are int32 when their range allows (half the memory of int64): form
    any key from them in int64 (``ids.astype(np.int64) * card + codes``).
    """

    names: tuple[str, ...]
    ids: np.ndarray
    counts: np.ndarray
    codes: tuple[np.ndarray, ...]
    values: tuple[pd.Index, ...]

    @functools.cached_property
    def keys(self) -> pd.DataFrame:
        """One row of key values per class (a missing value as the column's missing marker)."""
        if not self.names:
            return pd.DataFrame(index=pd.RangeIndex(len(self.counts)))
        return pd.DataFrame({name: _values(values, codes) for name, codes, values
                             in zip(self.names, self.codes, self.values, strict=True)})

    def key_values(self, j: int) -> tuple[np.ndarray, pd.Index]:
        """Each class's code of key column ``j`` into its values, a missing value (when there
        is one) being the last value."""
        codes, values = self.codes[j], self.values[j]
        if (codes == len(values)).any():
            values = values.append(pd.Index([np.nan])) if len(values) else pd.Index([np.nan])
        return codes, values


def class_codes(frame: pd.DataFrame, keys: Sequence[str],
                coder: Callable[[str], tuple[np.ndarray, pd.Index]] | None = None
                ) -> RowClasses:
    """The classes of the rows of ``frame`` over the ``keys`` columns: the one grouping that
    class summaries and row-level classes are made from (without keys, one class of every
    record).

    Values compare as they are (``39`` and ``"39"`` differ; categoricals by their values,
    ``-0.0`` as ``0.0``); a missing value is a key of its own. ``coder``, when given,
    returns a column's codes and sorted values (from a cache).
    """
    n = len(frame)
    names = tuple(keys)
    if not names:
        ids = np.zeros(n, dtype=np.int64)
        return RowClasses(names, ids, np.bincount(ids, minlength=min(n, 1)), (), ())
    code = coder or (lambda c: _codes(_plain(frame[c])))
    ids, coded = _group([code(c) for c in names], n)
    return RowClasses(names, ids, np.bincount(ids, minlength=len(coded[0][0])),
                      tuple(codes for codes, _ in coded), tuple(values for _, values in coded))


def column_codes(data: FrameData, column: str) -> tuple[np.ndarray, pd.Index]:
    """Codes of ``column``'s sorted distinct values (missing: code ``len(values)``), once per
    dataset: every grouping over the column, and the dataset's content hash, share them."""

    def compute() -> tuple[np.ndarray, pd.Index]:
        values = data.frame[column]
        codes, values = _codes(_plain(values), data.distinct_objects(column)
                               if values.dtype == object else None)
        codes.flags.writeable = False
        return codes, values

    return data.cached(("sorted_codes", column), compute)


def dataset_classes(data: FrameData, keys: Sequence[str]) -> RowClasses:
    """:func:`class_codes` of ``data``'s rows over ``keys``, computed once per dataset and keys
    (cached on the dataset, so the summaries and row-level classes of every measure of a run
    share one grouping). Its arrays are read-only."""
    keys = tuple(keys)

    def compute() -> RowClasses:
        data.require(keys)
        rows = class_codes(data.frame, keys, lambda c: column_codes(data, c))
        for array in (rows.ids, rows.counts, *rows.codes):
            array.flags.writeable = False
        return rows

    return data.cached(("class_codes", keys), compute)


def _histogram(classes: np.ndarray, values: pd.Series | tuple[np.ndarray, pd.Index],
               counts: np.ndarray) -> pd.DataFrame:
    """(class, value) → summed count, sorted by class then value; ``values`` as a column or
    its :func:`_codes`."""
    codes, uniques = values if isinstance(values, tuple) else _codes(values)
    card = len(uniques) + 1
    # int64 before the product: class ids and codes may be int32
    key = classes.astype(np.int64) * card + codes
    space = (int(classes.max()) + 1) * card if len(classes) else 0
    if space <= 4 * len(key) + 1_000_000:  # a dense count of the pair space: no sort
        summed = np.bincount(key, weights=counts, minlength=space)
        pairs = np.flatnonzero(summed)
        summed = summed[pairs]
    else:
        ids, pairs = pd.factorize(key, sort=True)
        summed = np.bincount(ids, weights=counts, minlength=len(pairs))
    return pd.DataFrame({
        "class": pairs // card,
        "value": _values(uniques, pairs % card),
        "count": summed.astype(np.int64),
    })


class ClassSummary:
    """The equivalence classes of ``spec.keys`` over some rows.

    ``keys`` has one row per class (sorted), ``counts`` the records per class, ``weights`` the
    per-class sum of ``spec.weights`` (None without), ``histograms[column]`` a frame of
    ``class`` (row of ``keys``), ``value`` and ``count``, sorted by class then value.
    ``low_weights`` is the smallest weight and the number of weights ≤ 0 (None without
    weights): what a check of sampling weights needs, without a class per distinct weight.
    """

    __slots__ = ("counts", "histograms", "keys", "low_weights", "spec", "weights")

    def __init__(self, spec: SummarySpec, keys: pd.DataFrame, counts: np.ndarray,
                 weights: np.ndarray | None, histograms: dict[str, pd.DataFrame],
                 low_weights: tuple[float, int] | None = None) -> None:
        self.spec = spec
        self.keys = keys
        self.counts = counts
        self.weights = weights
        self.histograms = histograms
        self.low_weights = low_weights

    def __repr__(self) -> str:
        return (f"ClassSummary({self.spec!r}, classes={len(self.counts)}, "
                f"records={self.n_records})")

    def __sizeof__(self) -> int:
        """Bytes held (what Dask counts as a worker's managed memory for a partial)."""
        frames = [self.keys, *self.histograms.values()]
        arrays = [self.counts, *([] if self.weights is None else [self.weights])]
        return (object.__sizeof__(self) + sum(a.nbytes for a in arrays)
                + sum(int(f.memory_usage(index=True, deep=True).sum()) for f in frames))

    #: True for a summary whose classes stay in parts on a cluster
    #: (:class:`~anoneval.core.data.sharded.ShardedSummary`): prefer :meth:`reduce` to reading
    #: its per-class arrays, which assembles them in this process.
    sharded = False

    def reduce(self, partial: Callable[[ClassSummary], T], combine: Callable[[list[T]], T]) -> T:
        """``combine`` of ``partial`` of each part of disjoint classes (here the one part, the
        whole summary): reductions over classes that run where a sharded summary's parts lie."""
        return combine([partial(self)])

    @property
    def n_records(self) -> int:
        """The number of records summarized."""
        return int(self.counts.sum())

    @property
    def n_classes(self) -> int:
        """The number of classes (distinct key tuples)."""
        return len(self.counts)

    @classmethod
    def of_frame(cls, frame: pd.DataFrame | FrameData, spec: SummarySpec) -> ClassSummary:
        """The summary of the rows of ``frame``: any block of the data, or an in-memory dataset
        (whose :func:`dataset_classes` it shares)."""
        data = frame if isinstance(frame, FrameData) else None
        frame = data.frame if data is not None else frame
        absent = [c for c in spec.columns if c not in frame.columns]
        if absent:
            raise DataError(f"column(s) {', '.join(map(repr, absent))} not in the "
                            f"{spec.side} data; its columns are: "
                            f"{', '.join(map(str, frame.columns))}")
        n = len(frame)
        rows = (dataset_classes(data, spec.keys) if data is not None
                else class_codes(frame, spec.keys))
        ids, key_frame, counts = rows.ids, rows.keys, rows.counts
        n_classes = len(key_frame)
        weights, low = None, None
        if spec.weights is not None:
            raw = frame[spec.weights]
            w = pd.to_numeric(raw, errors="coerce").to_numpy(np.float64, na_value=np.nan)
            bad = np.flatnonzero(~np.isfinite(w))
            if len(bad):
                raise DataError(f"weight column {spec.weights!r}: {len(bad)} value(s) are "
                                f"missing or not finite numbers, e.g. {raw.iloc[bad[0]]!r}")
            weights = np.bincount(ids, weights=w, minlength=n_classes)
            low = (float(w.min()) if n else np.inf, int((w <= 0).sum()))
        ones = np.ones(n, dtype=np.int64)
        hists = {s: _histogram(ids, column_codes(data, s) if data is not None else
                               _plain(frame[s]), ones) for s in spec.sensitive}
        return cls(spec, key_frame, counts, weights, hists, low)

    @classmethod
    def combine(cls, parts: Sequence[ClassSummary]) -> ClassSummary:
        """One summary of the rows of all ``parts`` (associative; order does not matter)."""
        if not parts:
            raise ValueError("ClassSummary.combine needs at least one part")
        spec = parts[0].spec
        for p in parts[1:]:
            if p.spec != spec:
                raise ValueError(f"cannot combine summaries of {spec!r} and {p.spec!r}")
        # empty parts carry no rows, and their column types could differ from the others'
        parts = [p for p in parts if p.n_classes] or list(parts[:1])
        if len(parts) == 1:
            return parts[0]
        rows = class_codes(pd.concat([p.keys for p in parts], ignore_index=True), spec.keys)
        ids, key_frame = rows.ids, rows.keys
        counts = np.zeros(len(key_frame), dtype=np.int64)
        np.add.at(counts, ids, np.concatenate([p.counts for p in parts]))
        weights, low = None, None
        if spec.weights is not None:
            weights = np.bincount(ids, weights=np.concatenate([p.weights for p in parts]),
                                  minlength=len(key_frame))
            lows = [p.low_weights or (np.inf, 0) for p in parts]
            low = (min(m for m, _ in lows), sum(k for _, k in lows))
        offsets = np.cumsum([0, *(p.n_classes for p in parts)])
        hists = {}
        for s in spec.sensitive:
            tables = [p.histograms[s] for p in parts]
            classes = np.concatenate([ids[off + t["class"].to_numpy()]
                                      for off, t in zip(offsets, tables, strict=False)])
            values = pd.concat([t["value"] for t in tables], ignore_index=True)
            hists[s] = _histogram(classes, values,
                                  np.concatenate([t["count"].to_numpy() for t in tables]))
        return cls(spec, key_frame, counts, weights, hists, low)

    def equals(self, other: ClassSummary, rtol: float = 0.0) -> bool:
        """Same spec, keys, counts and histograms; weight sums equal up to ``rtol``."""
        if self.spec != other.spec or not np.array_equal(self.counts, other.counts):
            return False
        if not self.keys.equals(other.keys):
            return False
        if (self.weights is None) != (other.weights is None) or (
                self.low_weights != other.low_weights):
            return False
        if self.weights is not None and not np.allclose(self.weights, other.weights,
                                                        rtol=rtol, atol=0.0):
            return False
        return all(self.histograms[s].equals(other.histograms[s]) for s in self.spec.sensitive)


def dataset_summarizer(original: Dataset | None,
                       anonymized: Dataset | None) -> Callable[[SummarySpec], ClassSummary]:
    """Summaries of in-memory datasets, each computed once per dataset and spec (cached on the
    dataset, so every measure of a run shares it): the local engine's ``Context.summarize``."""

    def summarize(spec: SummarySpec) -> ClassSummary:
        data = original if spec.side == "original" else anonymized
        if data is None:
            raise DataError(f"no {spec.side} data to summarize ({spec})")
        if not isinstance(data, FrameData):
            raise DataError(f"class summaries need microdata or a table, not the "
                            f"{data.data_kind} of the {spec.side} side")
        data.require(spec.columns)
        return data.cached(("class_summary", spec), lambda: ClassSummary.of_frame(data, spec))

    return summarize


__all__ = ["ClassSummary", "RowClasses", "SummarySpec", "class_codes", "dataset_classes",
           "dataset_summarizer"]
