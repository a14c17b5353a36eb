"""Hostile and degenerate inputs: clear errors naming the side, column, row or option."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

from anoneval.core import ConfigError, DataError, Evaluator, evaluate, evaluate_many, load
from anoneval.core.cli.main import main
from anoneval.core.data.kinds import align_dtypes, as_dataset, sniff_separator
from anoneval.core.report.jsonable import to_jsonable
from anoneval.core.run.config import validate_config

QI = {"name": "ShareBelowK", "params": {"quasi_identifiers": ["a"]}}
FRAME = pd.DataFrame({"a": [1, 1, 2, 2], "b": ["x", "y", "x", "y"]})


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def run_cli(tmp_path: Path, config: dict[str, Any], capsys) -> tuple[int, str]:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code = main(["run", str(path), "-q", "-o", str(tmp_path / "report.json")])
    return code, capsys.readouterr().err


def config(anonymized: Any, original: Any = None, **extra: Any) -> dict[str, Any]:
    return {"original": original or {"path": "orig.csv"}, "anonymized": anonymized,
            "measures": [{"name": "KAnonymity", "params": {"quasi_identifiers": ["a"], "k": 2},
                          "threshold": {"max": 0.0}}], **extra}


# -- zero records ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "text", "expect"), [
    ("empty.csv", "", "the file is empty"),
    ("header.csv", "a,b\n", r"anonymized \(.*header.csv\): no records"),
    ("empty.jsonl", "\n", r"anonymized \(.*empty.jsonl\): no records"),
])
def test_empty_anonymized_file_is_an_error_naming_the_side(tmp_path: Path, capsys, name: str,
                                                           text: str, expect: str) -> None:
    FRAME.to_csv(tmp_path / "orig.csv", index=False)
    write(tmp_path / name, text)
    code, err = run_cli(tmp_path, config({"path": name}), capsys)
    assert code == 2
    assert err.startswith("error: anonymized")
    assert re.search(expect, err), err


def test_empty_original_and_empty_variant_are_named(tmp_path: Path, capsys) -> None:
    FRAME.to_csv(tmp_path / "full.csv", index=False)
    write(tmp_path / "orig.csv", "a,b\n")
    code, err = run_cli(tmp_path, config({"path": "full.csv"}), capsys)
    assert code == 2 and "original (" in err and "no records" in err
    FRAME.to_csv(tmp_path / "orig.csv", index=False)
    write(tmp_path / "v2.csv", "a,b\n")
    code, err = run_cli(tmp_path, config([{"name": "v1", "path": "full.csv"},
                                          {"name": "v2", "path": "v2.csv"}]), capsys)
    assert code == 2 and "anonymized variant 'v2'" in err and "no records" in err


def test_empty_variant_list_is_a_config_error(tmp_path: Path, toy_registry) -> None:
    FRAME.to_csv(tmp_path / "orig.csv", index=False)
    with pytest.raises(ConfigError) as err:
        validate_config(config([]), tmp_path, toy_registry)
    assert "at least one anonymized variant" in dict(err.value.problems)["anonymized"]


def test_all_trajectories_invalid_is_an_error_not_zero(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", "user_id,trajectory_id,timestamp,lon,lat\n"
                                     "1,1,0,500,10\n1,1,10,500,10\n")
    data = load(path, "trajectories", options={"timestamp_format": "epoch"})
    with pytest.raises(DataError, match=r"original .*no records: every trajectory was dropped"):
        evaluate(data, data, ["TrajectoriesRemoved"])


def test_python_api_refuses_empty_frames(toy_registry) -> None:
    empty = FRAME.iloc[:0]
    with pytest.raises(DataError, match=r"^original: no records"):
        evaluate(empty, FRAME, [QI], registry=toy_registry)
    with pytest.raises(DataError, match=r"^anonymized: no records"):
        evaluate(FRAME, empty, [QI], registry=toy_registry)
    with pytest.raises(DataError, match=r"^anonymized variant 'v2': no records"):
        evaluate_many(FRAME, {"v1": FRAME, "v2": empty}, [QI], registry=toy_registry)
    with pytest.raises(DataError, match="no anonymized variants"):
        evaluate_many(FRAME, {}, [QI], registry=toy_registry)
    with pytest.raises(ConfigError, match="measures: give at least one measure"):
        evaluate(FRAME, FRAME, [], registry=toy_registry)
    with pytest.raises(DataError, match=r"^anonymized: no records"):
        Evaluator(FRAME, [QI], registry=toy_registry).evaluate(pd.DataFrame())
    with pytest.raises(DataError, match=r"^anonymized: no records"):
        evaluate(None, pd.DataFrame({"n": []}), ["Threshold"], data_kind="table")


# -- timestamps, duplicate columns, nested values -------------------------------------------


@pytest.mark.parametrize("value", ["1e30", "-1e19", str(2**63)])
def test_epoch_out_of_range_names_the_row(tmp_path: Path, value: str) -> None:
    path = write(tmp_path / "t.csv", "user_id,trajectory_id,timestamp,lon,lat\n"
                                     f"1,1,0,5,10\n1,1,{value},5,10\n")
    with pytest.raises(DataError, match=r"data row 2 \(1-based.*epoch seconds must lie in"):
        load(path, "trajectories")


def test_duplicate_csv_header_is_an_error_naming_the_column(tmp_path: Path) -> None:
    write(tmp_path / "d.csv", "age;age;sex\n1;2;m\n")
    with pytest.raises(DataError, match="duplicate column name 'age' in the header"):
        load(tmp_path / "d.csv")
    write(tmp_path / "ok.csv", "age;age.1\n1;2\n")  # a real column named age.1 is fine
    assert load(tmp_path / "ok.csv").columns == ["age", "age.1"]


def test_repeated_json_key_names_the_line(tmp_path: Path) -> None:
    write(tmp_path / "d.jsonl", '{"age": 1, "sex": "m"}\n{"age": 2, "age": 3}\n')
    with pytest.raises(DataError, match="line 2: key 'age' appears more than once"):
        load(tmp_path / "d.jsonl")


def test_parquet_duplicate_and_nested_columns(tmp_path: Path) -> None:
    pq.write_table(pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["a", "a"]),
                   tmp_path / "dup.parquet")
    with pytest.raises(DataError, match="duplicate column name 'a'"):
        load(tmp_path / "dup.parquet")
    pq.write_table(pa.table({"a": [[1, 2], [3]], "s": [{"x": 1}, {"x": 2}], "b": [1, 2]}),
                   tmp_path / "nested.parquet")
    with pytest.raises(DataError, match=r"columns 'a' \(list.*'s' \(struct.*allowed: one "
                                        "scalar per cell"):
        load(tmp_path / "nested.parquet")
    write(tmp_path / "n.jsonl", '{"a": 1}\n{"a": [1, 2]}\n')
    with pytest.raises(DataError, match="line 2: column 'a' holds lists"):
        load(tmp_path / "n.jsonl")


def test_duplicate_frame_columns_in_the_python_api() -> None:
    frame = pd.DataFrame([[1, 2]], columns=["age", "age"])
    with pytest.raises(DataError, match="duplicate column name 'age'"):
        as_dataset(frame)


# -- the same values on both sides ----------------------------------------------------------


def test_text_and_numbers_form_the_same_classes(tmp_path: Path, toy_registry) -> None:
    orig = pd.DataFrame({"a": [39, 39, 40, 40]})
    anon = pd.DataFrame({"a": ["39", "39", "40", "40"]})
    entry = evaluate(orig, anon, [QI, "CountingPrepare"], registry=toy_registry)["ShareBelowK"]
    assert entry.value == 0.0
    assert any("read as the original's (int64)" in w for w in entry.warnings)
    orig.to_csv(tmp_path / "o.csv", index=False)
    anon.to_json(tmp_path / "a.jsonl", orient="records", lines=True)  # "39" stays text
    report = evaluate(load(tmp_path / "o.csv"), load(tmp_path / "a.jsonl"), [QI],
                      registry=toy_registry)
    assert report["ShareBelowK"].value == 0.0


def test_generalized_values_make_both_sides_text_without_touching_inputs() -> None:
    orig = as_dataset(pd.DataFrame({"age": [39, 40], "z": [1.0, 2.0]}))
    anon = as_dataset(pd.DataFrame({"age": ["30-39", "40-49"], "z": ["1", "2"]}))
    before = orig.frame.copy(), anon.frame.copy()
    o, a, notes = align_dtypes(orig, anon)
    assert list(o.frame["age"]) == ["39", "40"] and list(a.frame["age"]) == ["30-39", "40-49"]
    assert a.frame["z"].dtype == np.float64 and o.frame["z"].dtype == np.float64
    assert o is not orig and len(notes) == 2 and "both sides were read as text" in notes[0]
    pd.testing.assert_frame_equal(orig.frame, before[0])
    pd.testing.assert_frame_equal(anon.frame, before[1])
    assert align_dtypes(orig, anon)[0] is o  # the text copy of the original is made once


def test_a_text_side_that_reads_as_it_is_is_kept_with_its_cache() -> None:
    """Generalized text against numbers: the text side is the same object (its cached codes
    and its content hash's reuse of them survive) unless reading it as text changes it."""
    orig = as_dataset(pd.DataFrame({"age": [39, 40, 41]}))
    anon = as_dataset(pd.DataFrame({"age": ["30-39", "40-49", "40-49"]}))
    anon.codes("age")
    o, a, notes = align_dtypes(orig, anon)
    assert a is anon and ("codes", "age") in a._cache
    assert list(o.frame["age"]) == ["39", "40", "41"] and "both sides were read as text" in notes[0]
    missing = as_dataset(pd.DataFrame({"age": ["30-39", None, "40-49"]}))  # None: read as NaN
    _, converted, _ = align_dtypes(orig, missing)
    assert converted is not missing
    assert converted.frame["age"].isna().tolist() == [False, True, False]
    assert missing.frame["age"][1] is None  # the input is not modified


def test_mixed_types_in_one_column_are_read_as_text() -> None:
    orig = as_dataset(pd.DataFrame({"a": [39, "39", 40, "40"]}, dtype=object))
    o, _, notes = align_dtypes(orig, orig)
    assert list(o.frame["a"]) == ["39", "39", "40", "40"] and notes


def test_a_side_mixing_numbers_and_text_forms_one_class(tmp_path: Path, toy_registry) -> None:
    write(tmp_path / "a.jsonl", '{"a": 39}\n{"a": "39"}\n{"a": 40.0}\n{"a": "40"}\n')
    mixed = load(tmp_path / "a.jsonl")
    report = evaluate(None, mixed, [QI], registry=toy_registry)  # one side only
    assert report["ShareBelowK"].value == 0.0
    assert report["ShareBelowK"].warnings == [
        "anonymized: column 'a' mixes values of types float, int, str; read as numbers "
        '(int64), text such as "39" as the number']
    assert list(mixed.frame["a"]) == [39, "39", 40.0, "40"]  # the input is untouched
    frame = pd.DataFrame({"a": [39, "39", "x", "x"]}, dtype=object)  # Python API, one side
    entry = evaluate(frame, None, [QI], registry=toy_registry)["ShareBelowK"]
    assert entry.value == 0.0 and "original: column 'a'" in entry.warnings[0]
    assert "read as text, numbers as written" in entry.warnings[0]
    entry = evaluate(FRAME, frame, [QI], registry=toy_registry)["ShareBelowK"]
    assert entry.value == 0.0  # then aligned with the original's numbers: both sides text
    assert [w.split(":")[0] for w in entry.warnings] == ["anonymized", "column 'a' holds number "
                                                         "values in the original and text in "
                                                         "the anonymized data"]


def test_data_that_is_no_frame_names_the_side(toy_registry) -> None:
    accepted = r"expected a pandas DataFrame, an anoneval Dataset \(Microdata, Table, " \
               r"Trajectories\) or None, got list"
    with pytest.raises(TypeError, match="^anonymized: " + accepted):
        evaluate(FRAME, [[1, "x"]], [QI], registry=toy_registry)
    with pytest.raises(TypeError, match="^original: " + accepted):
        evaluate([1], FRAME, [QI], registry=toy_registry)
    with pytest.raises(TypeError, match=r"^control: .*got dict"):
        Evaluator(FRAME, [QI], registry=toy_registry, control={"a": [1]})
    with pytest.raises(TypeError, match=r"^anonymized variant 'v': .*got str; to read a file, "
                                        r"pass anoneval.core.load\(path\)"):
        evaluate_many(FRAME, {"v": "a.csv"}, [QI], registry=toy_registry)
    with pytest.raises(TypeError, match=r"^variants: expected a mapping of variant name"):
        evaluate_many(FRAME, [FRAME], [QI], registry=toy_registry)
    with pytest.raises(DataError, match="unknown data kind 'cube'"):
        as_dataset(FRAME, "cube")


def test_anonymized_side_inherits_the_original_options(tmp_path: Path, toy_registry) -> None:
    FRAME.to_csv(tmp_path / "o.csv", sep="|", index=False, encoding="latin-1")
    FRAME.to_csv(tmp_path / "a.csv", sep="|", index=False)
    raw = {"original": {"path": "o.csv", "options": {"sep": "|", "dtype": {"a": "str"}}},
           "anonymized": {"path": "a.csv", "options": {"encoding": "latin-1"}},
           "measures": [QI]}
    plan = validate_config(raw, tmp_path, toy_registry)
    opts = plan.anonymized[0].options
    assert (opts.sep, opts.dtype, opts.encoding) == ("|", {"a": "str"}, "latin-1")
    raw["anonymized"] = {"path": "a.csv", "kind": "table"}  # another kind: nothing inherited
    raw["measures"] = ["Analytic"]
    assert validate_config(raw, tmp_path, toy_registry).anonymized[0].options.sep is None


# -- params and thresholds ------------------------------------------------------------------


def test_strict_params_in_every_plugin() -> None:
    from typing import get_args

    from anoneval.registry import build_registry

    registry = build_registry(entry_points=False)
    checked = 0
    for entry in registry.entries():
        cls = registry.get(entry.kind, entry.name)
        for name, field in cls.Params.model_fields.items():
            types = {field.annotation, *get_args(field.annotation)}
            bad: list[Any] = []
            if int in types and float not in types:
                bad = [True, "3", 2.5]
            elif bool in types:
                bad = [1, "true"]
            elif float in types:
                bad = [True, "0.5", math.nan, math.inf]
            for value in bad:
                with pytest.raises(ValidationError) as err:
                    cls.Params.model_validate({name: value})
                locs = [e["loc"][0] for e in err.value.errors()]
                assert name in locs, (entry.name, name, value)
                checked += 1
    assert checked > 100


def test_numpy_scalars_are_accepted_in_the_python_api(toy_registry) -> None:
    m = {"name": "ShareBelowK", "params": {"quasi_identifiers": ["a"], "k": np.int64(2)}}
    assert evaluate(FRAME, FRAME, [m], registry=toy_registry)["ShareBelowK"].value == 0.0


@pytest.mark.parametrize(("threshold", "path", "message"), [
    ({"max": math.nan}, "measures[0].threshold.max", "finite number"),
    ({"min": -math.inf}, "measures[0].threshold.min", "finite number"),
    ({"min": 2, "max": 1}, "measures[0].threshold", "min (2) is greater than max (1)"),
    ({"max": True}, "measures[0].threshold.max", "valid number"),
])
def test_bad_thresholds_are_config_errors(tmp_path: Path, toy_registry, threshold: dict,
                                          path: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        validate_config({"measures": [{"name": "Analytic", "threshold": threshold}]},
                        tmp_path, toy_registry)
    assert message in dict(err.value.problems)[path]
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        evaluate(None, None, [{"name": "Analytic", "threshold": threshold}],
                 registry=toy_registry)


def test_non_finite_values_are_null_with_the_reason() -> None:
    assert to_jsonable({"a": math.inf, "b": [-math.inf, math.nan, 1.0]}) == {
        "a": None, "b": [None, None, 1.0]}
    report = evaluate(None, None, [{"name": "MILeakage", "params": {
        "mechanism": "direct", "gamma": 1.0, "categories": 2}}])
    entry = report.to_dict()["measures"][0]
    assert entry["details"]["ldp_epsilon"] is None
    assert any("ldp_epsilon is infinite" in w for w in entry["warnings"])
    assert "inf" not in report.to_json().replace("infinite", "")


def test_an_infinite_value_becomes_null_with_a_warning(toy_registry) -> None:
    from _toy_plugins import Analytic

    entry = evaluate(None, None, [Analytic(value=0.5)], registry=toy_registry)["Analytic"]
    assert entry.value == 0.5
    from anoneval.core import MeasureResult

    class Infinite(Analytic):
        name = "Infinite"

        def compute(self, original, anonymized, ctx):  # type: ignore[no-untyped-def]
            return MeasureResult(value=math.inf, details={"t": pd.DataFrame({"x": [np.nan]})})

    entry = evaluate(None, None, [Infinite()], registry=toy_registry)["Infinite"]
    assert entry.value is None and entry.error is None
    assert "the value is inf" in entry.warnings[0] and "t.x" in entry.warnings[1]


# -- crashes that must be clear errors (exit 2) ---------------------------------------------


def test_unknown_encoding_and_dtype_are_config_errors(tmp_path: Path, capsys) -> None:
    FRAME.to_csv(tmp_path / "orig.csv", index=False)
    code, err = run_cli(tmp_path, config({"path": "orig.csv"}, {
        "path": "orig.csv", "options": {"encoding": "nope", "dtype": {"a": "integer64"}}}),
        capsys)
    assert code == 2
    assert "original.options.encoding: unknown encoding 'nope'" in err
    assert "original.options.dtype: column 'a': 'integer64' is not a data type" in err
    assert "Traceback" not in err


def test_dtype_that_does_not_fit_the_values(tmp_path: Path) -> None:
    write(tmp_path / "d.csv", "a\nx\n")
    with pytest.raises(DataError, match=r"d\.csv: cannot apply options\.dtype"):
        load(tmp_path / "d.csv", options={"dtype": {"a": "int64"}})
    write(tmp_path / "d.jsonl", '{"a": "x"}\n')
    with pytest.raises(DataError, match=r"cannot apply options\.dtype"):
        load(tmp_path / "d.jsonl", options={"dtype": {"a": "int64"}})
    with pytest.raises(DataError, match=r"invalid options: options\.encoding"):
        load(tmp_path / "d.jsonl", options={"encoding": "nope"})


def test_config_that_is_not_utf8_or_too_deep(tmp_path: Path, capsys) -> None:
    bad = write(tmp_path / "latin.json", '{"description": "caf\xe9"}'.encode("latin-1"))
    assert main(["validate", str(bad)]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err
    deep = write(tmp_path / "deep.json", '{"a": ' * 5000 + "1" + "}" * 5000)
    assert main(["validate", str(deep)]) == 2
    assert "nested too deeply" in capsys.readouterr().err
    nested: Any = 1
    for _ in range(5000):
        nested = {"a": nested}
    with pytest.raises(ConfigError):
        validate_config({"measures": [{"name": "KAnonymity", "params": nested}]}, tmp_path)


def test_wrong_separator_says_which_was_tried(tmp_path: Path) -> None:
    write(tmp_path / "d.csv", "a;b\n1;2\n")
    with pytest.raises(DataError, match=r"""separator ',' \(options.sep\), but the header """
                                        """holds ';'; set "options": {"sep": ...}"""):
        load(tmp_path / "d.csv", options={"sep": ","})
    write(tmp_path / "e.csv", "a,b\n1,2\n3,4,5\n")
    with pytest.raises(DataError, match=r"separator ',' \(sniffed from the file\).*options"):
        load(tmp_path / "e.csv")


def test_separator_sniffing_reads_whole_long_rows(tmp_path: Path) -> None:
    path = write(tmp_path / "d.csv", "a;b\n" + "x" * 100_000 + ";1\n" + "y;2\n")
    assert sniff_separator(path) == ";"
    assert load(path).frame.shape == (2, 2)
    quoted = write(tmp_path / "q.csv", 'a;b\n"1,5";2\n"3,5";4\n')
    assert sniff_separator(quoted) == ";"


def test_bom_crlf_nul_and_huge_ints(tmp_path: Path) -> None:
    bom = write(tmp_path / "bom.csv", "\ufeffa;b\r\n1;2\r\n".encode())
    assert load(bom).columns == ["a", "b"]
    jbom = write(tmp_path / "bom.jsonl", '\ufeff{"a": 1}\r\n{"a": 2}\r\n'.encode())
    assert load(jbom).frame["a"].tolist() == [1, 2]
    nul = write(tmp_path / "nul.csv", b"a,b\n1,2\n3,\x004\n")
    with pytest.raises(DataError, match="line 3 holds a NUL byte"):
        load(nul)
    huge = write(tmp_path / "huge.csv", f"a,b\n1,2\n{10**30},2\n")
    data = load(huge)  # beyond 64 bits: kept exactly, as text
    assert data.frame["a"].tolist() == ["1", str(10**30)] and data.content_hash()


# -- validation in one pass -----------------------------------------------------------------


def test_every_rule_reports_in_one_pass(tmp_path: Path, toy_registry) -> None:
    FRAME.to_csv(tmp_path / "o.csv", index=False)
    raw = {"original": {"path": "o.csv", "kind": "table"},
           "anonymized": [{"name": "v", "path": "o.csv", "options": {"encoding": "nope"}},
                          {"name": "v", "path": "o.csv"}],
           "measures": [{"name": "ShareBelowK", "params": {"quasi_identifiers": ["a"], "k": 0}},
                        {"name": "ShareBelowK", "label": "s", "params": {"quasi_identifiers":
                                                                         ["a"]}},
                        {"name": "Analytic", "label": "s"},
                        {"name": "Analytic", "label": "t", "threshold": {"min": 1, "max": 0}},
                        "NoSuchMeasure"],
           "seed": True}
    with pytest.raises(ConfigError) as err:
        validate_config(raw, tmp_path, toy_registry)
    found = dict(err.value.problems)
    assert "unknown encoding" in found["anonymized[0].options.encoding"]
    assert "duplicate variant name 'v'" in found["anonymized[1].name"]
    assert "greater than or equal to 1" in found["measures[0].params.k"]
    assert "accepts microdata data, not table" in found["measures[1]"]
    assert "two measures are labelled 's'" in found["measures[2].label"]
    assert "min (1) is greater than max (0)" in found["measures[3].threshold"]
    assert "unknown" in found["measures[4].name"]
    assert "valid integer" in found["seed"]


def test_python_api_uses_the_config_rules(toy_registry) -> None:
    with pytest.raises(ConfigError) as err:
        evaluate(FRAME, FRAME, [QI, {**QI, "threshold": {"min": 1, "max": 0}}],
                 registry=toy_registry)
    found = dict(err.value.problems)
    assert "labelled 'ShareBelowK'" in found["measures[1].label"]
    assert "greater than max" in found["measures[1].threshold"]
    table = as_dataset(pd.DataFrame({"a": [1]}), "table")
    entry = evaluate(FRAME, table, [QI], registry=toy_registry)["ShareBelowK"]
    assert entry.error == "ValueError: ShareBelowK accepts microdata data, not table"


def test_unknown_trajectory_role_is_a_config_error(tmp_path: Path, toy_registry) -> None:
    write(tmp_path / "t.csv", "uid,trajectory_id,timestamp,lon,lat\n1,1,0,5,10\n")
    raw = {"original": {"path": "t.csv", "kind": "trajectories",
                        "options": {"columns": {"user": "uid"}}}, "measures": ["Analytic"]}
    with pytest.raises(ConfigError) as err:
        validate_config(raw, tmp_path, toy_registry)
    assert "unknown role 'user'; allowed: user_id" in dict(err.value.problems)[
        "original.options.columns"]
