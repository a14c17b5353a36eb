"""Every measure that reads the control set refuses a bad one with an error naming it
(issue 23): an infinite value, a single record, a column of only missing values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anoneval.core import evaluate

DATA = Path(__file__).resolve().parents[2] / "data" / "synthetic"

MEASURES = [
    {"name": "SinglingOut", "params": {"n_attacks": 20, "columns": ["age", "income", "job"]}},
    {"name": "Linkability", "params": {"n_attacks": 20,
                                       "aux_cols": [["age", "job"], ["income", "region"]]}},
    {"name": "AttributeInference", "params": {"n_attacks": 20, "aux_cols": ["age", "income"],
                                              "secret": "job"}},
    {"name": "MembershipInference", "params": {"n_attacks": 20,
                                               "columns": ["age", "income", "job"]}},
    {"name": "DistanceToClosestRecord", "params": {"mode": "overfitting",
                                                   "columns": ["age", "income", "job"]}},
    {"name": "NNDR", "params": {"distance": {"name": "Gower",
                                             "params": {"columns": ["age", "income", "job"]}}}},
]


@pytest.fixture(scope="module")
def shared() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    return tuple(pd.read_csv(DATA / f"{n}.csv").iloc[:200]
                 for n in ("original", "released", "control"))


def errors(ori, syn, ctl, measures=MEASURES) -> dict[str, str | None]:
    rep = evaluate(ori, syn, measures, control=ctl)
    for m in rep.measures:
        assert m.value is None, (m.label, m.value)
    return {m.label: m.error for m in rep.measures}


def test_good_control_set_gives_values(shared):
    rep = evaluate(*shared[:2], MEASURES, control=shared[2])
    for m in rep.measures:
        assert m.error is None and m.value is not None, (m.label, m.error)


def test_infinite_value_in_control_is_an_error_naming_it(shared):
    ori, syn, ctl = shared
    bad = ctl.assign(income=ctl["income"].where(ctl.index != 7, np.inf))
    for label, error in errors(ori, syn, bad).items():
        assert error is not None, label
        assert "income" in error and "control set" in error and "infinite" in error, (label,
                                                                                     error)
        if label != "NNDR":  # NNDR's distance names the column and side its own way
            assert "data row 8" in error, (label, error)


def test_infinite_value_in_original_or_release_is_an_error(shared):
    ori, syn, ctl = shared
    bad = syn.assign(age=syn["age"].where(syn.index != 3, -np.inf))
    for label, error in errors(ori, bad, ctl).items():
        assert error is not None and "infinite" in error and "age" in error, (label, error)


def test_one_record_control_is_an_error_naming_it(shared):
    ori, syn, ctl = shared
    for label, error in errors(ori, syn, ctl.iloc[:1]).items():
        assert error is not None and "control set has 1 record" in error, (label, error)


def test_all_missing_control_column_is_an_error_naming_it(shared):
    ori, syn, ctl = shared
    measures = [m for m in MEASURES if m["name"] != "NNDR"]  # NNDR: its distance's columns
    for label, error in errors(ori, syn, ctl.assign(income=np.nan), measures).items():
        assert error is not None, label
        assert "'income'" in error and "control set" in error and "only missing" in error, (
            label, error)
