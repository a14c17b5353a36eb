"""Numbers of the squared-error quality models: attribute types and the values a cell stands for.

Conventions: see :mod:`anoneval.plugins.generalization._quality`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from anoneval.core.api import (
    DataError,
    Microdata,
    data_row,
)
from anoneval.plugins.generalization._quality import Inputs, Side
from anoneval.plugins.microdata._common import (
    pair_counts,
)

if TYPE_CHECKING:
    from anoneval.plugins.generalization._cells import Cells, ColumnCells

# -- numbers for the squared-error models --------------------------------------------------------


def attribute_type(original: Microdata, col: str, types: dict[str, str]) -> str:
    """:func:`attribute_type_of` the original's column (the text check once per dataset)."""
    if col in types:
        return types[col]
    return attribute_type_of(original.frame[col].dtype,
                             lambda: original.cached(("anoneval.generalization.type", col),
                                                     lambda: _text_type(original.codes(col)[1])))


def attribute_type_of(dtype: Any, text_type: Callable[[], str]) -> str:
    """The type of a column of the original's ``dtype``: its pandas dtype, or, for a text
    column whose every value is a number (as when the release's generalized text made both
    sides read the column as text), integer or decimal (``text_type``: decided on the
    column's distinct values)."""
    if pd.api.types.is_bool_dtype(dtype):
        return "string"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_numeric_dtype(dtype):
        return "decimal"
    return text_type()


def _text_type(uniques: pd.Index) -> str:
    """'integer' or 'decimal' when every distinct value is a number, else 'string'."""
    values = pd.Series(np.asarray(uniques, dtype=object)).dropna()
    numbers = pd.to_numeric(values, errors="coerce")
    if len(values) == 0 or numbers.isna().any():
        return "string"
    return "integer" if bool((numbers == numbers.round()).all()) else "decimal"


def _parse(texts: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Texts as numbers; the mask says which parsed."""
    out = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(out)
    if kind == "integer":
        ok &= np.mod(np.where(ok, out, 0), 1) == 0
    return out, ok


@dataclass(frozen=True)
class Numbers:
    """A column as numbers, ARX's ``getColumnsAsNumbers``, per value and per value pair.

    ``x_lo``/``x_hi`` per original value, ``y_lo``/``y_hi`` per released value; ``a``, ``b``,
    ``w``: the (original, released) value pairs of the rows and how many rows have each.
    """

    x_lo: np.ndarray
    x_hi: np.ndarray
    y_lo: np.ndarray
    y_hi: np.ndarray
    a: np.ndarray
    b: np.ndarray
    w: np.ndarray


def value_pairs(inputs: Inputs, s: Side) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (original code, released code) pairs of the rows and their counts (cached)."""
    return inputs.cached(("pairs", s.name), lambda: pair_counts(
        s.orig, len(s.orig_texts), s.rel, len(s.rel_texts)))


def typed_columns(inputs: Inputs, original: Microdata, types: dict[str, str]
                  ) -> tuple[list[tuple[Side, Numbers]], dict[str, str]]:
    """Each quasi-identifier as :func:`numbers` of its type (declared in ``types``, else
    :func:`attribute_type`), and the types used (for details)."""
    kinds = {s.name: attribute_type(original, s.name, types) for s in inputs.columns}
    return [(s, numbers(inputs, s, kinds[s.name])) for s in inputs.columns], kinds


def numbers(inputs: Inputs, s: Side, kind: str) -> Numbers:
    """The column as numbers, as ARX's ``getColumnsAsNumbers`` (cached per type).

    ``string``: the smallest and largest hierarchy row of each value (ARX's ordinals; the
    token, if not in the hierarchy, spans all rows). ``integer``/``decimal``: the original's
    values; released cells of suppressed records, the token and the root span the original's
    [min, max]; the others are numbers if all parse, else each released value spans the
    [min, max] of the original values released as it. ARX does the same on its own outputs: a
    generalized column is typed STRING there, so its range parsers are never reached and the
    "hierarchy" mode (those empirical bounds) applies.
    """
    if kind not in s.numbers:
        a, b, w = value_pairs(inputs, s)
        s.numbers[kind] = side_numbers(s, a, b, w, kind,
                                       lambda bad: int(np.flatnonzero(bad[s.orig])[0]))
    return s.numbers[kind]


def cell_numbers(c: ColumnCells, kind: str) -> Numbers:
    """:func:`numbers` of a column's cells (cached on them)."""
    if kind not in c.numbers:
        s = c.side
        if kind == "string" and not s.given and c.first is None:
            raise DataError(
                f"column {s.name!r} is typed 'string' without a hierarchy: its numbers are "
                "positions in ARX's fallback hierarchy, the original's values in order of first "
                "appearance, which records paired by 'id' on the dask engine do not keep; give "
                "its hierarchy (hierarchies) or declare it 'integer'/'decimal' (types)")
        a, b, w = pair_counts(s.orig, len(s.orig_texts), s.rel, len(s.rel_texts), c.w)
        c.numbers[kind] = side_numbers(s, a, b, w, kind, lambda bad: c.first_row(bad[s.orig]))
    return c.numbers[kind]


def typed_cells(cells: Cells, types: dict[str, str]
                ) -> tuple[list[tuple[ColumnCells, Numbers]], dict[str, str]]:
    """:func:`typed_columns` of the cells of a comparison."""
    kinds = {c.side.name: types.get(c.side.name) or attribute_type_of(
        c.dtype, lambda c=c: _text_type(c.raw_values)) for c in cells.columns}
    return [(c, cell_numbers(c, kinds[c.side.name])) for c in cells.columns], kinds


def side_numbers(s: Side, a: np.ndarray, b: np.ndarray, w: np.ndarray, kind: str,
                 row_of: Callable[[np.ndarray], int | None]) -> Numbers:
    """The numbers of a column from its (original, released) value pairs ``a``, ``b`` with
    ``w`` records each; ``row_of`` finds the first row of the original values of a mask."""
    if kind == "string":
        s.require_known()
        t = s.table
        x = t.lookup(s.orig_texts)
        pos = s.rel_pos
        y_lo = np.where(pos >= 0, t.lo[np.maximum(pos, 0)], 0).astype(float)
        y_hi = np.where(pos >= 0, t.hi[np.maximum(pos, 0)], t.domain - 1).astype(float)
        return Numbers(t.lo[x].astype(float), t.hi[x].astype(float), y_lo, y_hi, a, b, w)
    if s.given:
        s.require_known()
    values, ok = _parse(s.orig_texts, kind)
    used = np.bincount(a, weights=w, minlength=len(s.orig_texts)) > 0
    if (used & ~ok).any():
        bad = s.orig_texts[used & ~ok][0]
        row = row_of(~ok)
        where = f" ({data_row(row)})" if row is not None else ""
        raise DataError(f"column {s.name!r} is declared {kind} (types), but the original has "
                        f"the non-numeric value {bad!r}{where}; declare it 'string' or fix the "
                        "value")
    lo_all, hi_all = float(values[used].min()), float(values[used].max())
    span = s.rel_suppressed_value
    parsed, parses = _parse(s.rel_texts, kind)
    rel_used = np.bincount(b, weights=w, minlength=len(s.rel_texts)) > 0
    if (rel_used & ~span & ~parses).any():  # generalized: the empirical ranges
        y_lo = np.full(len(s.rel_texts), np.inf)
        y_hi = np.full(len(s.rel_texts), -np.inf)
        np.minimum.at(y_lo, b, values[a])
        np.maximum.at(y_hi, b, values[a])
    else:
        y_lo, y_hi = parsed.copy(), parsed.copy()
    y_lo[span] = lo_all
    y_hi[span] = hi_all
    return Numbers(values, values, y_lo, y_hi, a, b, w)
