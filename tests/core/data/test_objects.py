"""Object columns read by identity first give what a pass over every cell gives."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core.api import Microdata
from anoneval.core.data.kinds import require_scalar_cells, unify_kinds
from anoneval.core.data.objects import SAMPLE, addresses, distinct_objects, factorize_objects
from anoneval.core.data.summary import _codes, column_codes
from anoneval.core.errors import DataError

#: Values of every kind an object column may hold, equal ones of different types included
#: (1, 1.0, True and Decimal(1) compare equal; "1" does not).
VALUES = ["aa", "bb", "1", "39", 39, 1, 1.0, True, False, 2.5, np.nan, None, pd.NA, pd.NaT,
          b"aa", decimal.Decimal("1"), dt.date(2020, 1, 1), pd.Timestamp("2020-01-01"),
          np.int64(7), np.float64(7.5)]


def _cells(picks: list[int], pool: list[object], copies: bool) -> np.ndarray:
    """An object array of ``pool[i]`` for each pick; with ``copies`` every text cell its own
    string object (as a row-by-row parser may make them)."""
    out = np.empty(len(picks), dtype=object)
    out[:] = [("".join(list(v)) if copies and isinstance(v, str) else v)
              for v in (pool[i] for i in picks)]
    return out


def _same(got: tuple[np.ndarray, np.ndarray], want: tuple[np.ndarray, object]) -> None:
    np.testing.assert_array_equal(got[0], want[0])
    want_uniques = np.asarray(want[1], dtype=object)
    assert len(got[1]) == len(want_uniques)
    for a, b in zip(got[1], want_uniques, strict=True):  # the same objects, not just equal
        assert a is b


def test_addresses_are_the_cells_objects() -> None:
    a, b = "x" * 3, "y" * 3
    cells = np.array([a, b, a, a], dtype=object)
    ptr = addresses(cells)
    assert ptr.tolist() == [id(a), id(b), id(a), id(a)]
    assert not ptr.flags.writeable
    strided = np.array([a, b, a, b, a, b], dtype=object)[::2]  # not contiguous: copied
    assert addresses(strided).tolist() == [id(a)] * 3
    with pytest.raises(TypeError):
        addresses(np.arange(3))


@given(st.lists(st.integers(0, len(VALUES) - 1), max_size=80), st.booleans())
@settings(max_examples=300, deadline=None)
def test_factorized_by_identity_equals_pandas(picks, copies) -> None:
    cells = _cells(picks, VALUES, copies)
    _same(factorize_objects(cells), pd.factorize(cells))
    objects = distinct_objects(cells)
    assert objects is not None  # small arrays always go by identity
    _same(factorize_objects(cells, objects), pd.factorize(cells))
    # the kinds of values, told from the distinct objects, are the whole column's
    assert (pd.api.types.infer_dtype(objects, skipna=True)
            == pd.api.types.infer_dtype(cells, skipna=True))
    assert (pd.api.types.infer_dtype(objects, skipna=False)
            == pd.api.types.infer_dtype(cells, skipna=False))


@given(st.lists(st.integers(0, 12), max_size=80), st.booleans())
@settings(max_examples=200, deadline=None)
def test_sorted_codes_by_identity_equal_pandas(picks, copies) -> None:
    """The class summaries' sorted codes (numbers and text that do not compare: by type,
    then text) are those of the cells read one by one."""
    cells = pd.Series(_cells(picks, VALUES, copies), dtype=object)
    got, want = _codes(cells, distinct_objects(cells.to_numpy())), _codes(cells, None)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1].equals(want[1])
    try:
        sorted_codes, sorted_values = pd.factorize(cells.to_numpy(), sort=True)
    except TypeError:
        return
    np.testing.assert_array_equal(np.where(got[0] == len(got[1]), -1, got[0]), sorted_codes)
    assert list(got[1]) == list(sorted_values)


def test_objects_of_another_array_are_not_trusted() -> None:
    """Distinct objects that are not the array's own (its cells replaced since) are found
    again: the codes stay pandas'."""
    a, b, c = "x" * 3, "y" * 3, "z" * 3
    cells = np.array([a, b, a, c], dtype=object)
    stale = distinct_objects(np.array([a, b, a, b], dtype=object))
    _same(factorize_objects(cells, stale), pd.factorize(cells))


def test_mostly_distinct_objects_are_read_cell_by_cell() -> None:
    n = 3 * SAMPLE
    cells = np.array([f"id{i}" for i in range(n)], dtype=object)
    assert distinct_objects(cells) is None
    _same(factorize_objects(cells), pd.factorize(cells))
    repeated = np.array(["ab", "cd"], dtype=object)[np.arange(n) % 2]
    objects = distinct_objects(repeated)
    assert objects is not None and objects.tolist() == ["ab", "cd"]


@pytest.mark.parametrize("copies", [False, True])
def test_a_dataset_shares_the_objects_between_survey_codes_and_groups(copies) -> None:
    """The survey of a text column's kinds finds its distinct objects; its codes, distinct
    values and sorted codes are read from them and equal those of every cell."""
    rng = np.random.default_rng(0)
    picks = rng.integers(0, 5, 20_000)
    labels = ["north", "south", "east", "west", None]
    frame = pd.DataFrame({"region": _cells(picks.tolist(), labels, copies),
                          "age": rng.integers(0, 90, 20_000)})
    data = Microdata(frame)
    unify_kinds(data, "original")  # the survey
    assert ("distinct_objects", "region") in data._cache
    codes, values = data.codes("region")
    want_codes, want_values = pd.factorize(frame["region"])
    np.testing.assert_array_equal(codes, np.where(want_codes < 0, len(want_values), want_codes))
    assert list(values[:-1]) == list(want_values) and values[-1] is None
    assert sorted(data.distinct("region").tolist()) == ["east", "north", "south", "west"]
    sorted_codes, sorted_values = column_codes(data, "region")
    want = _codes(frame["region"])
    np.testing.assert_array_equal(sorted_codes, want[0])
    assert sorted_values.equals(want[1])


def test_non_scalar_cells_are_still_refused_and_mixed_columns_unified() -> None:
    """A list among repeated text is found (its type is one of the distinct objects'); a
    column mixing 39 and "39" is still read as one kind."""
    cells = np.array(["ab", "cd"] * 3_000 + [[1, 2]] + ["ab"], dtype=object)
    data = Microdata(pd.DataFrame({"c": cells}))
    with pytest.raises(DataError, match=r"column 'c' holds a list at data row 6001"):
        require_scalar_cells(data, "original")
    mixed = Microdata(pd.DataFrame({"age": np.array([39, "39", 40] * 2_000, dtype=object)}))
    unified, notes = unify_kinds(mixed, "original")
    assert notes and "mixes values" in notes[0]
    assert unified.frame["age"].dtype == np.int64
