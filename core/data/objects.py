"""Object columns read by object identity first: their distinct objects and integer codes.

A text column read by pandas (``read_csv``, ``read_parquet``) or built from a few labels holds
the same few string objects over and over. Its distinct *objects* are found by hashing the
cells' addresses (integers: a few milliseconds per 10⁶ cells, with no Python call per cell),
and everything that depends on the values only is then computed on those few objects:

* the kinds of values of the column (pandas' ``infer_dtype`` depends on the set of types
  present and the first present value, both the same for the distinct objects as for the
  column), so the survey of a column's kinds no longer scans every cell;
* the column's distinct values (the distinct values of its distinct objects);
* ``pd.factorize`` of the column: the objects' codes by value, taken by each cell's object
  code. Equal to ``pd.factorize`` of the column itself (the same codes and uniques, in order
  of first appearance: an object's first cell is its value's first cell when it is that
  value's first object), several times faster than hashing every cell's string.

A column whose cells are mostly distinct objects (e.g. a free-text or identifier column) gains
nothing from it: :func:`distinct_objects` tells from its first :data:`SAMPLE` cells and returns
None, and the callers read the column as before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Cells looked at to decide whether a column repeats its objects.
SAMPLE = 4_096


class _Addresses:
    """The cells of an object array seen as their objects' addresses (no copy); holds the
    array, so that the objects live as long as the view of their addresses."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        self.__array_interface__ = {
            "data": (values.__array_interface__["data"][0], True), "shape": values.shape,
            "typestr": np.dtype(np.uintp).str, "version": 3}


def addresses(values: np.ndarray) -> np.ndarray:
    """The address of each cell's object in a 1-D object array (read-only ``uintp``): equal
    addresses are the same object, for as long as ``values`` holds them."""
    if values.dtype != object or values.ndim != 1:
        raise TypeError("addresses need a 1-D object array")
    return np.asarray(_Addresses(np.ascontiguousarray(values)))


def distinct_objects(values: np.ndarray) -> np.ndarray | None:
    """The distinct objects of a 1-D object array, in order of first appearance (each object
    once, whatever its value); None when the array's first :data:`SAMPLE` cells are mostly
    distinct objects (reading by identity would cost more than it saves)."""
    cells = addresses(values)
    if len(pd.unique(cells[:SAMPLE])) * 2 > min(len(cells), SAMPLE) and len(cells) > 64:
        return None
    first = np.flatnonzero(~pd.Series(cells, copy=False).duplicated().to_numpy())
    return np.asarray(values)[first]


def factorize_objects(values: np.ndarray, objects: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(values)`` (codes, -1 for a missing value, and uniques) of a 1-D object
    array, through its distinct objects: ``objects`` when already known (see
    :func:`distinct_objects`; they must be this array's)."""
    if objects is None:
        objects = distinct_objects(values)
        if objects is None:
            codes, uniques = pd.factorize(values)
            return codes, np.asarray(uniques, dtype=object)
    object_codes, seen = pd.factorize(addresses(values))  # in first appearance
    if not np.array_equal(seen, addresses(objects)):  # not this array's objects (it changed)
        return factorize_objects(values)
    value_codes, uniques = pd.factorize(objects)
    return value_codes.take(object_codes), np.asarray(uniques, dtype=object)


__all__ = ["SAMPLE", "addresses", "distinct_objects", "factorize_objects"]
