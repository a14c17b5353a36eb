"""ValueSurvey.of_values (what align_dtypes decides a column's kind from) against a brute force
that parses every present value on its own."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core.data.kinds import Microdata, ValueSurvey

TEXT = st.sampled_from(["1", "2", "07", "-3", "1.5", "2e3", "1e300", "9007199254740993", "abc",
                        "[20-40[", "", " 4 ", "nan", "inf", "0x1F", "3.0"])


def brute(values: list[object]) -> ValueSurvey:
    """Each present value parsed alone with float() (the survey's numbers are float64's)."""
    present = [v for v in values if not (v is None or (isinstance(v, float) and math.isnan(v)))]
    types = frozenset(type(v).__name__ for v in present)
    numeric, whole, small = not types & {"bool", "bool_", "bytes"}, True, True
    if numeric and present:
        parsed = []
        for v in present:
            try:
                parsed.append(float(pd.to_numeric(pd.Series([v], dtype=object)).iloc[0]))
            except (ValueError, TypeError):
                numeric = False
                break
        if numeric:
            numeric = not any(math.isnan(x) for x in parsed)
        if numeric:
            whole = all(x % 1 == 0 for x in parsed)
            small = all(abs(x) < 2**53 for x in parsed)
    return ValueSurvey(types, numeric, whole, small, len(present) < len(values))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(TEXT, st.none()), min_size=1, max_size=40))
def test_text_survey_equals_per_value_parsing(values: list[str | None]) -> None:
    got = ValueSurvey.of_values(pd.Series(values, dtype=object))
    want = brute(values)
    assert (got.types, got.numeric, got.missing) == (want.types, want.numeric, want.missing)
    if want.numeric:
        assert (got.whole, got.small) == (want.whole, want.small)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(TEXT, st.none()), min_size=1, max_size=30), st.randoms())
def test_text_survey_ignores_row_order_and_repeats(values: list[str | None], rnd) -> None:
    shuffled = values * 3
    rnd.shuffle(shuffled)
    assert (ValueSurvey.of_values(pd.Series(values, dtype=object))
            == ValueSurvey.of_values(pd.Series(shuffled, dtype=object)))


def test_mixed_types_are_not_merged_by_equality() -> None:
    """1 == True == 1.0: a column holding both is no number column (only text is deduplicated)."""
    survey = ValueSurvey.of_values(pd.Series([1, True, 1.0], dtype=object))
    assert survey.types == frozenset({"int", "bool", "float"})
    assert not survey.numeric


def test_generalized_column_of_many_rows() -> None:
    values = np.array(["[20-40[", "[40-60[", None] * 10_000, dtype=object)
    survey = ValueSurvey.of_values(pd.Series(values))
    assert survey == ValueSurvey(frozenset({"str"}), False, True, True, True)
    numbers = pd.Series(np.array(["12", "7", "3.5"] * 10_000, dtype=object))
    assert ValueSurvey.of_values(numbers) == ValueSurvey(frozenset({"str"}), True, False, True,
                                                         False)


POOL = st.one_of(TEXT, st.none(), st.just(float("nan")), st.integers(-5, 5),
                 st.floats(allow_nan=False, width=32), st.booleans())


@settings(max_examples=80, deadline=None)
@given(st.lists(POOL, min_size=1, max_size=8), st.lists(st.integers(0, 7), min_size=65,
                                                         max_size=300))
def test_a_dataset_surveys_a_column_by_its_distinct_objects(pool: list[object],
                                                             picks: list[int]) -> None:
    """A column repeating a few objects is surveyed on them: the same as every cell's."""
    column = pd.Series([pool[i % len(pool)] for i in picks], dtype=object)
    data = Microdata(pd.DataFrame({"a": column}))
    assert data.distinct_objects("a") is not None
    assert data.value_surveys(["a"])["a"] == ValueSurvey.of_values(column)
