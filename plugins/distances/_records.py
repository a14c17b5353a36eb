"""Shared helpers of the microdata record distances: column choice and numeric matrices."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np
import pandas as pd
from pydantic import Field
from scipy.spatial.distance import cdist

from anoneval.core.api import Context, DataError, Dataset, Distance, Microdata, Params, data_row

#: Pair-column elements per chunk of a distance matrix.
CHUNK_ELEMENTS = 1 << 21


def as_microdata(data: Dataset, role: str) -> Microdata:
    if not isinstance(data, Microdata):
        raise DataError(f"the {role} data must be microdata, got {data.data_kind}")
    return data


def is_numeric(series: pd.Series) -> bool:
    """Numbers (not booleans): the columns an interval distance can use."""
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))


def choose_columns(data: Microdata, columns: Sequence[str] | None, name: str,
                   numeric: bool) -> list[str]:
    """The given columns (checked to exist and, if ``numeric``, to hold numbers), or by default
    every (numeric) column of ``data``."""
    if columns is None:
        chosen = [c for c in data.columns if not numeric or is_numeric(data.frame[c])]
        if not chosen:
            raise DataError(f"{name}: the data has no {'numeric ' if numeric else ''}columns; "
                            f"its columns are: {', '.join(data.columns)}")
        return chosen
    data.require(list(columns), f"{name} column")
    if numeric:
        bad = [c for c in columns if not is_numeric(data.frame[c])]
        if bad:
            raise DataError(f"{name} needs numeric columns; {', '.join(map(repr, bad))} hold "
                            f"{', '.join(str(data.frame[c].dtype) for c in bad)} (use Gower for "
                            "categorical columns)")
    return list(columns)


def numeric_matrix(data: Microdata, columns: Sequence[str], name: str, role: str) -> np.ndarray:
    """The columns as a float matrix (cached); a missing or non-numeric value is an error."""

    def compute() -> np.ndarray:
        data.require(list(columns), f"{name} column")
        out = np.empty((len(data), len(columns)))
        for k, col in enumerate(columns):
            values = pd.to_numeric(data.frame[col], errors="coerce").to_numpy(np.float64)
            bad = ~np.isfinite(values)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise DataError(f"{name}: column {col!r} of the {role} data has a missing or "
                                f"non-numeric value {data.frame[col].iloc[row]!r} at "
                                f"{data_row(row)} "
                                f"({int(bad.sum())} such rows); impute or drop them, or use Gower")
            out[:, k] = values
        return out

    return data.cached(("numeric_matrix", tuple(columns)), compute)


def rows_cols(data_x: Microdata, data_y: Microdata, rows: np.ndarray | None,
              cols: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    rows = np.arange(len(data_x)) if rows is None else np.asarray(rows, np.int64).reshape(-1)
    cols = np.arange(len(data_y)) if cols is None else np.asarray(cols, np.int64).reshape(-1)
    return rows, cols


class ColumnsParams(Params):
    """Params of the numeric record distances: the columns compared."""

    columns: list[str] | None = Field(
        None, min_length=1, description="Numeric columns compared; null: all numeric columns "
        "of the original.")


_Fitted = TypeVar("_Fitted", bound="LinearMapDistance")


class LinearMapDistance(Distance):
    """Euclidean distance between numeric records after a linear map fitted on the reference.

    Subclasses set ``map_`` in :meth:`_fit_map` (a vector of column scales to divide by, or a
    matrix to multiply with); their ``Params`` have ``columns``.
    """

    columns_: list[str] | None = None
    map_: np.ndarray

    def _fit_map(self, values: np.ndarray) -> None:
        raise NotImplementedError

    def fit(self: _Fitted, reference: Dataset, ctx: Context) -> _Fitted:
        data = as_microdata(reference, "reference")
        self.columns_ = choose_columns(data, self.params.columns, self.name, numeric=True)
        self._fit_map(numeric_matrix(data, self.columns_, self.name, "reference"))
        return self

    def mapped(self, data: Dataset, role: str) -> np.ndarray:
        """Every record of ``data`` on the mapped scale, computed once per dataset and map
        (cached on the dataset: a blockwise search must not re-map the reference per block)."""
        if self.columns_ is None:
            raise RuntimeError(f"{self.name} must be fitted on the original data first")
        micro = as_microdata(data, role)
        columns = self.columns_

        def compute() -> np.ndarray:
            values = numeric_matrix(micro, columns, self.name, role)
            return values / self.map_ if self.map_.ndim == 1 else values @ self.map_

        return micro.cached(("linear_map", tuple(columns), self.map_.tobytes()), compute)

    def _transform(self, data: Dataset, role: str, index: np.ndarray) -> np.ndarray:
        return self.mapped(data, role)[index]

    def pairwise(self, x: Dataset, y: Dataset, rows: np.ndarray | None = None,
                 cols: np.ndarray | None = None) -> np.ndarray:
        rows, cols = rows_cols(as_microdata(x, "first"), as_microdata(y, "second"), rows, cols)
        return cdist(self._transform(x, "first", rows), self._transform(y, "second", cols))
