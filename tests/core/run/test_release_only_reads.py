"""Measures of the release alone (``Measure.release_columns``): evaluating a release neither
checks, surveys nor aligns the original's columns they read only when no release is given."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anoneval.core import Evaluator
from anoneval.core.data import kinds
from anoneval.core.errors import DataError
from anoneval.core.report.jsonable import to_jsonable

QI = ["age", "zip"]
#: Every measure that reads the release's class summaries and, of the original, its length.
RELEASE_ONLY = [
    {"name": "KAnonymity", "params": {"quasi_identifiers": QI, "k": 2}},
    {"name": "KAnonymity", "label": "listed",
     "params": {"quasi_identifiers": QI, "k": 3, "list_violations": 3}},
    {"name": "DM", "params": {"quasi_identifiers": QI, "k": 2}},
    {"name": "DMStar", "params": {"quasi_identifiers": QI}},
    {"name": "LDiversity", "params": {"quasi_identifiers": QI, "sensitive": ["disease"]}},
    *({"name": name, "params": {"quasi_identifiers": QI, "sensitive": ["disease"]}}
      for name in ("TCloseness", "DeltaDisclosure", "BetaLikeness", "AlphaKAnonymity")),
    {"name": "IndividualRisk", "params": {"quasi_identifiers": QI}},
    {"name": "PopulationUniqueness",
     "params": {"quasi_identifiers": QI, "sampling_fraction": 0.5}},
    {"name": "ReidentificationRisk", "params": {"quasi_identifiers": QI}},
]


def _release(n: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({
        "age": rng.choice(["2*", "3*", "4*"], n).astype(object),
        "zip": rng.choice(["130**", "148**"], n).astype(object),
        "disease": rng.choice(["flu", "cold", "cancer"], n).astype(object)})


def _values(report) -> list:
    """Each measure's value, details and error as in the JSON report (the original's hash
    left out: a list in a cell cannot be hashed)."""
    return [(e["value"], e["details"], e["error"])
            for e in to_jsonable([m.model_dump() for m in report.measures])]


@pytest.fixture
def surveyed(monkeypatch):
    """The (columns of the dataset, column) of every object column surveyed for its kinds."""
    seen: list[tuple[tuple[str, ...], str]] = []
    survey = kinds._kind

    def counted(data, col):
        seen.append((tuple(data.columns), col))
        return survey(data, col)

    monkeypatch.setattr(kinds, "_kind", counted)
    return seen


@pytest.mark.parametrize("spec", RELEASE_ONLY, ids=lambda s: s.get("label", s["name"]))
def test_an_original_column_that_fails_the_checks_is_not_read_given_a_release(spec):
    """A list in the original's quasi-identifier (refused by the scalar-cell check, naming its
    row) does not matter to a measure of the release: the same result as with a clean
    original; evaluated on the original alone, the check names the cell."""
    release = _release()
    clean = release.copy()
    broken = release.copy()
    broken["age"] = broken["age"].astype(object)
    broken.at[4, "age"] = ["2*", "3*"]
    got = Evaluator(broken, [spec]).evaluate(release)
    assert got.measures[0].error is None, got.measures[0].error
    assert _values(got) == _values(Evaluator(clean, [spec]).evaluate(release.copy()))
    if spec["name"] == "KAnonymity":  # it accepts the original alone: checked then
        with pytest.raises(DataError, match="age"):
            Evaluator(broken, [spec]).evaluate(None)


def test_no_survey_of_the_original_quasi_identifiers_given_a_release(surveyed):
    original = _release().assign(only_in_original=1)
    Evaluator(original, RELEASE_ONLY).evaluate(_release())
    assert [col for cols, col in surveyed if "only_in_original" in cols] == []
    assert {col for cols, col in surveyed if "only_in_original" not in cols} >= {*QI, "disease"}


@pytest.mark.parametrize(("name", "value"), [("Discernibility", 0.0), ("AECS", 2.0)])
def test_a_measure_reading_both_sides_still_surveys_and_aligns_the_original(
        surveyed, name, value):
    """Discernibility and AECS (its bounds) group the original's records too: its columns
    are surveyed, and a release's "39" is read as the original's 39."""
    original = pd.DataFrame({"age": [39, 39, 40, 40], "zip": ["a", "a", "b", "b"]})
    release = pd.DataFrame({"age": ["39", "39", "40", "40"], "zip": ["a", "a", "b", "b"]})
    spec = {"name": name, "params": {"quasi_identifiers": QI}}
    report = Evaluator(original.assign(only_in_original=1), [spec]).evaluate(release)
    assert report.measures[0].error is None
    assert report.measures[0].value == value
    if name == "AECS":  # the original's mean class size, read from its classes
        assert report.measures[0].details["min"] == 2.0
    assert any("age" in w and "anonymized" in w for w in report.measures[0].warnings)
    assert any(col == "zip" for cols, col in surveyed if "only_in_original" in cols)


def test_the_original_alone_is_surveyed_when_it_is_evaluated(surveyed):
    """Evaluated without a release, the measure reads the original: its mixed column
    (39 and "39") is read as one kind, once, by the same evaluator that evaluated a release
    without surveying it."""
    original = pd.DataFrame({"age": [39, "39", 40, 40], "zip": ["a"] * 4, "only": 1})
    spec = {"name": "KAnonymity", "params": {"quasi_identifiers": QI, "k": 2}}
    ev = Evaluator(original, [spec])
    release = pd.DataFrame({"age": ["3*"] * 4, "zip": ["a"] * 4})
    assert ev.evaluate(release).measures[0].details["achieved_k"] == 4
    assert not [col for cols, col in surveyed if "only" in cols]
    for _ in range(2):
        alone = ev.evaluate(None).measures[0]
        assert alone.error is None
        assert alone.details["achieved_k"] == 2  # 39 and "39" in one class
        assert any("mixes values" in w for w in alone.warnings)
    assert [col for cols, col in surveyed if "only" in cols].count("age") == 1
    assert ev.evaluate(release.copy()).measures[0].details["achieved_k"] == 4


cells = st.sampled_from(["a", "b", "*", None, 1, "1", 2.5])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(cells, cells, cells, cells), min_size=1, max_size=25))
def test_the_result_is_that_of_the_release_alone(rows):
    """Whatever the original holds (mixed kinds, missing values), a measure of the release
    gives what it gives on the release evaluated alone as an original."""
    frame = pd.DataFrame(rows, columns=["age", "zip", "o_age", "o_zip"], dtype=object)
    release = frame[["age", "zip"]].copy()
    release["disease"] = np.where(np.arange(len(frame)) % 2 == 0, "flu", "cold")
    original = release.copy()
    original["age"], original["zip"] = frame["o_age"], frame["o_zip"]
    with_original = Evaluator(original, RELEASE_ONLY).evaluate(release)
    alone = Evaluator(release.copy(), RELEASE_ONLY).evaluate(None)
    for a, b in zip(_values(with_original), _values(alone), strict=True):
        assert (a[2] is None) == (b[2] is None), (a[2], b[2])
        assert repr(a[:2]) == repr(b[:2])
