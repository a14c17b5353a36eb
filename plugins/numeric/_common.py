"""Pairing of the original and perturbed numeric columns shared by the numeric measures.

Conventions: the two sides are matched by row order (equal row counts) or by the ``id`` key
column (original records absent from the release are left out, with a warning); values must be
numbers or missing (NaN); booleans are not numeric.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from pydantic import Field, field_validator

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    MeasureResult,
    Microdata,
    Params,
    data_row,
    refuse_infinite,
    repeated,
)
from anoneval.plugins.microdata._common import alignment


class NumericParams(Params):
    """Params of the numeric measures: which columns, and how the records are matched."""

    columns: list[str] | None = Field(
        None, min_length=1,
        description="Numeric columns compared (perturbed); null = every numeric column present "
                    "on both sides (the id column excluded).")
    id: str | None = Field(
        None, description="Key column matching the records of both sides (row order when "
                          "null); original records absent from the release are left out.")

    @field_validator("columns")
    @classmethod
    def _distinct(cls, value: list[str] | None) -> list[str] | None:
        dups = repeated(value or [])
        if dups:
            raise ValueError(f"columns listed twice: {dups}")
        return value


@dataclass(frozen=True)
class Pairs:
    """Matched ``n × p`` float arrays of the original (``x``) and perturbed (``xm``) values."""

    columns: list[str]
    x: np.ndarray
    xm: np.ndarray


def is_numeric(series: pd.Series) -> bool:
    """Numeric and not boolean."""
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))


def matched_rows(original: Microdata, anonymized: Microdata, id_col: str | None,
                 ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """Row positions ``(original_rows, anonymized_rows)`` of the matched records."""
    take = alignment(original, anonymized, id_col, ctx)
    if take is None:
        rows = np.arange(len(original))
        return rows, rows
    keep = np.flatnonzero(take >= 0)
    return keep, take[keep]


def as_float(frame: pd.DataFrame, col: str, side: str) -> np.ndarray:
    """``frame[col]`` as float64 (missing values NaN); a value that is not a number, or an
    infinite one, is an error naming it and its row."""
    s = frame[col]
    if pd.api.types.is_bool_dtype(s):
        raise DataError(f"column {col!r} of the {side} data is boolean, not numeric")
    if is_numeric(s):
        out = s.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        num = pd.to_numeric(s, errors="coerce")
        bad = np.flatnonzero(num.isna().to_numpy() & s.notna().to_numpy())
        if len(bad):
            raise DataError(f"column {col!r} of the {side} data is not numeric: "
                            f"{data_row(bad[0])} holds {s.iloc[bad[0]]!r}")
        out = num.to_numpy(dtype=np.float64, na_value=np.nan)
    refuse_infinite(out, f"column {col!r} of the {side} data",
                    "the numeric measures need finite numbers (missing values may be empty)")
    return out


def numeric_pairs(original: Dataset | None, anonymized: Dataset | None, p: NumericParams,
                  ctx: Context) -> Pairs:
    """The chosen numeric columns of both sides, matched record by record."""
    if not isinstance(original, Microdata) or not isinstance(anonymized, Microdata):
        raise DataError("this measure compares original and perturbed microdata")
    o, a = original.frame, anonymized.frame
    if p.columns is None:
        cols = [str(c) for c in o.columns
                if c != p.id and c in a.columns and is_numeric(o[c])]
        if not cols:
            raise DataError("no numeric column is present on both sides; name them in "
                            "'columns'")
    else:
        cols = list(p.columns)
        if p.id is not None and p.id in cols:
            raise DataError(f"id column {p.id!r} is also listed in 'columns'")
        original.require(cols, "column")
        anonymized.require(cols, "column")
    rows_o, rows_a = matched_rows(original, anonymized, p.id, ctx)
    if len(rows_o) == 0:
        raise DataError("no record of the release matches an original record")
    x = np.column_stack([as_float(o, c, "original")[rows_o] for c in cols])
    xm = np.column_stack([as_float(a, c, "anonymized")[rows_a] for c in cols])
    return Pairs(cols, x, xm)


class PairedNumeric:
    """Mixin of the measures on matched numeric columns (before ``LossMeasure`` or
    ``RiskMeasure`` in the bases): ``compute`` pairs the columns, ``from_pairs`` measures."""

    params: NumericParams

    class Params(NumericParams):
        pass

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        return self.from_pairs(numeric_pairs(original, anonymized, self.params, ctx), ctx)

    def from_pairs(self, pairs: Pairs, ctx: Context) -> MeasureResult:
        """The measure's result on the matched values."""
        raise NotImplementedError


def pair_details(pairs: Pairs, per_column: np.ndarray | None = None,
                 **more: object) -> dict[str, object]:
    """Details every paired measure reports: matched records, columns (and a per-column
    figure)."""
    out: dict[str, object] = {"records": int(pairs.x.shape[0]), "columns": pairs.columns}
    if per_column is not None:
        out["per_column"] = dict(zip(pairs.columns, np.asarray(per_column).tolist(),
                                     strict=True))
    out.update(more)
    return out


def column_sd(x: np.ndarray, columns: list[str], side: str) -> np.ndarray:
    """Sample standard deviations (n − 1, NaN ignored); zero or undefined is an error."""
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.nanstd(x, axis=0, ddof=1)
    bad = np.flatnonzero(~(sd > 0))
    if len(bad):
        names = ", ".join(repr(columns[j]) for j in bad)
        raise DataError(f"column(s) {names} of the {side} data have no variance (constant, or "
                        "fewer than two values): the measure divides by the standard deviation")
    return sd


def standardize(x: np.ndarray, columns: list[str], side: str) -> np.ndarray:
    """R's ``scale()``: centre by the column means and divide by the sample SDs (NaN ignored)."""
    return (x - np.nanmean(x, axis=0)) / column_sd(x, columns, side)


def complete_rows(x: np.ndarray) -> np.ndarray:
    """Mask of the rows without a missing value."""
    return ~np.isnan(x).any(axis=1)
