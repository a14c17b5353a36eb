"""The report's JSON: measure details of any shape become plain JSON values, and the text the
report writes parses back to exactly those values."""

from __future__ import annotations

import enum
import json
import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import evaluate
from anoneval.core.report.jsonable import to_jsonable


class Colour(enum.Enum):
    RED = "red"
    ONE = 1


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(), st.text(),
    st.sampled_from(list(Colour)),
    st.floats(width=32).map(np.float32), st.integers(-2**31, 2**31).map(np.int64),
    st.booleans().map(np.bool_))
DETAILS = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.lists(inner, max_size=4).map(tuple),
    st.dictionaries(st.one_of(st.text(max_size=5), st.integers(-9, 9)), inner, max_size=4)),
    max_leaves=25)


def plain(obj: Any) -> Any:
    """The JSON value of ``obj`` told value by value: what the report must hold."""
    if isinstance(obj, Colour):
        return plain(obj.value)
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


@settings(max_examples=200, deadline=None)
@given(DETAILS)
def test_details_become_plain_json_values(details: Any) -> None:
    got = to_jsonable(details)
    assert got == plain(details)
    assert json.loads(json.dumps(got, allow_nan=False)) == got  # JSON, no NaN or infinity


@settings(max_examples=100, deadline=None)
@given(DETAILS)
def test_the_report_text_parses_to_its_values(details: Any) -> None:
    report = evaluate(None, None, [{"name": "MILeakage", "params": {
        "mechanism": "direct", "gamma": 1.0, "categories": 2}}])
    report.measures[0].details = {"shown": details}
    values = report.to_dict()
    assert values["measures"][0]["details"]["shown"] == plain(details)
    for indent in (2, None):  # every number read back is the same float or int
        assert json.loads(report.to_json(indent)) == values
