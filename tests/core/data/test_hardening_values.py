"""Values and frames that look usable but are not: infinite numbers, unnamed or multi-level
columns, seeds numpy cannot take. Each is a clear error (or, for integer column labels, a
documented conversion), never a number computed from them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anoneval.core import ConfigError, DataError, evaluate
from anoneval.core.cli.main import main

N = 8
ORIGINAL = pd.DataFrame({"id": range(N), "c": [np.inf, *np.arange(1.0, N)],
                         "d": np.arange(N) * 1.5 + 2, "s": list("xyxyxyxy")})
RELEASED = ORIGINAL.assign(c=[0.5, 1.5, 2.5, -np.inf, 4.5, 5.5, 6.5, 7.5])

#: Measures that compute on numbers, with params reading the columns ``c`` and ``d``.
NUMERIC = [
    ("IL1", {"columns": ["c", "d"]}), ("IL1s", {"columns": ["c", "d"]}),
    ("CorrelationLoss", {"columns": ["c", "d"]}), ("EigenvalueLoss", {"columns": ["c", "d"]}),
    ("VariableDistanceLoss", {"columns": ["c", "d"]}),
    ("IntervalDisclosure", {"columns": ["c", "d"]}),
    ("RobustIntervalDisclosure", {"columns": ["c", "d"]}),
    ("StatisticDifference", {"columns": ["c", "d"]}),
    ("RangeCoverageLoss", {"columns": ["c", "d"]}),
    ("CorrelationDifference", {"columns": ["c", "d"]}),
    ("ContingencyDistance", {"columns": ["c", "d"]}),
    ("KSDistance", {"columns": ["c", "d"]}), ("EnergyStatistic", {"columns": ["c", "d"]}),
    ("DistanceToClosestRecord", {"columns": ["c", "d"]}), ("ClosePairs", {"columns": ["c", "d"]}),
    ("NNDR", {"distance": {"name": "Gower", "params": {"columns": ["c", "d"]}}}),
]


@pytest.mark.parametrize("name,params", NUMERIC, ids=[n for n, _ in NUMERIC])
def test_an_infinite_value_is_an_error_naming_column_and_row(name: str, params: dict) -> None:
    m = evaluate(ORIGINAL, RELEASED, [{"name": name, "params": params}]).measures[0]
    assert m.value is None and m.error is not None, (name, m.value)
    assert m.error.startswith("DataError") and "'c'" in m.error and "infinite" in m.error
    # the row of the first infinite value of the side named: original row 1 or released row 4
    assert re.search(r"data row [14]\b", m.error), m.error


def test_an_infinite_value_in_a_model_feature_is_an_error() -> None:
    pytest.importorskip("sklearn")
    m = evaluate(ORIGINAL, RELEASED, [{"name": "PropensityMSE", "params": {
        "columns": ["c", "d", "s"], "model": "logistic"}}]).measures[0]
    assert m.error is not None and "'c'" in m.error and "data row 1" in m.error
    m = evaluate(ORIGINAL.assign(c=1.0), RELEASED, [{"name": "MLEfficacy", "params": {
        "target": "s", "features": ["c", "d"]}}]).measures[0]
    assert m.error is not None and "anonymized data" in m.error and "data row 4" in m.error


def test_finite_values_still_give_numbers() -> None:
    finite = ORIGINAL.assign(c=[3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0])
    for name, params in NUMERIC:
        m = evaluate(finite, finite.assign(c=finite["c"] + 0.25), [
            {"name": name, "params": params}]).measures[0]
        assert m.error is None, (name, m.error)


def test_integer_column_labels_are_names() -> None:
    frame = pd.DataFrame({0: [1, 1, 2], 1: ["a", "b", "b"]})
    m = evaluate(frame, frame, [{"name": "KAnonymity", "params": {
        "quasi_identifiers": ["0"]}}]).measures[0]
    assert m.error is None and m.details["achieved_k"] == 1 and m.details["classes"] == 2
    assert list(frame.columns) == [0, 1]  # the caller's frame is untouched
    with pytest.raises(DataError, match="duplicate column name '1'"):
        evaluate(pd.DataFrame({1: [1], "1": [2]}), None, [{"name": "KAnonymity", "params": {
            "quasi_identifiers": ["1"]}}])


def test_multi_level_columns_are_an_error() -> None:
    frame = pd.DataFrame([[1, 2], [3, 4]], columns=pd.MultiIndex.from_tuples([("a", "x"),
                                                                              ("a", "y")]))
    with pytest.raises(DataError, match="several levels"):
        evaluate(frame, frame, [{"name": "KAnonymity", "params": {"quasi_identifiers": ["a"]}}])


@pytest.mark.parametrize("seed", ["1", 1.5, True, -1, None])
def test_a_seed_numpy_cannot_take_is_a_config_error(seed: object) -> None:
    with pytest.raises(ConfigError, match="seed: a non-negative integer"):
        evaluate(ORIGINAL, ORIGINAL, [{"name": "KAnonymity", "params": {
            "quasi_identifiers": ["s"]}}], seed=seed)  # type: ignore[arg-type]
    assert evaluate(ORIGINAL, ORIGINAL, [{"name": "KAnonymity", "params": {
        "quasi_identifiers": ["s"]}}], seed=np.int64(3)).seed == 3


def test_a_negative_seed_in_a_config_is_refused(tmp_path: Path, capsys) -> None:
    ORIGINAL.to_csv(tmp_path / "o.csv", index=False)
    (tmp_path / "c.json").write_text(json.dumps({
        "original": {"path": "o.csv"}, "anonymized": {"path": "o.csv"}, "seed": -1,
        "measures": [{"name": "KAnonymity", "params": {"quasi_identifiers": ["s"]}}],
        "output": "r.json"}))
    assert main(["run", str(tmp_path / "c.json"), "-q"]) == 2
    assert "seed" in capsys.readouterr().err and not (tmp_path / "r.json").exists()


KANON = [{"name": "KAnonymity", "params": {"quasi_identifiers": ["s"]}}]


@pytest.mark.parametrize("side", ["original", "anonymized", "control"])
@pytest.mark.parametrize("cell", [{"x": 1}, [1, 2], {3}, np.array([1.0]), (1, 2)],
                         ids=["dict", "list", "set", "array", "tuple"])
def test_a_cell_that_is_not_a_scalar_is_an_error_naming_side_column_and_row(
        side: str, cell: object) -> None:
    bad = ORIGINAL.assign(c=ORIGINAL["c"].astype(object))
    bad.at[2, "c"] = cell
    frames = {"original": ORIGINAL, "anonymized": ORIGINAL, "control": ORIGINAL} | {side: bad}
    # Discernibility reads both sides' (KAnonymity, given a release, only the release's)
    reads_c = [{"name": "Discernibility", "params": {"quasi_identifiers": ["s", "c"]}}]
    with pytest.raises(DataError, match=rf"^{side}: column 'c' holds a {type(cell).__name__} "
                                        r"at data row 3 .*one scalar per cell"):
        evaluate(frames["original"], frames["anonymized"], reads_c, control=frames["control"])
    # a column no measure reads is not scanned (that scan would be a fixed cost of every call)
    report = evaluate(frames["original"], frames["anonymized"], KANON, control=frames["control"])
    assert report.measures[0].error is None


def test_mixed_scalar_cells_are_values() -> None:
    mixed = ORIGINAL.assign(s=[1, "x", None, b"y", 1, "x", None, b"y"])
    m = evaluate(mixed, mixed, KANON).measures[0]
    assert m.error is None and m.details["classes"] == 4


def test_variant_names_are_strings_and_distinct() -> None:
    from anoneval.core import evaluate_many

    report = evaluate_many(ORIGINAL, {1: ORIGINAL, 2: ORIGINAL}, KANON)
    assert [v.variant for v in report.variants] == ["1", "2"]
    with pytest.raises(ConfigError, match="two variants are named '1'"):
        evaluate_many(ORIGINAL, {1: ORIGINAL, "1": ORIGINAL}, KANON)
    with pytest.raises(ConfigError, match="empty name"):
        evaluate_many(ORIGINAL, {"": ORIGINAL, "b": ORIGINAL}, KANON)


@pytest.mark.parametrize("measures", [KANON[0], "KAnonymity"], ids=["dict", "str"])
def test_measures_must_be_a_list(measures: object) -> None:
    with pytest.raises(ConfigError, match="measures: a list of measures"):
        evaluate(ORIGINAL, ORIGINAL, measures)  # type: ignore[arg-type]


def test_an_empty_variant_name_in_a_config_is_refused(tmp_path: Path, capsys) -> None:
    ORIGINAL.to_csv(tmp_path / "o.csv", index=False)
    (tmp_path / "c.json").write_text(json.dumps({
        "original": {"path": "o.csv"}, "anonymized": [{"name": "", "path": "o.csv"}],
        "measures": KANON, "output": "r.json"}))
    assert main(["run", str(tmp_path / "c.json"), "-q"]) == 2
    assert "anonymized[0].name" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
