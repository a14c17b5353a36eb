"""The range of an integer or boolean column read without a float copy equals that of its
floats (the fidelity measures' ``value_range``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from anoneval.core.api import Microdata
from anoneval.plugins.fidelity._common import value_range

INTS = st.sampled_from([np.int8, np.int32, np.int64, np.uint8, np.uint64, np.bool_])


@settings(max_examples=200, deadline=None)
@given(INTS.flatmap(lambda t: hnp.arrays(t, st.integers(1, 50))))
def test_integer_range_equals_the_range_of_its_floats(values):
    floats = values.astype(np.float64)
    got = value_range(Microdata(pd.DataFrame({"x": values})), "x")
    assert got == (float(floats.min()), float(floats.max()))
    assert all(type(v) is float for v in got)


def test_extreme_integers_and_an_empty_column():
    big = np.array([2**63 - 1, -(2**63), 2**53 + 1], dtype=np.int64)
    assert value_range(Microdata(pd.DataFrame({"x": big})), "x") == (-(2.0**63), 2.0**63)
    empty = Microdata(pd.DataFrame({"x": np.array([], dtype=np.int64)}))
    assert all(np.isnan(value_range(empty, "x")))
