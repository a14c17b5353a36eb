"""Shared parts of the fidelity measures: column choice, shared codes, SDMetrics' binning.

Every fidelity measure compares the original ("real") with the released data column by column
or pair by pair, scores each like SDMetrics does (1 = identical) and reports the loss
1 − mean score as its value; ``details.score`` is the mean score and ``details.columns`` or
``details.pairs`` the breakdown. Columns or pairs whose score is undefined are listed with
``score: null`` and a warning, and left out of the mean.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import (
    DataError,
    Dataset,
    MeasureResult,
    Microdata,
    Params,
    refuse_infinite,
    repeated,
)
from anoneval.plugins._shared.mixed import is_numeric


class FidelityParams(Params):
    columns: list[str] | None = Field(None, min_length=1,
                                      description="Columns compared; null: every column of the "
                                                  "original that fits the measure.")


def pair(original: Dataset | None, anonymized: Dataset | None, name: str
         ) -> tuple[Microdata, Microdata]:
    for role, data in (("original", original), ("anonymized", anonymized)):
        if not isinstance(data, Microdata):
            raise DataError(f"{name} compares microdata; the {role} data is missing or not "
                            "microdata")
        if len(data) == 0:
            raise DataError(f"{name}: the {role} data has no records")
    return original, anonymized  # type: ignore[return-value]


def choose(original: Microdata, anonymized: Microdata, columns: Sequence[str] | None,
           fits: Callable[[Any], bool], name: str, what: str) -> list[str]:
    """The given columns (present on both sides) or every column of the original whose dtype
    ``fits``."""
    if columns is None:  # told by the dtypes (``fits`` takes a dtype): no Series per column
        chosen = [c for c, dtype in original.dtypes.items() if fits(dtype)]
        if not chosen:
            raise DataError(f"{name}: the original has no {what} columns; its columns are: "
                            f"{', '.join(map(str, original.columns))}")
    else:
        chosen = list(columns)
        dup = repeated(chosen)
        if dup:
            raise DataError(f"{name}: columns listed twice: {', '.join(map(repr, dup))}")
    original.require(chosen, f"{name} column")
    anonymized.require(chosen, f"{name} column")
    return chosen


def dtypes_of(data: Microdata) -> Mapping[str, Any]:
    """Each column's dtype, without a Series per column (kept on the dataset)."""
    return data.dtypes


def numeric_only(original: Microdata, anonymized: Microdata, columns: Sequence[str],
                 name: str) -> None:
    kinds = [dtypes_of(original), dtypes_of(anonymized)]
    bad = [c for c in columns if not all(is_numeric(k[c]) for k in kinds)]
    if bad:
        raise DataError(f"{name} needs numeric columns; {', '.join(map(repr, bad))} are not")


def value_range(data: Microdata, column: str) -> tuple[float, float]:
    """The smallest and largest present value of a numeric (or datetime: nanoseconds, as
    :func:`as_number`) column, NaN for none; ±inf when an infinite value is present. Two
    SIMD passes (four when a value is missing), no copy of a float, integer or boolean column
    (rounding to float is monotone: the float of the integers' minimum is the minimum of
    their floats); kept on the dataset, so once per input object."""

    def compute() -> tuple[float, float]:
        s = data.frame[column]
        if pd.api.types.is_datetime64_any_dtype(s):
            values = as_number(s).to_numpy()
        elif isinstance(s.dtype, np.dtype) and s.dtype.kind in "iub":
            values = s.to_numpy()  # no missing value in a numpy integer or boolean column
            if not len(values):
                return np.nan, np.nan
            return float(np.minimum.reduce(values)), float(np.maximum.reduce(values))
        else:
            values = s.to_numpy(dtype=np.float64, na_value=np.nan)
        if not len(values):
            return np.nan, np.nan
        # np.minimum / np.maximum are SIMD; they give NaN when a value is missing, then the
        # NaN-ignoring (slower) fmin / fmax
        low, high = np.minimum.reduce(values), np.maximum.reduce(values)
        if np.isnan(low) or np.isnan(high):
            low, high = np.fmin.reduce(values), np.fmax.reduce(values)
        return float(low), float(high)

    return data.cached(("anoneval.fidelity.range", column), compute)


def require_finite(sides: Mapping[str, Microdata], columns: Sequence[str], name: str) -> None:
    """An infinite value in a numeric column is an error naming the column, the side and its
    row: the scores are defined on finite numbers, with missing values (NaN) kept apart."""
    for side, data in sides.items():
        dtypes = dtypes_of(data)
        for c in columns:
            if not pd.api.types.is_float_dtype(dtypes[c]):
                continue
            low, high = value_range(data, c)  # an infinite value is the lowest or highest
            if np.isinf(low) or np.isinf(high):
                refuse_infinite(data.frame[c].to_numpy(dtype=np.float64, na_value=np.nan),
                                f"{name}: column {c!r} of the {side} data",
                                "the scores need finite numbers (missing values may be empty)")


def is_categorical(series: pd.Series) -> bool:
    return not is_numeric(series)


def numeric_columns(original: Microdata, anonymized: Microdata, columns: Sequence[str] | None,
                    name: str) -> list[str]:
    """The given columns, numeric on both sides, or every numeric column of the original."""
    chosen = choose(original, anonymized, columns, is_numeric, name, "numeric")
    numeric_only(original, anonymized, chosen, name)
    require_finite({"original": original, "anonymized": anonymized}, chosen, name)
    return chosen


def as_number(series: pd.Series) -> pd.Series:
    """Numbers as floats; datetimes as nanoseconds (SDMetrics' pd.to_numeric)."""
    if pd.api.types.is_datetime64_any_dtype(series):
        return pd.Series(series.to_numpy(dtype="datetime64[ns]").astype("int64"),
                         dtype=float).where(series.notna().to_numpy())
    return series.astype(float)


def shared_codes(real: pd.Series, released: pd.Series, keep_missing: bool
                 ) -> tuple[np.ndarray, np.ndarray, int]:
    """Integer codes shared by both sides; missing is a code of its own when ``keep_missing``,
    else −1."""
    codes, uniques = pd.factorize(pd.concat([real, released], ignore_index=True),
                                  use_na_sentinel=not keep_missing)
    return codes[:len(real)], codes[len(real):], len(uniques)


def binned(real: pd.Series, released: pd.Series, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """SDMetrics' discretisation: ``bins`` equal-width bins over the real non-missing range,
    outer edges opened to ±∞; missing values fall in a bin of their own."""
    r, s = as_number(real).to_numpy(), as_number(released).to_numpy()
    present = r[~np.isnan(r)]
    if not len(present):
        raise DataError(f"column {real.name!r} of the original holds only missing values")
    edges = np.histogram_bin_edges(present, bins=bins)
    edges[0], edges[-1] = -np.inf, np.inf
    return np.digitize(r, edges), np.digitize(s, edges)


def tv(codes_r: np.ndarray, codes_s: np.ndarray, n_codes: int) -> float:
    """Total variation distance ½ Σ |p − q| of two code samples (codes < 0 are dropped)."""
    r, s = codes_r[codes_r >= 0], codes_s[codes_s >= 0]
    p = np.bincount(r, minlength=n_codes) / len(r)
    q = np.bincount(s, minlength=n_codes) / len(s)
    return float(np.abs(p - q).sum() / 2)


def result(rows: list[dict[str, Any]], key: str, warnings: list[str],
           extra: dict[str, Any] | None = None) -> MeasureResult:
    """Value 1 − mean score over the defined rows; the breakdown under ``key``."""
    scores = [r["score"] for r in rows if r["score"] is not None]
    if not scores:
        return MeasureResult(value=None, details={"score": None, key: rows, **(extra or {})},
                             warnings=[*warnings, "no column or pair has a defined score"])
    score = float(np.mean(scores))
    return MeasureResult(value=1 - score, details={"score": score, key: rows, **(extra or {})},
                         warnings=warnings)

