"""Config validation: everything is checked before anything runs, errors carry JSON paths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from anoneval.core.api import ConfigError
from anoneval.core.run.config import json_path, load_config, validate_config


@pytest.fixture
def files(tmp_path: Path) -> Path:
    df = pd.DataFrame({"age": [30, 30, 40, 50], "zip": ["a", "a", "b", "c"], "x": [1., 2, 3, 4]})
    df.to_csv(tmp_path / "orig.csv", sep=";", index=False)
    df.to_parquet(tmp_path / "anon.parquet", index=False)
    return tmp_path


def problems(raw: dict[str, Any], base: Path, registry) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as err:
        validate_config(raw, base, registry)
    return err.value.problems


def base_config(**kw: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "original": {"path": "orig.csv", "options": {"sep": ";"}},
        "anonymized": {"path": "anon.parquet"},
        "measures": [{"name": "ShareBelowK", "params": {"quasi_identifiers": ["age"]}}],
    }
    cfg.update(kw)
    return cfg


def test_json_path() -> None:
    assert json_path(("measures", 1, "params", "k")) == "measures[1].params.k"
    assert json_path((0, "x"), "anonymized") == "anonymized[0].x"


def test_valid_config_resolves_defaults_and_paths(files: Path, toy_registry) -> None:
    plan = validate_config(base_config(output="out/r.json"), files, toy_registry)
    assert plan.original is not None and plan.original.path == files / "orig.csv"
    assert plan.anonymized[0].format == "parquet"
    assert plan.measures[0].measure.params.model_dump() == {"quasi_identifiers": ["age"], "k": 2}
    assert plan.output == files / "out" / "r.json"


def test_all_errors_are_reported_at_once_with_paths(files: Path, toy_registry) -> None:
    raw = base_config(measures=[
        {"name": "ShareBelowK", "params": {"quasi_identifiers": ["age"], "k": 0}},
        {"name": "ShareBelowK", "label": "second", "params": {"quasi_identifer": ["age"]}},
        {"name": "KAnonimity"},
    ], seed="zero", extra_key=1)
    found = dict(problems(raw, files, toy_registry))
    assert "greater than or equal to 1" in found["measures[0].params.k"]
    assert "did you mean 'quasi_identifiers'" in found["measures[1].params.quasi_identifer"]
    assert "Did you mean 'KAnonymity'" in found["measures[2].name"]
    assert "seed" in found and "extra_key" in found


def test_nested_plugin_reference_is_validated(files: Path, toy_registry) -> None:
    raw = base_config(measures=[{"name": "NearestMatch", "params": {
        "distance": {"name": "RowDistance", "params": {"colum": "x"}}}}])
    found = dict(problems(raw, files, toy_registry))
    assert "measures[0].params.distance.params.colum" in found
    raw["measures"][0]["params"]["distance"] = {"name": "RowDistanse"}
    found = dict(problems(raw, files, toy_registry))
    assert "Did you mean 'RowDistance'" in found["measures[0].params.distance.name"]
    raw["measures"][0]["params"]["distance"] = {"name": "RowDistance"}
    plan = validate_config(raw, files, toy_registry)
    resolved = plan.measures[0].measure.params.model_dump()
    assert resolved["distance"] == {"name": "RowDistance", "params": {"column": "x"}}


def test_missing_files_and_formats(files: Path, toy_registry) -> None:
    raw = base_config(anonymized={"path": "nope.csv"},
                      original={"path": "orig.xyz", "options": {"separator": ";"}})
    found = dict(problems(raw, files, toy_registry))
    assert "file not found" in found["anonymized.path"]
    assert "orig.xyz" in found["original.path"]
    assert "set one of csv, parquet, jsonl" in found["original.format"]
    assert "Allowed: sep" in found["original.options.separator"]


def test_data_kind_mismatch_and_missing_inputs(files: Path, toy_registry) -> None:
    raw = base_config(original={"path": "orig.csv", "kind": "table"})
    found = dict(problems(raw, files, toy_registry))
    assert "accepts microdata data, not table" in found["measures[0]"]
    raw = {"original": {"path": "orig.csv"}, "measures": [{"name": "CountingPrepare"}]}
    found = dict(problems(raw, files, toy_registry))
    assert "needs 'anonymized' data or a synthesizer" in found["measures[0]"]


def test_measures_needing_no_data_need_no_inputs(toy_registry, tmp_path: Path) -> None:
    plan = validate_config({"measures": [{"name": "Analytic"}]}, tmp_path, toy_registry)
    assert plan.original is None and plan.anonymized == []


def test_variants_need_unique_names_and_labels_unique(files: Path, toy_registry) -> None:
    raw = base_config(anonymized=[{"name": "a", "path": "anon.parquet"},
                                  {"name": "a", "path": "anon.parquet"}],
                      measures=[{"name": "Analytic"}, {"name": "Analytic"}])
    found = dict(problems(raw, files, toy_registry))
    assert "duplicate variant name 'a'" in found["anonymized[1].name"]
    assert "labelled 'Analytic'" in found["measures[1].label"]


def test_synthesizer_and_anonymized_are_exclusive(files: Path, toy_registry) -> None:
    raw = base_config(synthesizer={"name": "NoSuchSynth"})
    found = dict(problems(raw, files, toy_registry))
    assert "not both" in found["synthesizer"]
    assert "unknown synthesizer 'NoSuchSynth'" in found["synthesizer.name"]


def test_load_config_file_errors(tmp_path: Path, toy_registry) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"measures": [}')
    with pytest.raises(ConfigError, match="invalid JSON at line 1"):
        load_config(bad, toy_registry)
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "missing.json", toy_registry)
    not_obj = tmp_path / "list.json"
    not_obj.write_text(json.dumps([1]))
    with pytest.raises(ConfigError, match="must be a JSON object"):
        load_config(not_obj, toy_registry)


def test_paths_resolve_relative_to_the_config_file(files: Path, toy_registry,
                                                   monkeypatch) -> None:
    cfg = files / "cfg.json"
    cfg.write_text(json.dumps(base_config()))
    monkeypatch.chdir("/")
    plan = load_config(cfg, toy_registry)
    assert plan.anonymized[0].path == files / "anon.parquet"


def test_union_errors_speak_of_the_member_that_fits(files: Path, toy_registry) -> None:
    raw = base_config(anonymized={"path": "anon.parquet", "knd": "microdata"})
    found = problems(raw, files, toy_registry)
    assert found == [("anonymized.knd",
                      "unknown key; did you mean 'kind'? Allowed: path, kind, format, options")]
    raw = base_config(anonymized=[{"path": "anon.parquet"}])
    found = dict(problems(raw, files, toy_registry))
    assert found == {"anonymized[0].name": "Field required"}


def test_unknown_nested_key_lists_the_keys_allowed_there(files: Path, toy_registry) -> None:
    raw = base_config(measures=[{"name": "Analytic", "threshold": {"mx": 1}}])
    found = dict(problems(raw, files, toy_registry))
    assert found["measures[0].threshold.mx"] == (
        "unknown key; did you mean 'max'? Allowed: max, min, on")


def test_anonymized_side_inherits_the_original_kind(files: Path, toy_registry) -> None:
    raw = base_config(original={"path": "orig.csv", "kind": "table"},
                      measures=[{"name": "Analytic"}])
    plan = validate_config(raw, files, toy_registry)
    assert plan.anonymized[0].kind == "table"
    raw["anonymized"] = [{"name": "v", "path": "anon.parquet", "kind": "microdata"}]
    assert validate_config(raw, files, toy_registry).anonymized[0].kind == "microdata"
