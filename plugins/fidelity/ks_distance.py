"""Two-sample Kolmogorov–Smirnov distance per column (Pflughoeft et al.'s Section 4.1.3 check)."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import numpy as np
from pydantic import Field
from scipy import stats

try:  # scipy's check of its exact two-sample p-value, as ks_2samp calls it (private)
    from scipy.stats._stats_py import _attempt_exact_2kssamp
except ImportError:  # then its warning is caught (_exact)
    _attempt_exact_2kssamp = None

from anoneval.core.api import Context, Dataset, LossMeasure, MeasureResult, task_threads
from anoneval.plugins._shared.continuous import ColumnsParams, ReplicaComparison, paired_columns

#: Above this many values on a side scipy's ``ks_2samp`` (mode "auto") uses the asymptotic
#: p-value, which :func:`ks_two_sample` computes from one sort of each sample.
EXACT_UP_TO = 10_000
#: From this effective sample size mn/(m + n) on, :func:`smirnov_pvalue` replaces scipy's
#: sum of about n terms in the tail (see there).
ASYMPTOTIC_FROM = 10_000
#: scipy's ``kstwo.sf(d, n)`` is 2 × the exact one-sided tail from n·d² ≥ 2.2 on (Miller's
#: doubling), a sum of about n terms there; below, it is cheap (Pelz–Good, Durbin).
TAIL_FROM = 2.2
PValue = Literal["auto", "scipy"]
#: The ``pvalue_method`` of a small sample whose exact p-value scipy failed to compute (it
#: then gives the asymptotic one).
FALLBACK = "asymptotic (the exact computation failed)"
#: Two float64 buffers, for the two samples, to sort in (:func:`sorted_into`).
Scratch = tuple[np.ndarray, np.ndarray]


def smirnov_pvalue(d: float, n: float, how: PValue = "auto") -> float:
    """The two-sided p-value of a Kolmogorov–Smirnov distance ``d`` at (effective) size
    ``n``: scipy's ``kstwo.sf(d, n)``, except, with ``how="auto"``, where that costs a sum of
    about n terms (n·d² ≥ :data:`TAIL_FROM`, n ≥ :data:`ASYMPTOTIC_FROM`): there, twice
    Maag & Dicaire's (1971, Biometrika 58, 653–656) approximation of the one-sided tail,
    2·exp(−(6nd + 1)² / (18n)), as scipy doubles the exact one-sided tail (Miller 1956).

    Its error against ``kstwo.sf`` (tested on a grid of (d, n), n from 10⁴ to 5 × 10⁵): it
    lies above (a slightly conservative p-value) by a relative error below 0.5·n·d⁴ while
    n·d⁴ ≤ 0.5 — at n ≥ 10⁴ below 0.03 % where p ≥ 0.005 and below 2 % down to p ≈ 10⁻¹⁷;
    beyond n·d⁴ = 0.5, p < 10⁻⁶⁰. It costs a microsecond where ``kstwo.sf`` takes 0.45 s at
    n = 5 × 10⁵. ``how="scipy"`` keeps scipy's value everywhere."""
    if how == "auto" and n >= ASYMPTOTIC_FROM and n * d * d >= TAIL_FROM:
        return min(1.0, 2.0 * math.exp(-((6.0 * n * d + 1.0) ** 2) / (18.0 * n)))
    return float(np.clip(stats.kstwo.sf(d, n), 0, 1))


def ks_two_sample(x: np.ndarray, y: np.ndarray, pvalue: PValue = "auto",
                  scratch: Scratch | None = None) -> dict[str, Any]:
    """``scipy.stats.ks_2samp(x, y)`` (two-sided, mode "auto"): statistic, p-value and
    location, equal to scipy's, each sample sorted once (the p-value of large samples far in
    the tail by :func:`smirnov_pvalue`, unless ``pvalue="scipy"``), and which p-value it is
    (``pvalue_method``: "exact", "asymptotic" for large samples, or :data:`FALLBACK` where
    scipy's exact computation failed).

    scipy evaluates F_n − G_m at every value of both samples (x's values, then y's) by
    searching them in each sorted sample. The differences only change at distinct values, so
    here they are evaluated once per distinct value of either sample: the distinct values of
    the two sorted samples are merged, and at each a sample's count is the end of its last run
    of values up to it (no search). The same counts over the same sample sizes give the same
    floating-point differences as scipy before 1.16 (later versions take the steps from
    ``linspace(0, 1, n + 1)``: equal to rounding), and the first of the largest in scipy's
    order (x's values ascending, then y's) gives the same location (scipy ≥ 1.16 may choose
    another among equal gaps, by rounding). Samples of at most :data:`EXACT_UP_TO` values get
    scipy's exact p-value (:func:`_exact`). Large samples get Smirnov's
    asymptotic p-value, ``kstwo.sf(D, round(mn / (m + n)))``, as scipy does
    (:func:`smirnov_pvalue`). ``scratch``: see :func:`largest_gap`.
    """
    if max(len(x), len(y)) <= EXACT_UP_TO:
        return _exact(x, y, scratch)
    d, location = largest_gap(x, y, scratch)
    p = smirnov_pvalue(d, effective_size(len(x), len(y)), pvalue)
    return {"statistic": d, "pvalue": p, "location": location, "pvalue_method": "asymptotic"}


def effective_size(m: int, n: int) -> float:
    """The sample size of Smirnov's asymptotic p-value, round(mn / (m + n)), computed as
    scipy's ``ks_2samp`` does (floats, the larger size first)."""
    big, small = sorted([float(m), float(n)], reverse=True)
    return float(np.round(big * small / (big + small)))


def _exact(x: np.ndarray, y: np.ndarray, scratch: Scratch | None) -> dict[str, Any]:
    """:func:`ks_two_sample` of small samples: D and its location by :func:`largest_gap`, and
    scipy's exact p-value by the function its ``ks_2samp`` calls, which also says when the
    computation fails (it overflows or leaves [0, 1]); scipy then falls back to the asymptotic
    p-value of the same D, saying so only as a warning. Catching that warning would change the
    process's warning filters, which other threads (measures run side by side, a timed-out
    plugin) may be changing too, so it is caught only where scipy lacks that function. D is
    h / lcm(m, n), as scipy < 1.16 reports it here (later versions: equal to rounding)."""
    if _attempt_exact_2kssamp is None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            r = stats.ks_2samp(x, y)
        failed = any("Exact calculation unsuccessful" in str(w.message) for w in caught)
        return {"statistic": float(r.statistic), "pvalue": float(r.pvalue),
                "location": float(r.statistic_location),
                "pvalue_method": FALLBACK if failed else "exact"}
    d, location = largest_gap(x, y, scratch)
    m, n = len(x), len(y)
    exact, d, p = _attempt_exact_2kssamp(m, n, math.gcd(m, n), d, "two-sided")
    if not exact:  # scipy's fallback: the asymptotic p-value of the same D
        p = smirnov_pvalue(d, effective_size(m, n), "scipy")
    return {"statistic": float(d), "pvalue": float(np.clip(p, 0, 1)), "location": location,
            "pvalue_method": "exact" if exact else FALLBACK}


def largest_gap(x: np.ndarray, y: np.ndarray, scratch: Scratch | None = None
                ) -> tuple[float, float]:
    """The two-sided statistic D = sup |F_n − G_m| of two non-empty samples without missing
    values and where scipy's ``ks_2samp`` puts it (``statistic_location``), each sample
    sorted once (see :func:`ks_two_sample`). ``scratch``, two arrays at least as long as
    ``x`` and ``y``, is where they are sorted (else in new arrays)."""
    a, b = (np.sort(x), np.sort(y)) if scratch is None else (
        sorted_into(x, scratch[0]), sorted_into(y, scratch[1]))
    ends_a, ends_b = run_ends(a), run_ends(b)
    at_a, at_b = a[ends_a], b[ends_b]
    # each distinct value's rank among the distinct values of both, merged: a stable sort of
    # two sorted runs is one merge pass, and puts x's copy of a value shared by both first
    both = len(at_a) + len(at_b)
    rank = np.empty(both, dtype=np.intp)
    rank[np.argsort(np.concatenate([at_a, at_b]), kind="stable")] = np.arange(both)
    y_below = rank[: len(at_a)] - np.arange(len(at_a))  # y's distinct values < each of x's
    x_up_to = rank[len(at_a):] - np.arange(len(at_b))  # x's distinct values ≤ each of y's
    y_up_to = y_below + (at_b[np.minimum(y_below, len(at_b) - 1)] == at_a)
    # F_n − G_m at each distinct value of x, then of y: a sample's count of values up to a
    # value is the end of its last run there (0 before its first)
    count_a = np.concatenate([[0], ends_a + 1])
    count_b = np.concatenate([[0], ends_b + 1])
    at_x = (ends_a + 1) / len(a) - count_b[y_up_to] / len(b)
    at_y = count_a[x_up_to] / len(a) - (ends_b + 1) / len(b)
    low = min(at_x.min(), at_y.min())
    high = max(at_x.max(), at_y.max())
    min_s, max_s = min(max(-float(low), 0.0), 1.0), float(high)
    d, extreme = (min_s, low) if min_s > max_s else (max_s, high)
    # scipy's arg-extreme over x's values, then y's: the smallest of x's values where the
    # difference is extreme, else the smallest of y's
    hits = np.flatnonzero(at_x == extreme)
    if len(hits):
        return d, float(at_a[hits[0]])
    return d, float(at_b[np.flatnonzero(at_y == extreme)[0]])


def sorted_into(values: np.ndarray, buffer: np.ndarray) -> np.ndarray:
    """``np.sort(values)``, in the start of ``buffer`` when it has the dtype and the room.
    Sorting column after column in one buffer spares the page faults of a fresh array each
    time: an allocator may hand a freed array of 10⁵ floats back to the system (glibc's does),
    and faulting a new one in can cost as much as sorting it."""
    if buffer.dtype != values.dtype or len(buffer) < len(values):
        return np.sort(values)
    out = buffer[: len(values)]
    np.copyto(out, values)
    out.sort()
    return out


def run_ends(ordered: np.ndarray) -> np.ndarray:
    """Positions of the last value of each run of equal values of a sorted array."""
    last = np.empty(len(ordered), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=last[:-1])
    last[-1] = True
    return np.flatnonzero(last)


def per_column(xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], pvalue: PValue = "auto"
               ) -> list[dict[str, Any]]:
    """:func:`ks_two_sample` of each pair of columns ``xs[j]``, ``ys[j]``, on both cores when
    the columns are large (numpy's sorts let go of the GIL). Each thread takes the next
    column when done with one (a thread held up does not hold up the others' columns) and
    sorts its columns in one pair of buffers (:func:`sorted_into`)."""
    if len(xs) != len(ys):
        raise ValueError(f"{len(xs)} columns of one sample against {len(ys)} of the other")
    large = len(xs) and len(xs[0]) + len(ys[0]) > 4 * EXACT_UP_TO
    threads = min(task_threads(), len(xs)) if large else 1
    scores: list[dict[str, Any]] = [{} for _ in xs]
    taken = itertools.count()  # next() on it is atomic under the GIL

    def work() -> None:
        scratch = (np.empty(max(map(len, xs), default=0)),
                   np.empty(max(map(len, ys), default=0)))
        while (j := next(taken)) < len(xs):
            scores[j] = ks_two_sample(xs[j], ys[j], pvalue, scratch)

    if threads <= 1:
        work()
    else:
        with ThreadPoolExecutor(threads - 1) as pool:
            helpers = [pool.submit(work) for _ in range(threads - 1)]
            work()  # this thread takes columns too
            for done in helpers:
                done.result()  # a helper's error, raised here
    return scores


class KSDistance(ReplicaComparison, LossMeasure):
    """D = sup_t |F_n(t) − G_m(t)| between the actual's and the replica's column, per column.

    Empirical CDFs are right-continuous (F_n(t) = share of values ≤ t), so ties between the
    samples are handled exactly. The p-value is ``scipy.stats.ks_2samp``'s (two-sided; exact
    for samples of at most 10,000 values, Smirnov's asymptotic form otherwise or where scipy's
    exact computation fails, which the column's ``pvalue_method`` and a warning say), except
    far in the tail of large samples, where scipy sums about n terms (0.45 s a column at 10⁶
    values a side) and Maag & Dicaire's approximation takes its place (error bound:
    :func:`smirnov_pvalue`) unless ``pvalue`` is "scipy". SDMetrics' KSComplement is 1 − D. D
    is invariant under the monotone transforms, which therefore only matter for the domain
    checks. The value is the largest D.
    """

    name = "KSDistance"
    description = "Largest per-column Kolmogorov–Smirnov distance between actual and replica."

    order = "F"  # column by column

    class Params(ColumnsParams):
        pvalue: PValue = Field(
            default="auto",
            description=(
                "auto: scipy's p-value, except far in the tail of large samples (effective "
                "size ≥ 10⁴, n·D² ≥ 2.2), where Maag & Dicaire's approximation replaces "
                "scipy's sum of n terms (relative error < 0.5·n·D⁴); scipy: scipy's "
                "ks_2samp p-value everywhere (0.45 s a column at 10⁶ values a side)."),
        )

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        """Untransformed, each column is read where it lies, not copied into an ``n × d``
        array first (D is the same on every monotone transform's scale; a transform only adds
        its domain check, :func:`~anoneval.plugins._shared.continuous.paired`)."""
        if self.params.transform != "identity":
            return super().compute(original, anonymized, ctx)
        columns, xs, ys = paired_columns(original, anonymized, self.params, self.name)
        return self._result(columns, per_column(xs, ys, self.params.pvalue))

    def from_columns(self, X: np.ndarray, Y: np.ndarray, columns: list[str],
                     ctx: Context) -> MeasureResult:
        return self._result(columns, per_column(list(X.T), list(Y.T), self.params.pvalue))

    def _result(self, columns: list[str], scores: list[dict[str, Any]]) -> MeasureResult:
        per: dict[str, dict[str, Any]] = dict(zip(columns, scores, strict=True))
        worst = max(per, key=lambda c: per[c]["statistic"])
        failed = [c for c, v in per.items() if v["pvalue_method"] == FALLBACK]
        notes = [f"the exact p-value failed for {', '.join(map(repr, failed))}: scipy's "
                 "asymptotic one is reported"] if failed else []
        return MeasureResult(value=per[worst]["statistic"], warnings=notes,
                             details={"columns": per, "worst_column": worst,
                                      "min_pvalue": float(np.min([v["pvalue"]
                                                                  for v in per.values()]))})
