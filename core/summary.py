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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

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
        cats = values.cat.categories
        values = pd.Series(cats.take(values.cat.codes.to_numpy(), allow_fill=True,
                                     fill_value=None), index=values.index)
    elif pd.api.types.is_float_dtype(values.dtype):
        values = values + 0.0
    return values


def _codes(values: pd.Series) -> tuple[np.ndarray, int]:
    """Codes of the sorted distinct values, missing values last, and their number."""
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError:  # values that do not compare (e.g. numbers and text): sort their text
        codes, uniques = pd.factorize(values.map(lambda v: f"{type(v).__name__}:{v}")
                                      .where(values.notna()), sort=True)
    codes = codes.astype(np.int64, copy=False)
    card = len(uniques)
    if (codes < 0).any():
        codes = np.where(codes < 0, card, codes)
        card += 1
    return codes, card


def _group(columns: Sequence[pd.Series], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted dense group id of each row over ``columns`` and the first row of each group."""
    key = np.zeros(n, dtype=np.int64)
    size = 1
    for col in columns:
        codes, card = _codes(col)
        card = max(card, 1)
        if size * card >= 2**62:  # re-densify before the mixed-radix key could overflow
            key, uniq = pd.factorize(key, sort=True)
            size = max(len(uniq), 1)
        key = key * card + codes
        size *= card
    ids, uniq = pd.factorize(key, sort=True)
    ids = ids.astype(np.int64, copy=False)
    first = np.empty(len(uniq), dtype=np.int64)
    first[ids[::-1]] = np.arange(n - 1, -1, -1, dtype=np.int64)
    return ids, first


def _take(values: pd.Series, rows: np.ndarray) -> pd.Series:
    """Values at ``rows`` with every missing value as the column's one missing marker."""
    out = values.iloc[rows].reset_index(drop=True)
    isna = out.isna()
    if isna.any() and out.dtype == object:
        out = out.where(~isna, np.nan)
    return out


def _histogram(classes: np.ndarray, values: pd.Series, counts: np.ndarray) -> pd.DataFrame:
    """(class, value) → summed count, sorted by class then value."""
    n = len(classes)
    ids, first = _group([pd.Series(classes), values], n)
    return pd.DataFrame({
        "class": classes[first],
        "value": _take(values, first),
        "count": np.bincount(ids, weights=counts, minlength=len(first)).astype(np.int64),
    })


class ClassSummary:
    """The equivalence classes of ``spec.keys`` over some rows.

    ``keys`` has one row per class (sorted), ``counts`` the records per class, ``weights`` the
    per-class sum of ``spec.weights`` (None without), ``histograms[column]`` a frame of
    ``class`` (row of ``keys``), ``value`` and ``count``, sorted by class then value.
    """

    __slots__ = ("counts", "histograms", "keys", "spec", "weights")

    def __init__(self, spec: SummarySpec, keys: pd.DataFrame, counts: np.ndarray,
                 weights: np.ndarray | None, histograms: dict[str, pd.DataFrame]) -> None:
        self.spec = spec
        self.keys = keys
        self.counts = counts
        self.weights = weights
        self.histograms = histograms

    def __repr__(self) -> str:
        return (f"ClassSummary({self.spec!r}, classes={len(self.counts)}, "
                f"records={self.n_records})")

    @property
    def n_records(self) -> int:
        """The number of records summarized."""
        return int(self.counts.sum())

    @property
    def n_classes(self) -> int:
        """The number of classes (distinct key tuples)."""
        return len(self.counts)

    @classmethod
    def of_frame(cls, frame: pd.DataFrame, spec: SummarySpec) -> ClassSummary:
        """The summary of the rows of ``frame`` (any block of the data)."""
        absent = [c for c in spec.columns if c not in frame.columns]
        if absent:
            raise DataError(f"column(s) {', '.join(map(repr, absent))} not in the "
                            f"{spec.side} data; its columns are: "
                            f"{', '.join(map(str, frame.columns))}")
        n = len(frame)
        keys = [_plain(frame[c]) for c in spec.keys]
        if keys:
            ids, first = _group(keys, n)
        else:  # no keys: one class of every record
            ids, first = np.zeros(n, dtype=np.int64), np.zeros(min(n, 1), dtype=np.int64)
        key_frame = pd.DataFrame({c: _take(k, first) for c, k in zip(spec.keys, keys,
                                                                      strict=True)},
                                 index=pd.RangeIndex(len(first)))
        counts = np.bincount(ids, minlength=len(first)).astype(np.int64)
        weights = None
        if spec.weights is not None:
            raw = frame[spec.weights]
            w = pd.to_numeric(raw, errors="coerce").to_numpy(np.float64, na_value=np.nan)
            bad = np.flatnonzero(~np.isfinite(w))
            if len(bad):
                raise DataError(f"weight column {spec.weights!r}: {len(bad)} value(s) are "
                                f"missing or not finite numbers, e.g. {raw.iloc[bad[0]]!r}")
            weights = np.bincount(ids, weights=w, minlength=len(first))
        ones = np.ones(n, dtype=np.int64)
        hists = {s: _histogram(ids, _plain(frame[s]), ones) for s in spec.sensitive}
        return cls(spec, key_frame, counts, weights, hists)

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
        n = len(keys)
        if spec.keys:
            ids, first = _group([keys[c] for c in spec.keys], n)
        else:
            ids, first = np.zeros(n, dtype=np.int64), np.zeros(1, dtype=np.int64)
        key_frame = pd.DataFrame({c: _take(keys[c], first) for c in spec.keys},
                                 index=pd.RangeIndex(len(first)))
        counts = np.zeros(len(first), dtype=np.int64)
        np.add.at(counts, ids, np.concatenate([p.counts for p in parts]))
        weights = None
        if spec.weights is not None:
            weights = np.bincount(ids, weights=np.concatenate([p.weights for p in parts]),
                                  minlength=len(first))
        offsets = np.cumsum([0, *(p.n_classes for p in parts)])
        hists = {}
        for s in spec.sensitive:
            tables = [p.histograms[s] for p in parts]
            classes = np.concatenate([ids[off + t["class"].to_numpy()]
                                      for off, t in zip(offsets, tables, strict=False)])
            values = pd.concat([t["value"] for t in tables], ignore_index=True)
            hists[s] = _histogram(classes, values,
                                  np.concatenate([t["count"].to_numpy() for t in tables]))
        return cls(spec, key_frame, counts, weights, hists)

    def equals(self, other: ClassSummary, rtol: float = 0.0) -> bool:
        """Same spec, keys, counts and histograms; weight sums equal up to ``rtol``."""
        if self.spec != other.spec or not np.array_equal(self.counts, other.counts):
            return False
        if not self.keys.equals(other.keys):
            return False
        if (self.weights is None) != (other.weights is None):
            return False
        if self.weights is not None and not np.allclose(self.weights, other.weights,
                                                        rtol=rtol, atol=0.0):
            return False
        return all(self.histograms[s].equals(other.histograms[s]) for s in self.spec.sensitive)


__all__ = ["ClassSummary", "SummarySpec"]
