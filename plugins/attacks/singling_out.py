"""Singling-out attack: predicates built from the release that isolate one original record."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field
from scipy.optimize import curve_fit
from scipy.stats import binom, hypergeom

from anoneval.core.api import Context, DataError, Dataset, MeasureResult
from anoneval.plugins._shared.mixed import is_numeric
from anoneval.plugins.attacks._common import (
    AttackMeasure,
    AttackParams,
    attack_result,
    check_not_all_missing,
    frames,
)

# predicate operators
EQ, NE, LT, LE, GT, GE, ISNULL, NOTNULL = range(8)
#: Query × record cells (or candidate pairs) evaluated per block.
CHUNK_ELEMENTS = 1 << 22
#: For exact counts, a query is checked on its most selective term's records when they are at
#: most this fraction's inverse of all records; the others scan every record.
SPARSE_SHARE = 16
#: Records of the most selective term checked per query in the first round of a capped count;
#: each further round checks four times as many.
FIRST_WIDTH = 16


class Queries:
    """A batch of conjunctive predicates: column index, operator and value per term."""

    def __init__(self, cols: np.ndarray, ops: np.ndarray, vals: np.ndarray) -> None:
        self.cols, self.ops, self.vals = cols, ops, vals  # each (n_queries, n_terms)

    def __len__(self) -> int:
        return len(self.cols)

    def take(self, rows: np.ndarray) -> Queries:
        return Queries(self.cols[rows], self.ops[rows], self.vals[rows])

    def keys(self) -> list[bytes]:
        """One key per query, independent of the order of its terms."""
        order = np.argsort(self.cols, axis=1, kind="stable")
        parts = [np.take_along_axis(a, order, axis=1) for a in (self.cols, self.ops)]
        vals = np.take_along_axis(self.vals, order, axis=1)
        stacked = np.concatenate([parts[0].astype(float), parts[1].astype(float), vals], axis=1)
        return [row.tobytes() for row in np.nan_to_num(stacked, nan=np.inf)]

    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """Each term as ``lo <= x <= hi`` (==, <, <=, >, >=, not missing; a comparison with
        a missing value holds nowhere); != and "is missing" get an empty interval and are
        checked apart (:func:`_holds`)."""
        v, ops = self.vals, self.ops
        lo = np.select([(ops == EQ) | (ops == GE), ops == GT, ops == NE, ops == ISNULL],
                       [v, np.nextafter(v, np.inf), np.inf, np.inf], -np.inf)
        hi = np.select([(ops == EQ) | (ops == LE), ops == LT, ops == NE, ops == ISNULL],
                       [v, np.nextafter(v, -np.inf), -np.inf, -np.inf], np.inf)
        return lo, hi


def _holds(values: np.ndarray, ops: np.ndarray, vals: np.ndarray, lo: np.ndarray,
           hi: np.ndarray) -> np.ndarray:
    """One term per entry of the first axis of ``values`` (its operator, value and interval):
    comparisons hold only between non-missing values."""
    shape = (-1,) + (1,) * (values.ndim - 1)
    ok = values >= lo.reshape(shape)
    ok &= values <= hi.reshape(shape)
    at = np.flatnonzero((ops == NE) | (ops == ISNULL))
    if len(at):
        x, v = values[at], vals[at].reshape(shape)
        ok[at] = np.where((ops[at] == ISNULL).reshape(shape), np.isnan(x),
                          (x != v) & ~np.isnan(x) & ~np.isnan(v))
    return ok


class Records:
    """A float matrix (records × columns, NaN = missing) with each column sorted once."""

    def __init__(self, X: np.ndarray) -> None:
        self.X = X
        self.XT = np.ascontiguousarray(X.T)  # a column per row: gathers copy contiguous memory
        self.order = np.argsort(self.XT, axis=1, kind="stable")  # NaN last
        self.sorted = np.take_along_axis(self.XT, self.order, axis=1)
        self.valid = (~np.isnan(X)).sum(axis=0)

    def __len__(self) -> int:
        return len(self.X)

    def ranges(self, cols: np.ndarray, ops: np.ndarray, vals: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Positions ``[a, b)`` (and for ``!=`` also ``[c, d)``) in the sorted columns of the
        records each term matches."""
        left = np.zeros(len(cols), dtype=np.int64)
        right = np.zeros(len(cols), dtype=np.int64)
        for j in np.unique(cols):
            at = cols == j
            col = self.sorted[j, :self.valid[j]]
            left[at] = np.searchsorted(col, vals[at], side="left")
            right[at] = np.searchsorted(col, vals[at], side="right")
        valid, zero = self.valid[cols], np.zeros_like(left)
        a = np.select([ops == GE, ops == GT, ops == ISNULL, ops == EQ],
                      [left, right, valid, left], zero)
        b = np.select([ops == EQ, ops == LE, ops == LT, ops == ISNULL, ops == NE],
                      [right, right, left, np.full_like(left, len(self)), left], valid)
        c = np.where(ops == NE, right, zero)
        d = np.where(ops == NE, valid, zero)
        blank = np.isnan(vals) & (ops != ISNULL) & (ops != NOTNULL)  # compared with missing
        return a, np.where(blank, a, b), c, np.where(blank, c, d)


def _expand(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Owner and position of every element of the ranges ``[starts[i], ends[i])``."""
    lengths = np.maximum(ends - starts, 0)
    owner = np.repeat(np.arange(len(starts)), lengths)
    offsets = np.cumsum(lengths) - lengths
    return owner, starts[owner] + np.arange(len(owner)) - offsets[owner]


def _pieces(sizes: np.ndarray) -> list[slice]:
    """Consecutive slices of ``sizes`` whose sums stay within :data:`CHUNK_ELEMENTS` (or hold
    one entry)."""
    total = np.cumsum(sizes)
    out, start = [], 0
    while start < len(sizes):
        before = total[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(total, before + CHUNK_ELEMENTS, side="right")))
        out.append(slice(start, stop))
        start = stop
    return out


def _scan_counts(data: Records, q: Queries, first: np.ndarray, bounds: tuple[np.ndarray, ...],
                 stop_above: int | None) -> np.ndarray:
    """Counts from the records of each query's most selective term (its positions in the
    sorted column), the other terms checked on them. With ``stop_above``, in rounds: the first
    :data:`FIRST_WIDTH` records of each query, then four times as many, a query leaving once
    its count exceeds ``stop_above`` (so a broad query costs a few records, not all)."""
    nq, m = q.cols.shape
    lo, hi = q.intervals()
    a, b, c, d = bounds
    first_len = np.maximum(b - a, 0)
    size = first_len + np.maximum(d - c, 0)
    col = q.cols[np.arange(nq), first]
    others = np.argsort(np.arange(m)[None, :] == first[:, None], axis=1, kind="stable")[:, :-1]
    counts = np.zeros(nq, dtype=np.int64)
    done = np.zeros(nq, dtype=np.int64)
    active = np.flatnonzero(size > 0)
    width = FIRST_WIDTH
    while len(active):
        take = size[active] - done[active]
        if stop_above is not None:
            take = np.minimum(take, width)
        for sl in _pieces(take):
            qa = active[sl]
            owner, p = _expand(done[qa], done[qa] + take[sl])
            qi = qa[owner]
            pos = np.where(p < first_len[qi], a[qi] + p, c[qi] + p - first_len[qi])
            ri = data.order[col[qi], pos]
            for t in range(m - 1):
                tt = others[qi, t]
                ok = _holds(data.X[ri, q.cols[qi, tt]], q.ops[qi, tt], q.vals[qi, tt],
                            lo[qi, tt], hi[qi, tt])
                owner, qi, ri = owner[ok], qi[ok], ri[ok]
            counts[qa] += np.bincount(owner, minlength=len(qa))
        done[active] += take
        active = active[done[active] < size[active]]
        if stop_above is not None:
            active = active[counts[active] <= stop_above]
        width *= 4
    return counts


def _dense_counts(data: Records, q: Queries) -> np.ndarray:
    """Counts by checking every record, in blocks of at most :data:`CHUNK_ELEMENTS` cells."""
    n, nq = len(data), len(q)
    lo, hi = q.intervals()
    counts = np.zeros(nq, dtype=np.int64)
    block = max(1024, CHUNK_ELEMENTS // max(nq, 1))
    for start in range(0, n, block):
        rows = data.XT[:, start:start + block]
        for qs in np.array_split(np.arange(nq), max(1, nq * rows.shape[1]
                                                   // CHUNK_ELEMENTS + 1)):
            cols = q.cols[qs]
            mask = _holds(rows[cols[:, 0]], q.ops[qs, 0], q.vals[qs, 0], lo[qs, 0], hi[qs, 0])
            for t in range(1, cols.shape[1]):
                mask &= _holds(rows[cols[:, t]], q.ops[qs, t], q.vals[qs, t], lo[qs, t],
                               hi[qs, t])
            counts[qs] += np.count_nonzero(mask, axis=1)
    return counts


def count_matches(data: Records | np.ndarray, queries: Queries,
                  stop_above: int | None = None) -> np.ndarray:
    """How many records each query matches (records × columns floats, NaN = missing).

    Each term's records are a range of its column's sorted order (binary search); a query is
    checked on the records of its most selective term. For exact counts, a query whose most
    selective term matches more than 1/:data:`SPARSE_SHARE` of the records scans all records
    in blocks instead. With ``stop_above``, a count above it is only known to exceed it, and
    every query is checked on its selective term's records in growing rounds, stopping early.
    """
    data = data if isinstance(data, Records) else Records(data)
    nq, m = queries.cols.shape
    counts = np.zeros(nq, dtype=np.int64)
    if nq == 0 or len(data) == 0:
        return counts
    flat = data.ranges(queries.cols.ravel(), queries.ops.ravel(), queries.vals.ravel())
    a, b, c, d = (x.reshape(nq, m) for x in flat)
    sizes = np.maximum(b - a, 0) + np.maximum(d - c, 0)
    first = np.argmin(sizes, axis=1)
    rows = np.arange(nq)
    sparse = (sizes[rows, first] * SPARSE_SHARE <= len(data)) | (stop_above is not None)
    if sparse.any():
        at = np.flatnonzero(sparse)
        counts[at] = _scan_counts(data, queries.take(at), first[at],
                                  tuple(x[at, first[at]] for x in (a, b, c, d)), stop_above)
    if (~sparse).any():
        at = np.flatnonzero(~sparse)
        counts[at] = _dense_counts(data, queries.take(at))
    return counts


def singled_out(counts: np.ndarray, size: int, at_size: int) -> np.ndarray:
    """Expected number of queries that match exactly one record of a random ``at_size``-subset
    of a ``size``-record set where they match ``counts`` records (hypergeometric), one value
    per entry of ``at_size``."""
    at = np.atleast_1d(np.asarray(at_size))
    return hypergeom.pmf(1, size, np.asarray(counts)[None, :], at[:, None]).sum(axis=1)


def _so_integral(n: np.ndarray | float, w_eff: float, norm: float) -> np.ndarray | float:
    """norm · ∫₀^w_eff n·w(1−w)^(n−1) dw = norm · (1 − (n·w_eff + 1)(1 − w_eff)^n)/(n + 1): the
    expected number of queries of weight up to ``w_eff`` that single out one of ``n`` records
    (Cohen & Nissim 2020, as fitted by anonymeter)."""
    return norm * (1 - (n * w_eff + 1) * (1 - w_eff) ** n) / (n + 1)


def size_correction(counts: np.ndarray, size: int, to_size: int) -> float:
    """Factor that brings a singling-out count on ``size`` records to ``to_size`` records,
    anonymeter's correction (Giomi et al. 2023, ``fit_correction_term``; model of Cohen &
    Nissim 2020): :func:`_so_integral` fitted by ``curve_fit`` (from anonymeter's start,
    w_eff = 1/size with the curve scaled to 1 there) to the successes on subsets of 10 sizes
    from min(1000, ``size``) to ``size``, then model(``to_size``)/model(``size``).

    anonymeter counts the successes on 5 random subsets per size; here each is its exact
    hypergeometric expectation (:func:`singled_out`), the same fit without the sampling noise
    (on the same points anonymeter 1.0.0's ``_fit_model`` gives the same factor; see the
    tests). A set of at most 1,000 records (where anonymeter's sizes are all equal) is fitted
    from half its size. Known limitation, as in anonymeter: the fit often ends at a large
    w_eff, where the model is norm/(n + 1) and the factor is size/to_size."""
    lower = min(1000, size) if size > 1000 else max(1, size // 2)
    sizes = np.unique(np.linspace(lower, size, 10).astype(int))
    successes = singled_out(counts, size, sizes)
    if successes[-1] <= 0:
        return 1.0  # nothing singled out: nothing to scale
    top = float(sizes.max())
    start = (1 / top, 1 / _so_integral(top, 1 / top, 1.0))
    try:
        (w_eff, norm_), _ = curve_fit(_so_integral, sizes.astype(float), successes, p0=start,
                                      bounds=(0, (1, np.inf)))
    except (RuntimeError, ValueError) as exc:
        raise DataError(f"the control-set size correction could not be fitted ({exc}); give a "
                        "control set the size of the original") from exc
    at_own = _so_integral(float(size), w_eff, norm_)
    if not at_own > 0:
        raise DataError("the control-set size correction fitted a curve that is 0 at the "
                        "control set's size; give a control set the size of the original")
    return float(_so_integral(float(to_size), w_eff, norm_) / at_own)


def empirical_bayes_counts(counts: np.ndarray, size: int, to_size: int,
                           max_iter: int = 2000, tol: float = 1e-9) -> np.ndarray:
    """Estimated number of queries that would single out one record of a ``to_size``-record
    set drawn like the ``size``-record set on which they match ``counts`` records; ``counts``
    is one row of per-query counts or a matrix of rows (e.g. bootstrap replicates), one
    estimate per row.

    Each query i matches a record with an unknown probability q_i, so its count is
    Binomial(``size``, q_i) and its expected singling-outs at ``to_size`` records are
    ``to_size``·q_i(1 − q_i)^(``to_size`` − 1). No unbiased estimator of that exists from one
    count when ``to_size`` > ``size`` (it is a polynomial of degree above ``size``), so the
    q_i are treated as draws of a prior G estimated from all the counts (empirical Bayes,
    Robbins 1956): G is the nonparametric maximum-likelihood mixing distribution (Kiefer &
    Wolfowitz 1956) on a grid (0, 200 points log-spaced from 10⁻³/``to_size`` to 1, and every
    count/``size`` up to the largest), fitted by EM (Laird 1978), and the estimate is the sum
    over queries of the posterior mean of ``to_size``·q(1 − q)^(``to_size`` − 1). The
    likelihood depends only on the count, so each row is its histogram of counts; the rows
    are fitted together (two matrix products per EM step). For ``to_size`` ≤ ``size`` use
    :func:`singled_out` instead (the exact hypergeometric expectation on a subset).
    Bias measured by simulation in the tests (within 10 % at ``size`` = ``to_size``/2 and
    ``to_size``/4 on several mixing distributions and on independent releases, where
    anonymeter's fit is off by a factor).
    """
    rows = np.atleast_2d(np.asarray(counts, dtype=np.int64))
    grid, like, prior, hist = _eb_fit(rows, size, to_size, max_iter, tol)
    gain = to_size * grid * (1.0 - grid) ** (to_size - 1)  # 0**0 = 1 when to_size = 1
    marginal = np.maximum(prior @ like.T, 1e-300)
    return ((hist / marginal) * ((prior * gain) @ like.T)).sum(axis=1)


def _eb_fit(rows: np.ndarray, size: int, to_size: int, max_iter: int = 2000,
            tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The grid, the count × grid binomial likelihood, the fitted prior of each row and each
    row's histogram of counts (see :func:`empirical_bayes_counts`)."""
    top = int(rows.max(initial=0))
    hist = np.stack([np.bincount(r, minlength=top + 1) for r in rows]).astype(float)
    grid = np.unique(np.concatenate([[0.0], np.geomspace(1e-3 / to_size, 1.0, 200),
                                     np.clip(np.arange(top + 1) / size, 0.0, 1.0)]))
    like = np.exp(binom.logpmf(np.arange(top + 1)[:, None], size, grid[None, :]))  # C × G
    n = hist.sum(axis=1, keepdims=True)
    prior = np.full((len(rows), len(grid)), 1.0 / len(grid))
    for _ in range(max_iter):
        marginal = np.maximum(prior @ like.T, 1e-300)  # B × C
        new = prior * ((hist / marginal) @ like) / n
        done = np.abs(new - prior).max() < tol
        prior = new
        if done:
            break
    return grid, like, prior, hist


def empirical_bayes_sd(counts: np.ndarray, size: int, to_size: int,
                       rng: np.random.Generator, n_boot: int) -> float:
    """Standard deviation of the empirical-Bayes count's error against the singled-out count
    of a fresh ``to_size``-record set, by a parametric bootstrap from the fitted prior (Efron
    2010, *Large-Scale Inference*, ch. 11): each query's match probability is drawn from its
    posterior, its counts on a ``size``-record and a ``to_size``-record set are drawn
    binomially, the estimate is refitted on the first and compared with the singled-out count
    of the second. It carries both sides' record sampling, so the original's rate needs no
    further record error. A record bootstrap of the control does not serve here: a drawn-twice
    record makes its queries' counts 2, so "exactly one" loses its spread."""
    c = np.asarray(counts, dtype=np.int64)
    grid, like, prior, _ = _eb_fit(c[None, :], size, to_size)
    post = like[c] * prior[0]  # queries × grid
    cdf = np.cumsum(post / post.sum(axis=1, keepdims=True), axis=1)
    q = np.stack([grid[np.minimum((rng.random(len(c))[:, None] > cdf).sum(axis=1),
                                  len(grid) - 1)] for _ in range(n_boot)])
    estimates = empirical_bayes_counts(rng.binomial(size, q), size, to_size)
    fresh = np.count_nonzero(rng.binomial(to_size, q) == 1, axis=1)
    return float(np.std(estimates - fresh, ddof=1))


def empirical_bayes_count(counts: np.ndarray, size: int, to_size: int) -> float:
    """:func:`empirical_bayes_counts` of one row of per-query counts."""
    return float(empirical_bayes_counts(counts, size, to_size)[0])


class SinglingOut(AttackMeasure):
    """Singling-out risk: predicates that isolate one record of the release, tried on the
    original records (Giomi et al. 2023, anonymeter; Article 29 Working Party opinion 05/2014;
    Cohen & Nissim 2020 on predicate singling out).

    Queries are built from the release only. ``univariate``: for each column, ``== v`` for a
    value v held by one released record, ``<= min`` and ``>= max`` of numeric columns, and
    ``is missing`` when one value is missing. ``multivariate``: a random released record and
    ``n_cols`` random columns give the conjunction of ``column == value`` (categories),
    ``column >= value`` when the value is above the released column's median else
    ``column <= value`` (numbers), ``is missing`` (missing values). A query is kept when it
    matches exactly one released record (duplicates of a query are dropped), until
    ``n_attacks`` are found or ``max_attempts`` records were tried. The attack succeeds when a
    query matches exactly one record of the original (main) or of the control set (control).
    The naive baseline draws ``n_cols`` random columns (one for univariate), a random released
    value of each and a random operator (==, != for categories; ==, !=, <, >, <=, >= for
    numbers; missing / not missing for a missing value).

    Comparisons hold only between non-missing values (a missing value matches only "is
    missing"). Counts are taken over the records as given (anonymeter first drops duplicate
    rows, so two identical people count as singled out). When fewer queries than ``n_attacks``
    are found, rates are over the queries found (a warning says so). The main and baseline
    rates are measured on the original as it is. When the control set differs in size from
    the original, its success count is brought to the original's size, since a singling-out
    count depends on the number of records queried (``details.control_correction``: the
    method; ``details.control_factor``: corrected/raw; ``details.n_control_raw``). A larger
    control uses the exact expected count on a random original-sized subset of it
    (:func:`singled_out`, unbiased). A smaller one uses ``control_correction``:
    ``"empirical_bayes"`` (default, :func:`empirical_bayes_counts`; on simulated independent
    releases with a control of 1/2 or 1/4 of the original's size its corrected count is within
    a few per cent of the original's, so the risk averages ≈ 0, see the tests) or
    ``"anonymeter"`` (anonymeter's fitted factor, :func:`size_correction`, kept for
    comparison: its fit often settles at size_control/size_original, so it under-counts the
    control by 45–82 % in the same simulations and an independent release keeps a risk of
    about 0.2). A corrected count is an estimate, and its error widens the control rate's and
    so the risk's ``ci`` (``details.control_sd``, over ``n_boot`` replicates): for
    empirical_bayes, the error against a fresh original-sized set by a parametric bootstrap
    (:func:`empirical_bayes_sd`), otherwise the spread over bootstrap resamples of the
    control's records. With a control of 1/4 of the original's size, a single independent
    release scatters around 0 by about ±0.1 (standard deviation in the tests' simulation);
    the errors treat queries as independent, though queries share records, so there the
    interval is narrower than that scatter (it covered 0 for 13 of 16 simulated independent
    releases; 15 of 16 at 1/2). Give a control set of the original's size for an uncorrected
    rate. See
    :mod:`anoneval.plugins.attacks._common` for the rates and the risk.
    """

    name = "SinglingOut"
    description = "Singling-out attack risk (anonymeter): release-built predicates that "\
                  "isolate one original record, above the control set's rate."

    class Params(AttackParams):
        mode: Literal["univariate", "multivariate"] = Field(
            "multivariate", description="univariate: one-column predicates from rare values "
                                        "and extremes; multivariate: n_cols-column predicates.")
        n_cols: int = Field(3, ge=1, description="Columns per multivariate predicate.")
        max_attempts: int = Field(10_000_000, ge=1,
                                  description="Records tried to build multivariate queries.")
        columns: list[str] | None = Field(None, min_length=1,
                                          description="Columns an attacker uses; null: all "
                                                      "columns of the original.")
        control_correction: Literal["empirical_bayes", "anonymeter"] = Field(
            "empirical_bayes", description="How a control set smaller than the original is "
            "brought to its size: empirical_bayes (nearly unbiased), or anonymeter's fitted "
            "factor (under-counts; for comparison with anonymeter).")
        n_boot: int = Field(100, ge=0, le=10_000,
                            description="Replicates for the error of a size-corrected control "
                                        "count: parametric bootstrap (empirical_bayes), else "
                                        "resamples of the control's records; 0 or 1: none.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        columns = p.columns or [str(c) for c in original.columns] if original is not None else []
        ori, syn, ctl = frames(original, anonymized, ctx.control, columns)
        check_not_all_missing(syn, "anonymized")
        n_cols = 1 if p.mode == "univariate" else p.n_cols
        if n_cols > len(columns):
            raise DataError(f"n_cols = {n_cols} exceeds the {len(columns)} columns")
        X_syn, X_ori, X_ctl, numeric = _encode(syn, ori, ctl)
        released = Records(X_syn)
        rng = ctx.rng(1)
        bar = ctx.progress(4, f"{self.name} (queries, then matches on 3 sides)")
        if p.mode == "univariate":
            queries = _univariate(released, numeric, p.n_attacks, rng)
        else:
            queries = _multivariate(released, numeric, p.n_attacks, n_cols, p.max_attempts,
                                    rng)
        bar.update(1)
        n = len(queries)
        if n == 0:
            bar.close()
            return MeasureResult(value=None, details={"n_attacks": 0},
                                 warnings=["no query singles out a released record"])
        warnings = []
        if n < p.n_attacks:
            warnings.append(f"only {n} of the {p.n_attacks} singling-out queries were found; "
                            "rates are over those found")
        baseline = _random_queries(X_syn, numeric, n, n_cols, rng)
        on_ori = Records(X_ori)
        n_success = float(np.count_nonzero(count_matches(on_ori, queries) == 1))
        bar.update(1)
        n_base = float(np.count_nonzero(count_matches(on_ori, baseline) == 1))
        bar.update(1)
        ctl_counts = count_matches(Records(X_ctl), queries)
        bar.update(1)
        bar.close()
        n_control = float(np.count_nonzero(ctl_counts == 1))
        method = ("none" if len(ctl) == len(ori) else "hypergeometric" if len(ctl) > len(ori)
                  else p.control_correction)
        n_corrected = _corrected(method, ctl_counts, len(ctl), len(ori))[0]
        sd = 0.0
        if method == "empirical_bayes" and p.n_boot > 1:
            sd = empirical_bayes_sd(ctl_counts, len(ctl), len(ori), ctx.rng(2), p.n_boot)
        elif method != "none" and p.n_boot > 1:
            reps = np.stack([count_matches(Records(X_ctl[rows]), queries) for rows in
                             ctx.rng(2).integers(0, len(ctl), (p.n_boot, len(ctl)))])
            sd = float(np.std(_corrected(method, reps, len(ctl), len(ori)), ddof=1))
        factor = n_corrected / n_control if n_control > 0 else 1.0
        return attack_result(n, n_success, n_base, min(n_corrected, float(n)),
                             p.confidence_level,
                             details={"mode": p.mode, "n_queries": n,
                                      "n_control_raw": n_control,
                                      "control_correction": method,
                                      "control_factor": factor,
                                      "control_sd": sd,
                                      "columns": columns},
                             warnings=warnings, control_sd=sd)


def _corrected(method: str, counts: np.ndarray, size: int, to_size: int) -> np.ndarray:
    """The singled-out count of each row of ``counts`` (queries' counts on ``size`` records)
    brought to ``to_size`` records by ``method``."""
    rows = np.atleast_2d(counts)
    if method == "none":
        return np.count_nonzero(rows == 1, axis=1).astype(float)
    if method == "hypergeometric":
        return np.array([singled_out(r, size, to_size)[0] for r in rows])
    if method == "empirical_bayes":
        return empirical_bayes_counts(rows, size, to_size)
    return np.array([np.count_nonzero(r == 1) * size_correction(r, size, to_size)
                     for r in rows])


def _encode(syn: pd.DataFrame, ori: pd.DataFrame, ctl: pd.DataFrame
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Float matrices (categories as shared codes, NaN = missing) and the numeric-column mask."""
    numeric = np.array([is_numeric(syn[c]) and is_numeric(ori[c]) and is_numeric(ctl[c])
                        for c in syn.columns])
    mats = [np.empty((len(f), syn.shape[1])) for f in (syn, ori, ctl)]
    for j, c in enumerate(syn.columns):
        if numeric[j]:
            for m, f in zip(mats, (syn, ori, ctl), strict=True):
                col = f[c]
                m[:, j] = (col.to_numpy(dtype="datetime64[ns]").astype("int64") / 1e9
                           if pd.api.types.is_datetime64_any_dtype(col)
                           else col.to_numpy(dtype=float, na_value=np.nan))
                if pd.api.types.is_datetime64_any_dtype(col):
                    m[col.isna().to_numpy(), j] = np.nan
        else:
            codes = pd.factorize(pd.concat([syn[c], ori[c], ctl[c]], ignore_index=True))[0]
            codes = codes.astype(float)
            codes[codes < 0] = np.nan
            bounds = np.cumsum([0, len(syn), len(ori), len(ctl)])
            for k, m in enumerate(mats):
                m[:, j] = codes[bounds[k]:bounds[k + 1]]
    return mats[0], mats[1], mats[2], numeric


def _keep_unique(data: Records, queries: Queries, seen: set[bytes], limit: int) -> Queries:
    """The queries matching one record, not seen before, at most ``limit``."""
    keep = []
    hits = np.flatnonzero(count_matches(data, queries, stop_above=1) == 1)
    keys = queries.take(hits).keys() if len(hits) else []
    for i, key in zip(hits, keys, strict=True):
        if len(keep) >= limit:
            break
        if key not in seen:
            seen.add(key)
            keep.append(i)
    return queries.take(np.array(keep, dtype=np.int64))


def _concat(parts: list[Queries], n_terms: int) -> Queries:
    if not parts:
        return Queries(np.zeros((0, n_terms), np.int64), np.zeros((0, n_terms), np.int64),
                       np.zeros((0, n_terms)))
    return Queries(*(np.concatenate([getattr(q, a) for q in parts])
                     for a in ("cols", "ops", "vals")))


def _univariate(data: Records, numeric: np.ndarray, n_attacks: int,
                rng: np.random.Generator) -> Queries:
    X = data.X
    cols, ops, vals = [], [], []
    for j in range(X.shape[1]):
        x = X[:, j]
        missing = np.isnan(x)
        if missing.sum() == 1:
            cols.append(j), ops.append(ISNULL), vals.append(np.nan)
        present = x[~missing]
        if not len(present):
            continue
        if numeric[j]:
            cols += [j, j]
            ops += [LE, GE]
            vals += [present.min(), present.max()]
        values, counts = np.unique(present, return_counts=True)
        rare = values[counts == 1]
        cols += [j] * len(rare)
        ops += [EQ] * len(rare)
        vals += rare.tolist()
    order = rng.permutation(len(cols))
    queries = Queries(np.array(cols, np.int64)[order, None], np.array(ops, np.int64)[order, None],
                      np.array(vals, float)[order, None])
    return _keep_unique(data, queries, set(), n_attacks)


def _multivariate(data: Records, numeric: np.ndarray, n_attacks: int, n_cols: int,
                  max_attempts: int, rng: np.random.Generator, batch: int = 1000) -> Queries:
    X = data.X
    medians = np.array([np.nanmedian(X[:, j]) if numeric[j] and not np.isnan(X[:, j]).all()
                        else np.nan for j in range(X.shape[1])])
    seen: set[bytes] = set()
    found: list[Queries] = []
    n_found = attempts = 0
    while n_found < n_attacks and attempts < max_attempts:
        size = min(batch, max_attempts - attempts)
        rows = rng.integers(0, len(X), size=size)
        cols = np.argsort(rng.random((size, X.shape[1])), axis=1)[:, :n_cols]
        vals = X[rows[:, None], cols]
        ops = np.where(numeric[cols] & (vals > medians[cols]), GE, LE)
        ops = np.where(numeric[cols], ops, EQ)
        ops = np.where(np.isnan(vals), ISNULL, ops)
        kept = _keep_unique(data, Queries(cols, ops, vals), seen, n_attacks - n_found)
        found.append(kept)
        n_found += len(kept)
        attempts += size
    return _concat(found, n_cols)


def _random_queries(X: np.ndarray, numeric: np.ndarray, n: int, n_cols: int,
                    rng: np.random.Generator) -> Queries:
    cols = np.argsort(rng.random((n, X.shape[1])), axis=1)[:, :n_cols]
    uniques = [np.unique(X[:, j]) for j in range(X.shape[1])]  # NaNs kept (once each)
    uniques = [np.concatenate([u[~np.isnan(u)], [np.nan]]) if np.isnan(u).any() else u
               for u in uniques]
    vals = np.empty((n, n_cols))
    ops = np.empty((n, n_cols), dtype=np.int64)
    for i in range(n):  # n_attacks draws of a few numbers: cheap next to the counting
        for t, j in enumerate(cols[i]):
            vals[i, t] = uniques[j][rng.integers(len(uniques[j]))]
            if np.isnan(vals[i, t]):
                ops[i, t] = (ISNULL, NOTNULL)[rng.integers(2)]
            elif numeric[j]:
                ops[i, t] = (EQ, NE, LT, GT, LE, GE)[rng.integers(6)]
            else:
                ops[i, t] = (EQ, NE)[rng.integers(2)]
    return Queries(cols, ops, vals)

