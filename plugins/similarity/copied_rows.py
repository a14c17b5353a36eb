"""Copied rows: released records that reproduce an original record."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    MeasureResult,
    Microdata,
    Params,
    RiskMeasure,
)
from anoneval.plugins._control import checked_control
from anoneval.plugins._shared.mixed import _as_float, is_numeric

#: (released, original) candidate pairs checked per chunk.
CHUNK_PAIRS = 1 << 22


def _expand(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Owner and position of every element of the ranges ``[starts[i], ends[i])``."""
    lengths = np.maximum(ends - starts, 0)
    owner = np.repeat(np.arange(len(starts)), lengths)
    offsets = np.cumsum(lengths) - lengths
    return owner, starts[owner] + np.arange(len(owner)) - offsets[owner]


def _close(real: np.ndarray, released: np.ndarray, tolerance: float) -> np.ndarray:
    """SDMetrics' numeric match: both missing, or |real − s| <= |tolerance · s|."""
    with np.errstate(invalid="ignore"):
        near = np.abs(real - released) <= np.abs(tolerance * released)
    return near | (np.isnan(real) & np.isnan(released))


def _compact(keys: np.ndarray) -> tuple[np.ndarray, int]:
    """Keys renumbered 0, 1, ... (same equalities) and their count."""
    codes, uniques = pd.factorize(keys)
    return codes.astype(np.int64), len(uniques)


def copied(real: pd.DataFrame, released: pd.DataFrame, tolerance: float) -> np.ndarray:
    """Whether each released row matches some real row: categories (and booleans) equal,
    missing matching missing, numbers within ``|real − s| <= |tolerance · s|``."""
    columns = list(real.columns)
    numeric = [c for c in columns if is_numeric(real[c]) and is_numeric(released[c])]
    cats = [c for c in columns if c not in numeric]
    both = pd.concat([real[columns], released[columns]], ignore_index=True)
    key_parts = [both[c] for c in cats]
    nums = {c: _as_float(both[c]) for c in numeric}
    if numeric:  # missingness of the searched column is part of the key
        key_parts.append(pd.Series(np.isnan(nums[numeric[0]])))
    n = len(real)
    group = np.zeros(len(both), dtype=np.int64)
    size = 1
    for part in key_parts:  # one code per combination; missing is a value of its own
        codes, uniques = pd.factorize(part, use_na_sentinel=False)
        if size * (len(uniques) + 1) >= 1 << 62:  # compact before the key could overflow
            group, size = _compact(group)
        group = group * (len(uniques) + 1) + codes
        size *= len(uniques) + 1
    group = _compact(group)[0]
    if not numeric:
        return np.isin(group[n:], group[:n])
    x = np.nan_to_num(nums[numeric[0]], nan=0.0)
    xr, xs = x[:n], x[n:]
    width = np.abs(tolerance * xs)
    lo = np.nextafter(xs - width, -np.inf)
    hi = np.nextafter(xs + width, np.inf)
    # rank every bound and real value (one sort), then search (group, rank) keys
    values, ranks = np.unique(np.concatenate([xr, lo, hi]), return_inverse=True)
    span = len(values) + 1
    m = len(released)
    real_key = group[:n] * span + ranks[:n]
    order = np.argsort(real_key, kind="stable")
    real_key = real_key[order]
    g = group[n:] * span
    left = np.searchsorted(real_key, g + ranks[n:n + m], side="left")
    right = np.searchsorted(real_key, g + ranks[n + m:], side="right")
    out = np.zeros(len(released), dtype=bool)
    start = 0
    while start < len(released):
        total = np.cumsum(right[start:] - left[start:])
        stop = start + max(1, int(np.searchsorted(total, CHUNK_PAIRS, side="right")))
        owner, pos = _expand(left[start:stop], right[start:stop])
        owner += start
        rows = order[pos]
        ok = np.ones(len(owner), dtype=bool)
        for c in numeric:
            ok &= _close(nums[c][rows], nums[c][n + owner], tolerance)
        out[np.unique(owner[ok])] = True
        start = stop
    return out


class CopiedRows(RiskMeasure):
    """Share of released records that copy an original record.

    A released record copies an original one when every column matches: categories,
    booleans and text equal, numbers within ``|original − released| <= |tolerance ·
    released|`` (SDMetrics' NewRowSynthesis rule, with its ``numerical_match_tolerance``;
    ``tolerance = 0`` asks for exact copies), a missing value matching only a missing value.
    The value is #{copying released records} / m (higher = riskier); ``details.score`` is
    SDMetrics' NewRowSynthesis, the share of new records (1 − value; SDMetrics docs,
    "NewRowSynthesis"). Columns: those of the original (``columns`` to choose). Exact and
    vectorised: candidates are found by sorting on the categories and the first numeric
    column, never by one query per row.

    With a control set (records of the same population held out of the release's making),
    ``details.control_rate`` is the share of released records copying a control record, the
    rate a release shows without having seen the records (common records recur in any
    sample), and ``details.excess`` = value − control_rate. Meaningful when control and
    original share no record (split by distinct records): else the shared ones count twice.
    """

    name = "CopiedRows"
    description = "Share of released records that copy an original record (1 − SDMetrics' "\
                  "NewRowSynthesis)."
    unit = "share"
    uses_control = "optional"

    class Params(Params):
        tolerance: float = Field(0.01, ge=0, description="Relative tolerance of numeric matches "
                                                         "(SDMetrics' default 0.01; 0 = exact).")
        columns: list[str] | None = Field(None, min_length=1,
                                          description="Columns compared; null: all of the "
                                                      "original's.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        if not isinstance(original, Microdata) or not isinstance(anonymized, Microdata):
            raise DataError("CopiedRows compares microdata")
        if len(original) == 0 or len(anonymized) == 0:
            raise DataError("CopiedRows needs records on both sides")
        columns = self.params.columns or original.columns
        original.require(columns, "CopiedRows column")
        anonymized.require(columns, "CopiedRows column")
        match = copied(original.frame[columns], anonymized.frame[columns],
                       self.params.tolerance)
        n_copied = int(match.sum())
        share = n_copied / len(anonymized)
        details = {"score": 1 - share, "num_new_rows": len(anonymized) - n_copied,
                   "num_matched_rows": n_copied, "tolerance": self.params.tolerance}
        if ctx.control is not None:
            control = checked_control(ctx.control, columns, self.name)
            rate = float(copied(control.frame[columns], anonymized.frame[columns],
                                self.params.tolerance).mean())
            details.update(control_rate=rate, excess=share - rate)
        return MeasureResult(value=share, details=details)

