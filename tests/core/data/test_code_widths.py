"""Codes and class ids held as int32 (half the memory of int64) never overflow a key.

Per-column codes and per-row class ids are cached for a whole run, so they are int32 when their
range allows; every mixed-radix key built from them (``key * card + codes``) must be formed in
int64. These tests sit at the boundaries: an int32 range that just fits or just does not, key
products beyond 2^31 (where an int32 product would wrap) and beyond 2^62 (where the int64 key is
re-densified). Oracles: a brute-force lexicographic ranking of the code tuples
(``np.unique(axis=0)``) and pandas' sorted ``groupby().ngroup()``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core.data import summary
from anoneval.core.data.summary import class_codes
from anoneval.plugins.microdata._common import _combine, pair_counts

INT32_MAX = int(np.iinfo(np.int32).max)


def _brute_ranks(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Dense lexicographic rank of each row's code tuple, and the distinct tuples."""
    tuples = np.stack([c.astype(np.int64) for c in columns], axis=1)
    uniq, inverse = np.unique(tuples, axis=0, return_inverse=True)
    return inverse.reshape(-1), uniq


def test_compact_switches_to_int64_exactly_past_the_int32_range() -> None:
    codes = np.array([0, 5], dtype=np.int64)
    assert summary._compact(codes, INT32_MAX).dtype == np.int32
    assert summary._compact(codes, INT32_MAX + 1).dtype == np.int64
    assert summary._compact(codes, INT32_MAX).tolist() == [0, 5]


def test_column_codes_are_int32_with_missing_last() -> None:
    codes, uniques = summary._codes(pd.Series(["b", None, "a", "b"], dtype=object))
    assert codes.dtype == np.int32
    assert codes.tolist() == [1, 2, 0, 1] and list(uniques) == ["a", "b"]


def _huge_columns(cards: list[int], rows: int, seed: int) -> list[tuple[np.ndarray, pd.Index]]:
    """Columns of ``cards`` distinct values (missing included) with codes near both ends of
    their range, as :func:`summary._codes` would give them (int32)."""
    rng = np.random.default_rng(seed)
    out = []
    for card in cards:
        ends = np.array([0, 1, card - 2, card - 1])
        codes = np.where(rng.random(rows) < 0.5, rng.choice(ends, rows),
                         rng.integers(0, card, rows))
        out.append((codes.astype(np.int32), pd.RangeIndex(card - 1)))
    return out


def test_group_key_past_int32_products() -> None:
    """Two columns of 70,000 values: their key reaches 4.9·10^9, beyond int32."""
    columns = _huge_columns([70_000, 70_000], 5_000, seed=1)
    ids, coded = summary._group(columns, 5_000)
    expected, uniq = _brute_ranks([c for c, _ in columns])
    assert ids.dtype == np.int32
    np.testing.assert_array_equal(ids, expected)
    for j, (codes, _) in enumerate(coded):
        np.testing.assert_array_equal(codes, uniq[:, j])


def test_group_key_redensified_before_int64_overflows() -> None:
    """Three columns of 2^21 values: 2^63 key combinations, re-densified at the third."""
    columns = _huge_columns([2**21] * 3, 3_000, seed=2)
    ids, coded = summary._group(columns, 3_000)
    expected, uniq = _brute_ranks([c for c, _ in columns])
    np.testing.assert_array_equal(ids, expected)
    for j, (codes, _) in enumerate(coded):
        np.testing.assert_array_equal(codes, uniq[:, j])


def test_histogram_of_int32_class_ids_beyond_the_int32_key_range() -> None:
    """Class ids near 2^30 times 3 values: the (class, value) key passes 2^31."""
    classes = np.array([2**30, 2**30, 5, 2**30 + 7], dtype=np.int32)
    hist = summary._histogram(classes, pd.Series(["b", "a", "b", None], dtype=object),
                              np.ones(4, dtype=np.int64))
    assert hist["class"].tolist() == [5, 2**30, 2**30, 2**30 + 7]
    assert hist["value"].tolist()[:3] == ["b", "a", "b"] and pd.isna(hist["value"].iloc[3])
    assert hist["count"].tolist() == [1, 1, 1, 1]


def test_microdata_combine_past_int32_and_int64_keys() -> None:
    for cards, seed in (([70_000, 70_000], 3), ([2**21] * 3, 4)):
        columns = _huge_columns(cards, 4_000, seed)
        ids, n_groups = _combine([c for c, _ in columns], cards, 4_000)
        expected, uniq = _brute_ranks([c for c, _ in columns])
        np.testing.assert_array_equal(ids, expected)
        assert n_groups == len(uniq)


def test_pair_counts_of_int32_codes_past_the_int32_range() -> None:
    rng = np.random.default_rng(5)
    a = rng.choice([0, 69_999, 123], 2_000).astype(np.int32)
    b = rng.choice([0, 69_998, 7], 2_000).astype(np.int32)
    pa, pb, counts = pair_counts(a, 70_000, b, 70_000)
    uniq, expected = np.unique(np.stack([a, b], axis=1).astype(np.int64), axis=0,
                               return_counts=True)
    np.testing.assert_array_equal(np.stack([pa, pb], axis=1), uniq)
    np.testing.assert_array_equal(counts, expected)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["x", "y", "zz", None]),
                          st.one_of(st.none(), st.integers(-3, 3))), min_size=1, max_size=40))
def test_class_ids_equal_pandas_sorted_groups(rows: list[tuple[str | None, int | None]]) -> None:
    """Row classes equal pandas' sorted group numbers (missing values last), whatever the
    dtype of the ids."""
    frame = pd.DataFrame(rows, columns=["a", "b"]).astype({"a": object, "b": "float64"})
    classes = class_codes(frame, ["a", "b"])
    expected = frame.groupby(["a", "b"], sort=True, dropna=False).ngroup().to_numpy()
    assert classes.ids.dtype == np.int32
    np.testing.assert_array_equal(classes.ids, expected)
    np.testing.assert_array_equal(classes.counts, np.bincount(expected))
    keys = classes.keys
    for col in ("a", "b"):
        first = frame.groupby(["a", "b"], sort=True, dropna=False)[col].first()
        assert keys[col].isna().tolist() == first.isna().tolist()
