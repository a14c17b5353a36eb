"""Data kinds and their loaders.

Measures reach data only through these objects, so that another backend (e.g. Dask) can feed the
group-by measures by overriding :meth:`Microdata.group_ids` and friends without changing them.
Every derived array is cached on the object: an evaluator reused over many anonymized variants
computes the original's once. Inputs are never modified: measures must not mutate ``frame``.
"""

from __future__ import annotations

import codecs
import copy
import csv
import hashlib
import io
import itertools
import json
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
import pandas as pd
from pandas.core.util.hashing import combine_hash_arrays
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from anoneval.core.data.duplicates import repeated
from anoneval.core.data.files import regular_file
from anoneval.core.data.given import input_hash, remembered
from anoneval.core.data.memory import MEMORY_HINT, available_memory, human_bytes
from anoneval.core.data.objects import distinct_objects, factorize_objects
from anoneval.core.data.sources import Source, locate, type_partitions, with_partitions
from anoneval.core.errors import DataError

T = TypeVar("T")
FORMATS = ("csv", "parquet", "jsonl")
#: The data kinds, which are also the ``kind`` of an input in a config.
DataKind = Literal["microdata", "table", "trajectories"]
DATA_KINDS: tuple[DataKind, ...] = ("microdata", "table", "trajectories")
DEFAULT_TIMESTAMP_FORMAT = "%Y/%m/%d %H:%M:%S"
SEPARATORS = (",", ";", "\t", "|", "/")
DTYPE_HINT = ("; an anonymized side takes the original's dtype unless its own options set "
              '"dtype" (null for none)')
#: Columns listed at most in an error naming a missing one (a wide file has thousands).
LIST_COLUMNS = 100
TRAJECTORY_ROLES = ("user_id", "trajectory_id", "timestamp", "lon", "lat")
#: Epoch seconds a timestamp may take: the range of pandas' nanosecond timestamps.
EPOCH_RANGE = (-(2**63 - 1) // 10**9 + 1, (2**63 - 1) // 10**9)


def data_row(i: int) -> str:
    """How messages name the record at 0-based position ``i``: 1-based, header not counted."""
    return f"data row {i + 1} (1-based, header not counted)"


def refuse_infinite(values: np.ndarray, where: str, why: str) -> None:
    """Raise a :class:`DataError` when ``values`` (floats, by row) hold ±inf: ``where`` names
    the column and side, ``why`` what needs finite numbers; the first such row is named."""
    inf = np.flatnonzero(np.isinf(values))
    if len(inf):
        raise DataError(f"{where} holds {len(inf):,} infinite value(s), the first at "
                        f"{data_row(inf[0])}; {why}")


def _frozen(value: T) -> T:
    """Make cached numpy arrays (alone or in a tuple) read-only: every measure shares them."""
    for array in value if isinstance(value, tuple) else (value,):
        if isinstance(array, np.ndarray):
            array.flags.writeable = False
    return value


class Dataset:
    """Base of the data kinds: row count, content hash, a cache for derived arrays."""

    data_kind: ClassVar[DataKind]

    def __init__(self, source: str | None = None) -> None:
        self.source = source
        self._cache: dict[Any, Any] = {}

    def __len__(self) -> int:
        raise NotImplementedError

    def cached(self, key: Any, compute: Callable[[], T]) -> T:
        """Return ``compute()``, computed once per dataset object and ``key``; arrays it returns
        (alone or in a tuple) are made read-only, as every measure shares them."""
        try:
            return self._cache[key]  # type: ignore[no-any-return]
        except KeyError:
            value = self._cache[key] = _frozen(compute())
            return value

    def __copy__(self) -> Dataset:
        """A shallow copy that shares the cache (a view: see ``evaluator.read_only``)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to ship to a worker) without the derived arrays: they are recomputed."""
        return {**self.__dict__, "_cache": {}}

    def _hash_parts(self) -> list[bytes]:
        raise NotImplementedError

    def content_hash(self) -> str:
        """SHA-256 of the content (values, column names and types), independent of the file."""

        def compute() -> str:
            h = hashlib.sha256()
            for part in self._hash_parts():
                h.update(part)
            return "sha256:" + h.hexdigest()

        return self.cached(("content_hash",), compute)

    def value_kinds(self, columns: Collection[str] | None = None) -> dict[str, str] | None:
        """Each column's kind of values (see :func:`unify_kinds`), of ``columns`` only when
        given (the others are not surveyed); None for data without columns, which is read as
        it is."""
        return None

    def value_surveys(self, columns: Sequence[str]) -> dict[str, ValueSurvey]:
        """The :class:`ValueSurvey` of each of ``columns``."""
        raise NotImplementedError

    def column_dtype(self, column: str) -> Any:
        """The dtype a column is read as."""
        raise NotImplementedError

    def converted(self, conversions: dict[str, Conversion]) -> Dataset:
        """A copy of this dataset with ``conversions`` applied to their columns."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """What the report says about this input; the hash is computed when first read (an
        :class:`~anoneval.core.data.given.InputHash`)."""
        return {"kind": self.data_kind, "path": self.source, "rows": len(self),
                "hash": input_hash(self)}


def require_columns(data: Dataset, present: Collection[Any], columns: Collection[str],
                    role: str = "column") -> None:
    """Raise a :class:`DataError` naming every column of ``columns`` not ``present`` in
    ``data`` and listing the present ones."""
    missing = [c for c in columns if c not in present]
    if missing:
        what = role if len(missing) == 1 else role + "s"
        shown = [str(c) for c in itertools.islice(present, LIST_COLUMNS)]
        more = len(present) - len(shown)
        raise DataError(
            f"{what} {', '.join(map(repr, missing))} not in the {data.data_kind}"
            f"{f' ({data.source})' if data.source else ''}; its columns are: "
            f"{', '.join(shown)}{f' and {more:,} more' if more > 0 else ''}"
        )


class FrameData(Dataset):
    """Base of the data kinds held in one DataFrame (:class:`Microdata`, :class:`Table`).

    Column names are strings, as configs and params give them: other labels (e.g. the integers
    of a frame made from an array) are converted with ``str``; duplicate names are an error.
    """

    def __init__(self, frame: pd.DataFrame, source: str | None = None) -> None:
        super().__init__(source)
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{self.data_kind} needs a pandas DataFrame, "
                            f"got {type(frame).__name__}")
        if isinstance(frame.columns, pd.MultiIndex):
            raise DataError("the columns have several levels (a pandas MultiIndex); give each "
                            "column one name, e.g. frame.columns = ['_'.join(map(str, c)) for c "
                            "in frame.columns]")
        if not all(isinstance(c, str) for c in frame.columns):
            frame = frame.rename(columns=str)  # configs and params name columns by strings
        if frame.columns.duplicated().any():
            dup = sorted(map(str, frame.columns[frame.columns.duplicated()].unique()))
            raise DataError(f"duplicate column name{'s' if len(dup) > 1 else ''} "
                            f"{', '.join(map(repr, dup))}{f' in {source}' if source else ''}; "
                            "every column needs a distinct name")
        self._frame = frame

    def with_columns(self, columns: dict[str, pd.Series]) -> FrameData:
        """A copy of this dataset (same kind and metadata) with some columns replaced."""
        new = copy.copy(self)
        new._frame = self._frame.assign(**columns)
        new._cache = {}
        return new

    @property
    def frame(self) -> pd.DataFrame:
        """The records. Read only: measures must not modify it."""
        return self._frame

    @property
    def dtypes(self) -> Mapping[str, Any]:
        """Each column's dtype (read-only), once per dataset: ``frame.dtypes`` builds a Series
        at every call (tens of microseconds, a dozen calls per evaluation)."""
        def compute() -> Mapping[str, Any]:
            try:  # the block manager's, in column order: no Series (a tenth of the time)
                dtypes = self._frame._mgr.get_dtypes()
            except AttributeError:  # pragma: no cover - a pandas without the block manager
                dtypes = self._frame.dtypes
            return MappingProxyType(dict(zip(self._frame.columns, dtypes, strict=True)))

        return self.cached(("dtypes",), compute)

    def value_kinds(self, columns: Collection[str] | None = None) -> dict[str, str]:
        # a plain numpy numeric or boolean column is told by its dtype, without a Series per
        # column (a wide file has thousands); an object column by a scan, so only when read
        return {c: _DTYPE_KINDS[dtype.kind] if isinstance(dtype, np.dtype)
                and dtype.kind in _DTYPE_KINDS else _kind(self, c)
                for c, dtype in self.dtypes.items() if _within(c, columns)}

    def value_surveys(self, columns: Sequence[str]) -> dict[str, ValueSurvey]:
        # an object column that repeats its objects is surveyed on those (the same types and
        # values, a missing one among them when any is missing)
        def survey(column: str) -> ValueSurvey:
            objects = self.distinct_objects(column)
            return ValueSurvey.of_values(self._frame[column] if objects is None
                                         else pd.Series(objects, dtype=object))

        return {c: self.cached(("value_survey", c), lambda c=c: survey(c)) for c in columns}

    def column_dtype(self, column: str) -> Any:
        return self._frame[column].dtype

    def converted(self, conversions: dict[str, Conversion]) -> FrameData:
        return self.with_columns({c: conv.apply(self._frame[c])
                                  for c, conv in conversions.items()})

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self._frame.columns]

    def __len__(self) -> int:
        return len(self._frame)

    def require(self, columns: Sequence[str], role: str = "column") -> None:
        """Raise a :class:`DataError` naming every missing column and listing the present ones."""
        require_columns(self, self._frame.columns, columns, role)

    def codes(self, column: str) -> tuple[np.ndarray, pd.Index]:
        """Integer codes of a column's values and the values (missing values get a code)."""

        def compute() -> tuple[np.ndarray, pd.Index]:
            self.require([column])
            # the default NA sentinel is much faster on text than use_na_sentinel=False;
            # missing values then get the next code; text by its distinct objects
            values = self._frame[column]
            if values.dtype == object:
                codes, uniques = factorize_objects(values.to_numpy(),
                                                   self.distinct_objects(column))
            else:
                codes, uniques = pd.factorize(values)
            codes = codes.astype(np.int64, copy=False)
            missing = codes < 0
            if missing.any():
                codes[missing] = len(uniques)
                uniques = np.append(np.asarray(uniques, dtype=object), None)
            return codes, pd.Index(uniques)

        return self.cached(("codes", column), compute)

    def distinct_objects(self, column: str) -> np.ndarray | None:
        """The distinct objects of an object column in order of first appearance, once per
        dataset (see :mod:`~anoneval.core.data.objects`): its kinds of values, distinct values
        and codes are read from them. None when the column is not of object dtype or its
        cells are mostly distinct objects."""

        def compute() -> np.ndarray | None:
            values = self._frame[column]
            return distinct_objects(values.to_numpy()) if values.dtype == object else None

        return self.cached(("distinct_objects", column), compute)

    def distinct(self, column: str) -> Any:
        """The distinct present values of a column in order of first appearance (missing
        values dropped; a numpy or pandas array, as ``pd.unique`` gives them), once per
        dataset."""

        def compute() -> Any:
            self.require([column])
            objects = self.distinct_objects(column)
            values = self._frame[column]
            unique = pd.unique(values.to_numpy() if objects is None and values.dtype == object
                               else values if objects is None else objects)
            return unique[~pd.isna(unique)] if len(unique) else unique

        return self.cached(("distinct", column), compute)

    def group_ids(self, columns: Sequence[str]) -> tuple[np.ndarray, int]:
        """Dense group index of each row over ``columns`` (equal tuples share an id).

        Missing values form a group value of their own. Ids follow the sorted order of the
        combined column codes, so they are deterministic for a given row order.
        """
        columns = tuple(columns)

        def compute() -> tuple[np.ndarray, int]:
            self.require(columns)
            n = len(self._frame)
            if not columns:
                return np.zeros(n, dtype=np.int64), 1 if n else 0
            key = np.zeros(n, dtype=np.int64)
            size = 1
            for col in columns:
                codes, uniques = self.codes(col)
                card = max(len(uniques), 1)
                if size * card >= 2**62:  # re-densify before the combined key could overflow
                    key, uniq = pd.factorize(key, sort=True)
                    size = max(len(uniq), 1)
                key = key * card + codes
                size *= card
            # factorize(sort=True) gives np.unique's inverse, several times faster
            inverse, uniq = pd.factorize(key, sort=True)
            return inverse.astype(np.int64, copy=False), len(uniq)

        return self.cached(("group_ids", columns), compute)

    def group_sizes(self, columns: Sequence[str]) -> np.ndarray:
        """Size of each group of :meth:`group_ids` (indexed by group id)."""
        columns = tuple(columns)

        def compute() -> np.ndarray:
            ids, n_groups = self.group_ids(columns)
            return np.bincount(ids, minlength=n_groups)

        return self.cached(("group_sizes", columns), compute)

    def _hash_parts(self) -> list[bytes]:
        f = self._frame
        head = repr([(str(c), str(t)) for c, t in zip(f.columns, f.dtypes, strict=False)]).encode()
        if not len(f):
            return [head, b""]
        # pandas.util.hash_pandas_object(f, index=False), reusing the codes measures cached;
        # numeric columns hashed a dtype at a time (a wide frame has thousands of them)
        numeric = self._numeric_hashes()
        values = combine_hash_arrays(
            (numeric[i] if i in numeric else self._column_hash(c)
             for i, c in enumerate(f.columns)), len(f.columns))
        return [head, values.tobytes()]

    def _numeric_hashes(self) -> dict[int, np.ndarray]:
        """pandas' hash of the values of every plain numpy numeric or boolean column, by
        position: one :func:`pandas.util.hash_array` call per dtype (elementwise for these
        dtypes, so hashing the columns together gives each column's own hashes)."""
        f = self._frame
        by_dtype: dict[np.dtype, list[int]] = {}
        for i, dtype in enumerate(f.dtypes):
            if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
                by_dtype.setdefault(dtype, []).append(i)
        out: dict[int, np.ndarray] = {}
        for dtype, positions in by_dtype.items():
            block = np.ascontiguousarray(f.iloc[:, positions].to_numpy(dtype=dtype).T)
            hashed = pd.util.hash_array(block.ravel(), categorize=False).reshape(block.shape)
            out.update(zip(positions, hashed, strict=True))
        return out

    def _column_hash(self, column: str) -> np.ndarray:
        """pandas' hash of each value of ``column``; an object column is hashed per distinct
        value, as pandas does after factorizing it: from the codes measures cached, else
        factorized by its distinct objects (nothing cached: a column no measure read)."""
        series = self._frame[column]
        if series.dtype != object:
            return pd.util.hash_pandas_object(series, index=False).to_numpy()
        cached = self._cache.get(("codes", column))
        if cached is not None:
            codes, uniques = cached
            values = np.asarray(uniques, dtype=object)
            real = len(values) - (1 if len(values) and values[-1] is None else 0)  # None: NA
        elif ("sorted_codes", column) in self._cache:  # summary.column_codes: NA coded last
            codes, uniques = self._cache[("sorted_codes", column)]
            values = np.asarray(uniques, dtype=object)
            real = len(values)
        else:  # missing values coded -1
            codes, values = factorize_objects(series.to_numpy())
            real = len(values)
            codes = np.where(codes < 0, real, codes)
        out = np.full(len(codes), np.iinfo(np.uint64).max, dtype=np.uint64)
        known = codes < real
        out[known] = pd.util.hash_array(values[:real], categorize=False)[codes[known]]
        return out


class Microdata(FrameData):
    """Records in a DataFrame, one row per person (or unit)."""

    data_kind: ClassVar[DataKind] = "microdata"


class Table(FrameData):
    """A ready frequency or magnitude table: one row per cell.

    ``keys`` are the spanning variables; ``count`` the number of units (contributors) in a cell;
    ``total`` the cell's magnitude total; ``contributions`` the columns holding the largest
    contributions, largest first.
    """

    data_kind: ClassVar[DataKind] = "table"

    def __init__(
        self,
        frame: pd.DataFrame,
        keys: Sequence[str] | None = None,
        count: str | None = None,
        total: str | None = None,
        contributions: Sequence[str] = (),
        source: str | None = None,
    ) -> None:
        super().__init__(frame, source)
        self.keys = list(keys) if keys is not None else None
        self.count = count
        self.total = total
        self.contributions = list(contributions)
        self.require([*(self.keys or []), *([count] if count else []),
                      *([total] if total else []), *self.contributions], "table column")


class Trajectories(Dataset):
    """Trajectories stored columnar: point arrays plus per-trajectory offsets.

    Points of trajectory ``i`` are ``offsets[i]:offsets[i+1]`` of ``lon``, ``lat`` and ``t``
    (epoch seconds, UTC), sorted by time. Trajectories are sorted by id. ``dropped_points`` and
    ``dropped_trajectories`` count what the loader removed for invalid coordinates;
    ``several_users`` the trajectories whose points name more than one user (each keeps the
    user of its first point).
    """

    data_kind: ClassVar[DataKind] = "trajectories"

    def __init__(
        self,
        trajectory_id: np.ndarray,
        user_id: np.ndarray,
        offsets: np.ndarray,
        lon: np.ndarray,
        lat: np.ndarray,
        t: np.ndarray,
        source: str | None = None,
        dropped_points: int = 0,
        dropped_trajectories: int = 0,
        several_users: int = 0,
    ) -> None:
        super().__init__(source)
        self.trajectory_id = np.asarray(trajectory_id)
        self.user_id = np.asarray(user_id)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.lon = np.asarray(lon, dtype=np.float64)
        self.lat = np.asarray(lat, dtype=np.float64)
        self.t = np.asarray(t, dtype=np.int64)
        self.dropped_points = dropped_points
        self.dropped_trajectories = dropped_trajectories
        self.several_users = several_users
        n = len(self.trajectory_id)
        if len(self.offsets) != n + 1 or len(self.user_id) != n:
            raise ValueError("offsets must have one more entry than there are trajectories")
        if not (len(self.lon) == len(self.lat) == len(self.t) == self.offsets[-1]):
            raise ValueError("lon, lat and t must have offsets[-1] points")

    def __len__(self) -> int:
        return len(self.trajectory_id)

    @property
    def lengths(self) -> np.ndarray:
        """Number of points of each trajectory."""
        return np.diff(self.offsets)

    @property
    def n_points(self) -> int:
        return int(self.offsets[-1])

    def points(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(lon, lat, t)`` of trajectory ``i``."""
        s = slice(self.offsets[i], self.offsets[i + 1])
        return self.lon[s], self.lat[s], self.t[s]

    def index_of(self, trajectory_ids: Sequence[Any]) -> np.ndarray:
        """Positions of the given trajectory ids (-1 where absent, e.g. ids of another type)."""
        index = self.cached(("id_index",), lambda: pd.Index(self.trajectory_id))
        return index.get_indexer(pd.Index(np.asarray(trajectory_ids))).astype(np.int64)

    def subset(self, index: Sequence[int] | np.ndarray) -> Trajectories:
        """The trajectories at positions ``index`` (in that order)."""
        index = np.asarray(index, dtype=np.int64)
        lengths = self.lengths[index]
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        take = (np.repeat(self.offsets[:-1][index] - offsets[:-1], lengths)
                + np.arange(offsets[-1]))
        return Trajectories(self.trajectory_id[index], self.user_id[index], offsets,
                            self.lon[take], self.lat[take], self.t[take], source=self.source)

    def to_frame(self, timestamp_format: str | None = DEFAULT_TIMESTAMP_FORMAT) -> pd.DataFrame:
        """One row per point in the mobility anonymizer's column layout."""
        lengths = self.lengths
        ts: Any = self.t
        if timestamp_format is not None:
            ts = pd.to_datetime(self.t, unit="s", utc=True).strftime(timestamp_format)
        return pd.DataFrame({
            "user_id": np.repeat(self.user_id, lengths),
            "trajectory_id": np.repeat(self.trajectory_id, lengths),
            "timestamp": ts,
            "lon": self.lon,
            "lat": self.lat,
        })

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out.update(points=self.n_points, dropped_points=self.dropped_points,
                   dropped_trajectories=self.dropped_trajectories,
                   trajectories_with_several_users=self.several_users)
        return out

    def _hash_parts(self) -> list[bytes]:
        ids = pd.util.hash_pandas_object(pd.Series(self.trajectory_id), index=False)
        users = pd.util.hash_pandas_object(pd.Series(self.user_id), index=False)
        return [ids.to_numpy().tobytes(), users.to_numpy().tobytes(), self.offsets.tobytes(),
                self.lon.tobytes(), self.lat.tobytes(), self.t.tobytes()]

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        columns: dict[str, str] | None = None,
        timestamp_format: str = DEFAULT_TIMESTAMP_FORMAT,
        invalid: Literal["drop", "drop_trajectory", "error"] = "drop",
        source: str | None = None,
        id_map: str | Path | None = None,
        id_map_role: Literal["trajectory_id", "user_id"] = "trajectory_id",
    ) -> Trajectories:
        """Build from one row per point with columns user_id, trajectory_id, timestamp, lon, lat.

        Column order is free; ``columns`` maps those roles to the frame's names. Timestamps are
        strings in ``timestamp_format`` (UTC unless the format has ``%z``), datetimes, or epoch
        seconds (numbers, or ``timestamp_format="epoch"`` for numbers written as text); they are
        truncated to whole seconds. Points with a missing or non-numeric coordinate, |lat| > 90
        or |lon| > 180 are invalid: ``invalid="drop"`` drops those points,
        ``"drop_trajectory"`` drops every trajectory having one (the mobility anonymizer's
        rule), ``"error"`` raises; dropped points and trajectories are counted
        (``dropped_points``, ``dropped_trajectories``) and shown in the report's inputs.
        Trajectories are sorted by id, points by time (stable: equal times keep file order).
        A trajectory is identified by its id alone (as upstream): one whose points name several
        users keeps the user of its first point and is counted (``several_users``, shown in the
        report's inputs), since ids repeated per user would merge different people's points.
        Unlike the anonymizer's loader, a file need not start with its smallest trajectory id
        (that loader then adds an empty trajectory with a duplicate id).
        """
        where = f"trajectories{f' ({source})' if source else ''}"
        roles = {r: r for r in TRAJECTORY_ROLES}
        unknown = set(columns or {}) - set(roles)
        if unknown:
            raise DataError(f"unknown trajectory column roles {sorted(unknown)}; "
                            f"allowed: {sorted(roles)}")
        roles.update(columns or {})
        missing = [f"{role} (column {name!r})" for role, name in roles.items()
                   if name not in frame.columns]
        if missing:
            raise DataError(f"{where} lack {', '.join(missing)}; columns found: "
                            f"{', '.join(map(str, frame.columns))}; map roles to columns with "
                            "the 'columns' option")
        if id_map is not None:
            frame = frame.assign(**{roles[id_map_role]: relabel(
                frame[roles[id_map_role]], id_map, f"{where}, column {roles[id_map_role]!r}")})
        traj_col = frame[roles["trajectory_id"]]
        if traj_col.isna().any():
            row = int(np.flatnonzero(traj_col.isna().to_numpy())[0])
            raise DataError(f"{where}: {data_row(row)} has no trajectory id in column "
                            f"{roles['trajectory_id']!r}")
        try:
            t = _epoch_seconds(frame[roles["timestamp"]], timestamp_format)
        except DataError as exc:
            raise DataError(f"{where}, column {roles['timestamp']!r}: {exc}") from exc
        lon = pd.to_numeric(frame[roles["lon"]], errors="coerce").to_numpy(np.float64)
        lat = pd.to_numeric(frame[roles["lat"]], errors="coerce").to_numpy(np.float64)
        bad = ~(np.isfinite(lon) & np.isfinite(lat) & (np.abs(lat) <= 90) & (np.abs(lon) <= 180))
        traj = traj_col.to_numpy()
        user = frame[roles["user_id"]].to_numpy()
        if bad.any() and invalid == "error":
            row = int(np.flatnonzero(bad)[0])
            raise DataError(f"{where}: {data_row(row)} has an invalid coordinate "
                            f"lon={_plain(frame[roles['lon']].iloc[row])!r}, "
                            f"lat={_plain(frame[roles['lat']].iloc[row])!r} ({int(bad.sum())} rows "
                            "invalid; allowed |lat| <= 90, |lon| <= 180); use invalid='drop' "
                            "to drop them")
        try:
            codes, uniq = pd.factorize(traj, sort=True)
        except TypeError:  # ids of mixed types: order them as text
            codes, uniq = pd.factorize(traj.astype(str), sort=True)
            traj = traj.astype(str)
        n_traj_before = len(uniq)
        keep = ~bad
        if invalid == "drop_trajectory":
            keep = ~np.isin(codes, codes[bad])
        traj, user, lon, lat, t = traj[keep], user[keep], lon[keep], lat[keep], t[keep]
        tcodes, tuniq = pd.factorize(traj, sort=True)
        order = np.lexsort((t, tcodes))
        tcodes, user, lon, lat, t = tcodes[order], user[order], lon[order], lat[order], t[order]
        counts = np.bincount(tcodes, minlength=len(tuniq))
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        ucodes = pd.factorize(user)[0]  # missing users share the code −1
        switch = (ucodes[1:] != ucodes[:-1]) & (tcodes[1:] == tcodes[:-1])
        return cls(np.asarray(tuniq), user[offsets[:-1]], offsets, lon, lat, t, source=source,
                   dropped_points=int((~keep).sum()),
                   dropped_trajectories=n_traj_before - len(tuniq),
                   several_users=len(np.unique(tcodes[1:][switch])))


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _iso8601(values: pd.Series) -> pd.Series:
    """ISO 8601 timestamps (``2024-05-01T08:30:00Z``, ``...+02:00``, a space for ``T``, with
    or without seconds or fractions); without an offset they are UTC; unreadable ones NaT."""
    text = values.astype("string").str.strip()
    # with or without an offset, parsed apart: pandas reads naive text among offsets wrongly
    aware = text.str.contains(r"\d:\d\d(?::\d\d(?:[.,]\d+)?)?\s*(?:Z|[+-]\d\d(?::?\d\d)?)$",
                              regex=True).fillna(False)
    out = pd.Series(pd.NaT, index=values.index, dtype="datetime64[ns, UTC]")
    for part in (aware, ~aware):
        if part.any():
            out[part] = pd.to_datetime(text[part], format="ISO8601", utc=True, errors="coerce")
    return out


def _epoch_seconds(values: pd.Series, fmt: str) -> np.ndarray:
    """Epoch seconds (int64, UTC, truncated towards −∞) of the timestamp column.

    Numbers (or ``fmt="epoch"``: numbers written as text) are epoch seconds; datetimes are
    taken as they are (naive ones as UTC); ``fmt="iso8601"`` reads ISO 8601 text (any offset;
    UTC without one); anything else is parsed with the strptime ``fmt``. Text that the default
    format reads nowhere but ISO 8601 reads everywhere is read as ISO 8601, with a warning.
    An unparseable or missing value is an error naming the first offending row.
    """

    def fail(bad: np.ndarray, what: str, hint: str = "set the 'timestamp_format' option (a "
             "strptime format, or 'epoch')") -> DataError:
        row = int(np.flatnonzero(bad)[0])
        return DataError(f"{data_row(row)}: cannot read timestamp "
                         f"{_plain(values.iloc[row])!r} {what} ({int(bad.sum())} rows "
                         f"unreadable); {hint}")

    if fmt == "epoch" or pd.api.types.is_numeric_dtype(values):
        out = pd.to_numeric(values, errors="coerce").to_numpy(np.float64)
        if not np.isfinite(out).all():
            raise fail(~np.isfinite(out), "as epoch seconds")
        out = np.floor(out)
        lo, hi = EPOCH_RANGE
        outside = (out < lo) | (out > hi)
        if outside.any():
            raise fail(outside, "as epoch seconds", f"epoch seconds must lie in [{lo}, {hi}] "
                       "(years 1677 to 2262)")
        return out.astype(np.int64)
    if pd.api.types.is_datetime64_any_dtype(values):
        parsed = pd.to_datetime(values, utc=True)
    elif fmt.lower() == "iso8601":
        parsed = _iso8601(values)
    else:
        parsed = pd.to_datetime(values, format=fmt, utc=True, errors="coerce")
        if fmt == DEFAULT_TIMESTAMP_FORMAT and parsed.isna().all():
            iso = _iso8601(values)
            if iso.notna().all():  # ISO 8601 text read with the default format: say so
                warnings.warn(f"timestamps such as {_plain(values.iloc[0])!r} are ISO 8601, "
                              f"not the default format {fmt!r}: read as ISO 8601 (set "
                              "'timestamp_format': 'iso8601' to say so)", stacklevel=2)
                parsed = iso
    bad = parsed.isna().to_numpy()
    if bad.any():
        raise fail(bad, f"with format {fmt!r}")
    delta = (parsed - pd.Timestamp(0, tz="UTC")).to_numpy("timedelta64[ns]")
    return delta.astype(np.int64) // 1_000_000_000  # floor, as Timedelta // 1 s


def relabel(ids: pd.Series, id_map: str | Path, where: str) -> pd.Series:
    """``ids`` relabelled by a two-column CSV (header row): first column the id in this data,
    second the id in the original. Ids are matched as text; the new ids are integers when
    every one is an integer's text. An id missing from the map, or listed twice, is an error."""
    path = Path(id_map)
    regular_file(path, "id_map file")
    table = pd.read_csv(path, dtype=str, keep_default_na=False, sep=None, engine="python")
    if table.shape[1] != 2:
        raise DataError(f"id_map {path}: expected two columns (the id here, the id in the "
                        f"original), found {table.shape[1]}: {', '.join(map(str, table.columns))}")
    here, there = (table.iloc[:, 0], table.iloc[:, 1])
    twice = here[here.duplicated()]
    if len(twice):
        raise DataError(f"id_map {path}: id {twice.iloc[0]!r} is listed twice")
    mapping = pd.Series(there.to_numpy(), index=here.to_numpy())
    as_text = ids.astype("string").fillna("")
    new = as_text.map(mapping)
    missing = new.isna().to_numpy()
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise DataError(f"{where}: {data_row(row)} has id {as_text.iloc[row]!r}, which id_map "
                        f"{path} does not list ({int(missing.sum())} rows)")
    if new.str.fullmatch(r"-?\d{1,18}").all():
        return new.astype("int64")
    return new.astype(object)


# -- loading -------------------------------------------------------------------------------------


class ReadOptions(BaseModel):
    """Options for reading any file; those of a kind extend it."""

    model_config = ConfigDict(extra="forbid")
    sep: str | None = Field(None, description="CSV separator; sniffed from the file when null.")
    encoding: str = Field("utf-8", description="Text encoding of CSV and JSON lines files.")
    na_values: list[str] | None = Field(
        None, description="Extra strings read as missing (CSV); pandas' defaults always apply.")
    dtype: dict[str, str] | Literal["str"] | None = Field(
        None, description='Column types, e.g. {"age": "int64"}, or "str" to read all as text.')

    @field_validator("sep")
    @classmethod
    def _separator(cls, value: str | None) -> str | None:
        if value == "":
            raise ValueError("the separator cannot be empty; use one of "
                             f"{', '.join(map(repr, SEPARATORS))} or null to sniff it")
        return value

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, value: str) -> str:
        try:
            codecs.lookup(value)
        except LookupError:
            raise ValueError(f"unknown encoding {value!r}; use a Python codec name such as "
                             "'utf-8', 'utf-8-sig', 'latin-1' or 'cp1252'") from None
        return value

    @field_validator("dtype")
    @classmethod
    def _known_dtypes(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for column, name in value.items():
                try:
                    pd.api.types.pandas_dtype(name)
                except TypeError:
                    raise ValueError(
                        f"column {column!r}: {name!r} is not a data type; use e.g. 'int64', "
                        "'float64', 'str', 'string', 'category' or 'bool'") from None
        return value


class MicrodataOptions(ReadOptions):
    pass


class TableOptions(ReadOptions):
    keys: list[str] | None = Field(None, description="Columns that span the table (cell keys).")
    count: str | None = Field(None, description="Column with the number of units in a cell.")
    total: str | None = Field(None, description="Column with a cell's magnitude total.")
    contributions: list[str] = Field(
        default_factory=list, description="Columns with the largest contributions, largest first.")


class TrajectoryOptions(ReadOptions):
    columns: dict[str, str] | None = Field(
        None, description="Column of each role: user_id, trajectory_id, timestamp, lon, lat.")
    timestamp_format: str = Field(
        DEFAULT_TIMESTAMP_FORMAT, description="strptime format of the timestamps (UTC), "
        "'iso8601' (e.g. 2024-05-01T08:30:00Z; an offset is honoured) or 'epoch' (seconds). "
        "ISO 8601 text under the default format is read as such, with a warning.")
    id_map: str | None = Field(
        None, description="A two-column CSV file (header row; relative to the config file): "
        "each id of this file (first column) and the id it has in the original (second), for "
        "anonymized trajectories whose ids were relabelled; every id must be listed.")
    id_map_role: Literal["trajectory_id", "user_id"] = Field(
        "trajectory_id", description="The ids that id_map relabels.")
    invalid: Literal["drop", "drop_trajectory", "error"] = Field(
        "drop", description="Invalid coordinates: drop the points (counted), drop their whole "
        "trajectories (the mobility anonymizer's rule), or fail.")

    @field_validator("columns")
    @classmethod
    def _known_roles(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        unknown = sorted(set(value or {}) - set(TRAJECTORY_ROLES))
        if unknown:
            raise ValueError(f"unknown role{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(map(repr, unknown))}; allowed: "
                             f"{', '.join(TRAJECTORY_ROLES)}")
        return value


OPTIONS: dict[str, type[ReadOptions]] = {
    "microdata": MicrodataOptions, "table": TableOptions, "trajectories": TrajectoryOptions,
}


def infer_format(path: Path) -> str | None:
    """The file format from the extension (csv, tsv, txt, parquet, pq, jsonl, ndjson)."""
    suffix = path.suffix.lower().lstrip(".")
    return {"csv": "csv", "tsv": "csv", "txt": "csv", "parquet": "parquet", "pq": "parquet",
            "jsonl": "jsonl", "ndjson": "jsonl"}.get(suffix)


def _sample_lines(path: Path, encoding: str, min_chars: int = 65536,
                  max_lines: int = 50) -> list[str]:
    """Whole lines from the start of a text file: at least ``min_chars`` (or the whole file)."""
    lines: list[str] = []
    size = 0
    with open(path, encoding=encoding, newline="") as fh:
        for line in fh:
            lines.append(line)
            size += len(line)
            if size >= min_chars or len(lines) >= max_lines:
                break
    return lines


def separators_fitting(lines: Sequence[str]) -> dict[str, int]:
    """Each separator among :data:`SEPARATORS` that splits every non-blank line of ``lines``
    into the same number of fields, more than one, with that number (most fields first)."""
    lines = [ln for ln in lines if ln.strip()]
    if len(lines) > 1 and not lines[-1].endswith(("\n", "\r")):
        lines = lines[:-1]  # the sample may end inside a quoted field
    fits: dict[str, int] = {}
    for sep in SEPARATORS:
        try:
            counts = {len(row) for row in csv.reader(lines, delimiter=sep)}
        except csv.Error:
            continue
        if len(counts) == 1 and (n := counts.pop()) > 1:
            fits[sep] = n
    return dict(sorted(fits.items(), key=lambda kv: -kv[1]))  # stable: ties keep the order


def sniff_separator(path: Path, encoding: str = "utf-8") -> str:
    """The CSV separator among , ; tab | / (comma when none fits).

    A candidate fits when it splits every sampled line (whole lines, however long) into the
    same number of fields, more than one; the one giving the most fields wins (ties: in the
    order above). :func:`separators_fitting` lists every candidate that fits.
    """
    return next(iter(separators_fitting(_sample_lines(path, encoding))), ",")


def _sniffed(path: Path, encoding: str) -> str:
    """:func:`sniff_separator`, with a warning naming the file when several separators fit."""
    fits = separators_fitting(_sample_lines(path, encoding))
    sep = next(iter(fits), ",")
    if len(fits) > 1:
        others = ", ".join(f"{c!r} ({n} fields)" for c, n in list(fits.items())[1:])
        warnings.warn(f"{path}: read with separator {sep!r} ({fits[sep]} fields), sniffed from "
                      f"the file; {others} would also split every line alike: set "
                      '"options": {"sep": ...} if that is the one', UserWarning, stacklevel=2)
    return sep


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):
        seen: set[str] = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return out


_JSONL_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def _read_jsonl(path: Path, encoding: str) -> pd.DataFrame:
    """One JSON object per line; a key repeated within a record or a nested value is an
    error naming the line."""
    records = []
    with open(path, encoding=encoding) as fh:
        for lineno, line in enumerate(fh, 1):
            if lineno == 1:
                line = line.lstrip("\ufeff")
            if not line.strip():
                continue
            try:
                obj = _JSONL_DECODER.decode(line)
            except _DuplicateKey as exc:
                raise DataError(f"line {lineno}: key {exc.args[0]!r} appears more than once in "
                                "one record; every column needs a distinct name") from None
            except json.JSONDecodeError as exc:
                raise DataError(f"line {lineno}, column {exc.colno}: invalid JSON: "
                                f"{exc.msg}") from None
            except ValueError as exc:  # e.g. an integer of more than 4,300 digits
                raise DataError(f"line {lineno}: {exc}") from None
            if not isinstance(obj, dict):
                raise DataError(f"line {lineno}: expected one JSON object per line, got "
                                f"{type(obj).__name__}")
            nested = [k for k, v in obj.items() if isinstance(v, (dict, list))]
            if nested:
                raise DataError(f"line {lineno}: {_nested_message(list(map(repr, nested)))}")
            records.append(obj)
    return pd.DataFrame.from_records(records) if records else pd.DataFrame()


#: What a cell may hold (the end of the errors about lists and objects in cells).
SCALAR_CELLS = ("allowed: one scalar per cell (number, string, boolean, date or null): flatten "
                "or drop them first")


def _nested_message(columns: list[str]) -> str:
    s = "s" if len(columns) > 1 else ""
    return f"column{s} {', '.join(columns)} hold{'' if s else 's'} lists or objects; {SCALAR_CELLS}"


def _read_parquet(path: Path, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The file as ``pd.read_parquet`` reads it, opened once: its schema is checked and its
    columns read from the same handle (``pd.read_parquet`` goes through pyarrow's dataset
    layer, which opens and inspects the file again: 1 ms of a 30,162-row file's 7 ms)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import types

    wanted = None if columns is None else list(columns)
    with pq.ParquetFile(path) as file:
        schema = file.schema_arrow
        dup = repeated(schema.names)
        if dup:
            raise DataError(f"duplicate column name{'s' if len(dup) > 1 else ''} "
                            f"{', '.join(map(repr, dup))}; every column needs a distinct name")
        nested = [f"{f.name!r} ({f.type})" for f in schema if types.is_nested(f.type)]
        if nested:
            raise DataError(_nested_message(nested))
        if wanted == []:
            # no column asked for, the rows still count (pyarrow < 26 reads such a file as 0 rows)
            return pd.DataFrame(index=pd.RangeIndex(file.metadata.num_rows))
        if int(pa.__version__.split(".")[0]) < 19:
            # before pyarrow 19, to_pandas ignores pandas' string dtype option; pandas maps it
            return pd.read_parquet(path, columns=wanted)
        table = file.read(columns=wanted, use_pandas_metadata=True)
    frame = table.to_pandas()
    if table.schema.metadata and b"PANDAS_ATTRS" in table.schema.metadata:
        frame.attrs = json.loads(table.schema.metadata[b"PANDAS_ATTRS"])
    return frame


def _csv_header(path: Path, sep: str, encoding: str) -> list[str]:
    """The header's names as written (pandas renames repeated ones to ``age.1``)."""
    with open(path, encoding=encoding, newline="") as fh:
        names = next(csv.reader(fh, delimiter=sep), [])
    return [names[0].lstrip("\ufeff"), *names[1:]] if names else []


def _refuse_nul(path: Path, encoding: str) -> None:
    """NUL bytes make the CSV parser cut fields short silently: refuse them, naming the line."""
    if codecs.lookup(encoding).name.startswith(("utf-16", "utf-32")):
        return
    lines = 0
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            at = chunk.find(b"\0")
            if at >= 0:
                line = lines + chunk.count(b"\n", 0, at) + 1
                raise DataError(f"line {line} holds a NUL byte (binary data, or a UTF-16 file: "
                                "then set options.encoding to 'utf-16')")
            lines += chunk.count(b"\n")


def _read_csv(path: Path, opts: ReadOptions, dtype: Any) -> pd.DataFrame:
    _refuse_nul(path, opts.encoding)
    sniffed = opts.sep is None
    sep = opts.sep or _sniffed(path, opts.encoding)
    how = (f"separator {sep!r} (sniffed from the file)" if sniffed
           else f"separator {sep!r} (options.sep)")
    hint = ('set "options": {"sep": ...} to the separator of the file, one of '
            f"{', '.join(map(repr, SEPARATORS))}")
    try:
        header = _csv_header(path, sep, opts.encoding)
        dup = repeated(n for n in header if n)
        if dup:
            raise DataError(f"duplicate column name{'s' if len(dup) > 1 else ''} "
                            f"{', '.join(map(repr, dup))} in the header (read with {how}); "
                            "every column needs a distinct name")
        frame = pd.read_csv(path, sep=sep, encoding=opts.encoding, na_values=opts.na_values,
                            dtype=dtype, skipinitialspace=False)
    except pd.errors.EmptyDataError:
        raise DataError("the file is empty: no header and no records") from None
    except pd.errors.ParserError as exc:
        raise DataError(f"{exc} (read with {how}); {hint}") from None
    except ValueError as exc:
        if isinstance(exc, UnicodeDecodeError):
            raise DataError(f"not {opts.encoding} text ({exc.reason} at byte {exc.start}); "
                            "set options.encoding, e.g. 'latin-1' or 'cp1252'") from None
        if dtype is not None:
            raise DataError(f"cannot apply options.dtype: {exc}{DTYPE_HINT}") from None
        raise DataError(f"{exc} (read with {how}); {hint}") from None
    if frame.shape[1] == 1:
        others = [c for c in SEPARATORS if c != sep and c in str(frame.columns[0])]
        if others:
            raise DataError(f"read one column {str(frame.columns[0])!r} with {how}, but the "
                            f"header holds {others[0]!r}; {hint}")
    return frame


def read_frame(path: Path, fmt: str, opts: ReadOptions,
               columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Read a file (only ``columns`` of it, in the file's order, when given) into a DataFrame;
    never writes to it."""
    dtype: Any = str if opts.dtype == "str" else opts.dtype
    wanted = set(columns or ())
    if fmt == "csv":
        frame = _read_csv(path, opts, dtype)
        return frame if columns is None else frame[[c for c in frame.columns if c in wanted]]
    if fmt == "parquet":
        frame = _read_parquet(path, columns)
    elif fmt == "jsonl":
        frame = _read_jsonl(path, opts.encoding)
        frame = frame if columns is None else frame[[c for c in frame.columns if c in wanted]]
    else:
        raise DataError(f"unknown format {fmt!r}; allowed: {', '.join(FORMATS)}")
    if isinstance(dtype, dict) and columns is not None:
        dtype = {c: t for c, t in dtype.items() if c in frame.columns}
    if not dtype:
        return frame
    try:
        return frame.astype(dtype)
    except KeyError as exc:
        raise DataError(f"options.dtype names a column the file lacks: {exc}; its columns are: "
                        f"{', '.join(map(str, frame.columns))}") from None
    except (TypeError, ValueError) as exc:
        raise DataError(f"cannot apply options.dtype: {exc}{DTYPE_HINT}") from None


def from_frame(frame: pd.DataFrame, kind: str, opts: ReadOptions,
               source: str | None = None) -> Dataset:
    """Wrap a frame as a dataset of ``kind`` with the kind's options."""
    if kind == "microdata":
        return Microdata(frame, source=source)
    if kind == "table":
        assert isinstance(opts, TableOptions)
        return Table(frame, keys=opts.keys, count=opts.count, total=opts.total,
                     contributions=opts.contributions, source=source)
    if kind == "trajectories":
        assert isinstance(opts, TrajectoryOptions)
        return Trajectories.from_frame(frame, columns=opts.columns,
                                       timestamp_format=opts.timestamp_format,
                                       invalid=opts.invalid, source=source,
                                       id_map=opts.id_map, id_map_role=opts.id_map_role)
    raise DataError(f"unknown data kind {kind!r}; allowed: {', '.join(DATA_KINDS)}")


def read_options(path: str | Path, kind: str,
                 options: dict[str, Any] | ReadOptions | None) -> ReadOptions:
    """The validated read options of an input of ``kind``; errors name the path."""
    if kind not in OPTIONS:
        raise DataError(f"unknown data kind {kind!r}; allowed: {', '.join(DATA_KINDS)}")
    if isinstance(options, ReadOptions):
        return options
    try:
        return OPTIONS[kind].model_validate(options or {})
    except ValidationError as exc:
        raise DataError(f"{path}: invalid options: " + "; ".join(
            f"options.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        ) from None


def source_format(source: Source, fmt: str | None) -> str:
    """The format of a source's files: ``fmt`` when given, else from their extensions."""
    fmt = fmt or source.format()
    if fmt is None:
        raise DataError(f"{source.given}: cannot tell the format from the extension; set "
                        f"'format' to one of {', '.join(FORMATS)}")
    return fmt


def read_file(file: Path, fmt: str, opts: ReadOptions,
              columns: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`read_frame` with every read error as a :class:`DataError` naming the file."""
    try:
        return read_frame(file, fmt, opts, columns)
    except DataError as exc:
        raise DataError(f"{file}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{file}: not {opts.encoding} text ({exc.reason} at byte "
                        f"{exc.start}); set options.encoding, e.g. 'latin-1' or "
                        "'cp1252'") from None
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"{file}: cannot read as {fmt}: {exc}") from exc


#: Files up to this size are read without estimating their memory first.
ESTIMATE_ABOVE = 8 * 2**20
#: Bytes of text sampled from a CSV or JSON lines file to estimate its size in memory.
SAMPLE_BYTES = 2**20


def _parquet_bytes(file: Path) -> tuple[int, int, int]:
    """At least the bytes a Parquet file's columns take in memory: rows × each column's width
    (8 bytes for a text or other variable-width cell, which pandas holds as a pointer); also
    the rows and columns."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(file) as opened:
        meta = opened.metadata
    widths = 0
    for field in meta.schema.to_arrow_schema():
        try:
            widths += max(field.type.bit_width // 8, 1)
        except ValueError:  # variable width
            widths += 8
    return meta.num_rows * widths, meta.num_rows, meta.num_columns


def _text_ratio(file: Path, fmt: str, opts: ReadOptions) -> float:
    """Bytes in memory per byte of text of a CSV or JSON lines file, measured on its first
    :data:`SAMPLE_BYTES` (whole lines)."""
    lines = _sample_lines(file, opts.encoding, min_chars=SAMPLE_BYTES, max_lines=1 << 30)
    text = "".join(lines[:-1] if len(lines) > 2 else lines)
    sample_bytes = len(text.encode(opts.encoding, errors="replace"))
    if fmt == "csv":
        sep = opts.sep or next(iter(separators_fitting(lines)), ",")
        frame = pd.read_csv(io.StringIO(text), sep=sep, na_values=opts.na_values,
                            dtype=str if opts.dtype == "str" else opts.dtype)
    else:
        frame = pd.DataFrame.from_records([json.loads(ln) for ln in text.splitlines()
                                           if ln.strip()])
    return float(frame.memory_usage(deep=True, index=False).sum()) / max(sample_bytes, 1)


def check_fits(source: Source, fmt: str, opts: ReadOptions) -> None:
    """Refuse, before reading, an input whose records would not fit in the memory this process
    may still take (see :func:`anoneval.core.data.memory.available_memory`), naming its size.

    Parquet: rows × column widths from each file's metadata (a lower bound). CSV and JSON
    lines: the files' total size times the memory per byte of a sample of the largest file.
    Estimates that cannot be made (an unreadable file) refuse nothing: the reader says why.
    """
    sizes = {file: file.stat().st_size for file in source.files}
    total = sum(sizes.values())
    if total <= ESTIMATE_ABOVE and fmt != "parquet":
        return
    room = available_memory()
    if room is None:
        return
    try:
        if fmt == "parquet":
            parts = [_parquet_bytes(file) for file in sizes]
            need = sum(n for n, _, _ in parts)
            shown = f"{sum(r for _, r, _ in parts):,} rows × {parts[0][2]:,} columns"
        else:
            need = int(_text_ratio(max(sizes, key=sizes.__getitem__), fmt, opts) * total)
            shown = f"{human_bytes(total)} of {fmt.upper()}"
    except Exception:  # unreadable here: the reader says why
        return
    if len(sizes) > 1:
        shown += f" in {len(sizes):,} files"
    if need > room[0]:
        raise DataError(f"{source.given} ({shown}) needs about {human_bytes(need)} in memory, "
                        f"more than the {human_bytes(room[0])} {room[1]}; {MEMORY_HINT}")


def load(path: str | Path, kind: str = "microdata", fmt: str | None = None,
         options: dict[str, Any] | ReadOptions | None = None) -> Dataset:
    """Load a dataset of ``kind`` from CSV, Parquet or JSON lines: one file, a folder (a Parquet
    dataset, hive partitions included) or a glob of files
    (see :mod:`anoneval.core.data.sources`)."""
    source = locate(path)
    fmt = source_format(source, fmt)
    opts = read_options(path, kind, options)
    check_fits(source, fmt, opts)
    try:
        parts = [with_partitions(read_file(file, fmt, opts), source, file)
                 for file in source.files]
        if len(parts) == 1:
            frame = parts[0]
        else:
            first = list(parts[0].columns)
            for file, part in zip(source.files, parts, strict=True):
                if list(part.columns) != first:
                    raise DataError(f"{file}: its columns {list(part.columns)} differ from "
                                    f"those of {source.files[0]} ({first})")
            frame = type_partitions(pd.concat(parts, ignore_index=True),
                                    list(source.partitions(source.files[0])))
        return from_frame(frame, kind, opts, source=str(path))
    except MemoryError:
        parts = []  # free what was read
        size = sum(file.stat().st_size for file in source.files)
        raise DataError(f"{path} ({human_bytes(size)} of {fmt}) does not fit in memory: "
                        f"reading it ran out; {MEMORY_HINT}") from None


def as_dataset(obj: Any, kind: str | None = None, side: str | None = None) -> Dataset | None:
    """Accept a Dataset, a DataFrame (microdata unless ``kind`` says otherwise) or None.

    Anything else is a :class:`TypeError` naming ``side`` (e.g. "anonymized") and the accepted
    types."""
    if obj is None:
        return obj
    if isinstance(obj, Dataset):  # its cache is cleared when its frame changed
        return remembered(obj, None, lambda d: d)
    if isinstance(obj, pd.DataFrame):
        if kind not in (None, *DATA_KINDS):
            raise DataError(f"unknown data kind {kind!r}; allowed: {', '.join(DATA_KINDS)}")
        # the same object, unchanged, gives the same dataset (validated and hashed once)
        return remembered(obj, kind or "microdata", _FROM_FRAME[kind or "microdata"])
    hint = ("; to read a file, pass anoneval.core.load(path)"
            if isinstance(obj, (str, Path)) else "")
    raise TypeError(f"{f'{side}: ' if side else ''}expected a pandas DataFrame, an anoneval "
                    "Dataset (Microdata, Table, Trajectories) or None, got "
                    f"{type(obj).__name__}{hint}")


#: How :func:`as_dataset` reads a DataFrame as each kind.
_FROM_FRAME: dict[str, Callable[[pd.DataFrame], Dataset]] = {
    "microdata": Microdata, "table": Table, "trajectories": lambda f: Trajectories.from_frame(f)}


def require_records(data: Dataset | None, side: str) -> None:
    """Raise a :class:`DataError` naming ``side`` when ``data`` has no records: an empty input
    would otherwise score 0 (no risk) and pass any threshold."""
    if data is None or len(data):
        return
    why = ""
    if isinstance(data, Trajectories) and (data.dropped_points or data.dropped_trajectories):
        why = (f": every trajectory was dropped for invalid coordinates ({data.dropped_points} "
               "points; see options.invalid)")
    where = f" ({data.source})" if data.source else ""
    raise DataError(f"{side}{where}: no records{why}; an empty input cannot be evaluated")


#: pandas' inferred types of object columns that hold scalars only (others are scanned).
_SCALARS = frozenset({"string", "bytes", "integer", "floating", "decimal", "complex", "boolean",
                      "datetime", "datetime64", "date", "time", "timedelta", "timedelta64",
                      "period", "interval", "empty"})


def _within(column: Any, columns: Collection[str] | None) -> bool:
    """Whether ``column`` is one of ``columns`` (None: every column), names compared as text."""
    return columns is None or str(column) in columns


def require_scalar_cells(data: Dataset | None, side: str,
                         columns: Collection[str] | None = None) -> None:
    """Raise a :class:`DataError` naming ``side``, the column and the row of the first cell of
    ``data`` (of its ``columns`` when given: those the measures read) that holds a list, tuple,
    dict, set or array: no measure can group or compare those."""
    if not isinstance(data, FrameData):
        return
    key = ("scalar_cells", side, None if columns is None else frozenset(columns))
    data.cached(key, lambda: _scalar_cells(data, side, columns))


def _scalar_cells(data: FrameData, side: str, columns: Collection[str] | None) -> bool:
    """:func:`require_scalar_cells`, run once per dataset and columns (success is cached); the
    column's scan is the one its kind of values is told from (:func:`_inferred`)."""
    frame = data.frame
    for position in np.flatnonzero([dtype == np.dtype(object)
                                    for dtype in data.dtypes.values()]):
        column = frame.columns[position]
        if not _within(column, columns) or _inferred(data, column) in _SCALARS:
            continue
        values = frame.iloc[:, position]
        scalar = values.map(pd.api.types.is_scalar).to_numpy(dtype=bool)
        if not scalar.all():
            row = int(np.flatnonzero(~scalar)[0])
            where = f" ({data.source})" if data.source else ""
            raise DataError(f"{side}{where}: column {str(column)!r} holds a "
                            f"{type(values.iloc[row]).__name__} at {data_row(row)}; "
                            f"{SCALAR_CELLS}")
    return True


def _inferred(data: FrameData, column: Any) -> str:
    """pandas' inferred type of an object column's values, once per dataset: the scalar-cell
    check and the column's kind of values share it. Told from the column's distinct objects
    when it repeats them (the same answer, see :mod:`~anoneval.core.data.objects`), which the
    column's codes then reuse; otherwise by a scan of every cell."""

    def compute() -> str:
        objects = data.distinct_objects(column)
        return pd.api.types.infer_dtype(data.frame[column] if objects is None else objects,
                                        skipna=True)

    return data.cached(("inferred", column), compute)


def _value_kind(values: pd.Series, inferred: str | None = None) -> str:
    """number, bool, text, datetime, or mixed (an object column of several Python types);
    ``inferred``: the values' :func:`pandas.api.types.infer_dtype`, when known."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        values, inferred = pd.Series(values.cat.categories), None
    if inferred is None:
        inferred = pd.api.types.infer_dtype(values, skipna=True)
    if inferred in ("integer", "floating", "mixed-integer-float", "decimal"):
        return "number"
    if inferred == "boolean":
        return "bool"
    if inferred in ("string", "empty"):
        return "text"
    if inferred in ("datetime64", "datetime", "date"):
        return "datetime"
    return "mixed"


def _text(values: pd.Series) -> pd.Series:
    """Values as text, numbers without a spurious ``.0`` (39.0 → "39"); missing stays missing."""

    def one(v: Any) -> Any:
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or v is pd.NaT:
            return np.nan
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            return str(int(v))
        if isinstance(v, np.generic):
            return str(v.item())
        return str(v)

    if pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty"):  # text already
        return values.astype(object).where(values.notna(), np.nan)
    if isinstance(values.dtype, np.dtype) and values.dtype.kind in "biuf":
        # one value type: each distinct value written once, the cells sharing its text (no
        # Python string per cell: 10^7 ages are ~100 texts, not 10^7 objects)
        codes, uniques = pd.factorize(values.to_numpy())
        texts = np.array([one(v) for v in uniques.tolist()] + [np.nan], dtype=object)
        return pd.Series(texts[codes], index=values.index, dtype=object)  # -1: the NaN
    return pd.Series([one(v) for v in values.tolist()], index=values.index, dtype=object)


def _numbers(values: pd.Series) -> pd.Series:
    """Values that are numbers or text holding one, as numbers (each distinct value parsed
    once; float64 when some value is missing); unparsable values become missing."""
    codes, uniques = pd.factorize(values)
    numbers = pd.to_numeric(pd.Series(np.asarray(uniques, dtype=object)), errors="coerce")
    if (codes < 0).any():  # missing values stay missing
        return pd.Series(np.where(codes < 0, np.nan, numbers.to_numpy(dtype=np.float64)[codes]),
                         index=values.index)
    return pd.Series(numbers.to_numpy()[codes], index=values.index)


@dataclass(frozen=True)
class ValueSurvey:
    """What decides how a column is read as one kind, from any block of its rows: the Python
    types of its present values, whether every one is a number or text holding one (no
    booleans or bytes), whether those numbers are whole and below 2^53 in magnitude, and
    whether a value is missing. :meth:`combine` gives the survey of the blocks together."""

    types: frozenset[str]
    numeric: bool
    whole: bool
    small: bool
    missing: bool

    @classmethod
    def of_values(cls, values: pd.Series) -> ValueSurvey:
        """The survey of ``values``. A column of text is parsed one distinct value at a time
        (a generalized or coded column has few: parsing every row was most of a variant's
        dtype alignment); distinct strings are distinct values, so the survey is the same."""
        present = values.notna().to_numpy()
        plain = values.astype(object)
        if pd.api.types.infer_dtype(plain, skipna=True) in ("string", "empty"):
            types = frozenset(["str"] if present.any() else [])
            # only strings are present: the missing ones are not parsed, the others once each
            plain = pd.Series(pd.unique(plain[present].to_numpy()), dtype=object)
            present = np.ones(len(plain), dtype=bool)
        else:
            types = frozenset(type(v).__name__ for v in plain[present].tolist())
        numeric, whole, small = not types & {"bool", "bool_", "bytes"}, True, True
        if numeric and present.any():
            parsed = pd.to_numeric(plain, errors="coerce")
            numeric = parsed.dtype.kind in "iuf" and not (parsed.isna().to_numpy() & present).any()
            if numeric:
                kept = parsed[present]
                whole, small = bool((kept % 1 == 0).all()), bool((kept.abs() < 2**53).all())
        return cls(types, numeric, whole, small, bool(values.isna().any()))

    @classmethod
    def combine(cls, parts: Sequence[ValueSurvey]) -> ValueSurvey:
        return cls(frozenset().union(*(p.types for p in parts)), all(p.numeric for p in parts),
                   all(p.whole for p in parts), all(p.small for p in parts),
                   any(p.missing for p in parts))


@dataclass(frozen=True)
class Conversion:
    """How a column is read: ``"text"`` (numbers as written, 39.0 → "39") or numbers of a
    numpy dtype (text "39" → 39). It applies value by value, so converting each partition of
    a column gives the partitions of the converted column."""

    to: str

    def apply(self, values: pd.Series) -> pd.Series:
        if self.to == "text":
            return _text(values)
        return _numbers(values).astype(self.to)


TEXT = Conversion("text")


#: The value kind of a numpy dtype's values (what :func:`_value_kind` infers for them).
_DTYPE_KINDS = {"i": "number", "u": "number", "f": "number", "b": "bool"}


def _kind(data: FrameData, col: Any) -> str:
    return data.cached(("value_kind", col), lambda: _value_kind(
        data.frame[col], _inferred(data, col) if data.frame[col].dtype == object else None))


def _one_kind(survey: ValueSurvey) -> Conversion:
    """A column of several kinds of values as one kind: numbers when every value is a number
    or text holding one (int64 when all are whole and none is missing), otherwise text."""
    if survey.numeric:
        whole = not survey.missing and survey.whole and survey.small
        return Conversion("int64" if whole else "float64")
    return TEXT


def block_kind(values: pd.Series) -> str:
    """The kind of values of a block of a column (:func:`_value_kind`), ``"empty"`` when
    every value is missing."""
    if not values.notna().any() and values.dtype.kind == "O":
        return "empty"
    return _value_kind(values)


def joint_kind(kinds: Collection[str]) -> str:
    """The kind of a column from the kinds of its blocks: missing blocks say nothing, numbers
    of several blocks are numbers, different kinds are mixed."""
    seen = set(kinds) - {"empty"}
    if not seen:
        return "text"
    return seen.pop() if len(seen) == 1 else "mixed"


def unify_kinds(data: Dataset | None, side: str, columns: Collection[str] | None = None
                ) -> tuple[Dataset | None, list[str]]:
    """Read each column of ``data`` that mixes kinds of values (39 and "39" from JSON lines or
    an object column) as one kind, as :func:`align_dtypes` does across two sides: numbers when
    every value is one (text "39" → 39), otherwise text. Returns the dataset (a new object when a
    column changed; the input is never modified) and one note per changed column.

    Works on any dataset that knows its :meth:`~Dataset.value_kinds`: in memory, or partitioned
    (surveyed partition-wise, converted as each partition is read). With ``columns`` (those
    the measures read) only those are surveyed: a scan of a column nobody reads is a fixed
    cost of every evaluation (5 ms per 10⁶ text values)."""
    if data is None:
        return data, []
    key = ("unified", None if columns is None else frozenset(columns))
    unified, said = data.cached(key, lambda: _unified(data, columns))
    return unified if unified is not None else data, [f"{side}: {note}" for note in said]


def _unified(data: Dataset, columns: Collection[str] | None
             ) -> tuple[Dataset | None, list[str]]:
    """:func:`unify_kinds` without the side in the notes, done once per dataset (None: no
    column changed; the dataset itself is not cached in itself, which would be a cycle)."""
    kinds = data.value_kinds(columns)
    mixed = [c for c, k in (kinds or {}).items() if k == "mixed"]
    if not mixed:
        return None, []
    changed: dict[str, Conversion] = {}
    notes: list[str] = []
    for col, survey in data.value_surveys(mixed).items():
        changed[col] = conv = _one_kind(survey)
        how = ('text, numbers as written (39 → "39")' if conv is TEXT
               else f'numbers ({conv.to}), text such as "39" as the number')
        notes.append(f"column {col!r} mixes values of types "
                     f"{', '.join(sorted(survey.types))}; read as {how}")
    return data.converted(changed), notes


def _text_as_is(data: Dataset, column: str) -> bool:
    """Whether reading ``column`` of ``data``, a column of text, as text (:data:`TEXT`) leaves
    it as it is: Python strings in an object column, none missing. Such a side is kept as it
    is, with what was derived from it (the codes the measures cache, which its content hash
    reuses)."""
    if not isinstance(data, FrameData):
        return False
    values = data.frame[column]
    return values.dtype == object and not values.isna().any()


def align_dtypes(original: Dataset, anonymized: Dataset, side: str = "anonymized",
                 columns: Collection[str] | None = None) -> tuple[Dataset, Dataset, list[str]]:
    """Read the columns both sides share alike, so that 39 and "39" fall in one class.

    Where the two sides hold a column as different kinds of values (numbers, text, booleans,
    dates) or one side mixes kinds, the other side (``side``: the anonymized data or the control
    set) takes the original's when they can hold its values (text "39" → the original's
    integers, numbers → the original's text); otherwise both sides read the column as text.
    Returns the two datasets (new objects where a column changed; the inputs are never
    modified) and one note per changed column. Partitioned sides are surveyed partition-wise.
    With ``columns`` only those are compared (the others are not surveyed).
    """
    okinds, akinds = original.value_kinds(columns), anonymized.value_kinds(columns)
    if not okinds or not akinds:
        return original, anonymized, []
    anon_cols: dict[str, Conversion] = {}
    text_cols: list[str] = []
    notes: list[str] = []
    for col in (c for c in akinds if c in okinds):
        ok, ak = okinds[col], akinds[col]
        if ok == ak and ok != "mixed":
            continue
        said = f"column {col!r} holds {ok} values in the original and {ak} in the {side} data"
        converted = None
        if ok == "number" and ak == "text":
            survey = anonymized.value_surveys([col])[col]
            if survey.numeric:
                like = original.column_dtype(col)
                whole = pd.api.types.is_integer_dtype(like) and survey.whole and (
                    not survey.missing)
                converted = Conversion(str(like) if whole else "float64")
        elif ok == "text" and ak in ("number", "bool"):
            converted = TEXT
        if converted is not None:
            anon_cols[col] = converted
            shown = "object" if converted is TEXT else converted.to
            notes.append(f"{said}: the {side} side was read as the original's ({shown})")
        else:
            text_cols.append(col)
            notes.append(f"{said}: both sides were read as text")
    for col in text_cols:
        if not (akinds[col] == "text" and _text_as_is(anonymized, col)):
            anon_cols[col] = TEXT
    if text_cols:
        key = ("as_text", tuple(text_cols))
        original = original.cached(key, lambda: original.converted(
            dict.fromkeys(text_cols, TEXT)))
    if anon_cols:
        anonymized = anonymized.converted(anon_cols)
    return original, anonymized, notes


