"""Per-record tables: figures of equivalence classes spread onto the released rows.

A measure's ``per_record`` table has one row per released row, in the released data's order,
led by the ``id`` column when the params name one. Suppressed rows belong to no class: their
``class`` is -1 and every class figure is null (``<NA>`` in integer and boolean columns, NaN in
float ones).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from anoneval.core.api import Microdata
from anoneval.plugins.microdata._common import Classes


class RecordTable:
    """Builds a per-record table from per-class arrays (index = class number)."""

    def __init__(self, data: Microdata, cl: Classes, id_col: str | None) -> None:
        row_class = cl.row_class()
        self._ok = row_class >= 0
        self._rc = np.maximum(row_class, 0)
        self._data = data
        self._id = id_col
        self.columns: dict[str, object] = {"class": row_class}
        self.add_int("class_size", cl.sizes)

    def _spread(self, per_class: np.ndarray, fill: object) -> np.ndarray:
        per_class = np.asarray(per_class)
        if not len(per_class):
            return np.full(len(self._rc), fill)
        return np.where(self._ok, per_class[self._rc], fill)

    def add_float(self, name: str, per_class: np.ndarray) -> None:
        """A float column: the class's value, NaN on suppressed rows."""
        self.columns[name] = self._spread(np.asarray(per_class, dtype=np.float64), np.nan)

    def add_int(self, name: str, per_class: np.ndarray) -> None:
        """A nullable integer column: the class's value, <NA> on suppressed rows."""
        values = pd.array(self._spread(np.asarray(per_class, dtype=np.int64), 0), dtype="Int64")
        values[~self._ok] = pd.NA
        self.columns[name] = values

    def add_bool(self, name: str, per_class: np.ndarray) -> None:
        """A nullable boolean column: the class's value, <NA> on suppressed rows."""
        values = pd.array(self._spread(np.asarray(per_class, dtype=bool), False),
                          dtype="boolean")
        values[~self._ok] = pd.NA
        self.columns[name] = values

    def frame(self) -> pd.DataFrame:
        """The table, led by the id column when one is named and present."""
        out = pd.DataFrame(self.columns)
        if self._id is not None and self._id in self._data.frame.columns:
            out.insert(0, self._id, self._data.frame[self._id].to_numpy())
        return out
