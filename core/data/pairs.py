"""Records of the original and the anonymized data paired, in memory or partition by partition.

A measure that compares each original record with its released version (``Measure.paired``)
reads *paired frames*: the columns ``("original", c)`` and ``("anonymized", c)`` of the
columns it declares, one row per original record, and ``("deleted", "")``, true for an
original record that has no partner. Records pair by row order (equal row counts), or by a key
column (:func:`align_ids`: unique on both sides; every anonymized key must be an original one;
original records whose key is absent are *deleted*, their anonymized cells missing).

On partitioned data (:func:`paired_reduce`) the partial of each paired block is computed on
the workers: by row order, each original partition is paired with the rows at the same
positions of the anonymized partitions (sliced across their boundaries when the files split
the rows differently); by key, both sides are merged on the key with ``dask.dataframe.merge``
(a shuffle), after checking the keys partition-wise.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from anoneval.core.data.kinds import Dataset, FrameData, data_row
from anoneval.core.errors import DataError

T = TypeVar("T")
DELETED = ("deleted", "")


def row_count_error(original: int, anonymized: int) -> DataError:
    """The error for sides of different lengths paired by row order."""
    return DataError(f"the original has {original} rows and the anonymized data {anonymized}: "
                     "records must be row-aligned, or give 'id' (a key column present in both) "
                     "to align them")


def _shown(value: Any) -> Any:
    """A value as a message shows it (numpy scalars as the Python values they hold)."""
    return value.item() if isinstance(value, np.generic) else value


def _duplicate_error(ids: pd.Series, id_col: str, side: str) -> DataError | None:
    dup = ids.duplicated()
    if not dup.any():
        return None
    row = int(np.flatnonzero(dup.to_numpy())[0])
    return DataError(f"id column {id_col!r} of the {side} data has duplicates, e.g. "
                     f"{_shown(ids.iloc[row])!r} ({data_row(row)})")


def align_ids(original: pd.Series, anonymized: pd.Series, id_col: str) -> np.ndarray:
    """Row of ``anonymized`` for each value of ``original`` (-1: absent, a deleted record);
    an error names a duplicate key or an anonymized key the original lacks."""
    for side, ids in (("original", original), ("anonymized", anonymized)):
        error = _duplicate_error(ids, id_col, side)
        if error is not None:
            raise error
    pos = pd.Index(original).get_indexer(anonymized)
    if (pos < 0).any():
        row = int(np.flatnonzero(pos < 0)[0])
        raise DataError(f"id {_shown(anonymized.iloc[row])!r} (anonymized {data_row(row)}) is "
                        f"not in the original's column {id_col!r}")
    take = np.full(len(original), -1, dtype=np.int64)
    take[pos] = np.arange(len(anonymized))
    return take


def paired_frame(original: pd.DataFrame, anonymized: pd.DataFrame,
                 deleted: np.ndarray | None = None, start: int = 0) -> pd.DataFrame:
    """The paired frame of two row-aligned blocks; its index numbers the original's rows from
    ``start``."""
    frame = pd.concat({"original": original.reset_index(drop=True),
                       "anonymized": anonymized.reset_index(drop=True)}, axis=1)
    if frame.columns.nlevels != 2:  # no column on either side
        frame = pd.DataFrame(index=pd.RangeIndex(len(original)),
                             columns=pd.MultiIndex.from_tuples([], names=[None, None]))
    frame[DELETED] = np.zeros(len(original), bool) if deleted is None else deleted
    frame.index = pd.RangeIndex(start, start + len(frame))
    return frame


def pair_datasets(original: FrameData, anonymized: FrameData, columns: Mapping[str, Any],
                  key: str | None) -> pd.DataFrame:
    """The paired frame of two in-memory datasets (``columns[side]``: that side's columns)."""
    cols = {side: list(columns.get(side, ())) for side in ("original", "anonymized")}
    original.require(cols["original"])
    anonymized.require(cols["anonymized"])
    of, af = original.frame[cols["original"]], anonymized.frame[cols["anonymized"]]
    if key is None:
        if len(of) != len(af):
            raise row_count_error(len(of), len(af))
        return paired_frame(of, af)
    original.require([key], "id column")
    anonymized.require([key], "id column")
    take = align_ids(original.frame[key], anonymized.frame[key], key)
    deleted = take < 0
    rows = (af.iloc[np.maximum(take, 0)] if len(af) else af.reindex(range(len(take)))
            ).reset_index(drop=True)
    if deleted.any():
        rows = rows.where(pd.Series(~deleted), axis=0)
    return paired_frame(of, rows, deleted)


# -- partitioned ------------------------------------------------------------------------------


def _pieces(data: Dataset, columns: Collection[str]) -> tuple[list[Any], list[int]]:
    """The blocks of ``data`` (delayed partitions, or the one in-memory frame) and their rows."""
    from anoneval.core.data.partitioned import Partitioned

    if isinstance(data, Partitioned):
        return list(data.frame(columns).to_delayed()), list(data.partition_rows)
    if not isinstance(data, FrameData):
        raise DataError(f"records are paired in microdata or tables, not {data.data_kind}")
    data.require(list(columns))
    return [data.frame[list(columns)]], [len(data)]


def _spans(left: Sequence[int], right: Sequence[int]) -> list[list[tuple[int, int, int]]]:
    """For each block of ``left``, the ``(block, lo, hi)`` slices of ``right`` holding the rows
    at the same positions."""
    ends = np.cumsum(right)
    starts = ends - np.asarray(right)
    out, start = [], 0
    for n in left:
        stop = start + n
        out.append([(j, max(start - int(s), 0), min(stop, int(e)) - int(s))
                    for j, (s, e) in enumerate(zip(starts, ends, strict=True))
                    if s < stop and e > start and e > s])
        start = stop
    return out


def _order_piece(partial: Callable[[pd.DataFrame], T], start: int, original: pd.DataFrame,
                 slices: list[tuple[pd.DataFrame, int, int]]) -> T:
    """``partial`` of one original block paired with the same rows of the anonymized data."""
    parts = [frame.iloc[lo:hi] for frame, lo, hi in slices]
    anonymized = (parts[0] if len(parts) == 1 else pd.concat(parts) if parts
                  else original.iloc[:0, :0])
    return partial(paired_frame(original, anonymized, None, start))


def _keys_piece(partial: Callable[[pd.DataFrame], T], names: dict[str, list[str]], key: str,
                merged: pd.DataFrame) -> tuple[T, Any]:
    """``partial`` of one block of the sides merged on the key, and an anonymized key absent
    from the original (None when there is none)."""
    strays = merged["_merge"] == "right_only"
    stray = merged.loc[strays, f"a:{key}"].iloc[0] if strays.any() else None
    return partial(_keys_frame(names, merged[~strays])), stray


def _keys_frame(names: dict[str, list[str]], merged: pd.DataFrame) -> pd.DataFrame:
    """The paired frame of a block of the sides merged on the key (no stray key left)."""
    deleted = (merged["_merge"] == "left_only").to_numpy()
    original = merged[[f"o:{c}" for c in names["original"]]]
    anonymized = merged[[f"a:{c}" for c in names["anonymized"]]]
    original.columns, anonymized.columns = names["original"], names["anonymized"]
    return paired_frame(original, anonymized, deleted)


def _keys_combine(combine: Callable[[list[T]], T], parts: list[tuple[T, Any]]) -> tuple[T, Any]:
    return combine([p for p, _ in parts]), next((s for _, s in parts if s is not None), None)


def _empty(data: Dataset, columns: list[str]) -> pd.DataFrame:
    """The empty frame of a side's blocks as :func:`_pieces` reads them."""
    from anoneval.core.data.partitioned import Partitioned

    if isinstance(data, Partitioned):
        return data.frame(columns)._meta
    assert isinstance(data, FrameData)  # _pieces checked it
    return data.frame[list(columns)].iloc[:0]


def _lazy(data: Dataset, columns: list[str]) -> Any:
    """A side as a ``dask.dataframe`` of ``columns``."""
    import dask.dataframe as dd

    from anoneval.core.data.partitioned import Partitioned

    if isinstance(data, Partitioned):
        return data.frame(columns)
    if not isinstance(data, FrameData):
        raise DataError(f"records are paired in microdata or tables, not {data.data_kind}")
    data.require(columns)
    return dd.from_pandas(data.frame[columns], npartitions=1)


def paired_pieces(original: Dataset, anonymized: Dataset, columns: Mapping[str, Any],
                  key: str | None, piece: Callable[[pd.DataFrame], T]
                  ) -> tuple[list[Any], Callable[..., Any], Any]:
    """Delayed ``piece`` of every paired block of the two sides (either may be in memory),
    the partitioned side's compute, and the empty paired frame (``piece`` of it gives the
    pieces' meta). By key, each piece is ``(piece(block), stray)``: an anonymized key absent
    from the original found in that block, or None (see :func:`no_stray`)."""
    from dask import delayed

    from anoneval.core.data.partitioned import Partitioned

    lazy_side = next(d for d in (original, anonymized) if isinstance(d, Partitioned))
    compute = lazy_side._compute
    cols = {side: list(dict.fromkeys(columns.get(side, ()))) for side in
            ("original", "anonymized")}
    if key is None:
        left, left_rows = _pieces(original, cols["original"])
        right, right_rows = _pieces(anonymized, cols["anonymized"])
        if sum(left_rows) != sum(right_rows):
            raise row_count_error(sum(left_rows), sum(right_rows))
        starts = np.concatenate([[0], np.cumsum(left_rows)[:-1]]).astype(int)
        parts = [delayed(_order_piece)(piece, int(start), block,
                                       [(right[j], lo, hi) for j, lo, hi in spans])
                 for block, start, spans in zip(left, starts, _spans(left_rows, right_rows),
                                                strict=True)]
        empty = paired_frame(_empty(original, cols["original"]),
                             _empty(anonymized, cols["anonymized"]))
        return parts, compute, empty
    sides = {}
    for side, data, prefix in (("original", original, "o:"), ("anonymized", anonymized, "a:")):
        frame = _lazy(data, [*cols[side], *([key] if key not in cols[side] else [])])
        renamed = frame.rename(columns={c: f"{prefix}{c}" for c in frame.columns})
        sides[side] = (frame[key].value_counts(dropna=False),
                       renamed.assign(_key=renamed[f"{prefix}{key}"]))
    for side, counts in zip(sides, compute(*(c for c, _ in sides.values())), strict=True):
        dup = counts[counts > 1]
        if len(dup):
            raise DataError(f"id column {key!r} of the {side} data has duplicates, e.g. "
                            f"{_shown(dup.index[0])!r} ({int(dup.iloc[0])} rows)")
    merged = sides["original"][1].merge(sides["anonymized"][1], on="_key", how="outer",
                                        indicator=True)
    parts = [delayed(_keys_piece)(piece, cols, key, block) for block in merged.to_delayed()]
    empty = _keys_frame(cols, merged._meta)
    return parts, compute, empty


def no_stray(found: tuple[T, Any], key: str) -> T:
    """The result of a piece paired by ``key``; an error when its block held an anonymized key
    that the original lacks."""
    result, stray = found
    if stray is not None:
        raise _stray_error(stray, key)
    return result


def _stray_error(stray: Any, key: str) -> DataError:
    return DataError(f"id {_shown(stray)!r} of the anonymized data is not in the original's "
                     f"column {key!r}")


def paired_reduce(original: Dataset, anonymized: Dataset, columns: Mapping[str, Any],
                  key: str | None, partial: Callable[[pd.DataFrame], T],
                  combine: Callable[[list[T]], T]) -> T:
    """``combine`` of ``partial`` of every paired block of the two sides (either may be in
    memory), as a tree on the cluster the partitioned side is attached to."""
    import functools

    from anoneval.core.data.partitioned import _tree

    parts, compute, _ = paired_pieces(original, anonymized, columns, key, partial)
    if key is None:
        return compute(_tree(parts, combine))[0]  # type: ignore[no-any-return]
    result, stray = compute(_tree(parts, functools.partial(_keys_combine, combine)))[0]
    if stray is not None:
        raise _stray_error(stray, key)
    return result  # type: ignore[no-any-return]


__all__ = ["DELETED", "align_ids", "no_stray", "pair_datasets", "paired_frame", "paired_pieces",
           "paired_reduce", "row_count_error"]
