"""Re-identification figures from class summaries, reduced part by part where the parts lie.

IndividualRisk, PopulationUniqueness and ReidentificationRisk (prosecutor, or a population
size) are functions of each class's record count f and weight sum F. They read the released
side's class summary on every engine (:func:`released_summary`); a summary kept as disjoint
parts on a Dask cluster (classes hash-partitioned on the keys) is reduced on the workers to
counts of classes by size, sums and maxima, and order statistics over the records (a median, a
threshold) are found exactly by :func:`boundary`, a search over the values of the parts that
brings a few thousand candidate values per round to this process, never a value per class.
The classes follow the family's rules (:func:`~anoneval.plugins.microdata._common.key_classes`:
suppression token, missing values).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from anoneval.core.api import (
    ClassSummary,
    Context,
    regrouped,
)
from anoneval.plugins.microdata._common import (
    Column,
    QIParams,
    key_classes,
    key_codes,
    token_keys,
    warn_missing,
)

#: Candidate values each part sends per round of :func:`boundary`.
CANDIDATES = 1024


@dataclass(frozen=True)
class Groups:
    """One part's released classes: records (``sizes``) and weight sums per class (not
    suppressed), the suppressed records and the missing cells per quasi-identifier."""

    sizes: np.ndarray
    weights: np.ndarray | None
    suppressed: int
    missing: tuple[int, ...]


def part_groups(part: ClassSummary, qi: Sequence[str], token: str, missing: str) -> Groups:
    """The classes of one part under the family's token and missing-value rules."""
    cols, gids, class_of_group, sizes = key_classes(key_codes(part.keys, qi), part.counts,
                                                    token, missing)
    kept = class_of_group >= 0
    weights = (None if part.weights is None else
               np.bincount(gids, weights=part.weights, minlength=len(sizes))[kept])
    return Groups(sizes[kept].astype(np.int64, copy=False), weights,
                  int(sizes[~kept].sum()), tuple(c.n_missing for c in cols))


def merged(summary: ClassSummary, p: QIParams, missing: str,
           n_missing: Sequence[int]) -> ClassSummary | None:
    """The summary regrouped on the workers when the classes of a sharded summary merge across
    its parts (under ``missing="suppressed"`` a missing cell is the token, and keys differing
    only by a missing vs a token cell were hashed to different parts; see
    :func:`~anoneval.plugins.microdata._common.suppressed_merged`, which the class measures of
    the microdata family use); None when the parts' reductions stand. Each merged class keeps
    one of its keys, so its missing cells no longer count the records: the caller warns with
    the ``n_missing`` it found before."""
    if summary.sharded and missing == "suppressed" and any(n_missing):
        return regrouped(summary, functools.partial(
            token_keys, qi=tuple(p.quasi_identifiers), token=p.suppression_token))
    return None


def warn_groups(ctx: Context, qi: Sequence[str], n_missing: Sequence[int], missing: str,
                side: str) -> None:
    """The record path's warning about missing quasi-identifier values."""
    empty = np.zeros(0, dtype=np.int64)
    cols = [Column(empty, np.zeros(0, dtype=object), -1, m) for m in n_missing]
    warn_missing(ctx, qi, cols, missing, side)


# -- class sizes -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SizeCounts:
    """Classes by size (``sizes`` ascending, ``counts`` classes of each), suppressed records,
    missing cells per quasi-identifier and all records."""

    sizes: np.ndarray
    counts: np.ndarray
    suppressed: int
    missing: tuple[int, ...]
    records: int

    @property
    def released(self) -> int:
        """Records in a class (not suppressed)."""
        return int((self.sizes * self.counts).sum())

    @property
    def classes(self) -> int:
        return int(self.counts.sum())


def _part_size_counts(part: ClassSummary, qi: Sequence[str], token: str,
                      missing: str) -> SizeCounts:
    g = part_groups(part, qi, token, missing)
    sizes, counts = np.unique(g.sizes, return_counts=True)
    return SizeCounts(sizes, counts.astype(np.int64), g.suppressed, g.missing,
                      part.n_records)


def _add_size_counts(parts: list[SizeCounts]) -> SizeCounts:
    sizes, inverse = np.unique(np.concatenate([s.sizes for s in parts]), return_inverse=True)
    counts = np.bincount(inverse.reshape(-1), minlength=len(sizes),
                         weights=np.concatenate([s.counts for s in parts])).astype(np.int64)
    missing = tuple(int(sum(col)) for col in zip(*(s.missing for s in parts), strict=True))
    return SizeCounts(sizes.astype(np.int64), counts, sum(s.suppressed for s in parts), missing,
                      sum(s.records for s in parts))


def size_counts(summary: ClassSummary, p: QIParams, missing: str) -> SizeCounts:
    """The released classes by size, reduced part by part (see :func:`part_groups`)."""
    return summary.reduce(functools.partial(_part_size_counts, qi=list(p.quasi_identifiers),
                                            token=p.suppression_token, missing=missing),
                          _add_size_counts)


# -- exact order statistics over the parts ---------------------------------------------------

#: The parts' sorted values, so the rounds of :func:`boundary` sort each part once (newest
#: first, at most :data:`LEVELS_BYTES` of arrays per process; a search drops its own at the end).
_LEVELS: list[tuple[ClassSummary, Any, tuple[np.ndarray, np.ndarray]]] = []
_LEVELS_LOCK = threading.Lock()
LEVELS_BYTES = 256 * 2**20


def _levels(part: ClassSummary, values_of: Callable[[ClassSummary], tuple[np.ndarray, np.ndarray]]
            ) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``values_of(part)`` ascending and the records of each."""
    with _LEVELS_LOCK:
        for held, fn, found in _LEVELS:
            if held is part and fn == values_of:
                return found
    values, counts = values_of(part)
    levels, inverse = np.unique(values, return_inverse=True)
    found = levels, np.bincount(inverse.reshape(-1), weights=counts, minlength=len(levels))
    with _LEVELS_LOCK:
        _LEVELS.insert(0, (part, values_of, found))
        held = np.cumsum([e[2][0].nbytes + e[2][1].nbytes for e in _LEVELS])
        del _LEVELS[max(int(np.searchsorted(held, LEVELS_BYTES, side="right")), 1):]
    return found


def _forget(part: ClassSummary,
            values_of: Callable[[ClassSummary], tuple[np.ndarray, np.ndarray]]) -> None:
    """Drop the part's sorted values (the search is over): the cache holds no part after."""
    with _LEVELS_LOCK:
        _LEVELS[:] = [e for e in _LEVELS if not (e[0] is part and e[1] == values_of)]


@dataclass(frozen=True)
class _Round:
    count_le: np.ndarray    # records with a value ≤ each pivot
    sum_min: np.ndarray     # Σ over records of min(value, pivot)
    inside: np.ndarray      # values strictly between lo and hi (all of them, or a sample)
    complete: bool
    records: float          # records of the part


def _part_round(part: ClassSummary, values_of: Callable[[ClassSummary],
                tuple[np.ndarray, np.ndarray]], pivots: np.ndarray, lo: float, hi: float,
                k: int) -> _Round:
    levels, counts = _levels(part, values_of)
    cum = np.concatenate([[0.0], np.cumsum(counts)])
    cum_sum = np.concatenate([[0.0], np.cumsum(levels * counts)])
    at = np.searchsorted(levels, pivots, side="right")
    count_le = cum[at]
    sum_min = cum_sum[at] + pivots * (cum[-1] - count_le)
    inside = levels[np.searchsorted(levels, lo, side="right"):
                    np.searchsorted(levels, hi, side="left")]
    complete = len(inside) <= k
    if not complete:  # evenly spaced values: between two of them lie ≤ len/(k−1) values
        inside = inside[np.unique(np.linspace(0, len(inside) - 1, k).round().astype(np.int64))]
    return _Round(count_le, sum_min, inside, complete, float(cum[-1]))


def boundary(summary: ClassSummary,
             values_of: Callable[[ClassSummary], tuple[np.ndarray, np.ndarray]],
             reached: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
             ) -> tuple[float | None, float | None]:
    """The largest value where ``reached`` is false and the smallest where it is true, over
    the values of the records of every part (``values_of`` a part: values and records of each,
    a picklable function). ``reached(pivots, count_le, sum_min)`` is given, per pivot, the
    records with a value ≤ it and Σ min(value, pivot) over the records, and must be false up
    to some value and true from there on (monotone).

    Each round each part sends at most :data:`CANDIDATES` of its values between the two
    bounds (evenly spaced in its order), the bounds close in on the candidates, and when the
    parts sent every value left between them the answer is exact; with ``c`` candidates per
    part the values between the bounds shrink ``c``-fold per round (a few rounds for 10⁷
    distinct values)."""
    lo, hi = -np.inf, np.inf
    try:
        while True:
            survey = summary.reduce(functools.partial(
                _part_round, values_of=values_of, pivots=np.zeros(0), lo=lo, hi=hi,
                k=CANDIDATES), list)
            pivots = np.unique(np.concatenate([r.inside for r in survey]))
            if len(pivots):
                found = summary.reduce(functools.partial(
                    _part_round, values_of=values_of, pivots=pivots, lo=np.inf, hi=-np.inf,
                    k=0), list)
                count_le = np.sum([r.count_le for r in found], axis=0)
                sum_min = np.sum([r.sum_min for r in found], axis=0)
                hit = np.asarray(reached(pivots, count_le, sum_min), dtype=bool)
                if (~hit).any():
                    lo = float(pivots[~hit].max())
                if hit.any():
                    hi = float(pivots[hit].min())
            if all(r.complete for r in survey):
                return (None if lo == -np.inf else lo), (None if hi == np.inf else hi)
    finally:
        summary.reduce(functools.partial(_forget, values_of=values_of), list)


def kth_value(summary: ClassSummary,
              values_of: Callable[[ClassSummary], tuple[np.ndarray, np.ndarray]],
              k: int) -> float:
    """The ``k``-th smallest (from 0) value over the records of every part."""
    _, value = boundary(summary, values_of, lambda _p, count_le, _s: count_le >= k + 1)
    assert value is not None, "k is at least the number of records"
    return value


def median(summary: ClassSummary,
           values_of: Callable[[ClassSummary], tuple[np.ndarray, np.ndarray]],
           n: int) -> float:
    """numpy's median of the ``n`` records' values: the middle one, or the mean of the two."""
    low = kth_value(summary, values_of, (n - 1) // 2)
    if n % 2:
        return low
    high = kth_value(summary, values_of, n // 2)
    return float(np.mean([low, high]))


@dataclass(frozen=True)
class Distance:
    """|value − center| of each record of ``values`` (the values of a median absolute
    deviation), as a picklable values function compared by value."""

    values: Callable[[ClassSummary], tuple[np.ndarray, np.ndarray]]
    center: float

    def __call__(self, part: ClassSummary) -> tuple[np.ndarray, np.ndarray]:
        values, counts = self.values(part)
        return np.abs(values - self.center), counts


def records_above(summary: ClassSummary,
                  values_of: Callable[[ClassSummary], tuple[np.ndarray, np.ndarray]],
                  cut: float) -> int:
    """The records whose value is above ``cut`` (strict), over every part."""
    try:
        found = summary.reduce(functools.partial(
            _part_round, values_of=values_of, pivots=np.array([cut]), lo=np.inf, hi=-np.inf,
            k=0), list)
    finally:
        summary.reduce(functools.partial(_forget, values_of=values_of), list)
    return int(sum(r.records - r.count_le[0] for r in found))


__all__ = [
    "Distance",
    "Groups",
    "SizeCounts",
    "boundary",
    "kth_value",
    "median",
    "merged",
    "part_groups",
    "records_above",
    "size_counts",
    "warn_groups",
]
