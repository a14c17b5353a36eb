"""Mixed-type nearest-neighbour search: exact, blockwise brute force over encoded records.

Records are encoded once (:func:`encode`): numeric columns (datetimes as seconds) as floats
divided by a range, every other column (text, categories, booleans) as integer codes shared by
all encoded frames. The distance between two records is a sum over columns:

- numeric: ``|x − y| / R`` (``cap=True``: ``min(|x − y| / R, 1)``);
- categorical: 0 if equal, 1 if not;
- missing values: 0 when both are missing, 1 when one is.

A numeric column that is constant where its range is taken (R = 0) is compared as a category
(0 if equal, 1 if not). :func:`nearest` returns, for each query record, the ``k`` nearest
reference records and their distances: an exhaustive search, blockwise (a block's matrix holds
:data:`BLOCK_CELLS` numbers), screened in single precision and decided in double.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from anoneval.core.api import DataError

#: Cells of one block's query × reference screening matrix (4 MB of float32).
BLOCK_CELLS = 1 << 20


@dataclass(frozen=True)
class Encoded:
    """Records of one frame: scaled numeric values and categorical codes (−1: missing)."""

    num: np.ndarray  # (n, d_num) float64, NaN for missing
    cat: np.ndarray  # (n, d_cat) int64

    def __len__(self) -> int:
        return len(self.num)

    def take(self, rows: np.ndarray) -> Encoded:
        return Encoded(self.num[rows], self.cat[rows])


def is_numeric(series: pd.Series) -> bool:
    """Numeric or datetime, and not boolean (booleans are categories)."""
    return bool((pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))
                or pd.api.types.is_datetime64_any_dtype(series))


def _as_float(series: pd.Series) -> np.ndarray:
    if pd.api.types.is_datetime64_any_dtype(series):
        values = series.to_numpy(dtype="datetime64[ns]")
        out = values.astype("int64").astype(float) / 1e9
        out[np.isnat(values)] = np.nan
        return out
    return series.to_numpy(dtype=float, na_value=np.nan)


def encode(frames: Sequence[pd.DataFrame], columns: Sequence[str],
           range_from: Sequence[int] | None = None) -> tuple[list[Encoded], list[str], list[str]]:
    """Encode ``columns`` of each frame on one scale.

    A column is numeric when it is numeric in the first frame. Numeric columns are divided by
    their range (max − min) over the frames listed in ``range_from`` (default: all). Returns the
    encoded frames and the names of the numeric and categorical columns, in that order.
    """
    columns = list(columns)
    if not columns:
        raise DataError("no columns to compare")
    range_from = list(range(len(frames))) if range_from is None else list(range_from)
    numeric, categorical = [], []
    scales: dict[str, float] = {}
    for c in columns:
        if is_numeric(frames[0][c]) and all(is_numeric(f[c]) for f in frames):
            values = np.concatenate([_as_float(frames[i][c]) for i in range_from])
            finite = values[np.isfinite(values)]
            span = float(finite.max() - finite.min()) if len(finite) else 0.0
            if span > 0:
                numeric.append(c)
                scales[c] = span
                continue
        categorical.append(c)
    out = []
    cat_codes: list[np.ndarray] = []
    if categorical:
        stacked = pd.concat([f[categorical] for f in frames], ignore_index=True)
        cat_codes = [pd.factorize(stacked[c], use_na_sentinel=True)[0] for c in categorical]
    start = 0
    for f in frames:
        n = len(f)
        num = (np.column_stack([_as_float(f[c]) / scales[c] for c in numeric])
               if numeric else np.zeros((n, 0)))
        cat = (np.column_stack([codes[start:start + n] for codes in cat_codes]).astype(np.int64)
               if categorical else np.zeros((n, 0), dtype=np.int64))
        out.append(Encoded(num, cat))
        start += n
    return out, numeric, categorical


def distances(query: Encoded, reference: Encoded, cap: bool = False) -> np.ndarray:
    """The ``len(query) × len(reference)`` matrix of summed column distances (float64)."""
    d = np.zeros((len(query), len(reference)))
    tmp = np.empty_like(d)
    for j in range(query.num.shape[1]):
        q, r = query.num[:, j], reference.num[:, j]
        np.subtract(q[:, None], r[None, :], out=tmp)
        np.abs(tmp, out=tmp)
        if cap:
            np.minimum(tmp, 1.0, out=tmp)
        qn, rn = np.isnan(q), np.isnan(r)
        if qn.any() or rn.any():  # one missing: 1; both missing: 0
            tmp[np.isnan(tmp)] = 1.0
            tmp[np.ix_(qn, rn)] = 0.0
        d += tmp
    for j in range(query.cat.shape[1]):
        d += query.cat[:, j, None] != reference.cat[None, :, j]
    return d


def pair_distances(query: Encoded, reference: Encoded, cap: bool = False) -> np.ndarray:
    """Distances of row i of ``query`` to row i of ``reference``, with the very floating-point
    operations of :func:`distances` (so the values are bitwise the same)."""
    d = np.zeros(len(query))
    for j in range(query.num.shape[1]):
        q, r = query.num[:, j], reference.num[:, j]
        tmp = np.abs(q - r)
        if cap:
            np.minimum(tmp, 1.0, out=tmp)
        tmp[np.isnan(tmp)] = 1.0
        tmp[np.isnan(q) & np.isnan(r)] = 0.0
        d += tmp
    for j in range(query.cat.shape[1]):
        d += query.cat[:, j] != reference.cat[:, j]
    return d


class _Screen:
    """Single-precision copies of the records for the screening pass, and its error bound.

    Numbers are shifted by the reference's column minimum (so the float32 values stay small)
    and stored column-major on the reference side; categories as int32 codes. ``eps`` bounds
    |float32 distance − float64 distance| from above: with u the unit roundoff, B the largest
    shifted magnitude, T the largest column term (1 with ``cap``, else 2B), d numeric and c
    categorical columns, each term is off by at most 4uB and the running sum by (d + 1)u(dT + c)
    (Higham 2002, "Accuracy and Stability of Numerical
    Algorithms", ch. 3–4); the bound is that of float32 plus that of float64 (unshifted values),
    doubled twice for safety. ``exact`` is set when a value is not finite in float32: the
    screening is then done in float64 with no slack.
    """

    def __init__(self, query: Encoded, reference: Encoded, cap: bool) -> None:
        self.cap = cap
        self.n_num, self.n_cat = query.num.shape[1], query.cat.shape[1]
        with np.errstate(all="ignore"):  # per thread, unlike the warning filters
            # fmin skips NaN, as nanmin, but gives NaN for an all-missing column without a
            # warning
            shift = (np.nan_to_num(np.fmin.reduce(reference.num, axis=0)) if len(reference)
                     else 0.0)
            q, r = query.num - shift, reference.num - shift
            self.q = q.astype(np.float32)
            self.rT = np.ascontiguousarray(r.T, dtype=np.float32)
            big = max(_absmax(q), _absmax(r))
            big64 = max(_absmax(query.num), _absmax(reference.num))
        self.exact = not (np.isfinite(big) and np.isfinite(big64)
                          and _absmax(self.q) < np.inf and _absmax(self.rT) < np.inf)
        self.qcat = query.cat.astype(np.int32)
        self.rcatT = np.ascontiguousarray(reference.cat.T, dtype=np.int32)
        self.q_nan = np.isnan(query.num)
        self.r_nan = np.isnan(reference.num).T
        self.nan_cols = [j for j in range(self.n_num)
                         if self.q_nan[:, j].any() or self.r_nan[j].any()]
        d, c = self.n_num, self.n_cat

        def bound(u: float, b: float) -> float:
            t = 1.0 if cap else 2 * b
            return u * (4 * d * b + (d + 1) * (d * t + c))

        self.eps = 0.0 if self.exact else 4 * (bound(2.0 ** -24, big) + bound(2.0 ** -53, big64))

    def block(self, rows: slice, out: np.ndarray, tmp: np.ndarray,
              flags: np.ndarray) -> np.ndarray:
        """Screening distances of the query rows ``rows`` to every reference record."""
        out[:] = 0
        q = self.q[rows]
        for j in range(self.n_num):
            np.subtract(q[:, j, None], self.rT[j], out=tmp)
            np.abs(tmp, out=tmp)
            if self.cap:
                np.minimum(tmp, 1.0, out=tmp)
            if j in self.nan_cols:  # one missing: 1; both missing: 0
                np.isnan(tmp, out=flags)
                tmp[flags] = 1.0
                qn, rn = self.q_nan[rows, j], self.r_nan[j]
                if qn.any() and rn.any():
                    tmp[np.ix_(qn, rn)] = 0.0
            out += tmp
        qcat = self.qcat[rows]
        for j in range(self.n_cat):
            np.not_equal(qcat[:, j, None], self.rcatT[j], out=flags)
            out += flags
        return out


def _absmax(a: np.ndarray) -> float:
    finite = np.abs(a[~np.isnan(a)])
    return float(finite.max()) if finite.size else 0.0


def nearest(query: Encoded, reference: Encoded, k: int = 1, cap: bool = False,
            order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices and distances of the ``k`` nearest reference records of each query record.

    Ties are broken by the position in ``order`` (a permutation of the reference rows; default
    their own order): among equally distant records the one listed first wins. Rows of the
    result are sorted by distance.

    Exhaustive and exact, in two passes per block of query rows (a block's matrix holds
    :data:`BLOCK_CELLS` numbers, so memory is bounded and the block stays in cache): a float32
    screening pass keeps, for each query record, the reference records within the screening
    error bound of its k-th smallest screening distance; their float64 distances (those of
    :func:`distances`, bitwise) decide. The result equals a float64 exhaustive search.
    """
    n = len(reference)
    if n < k:
        raise DataError(f"{k} nearest neighbours asked of {n} reference records")
    rank = None
    if order is not None:
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
    idx = np.empty((len(query), k), dtype=np.int64)
    dist = np.empty((len(query), k))
    if len(query) == 0:
        return idx, dist
    screen = _Screen(query, reference, cap)
    step = max(1, BLOCK_CELLS // n)
    dtype = np.float64 if screen.exact else np.float32
    out, tmp = np.empty((step, n), dtype), np.empty((step, n), dtype)
    flags = np.empty((step, n), dtype=bool)
    for start in range(0, len(query), step):
        rows = slice(start, min(start + step, len(query)))
        m = rows.stop - rows.start
        d = screen.block(rows, out[:m], tmp[:m], flags[:m])
        kth = np.partition(d, k - 1, axis=1)[:, k - 1] if k < n else d.max(axis=1)
        limit = (kth.astype(np.float64) + screen.eps).astype(dtype)
        if screen.eps:
            limit = np.nextafter(limit, np.inf)
        qi, pos = np.nonzero(np.less_equal(d, limit[:, None], out=flags[:m]))
        exact = pair_distances(query.take(qi + start), reference.take(pos), cap)
        sort = np.lexsort((pos if rank is None else rank[pos], exact, qi))
        first = np.searchsorted(qi[sort], np.arange(m))
        take = sort[first[:, None] + np.arange(k)]
        idx[rows], dist[rows] = pos[take], exact[take]
    return idx, dist


def nearest_distances(query: Encoded, reference: Encoded, k: int = 1,
                      cap: bool = False) -> np.ndarray:
    """The ``k`` smallest distances (sorted) from each query record to the reference."""
    return nearest(query, reference, k, cap)[1]
