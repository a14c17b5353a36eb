"""Mlodak's information loss from per-variable distances (IL_variables)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    LossMeasure,
    MeasureResult,
    Microdata,
    Params,
    data_row,
    repeated,
)
from anoneval.plugins.numeric._common import as_float, is_numeric, matched_rows

VarType = Literal["numeric", "ordinal", "nominal"]


def numeric_distances(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(2/π)·atan|x − p|; one side missing counts as the largest possible difference
    max(|min p − max x|, |max p − min x|), both missing as 0."""
    top = np.nanmax(np.abs([np.nanmin(p) - np.nanmax(x), np.nanmax(p) - np.nanmin(x)]))
    v = np.abs(x - p)
    nx, np_ = np.isnan(x), np.isnan(p)
    v[nx | np_] = top
    v[nx & np_] = 0.0
    return (2.0 / np.pi) * np.arctan(v)


def ordinal_distances(x: np.ndarray, p: np.ndarray, levels: int) -> np.ndarray:
    """|rank x − rank p| / (L − 1) on ranks 0..L−1 (−1 = missing); one side missing is 1,
    both 0."""
    d = np.abs(x - p) / max(levels - 1, 1)
    d[(x < 0) | (p < 0)] = 1.0
    d[(x < 0) & (p < 0)] = 0.0
    return d


def nominal_distances(x: pd.Series, p: pd.Series) -> np.ndarray:
    """0 where equal, 1 otherwise; one side missing is 1, both missing 0."""
    nx, np_ = x.isna().to_numpy(), p.isna().to_numpy()
    d = (x.astype(str).to_numpy() != p.astype(str).to_numpy()).astype(np.float64)
    d[nx | np_] = 1.0
    d[nx & np_] = 0.0
    return d


class VariableDistanceLoss(LossMeasure):
    """λ = (1/(n·m)) Σ_j Σ_i d_j(x_ij, x'_ij), per-variable distances by scale of measurement.

    Source: Mlodak (2019), "Using the complex measure in an assessment of the information loss
    due to the microdata disclosure control", Przegląd Statystyczny 66(1), 7–26; sdcMicro's
    ``IL_variables``. Distances, each in [0, 1]:

    * numeric: (2/π)·atan|x − x'|; a value missing on one side counts as the largest possible
      difference between the two columns' ranges, max(|min x' − max x|, |max x' − min x|);
    * ordinal: |rank(x) − rank(x')| / (L − 1) over the L ordered levels; one side missing is 1;
    * nominal: 0 if equal, else 1; one side missing is 1.

    Both sides missing is 0. Types come from ``types`` or the original's dtypes (numbers →
    numeric, ordered categoricals → ordinal, the rest nominal). sdcMicro treats only R's
    ``double`` columns as numeric and stops on integer columns; here integers are numeric.
    Ordinal levels come from ``orders`` or the ordered categorical; a value outside them is an
    error. details ``per_column`` are each variable's Σ_i d / n (sdcMicro's individual losses).
    """

    name = "VariableDistanceLoss"
    description = "Mlodak's IL_variables: mean per-variable distance, by scale of measurement."

    class Params(Params):
        columns: list[str] | None = Field(
            None, min_length=1,
            description="Columns compared; null = every column present on both sides (the id "
                        "column excluded).")
        types: dict[str, VarType] = Field(
            default_factory=dict,
            description="Scale of a column: numeric | ordinal | nominal (default from the "
                        "original's dtype).")
        orders: dict[str, list[str]] = Field(
            default_factory=dict,
            description="Ordered levels (as text, lowest first) of an ordinal column that is "
                        "not an ordered categorical.")
        id: str | None = Field(None, description="Key column matching the records of both "
                                                 "sides (row order when null).")

        @model_validator(mode="after")
        def _check(self) -> VariableDistanceLoss.Params:
            dups = repeated(self.columns or [])
            if dups:
                raise ValueError(f"columns listed twice: {dups}")
            for col, levels in self.orders.items():
                if repeated(levels):
                    raise ValueError(f"orders[{col!r}] lists {repeated(levels)} twice")
            return self

    def _type(self, col: str, s: pd.Series) -> VarType:
        if col in self.params.types:
            return self.params.types[col]
        if col in self.params.orders or (isinstance(s.dtype, pd.CategoricalDtype)
                                         and s.dtype.ordered):
            return "ordinal"
        return "numeric" if is_numeric(s) else "nominal"

    def _ranks(self, col: str, s: pd.Series, levels: list[str], side: str) -> np.ndarray:
        text = s.astype("string")
        ranks = pd.Index(levels).get_indexer(text.fillna("\0").to_numpy(dtype=object))
        bad = np.flatnonzero((ranks < 0) & s.notna().to_numpy())
        if len(bad):
            raise DataError(f"ordinal column {col!r} of the {side} data holds {s.iloc[bad[0]]!r} "
                            f"({data_row(bad[0])}), which is not among its levels {levels}")
        return ranks.astype(np.float64)

    def _levels(self, col: str, s: pd.Series) -> list[str]:
        if col in self.params.orders:
            return self.params.orders[col]
        if isinstance(s.dtype, pd.CategoricalDtype) and s.dtype.ordered:
            return [str(c) for c in s.dtype.categories]
        raise DataError(f"ordinal column {col!r} needs its levels in 'orders' (or an ordered "
                        "categorical dtype)")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if not isinstance(original, Microdata) or not isinstance(anonymized, Microdata):
            raise DataError("VariableDistanceLoss compares original and released microdata")
        o, a = original.frame, anonymized.frame
        if p.columns is None:
            cols = [str(c) for c in o.columns if c != p.id and c in a.columns]
        else:
            cols = list(p.columns)
            original.require(cols, "column")
            anonymized.require(cols, "column")
        unknown = sorted(set(p.types) - set(cols)) + sorted(set(p.orders) - set(cols))
        if unknown:
            raise DataError(f"'types'/'orders' name columns that are not compared: {unknown}")
        if not cols:
            raise DataError("no column is present on both sides")
        rows_o, rows_a = matched_rows(original, anonymized, p.id, ctx)
        n = len(rows_o)
        if n == 0:
            raise DataError("no record of the release matches an original record")
        per_column: dict[str, float] = {}
        types: dict[str, str] = {}
        for col in cols:
            kind = types[col] = self._type(col, o[col])
            if kind == "numeric":
                xo, xa = as_float(o, col, "original"), as_float(a, col, "anonymized")
                for side, v in (("original", xo), ("anonymized", xa)):
                    if np.isnan(v).all():
                        raise DataError(f"numeric column {col!r} of the {side} data has no "
                                        "value")
                d = numeric_distances(xo[rows_o], xa[rows_a])
            elif kind == "ordinal":
                levels = self._levels(col, o[col])
                d = ordinal_distances(self._ranks(col, o[col], levels, "original")[rows_o],
                                      self._ranks(col, a[col], levels, "anonymized")[rows_a],
                                      len(levels))
            else:
                d = nominal_distances(o[col].iloc[rows_o], a[col].iloc[rows_a])
            per_column[col] = float(d.sum()) / n
        value = float(sum(per_column.values())) / len(cols)
        return MeasureResult(value=value, details={
            "records": n, "types": types, "per_column": per_column})
