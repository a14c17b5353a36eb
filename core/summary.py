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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from anoneval.core.data import Dataset, FrameData
from anoneval.core.errors import DataError

Side = Literal["original", "anonymized"]


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


def _codes(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Codes of the sorted distinct values, missing values last (code ``len(uniques)``)."""
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError:  # values that do not compare (numbers and text): by type, then text
        codes, uniques = pd.factorize(values)
        order = np.argsort(np.array([f"{type(v).__name__}:{v}" for v in uniques]),
                           kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        codes = np.where(codes >= 0, rank[np.maximum(codes, 0)], -1)
        uniques = pd.Index(uniques).take(order)
    codes = codes.astype(np.int64, copy=False)
    uniques = pd.Index(uniques, copy=False)
    if (codes < 0).any():
        codes = np.where(codes < 0, len(uniques), codes)
    return codes, uniques


def _values(uniques: pd.Index, codes: np.ndarray) -> pd.Series:
    """The value of each code; the missing code gives the column's missing marker."""
    missing = codes >= len(uniques)
    if not missing.any():
        return pd.Series(uniques.take(codes), copy=False)
    if not len(uniques):
        return pd.Series(np.full(len(codes), np.nan))
    return pd.Series(uniques.take(np.minimum(codes, len(uniques) - 1))).where(~missing)


def _group(columns: Sequence[pd.Series], n: int) -> tuple[np.ndarray, list[pd.Series]]:
    """Sorted dense group id of each row over ``columns`` and each group's key values."""
    key = np.zeros(n, dtype=np.int64)
    size = 1
    coded = []
    for col in columns:
        codes, uniques = _codes(col)
        card = len(uniques) + 1  # room for the missing value
        coded.append((codes, uniques))
        if size * card >= 2**62:  # re-densify before the mixed-radix key could overflow
            key, uniq = pd.factorize(key, sort=True)
            size = max(len(uniq), 1)
        key = key * card + codes
        size *= card
    ids, uniq = pd.factorize(key, sort=True)
    ids = ids.astype(np.int64, copy=False)
    first = np.empty(len(uniq), dtype=np.int64)
    first[ids[::-1]] = np.arange(n - 1, -1, -1, dtype=np.int64)
    return ids, [_values(uniques, codes[first]) for codes, uniques in coded]


def _classes(keys: Sequence[pd.Series], names: Sequence[str],
             n: int) -> tuple[np.ndarray, pd.DataFrame]:
    """Class of each row and the key frame (without keys, one class of every record)."""
    if not keys:
        return np.zeros(n, dtype=np.int64), pd.DataFrame(index=pd.RangeIndex(min(n, 1)))
    ids, values = _group(keys, n)
    return ids, pd.DataFrame(dict(zip(names, values, strict=True)))


def _histogram(classes: np.ndarray, values: pd.Series, counts: np.ndarray) -> pd.DataFrame:
    """(class, value) → summed count, sorted by class then value."""
    codes, uniques = _codes(values)
    card = len(uniques) + 1
    ids, pairs = pd.factorize(classes * card + codes, sort=True)
    return pd.DataFrame({
        "class": pairs // card,
        "value": _values(uniques, pairs % card),
        "count": np.bincount(ids, weights=counts, minlength=len(pairs)).astype(np.int64),
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

    @property
    def n_records(self) -> int:
        """The number of records summarized."""
        return int(self.counts.sum())

    @property
    def n_classes(self) -> int:
        """The number of classes (distinct key tuples)."""
        return len(self.counts)

    @staticmethod
    def classes_of(frame: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
        """The class of each row of ``frame`` over the columns ``keys`` and the sorted key
        frame: the grouping :meth:`of_frame` does, to share between specs of the same keys."""
        return _classes([_plain(frame[c]) for c in keys], keys, len(frame))

    @classmethod
    def of_frame(cls, frame: pd.DataFrame, spec: SummarySpec,
                 classes: tuple[np.ndarray, pd.DataFrame] | None = None) -> ClassSummary:
        """The summary of the rows of ``frame`` (any block of the data); ``classes`` is
        :meth:`classes_of` ``(frame, spec.keys)`` when already computed."""
        absent = [c for c in spec.columns if c not in frame.columns]
        if absent:
            raise DataError(f"column(s) {', '.join(map(repr, absent))} not in the "
                            f"{spec.side} data; its columns are: "
                            f"{', '.join(map(str, frame.columns))}")
        n = len(frame)
        ids, key_frame = classes if classes is not None else cls.classes_of(frame, spec.keys)
        n_classes = len(key_frame)
        counts = np.bincount(ids, minlength=n_classes).astype(np.int64)
        weights = None
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
        hists = {s: _histogram(ids, _plain(frame[s]), ones) for s in spec.sensitive}
        return cls(spec, key_frame, counts, weights, hists,
                   low if spec.weights is not None else None)

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
        keys = pd.concat([p.keys for p in parts], ignore_index=True)
        ids, key_frame = _classes([keys[c] for c in spec.keys], spec.keys, len(keys))
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
        return data.cached(("class_summary", spec),
                           lambda: ClassSummary.of_frame(data.frame, spec))

    return summarize


__all__ = ["ClassSummary", "SummarySpec", "dataset_summarizer"]
