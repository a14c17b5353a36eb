"""Mixed-type nearest-neighbour search: vectorised, chunked brute force over encoded records.

Records are encoded once (:func:`encode`): numeric columns (datetimes as seconds) as floats
divided by a range, every other column (text, categories, booleans) as integer codes shared by
all encoded frames. The distance between two records is a sum over columns:

- numeric: ``|x − y| / R`` (``cap=True``: ``min(|x − y| / R, 1)``);
- categorical: 0 if equal, 1 if not;
- missing values: 0 when both are missing, 1 when one is.

A numeric column that is constant where its range is taken (R = 0) is compared as a category
(0 if equal, 1 if not). :func:`nearest` returns, for each query record, the ``k`` nearest
reference records and their distances; the query side is processed in chunks so that a chunk's
distance matrix holds at most :data:`CHUNK_ELEMENTS` numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from anoneval.core.api import DataError

#: Elements of one chunk's query × reference distance matrix (32 MB of float64).
CHUNK_ELEMENTS = 1 << 22


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
    """The ``len(query) × len(reference)`` matrix of summed column distances."""
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


def chunks(n_query: int, n_reference: int) -> list[slice]:
    """Query-row slices whose distance matrices fit :data:`CHUNK_ELEMENTS`."""
    step = max(1, CHUNK_ELEMENTS // max(n_reference, 1))
    return [slice(i, min(i + step, n_query)) for i in range(0, n_query, step)]


def nearest(query: Encoded, reference: Encoded, k: int = 1, cap: bool = False,
            order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices and distances of the ``k`` nearest reference records of each query record.

    Ties are broken by the position in ``order`` (a permutation of the reference rows; default
    their own order): among equally distant records the one listed first wins. Rows of the
    result are sorted by distance.
    """
    n = len(reference)
    if n < k:
        raise DataError(f"{k} nearest neighbours asked of {n} reference records")
    ref = reference if order is None else reference.take(order)
    idx = np.empty((len(query), k), dtype=np.int64)
    dist = np.empty((len(query), k))
    for sl in chunks(len(query), n):
        d = distances(query.take(np.arange(sl.start, sl.stop)), ref, cap)
        if k == 1:
            pos = np.argmin(d, axis=1)[:, None]  # first occurrence: lowest position
        else:
            kth = np.partition(d, k - 1, axis=1)[:, k - 1:k]
            less = d < kth
            equal = d == kth
            room = k - less.sum(axis=1, keepdims=True)
            take = less | (equal & (np.cumsum(equal, axis=1) <= room))
            pos = np.nonzero(take)[1].reshape(-1, k)
            vals = np.take_along_axis(d, pos, axis=1)
            pos = np.take_along_axis(pos, np.argsort(vals, axis=1, kind="stable"), axis=1)
        dist[sl] = np.take_along_axis(d, pos, axis=1)
        idx[sl] = pos if order is None else order[pos]
    return idx, dist


def nearest_distances(query: Encoded, reference: Encoded, k: int = 1,
                      cap: bool = False) -> np.ndarray:
    """The ``k`` smallest distances (sorted) from each query record to the reference."""
    if len(reference) < k:
        raise DataError(f"{k} nearest neighbours asked of {len(reference)} reference records")
    out = np.empty((len(query), k))
    for sl in chunks(len(query), len(reference)):
        d = distances(query.take(np.arange(sl.start, sl.stop)), reference, cap)
        part = np.partition(d, k - 1, axis=1)[:, :k] if k < d.shape[1] else d
        out[sl] = np.sort(part, axis=1)[:, :k]
    return out
