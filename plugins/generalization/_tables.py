"""Hierarchy tables of ARX's quality models: each value's level and node, with ARX's fallback.

Conventions: see :mod:`anoneval.plugins.generalization._quality`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from anoneval.core.api import (
    Context,
    DataError,
    Microdata,
)
from anoneval.plugins.microdata._common import (
    Hierarchy,
    load_hierarchy,
)
from anoneval.plugins.microdata._hierarchy import listed, read_hierarchies

# -- hierarchy tables --------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """ARX's per-value lookups of one hierarchy (``QualityDomainShareRaw`` and friends).

    ``positions`` numbers every distinct text of the matrix. Per text: ``share`` = (#rows with that
    text at its highest level) / D (level 0: 1/D), as ``QualityDomainShareRaw``;
    ``first_level`` = the lowest level it occurs at (``QualityModelColumnOrientedPrecision``);
    ``lo``/``hi`` = the smallest and largest row it occurs in (``getNumbersFromHierarchy``).
    ``coded`` is the matrix as those positions.
    """

    path: str
    matrix: np.ndarray
    coded: np.ndarray
    share: np.ndarray
    first_level: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    raw: pd.Index
    root: str | None
    positions: dict[str, int]

    @property
    def domain(self) -> int:
        """D: the number of rows (raw values)."""
        return self.matrix.shape[0]

    @property
    def height(self) -> int:
        """The top level (number of columns − 1)."""
        return self.matrix.shape[1] - 1

    def lookup(self, texts: np.ndarray) -> np.ndarray:
        """Position of each text (-1 if absent); ``texts`` are a column's distinct values."""
        get = self.positions.get
        return np.fromiter((get(t, -1) for t in texts), dtype=np.int64, count=len(texts))

    def raw_rows(self, texts: np.ndarray, col: str) -> np.ndarray:
        """Row of each raw value; an error names the values column 0 lacks."""
        rows = self.raw.get_indexer(texts)
        if (rows < 0).any():
            raise DataError(
                f"hierarchy {self.path} of column {col!r} lacks the original value(s) "
                f"{listed(texts[rows < 0])}; every value of the original data must be in its "
                "first column")
        return rows


def _table(path: str, matrix: np.ndarray) -> Table:
    rows, levels = matrix.shape
    codes, uniques = pd.factorize(matrix.ravel(order="F"))  # level by level
    codes = codes.reshape((levels, rows))
    k = len(uniques)
    share = np.zeros(k)
    first = np.full(k, levels, dtype=np.int64)
    lo = np.full(k, rows, dtype=np.int64)
    hi = np.full(k, -1, dtype=np.int64)
    ids = np.arange(rows)
    for level in range(levels):
        c = codes[level]
        if level == 0:
            share[c] = 1.0 / rows
        else:
            share[np.unique(c)] = np.bincount(c, minlength=k)[np.unique(c)] / rows
        first[c] = np.minimum(first[c], level)
        np.minimum.at(lo, c, ids)
        np.maximum.at(hi, c, ids)
    tops = set(matrix[:, -1])
    return Table(path, matrix, codes.T.copy(), share, first, lo, hi,
                 pd.Index(matrix[:, 0]), tops.pop() if len(tops) == 1 else None,
                 {str(v): i for i, v in enumerate(uniques)})


_TABLES: dict[int, tuple[Hierarchy, Table]] = {}


def hierarchy_table(h: Hierarchy) -> Table:
    """The lookups of a loaded hierarchy, computed once per hierarchy object."""
    hit = _TABLES.get(id(h))
    if hit is None or hit[0] is not h:
        matrix = np.asarray(h.values)[h.codes]
        hit = _TABLES[id(h)] = (h, _table(h.path, matrix))
        if len(_TABLES) > 128:
            _TABLES.pop(next(iter(_TABLES)))
    return hit[1]


def _checked_table(col: str, path: str, ctx: Context, token: str) -> Table:
    """The table of a hierarchy file, checked (depth, tree) the first time it is read."""
    try:
        h = load_hierarchy(ctx.path(path), token)  # cached on path, mtime and size
    except DataError:
        h = None
    hit = _TABLES.get(id(h)) if h is not None else None
    if hit is None or hit[0] is not h:
        h = read_hierarchies({col: path}, ctx, token)[col]  # errors name the column
    return hierarchy_table(h)


def _raw_rows(original: Microdata, table: Table, texts: np.ndarray, col: str) -> np.ndarray:
    """:meth:`Table.raw_rows` of the original's values, cached on the original per table."""
    key = ("anoneval.generalization.rows", col, id(table))
    hit = original.cached(key, lambda: (table, table.raw_rows(texts, col)))
    return hit[1] if hit[0] is table else table.raw_rows(texts, col)


def fallback_table(col: str, texts: np.ndarray, token: str) -> Table:
    """ARX's trivial hierarchy without a user one: each distinct original value, then token."""
    values = pd.unique(texts)
    matrix = np.column_stack([values, np.full(len(values), token, dtype=object)])
    return _table(f"(distinct values of {col!r})", matrix)
