"""Short configs: ``defaults``, variants from a glob or a folder, every problem of a measure at
once (issue 29)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from anoneval.core.api import ConfigError
from anoneval.core.run.config import validate_config


@pytest.fixture
def files(tmp_path: Path) -> Path:
    df = pd.DataFrame({"age": [30, 30, 40, 50], "zip": ["a", "a", "b", "c"]})
    df.to_csv(tmp_path / "orig.csv", index=False)
    (tmp_path / "rel").mkdir()
    for name, k in (("v2", 2), ("v10", 10), ("v1", 1)):
        df.assign(age=df["age"] // (10 * k)).to_csv(tmp_path / "rel" / f"{name}.csv", index=False)
    (tmp_path / "rel" / "_SUCCESS").write_text("")
    (tmp_path / "rel" / ".hidden.csv").write_text("age\n1\n")
    return tmp_path


def config(**kw: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {"original": {"path": "orig.csv"}, "anonymized": {"path": "orig.csv"},
                           "measures": ["KAnonymity", "DM"]}
    cfg.update(kw)
    return cfg


def problems(raw: dict[str, Any], base: Path) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as err:
        validate_config(raw, base)
    return err.value.problems


def test_defaults_fill_params_a_measure_does_not_set(files: Path) -> None:
    plan = validate_config(config(
        defaults={"quasi_identifiers": ["age"], "k": 3},
        measures=["KAnonymity", {"name": "DM", "params": {"quasi_identifiers": ["zip"]}},
                  {"name": "KAnonymity", "label": "K5", "params": {"k": 5}}]), files)
    qis = [list(m.measure.params.quasi_identifiers) for m in plan.measures]
    assert qis == [["age"], ["zip"], ["age"]]
    assert [m.measure.params.k for m in plan.measures] == [3, 3, 5]


def test_a_default_no_measure_accepts_is_named(files: Path) -> None:
    found = problems(config(defaults={"quasi_identifiers": ["age"], "sensitiv": "zip"}), files)
    assert [p for p, _ in found] == ["defaults.sensitiv"]
    assert "no measure" in found[0][1]


def test_a_bad_default_is_reported_as_coming_from_defaults(files: Path) -> None:
    found = problems(config(defaults={"quasi_identifiers": "age"}), files)
    assert {p for p, _ in found} == {"measures[0].params.quasi_identifiers",
                                     "measures[1].params.quasi_identifiers"}
    assert all("defaults.quasi_identifiers" in m for _, m in found)


def test_defaults_missing_file_is_checked(files: Path) -> None:
    found = problems(config(defaults={"quasi_identifiers": ["age"],
                                      "hierarchies": {"age": "missing.csv"}},
                            measures=["Granularity"]), files)
    assert found[0][0] == "measures[0].params.hierarchies.age"
    assert "missing.csv" in found[0][1]


@pytest.mark.parametrize("spec", [{"glob": "rel/*.csv"}, {"folder": "rel"}])
def test_variants_from_glob_or_folder(files: Path, spec: dict[str, str]) -> None:
    plan = validate_config(config(anonymized=spec, defaults={"quasi_identifiers": ["age"]}),
                           files)
    assert [v.name for v in plan.anonymized] == ["v1", "v10", "v2"]
    assert [v.path for v in plan.anonymized] == [files / "rel" / f"{n}.csv"
                                                 for n in ("v1", "v10", "v2")]


def test_a_glob_in_path_stays_one_dataset(files: Path) -> None:
    plan = validate_config(config(anonymized={"path": "rel/*.csv"},
                                  defaults={"quasi_identifiers": ["age"]}), files)
    assert len(plan.anonymized) == 1 and plan.anonymized[0].name is None


def test_variants_from_problems(files: Path) -> None:
    pd.DataFrame({"age": [1]}).to_parquet(files / "rel" / "v1.parquet")
    base = {"defaults": {"quasi_identifiers": ["age"]}}
    found = problems(config(anonymized={"folder": "rel"}, **base), files)
    assert found[0][0] == "anonymized.folder" and "v1.csv" in found[0][1] and "v1.parquet" in \
        found[0][1]
    found = problems(config(anonymized={"glob": "nothing/*.csv"}, **base), files)
    assert found[0][0] == "anonymized.glob"
    found = problems(config(anonymized={"glob": "rel/v1.csv"}, **base), files)
    assert "no wildcard" in found[0][1]
    found = problems(config(anonymized={"folder": "orig.csv"}, **base), files)
    assert "not a folder" in found[0][1]


def test_variants_from_a_glob_run(files: Path) -> None:
    from anoneval.core.run.runner import run_plan

    report = run_plan(validate_config(config(anonymized={"glob": "rel/*.csv"},
                                             defaults={"quasi_identifiers": ["age"]}), files))
    assert [r.variant for r in report.variants] == ["v1", "v10", "v2"]
    listed = run_plan(validate_config(config(
        anonymized=[{"name": n, "path": f"rel/{n}.csv"} for n in ("v1", "v10", "v2")],
        defaults={"quasi_identifiers": ["age"]}), files))
    values = [[m.value for m in r.measures] for r in report.variants]
    assert values == [[m.value for m in r.measures] for r in listed.variants]
    assert len({tuple(v) for v in values}) == 3  # three different releases


def test_a_bad_threshold_hides_no_bad_param(files: Path) -> None:
    found = problems(config(measures=[
        {"name": "KAnonymity", "params": {"quasi_identifiers": ["age"], "kk": 2},
         "threshold": {"min": 3, "max": 1}, "timeout": -1}]), files)
    where = {p for p, _ in found}
    assert {"measures[0].threshold", "measures[0].timeout",
            "measures[0].params.kk"} <= where


def test_paths_are_checked_when_another_param_is_bad(files: Path) -> None:
    found = problems(config(measures=[
        {"name": "Granularity", "params": {"quasi_identifiers": 3,
                                           "hierarchies": {"age": "nope.csv"}}}]), files)
    where = {p for p, _ in found}
    assert where == {"measures[0].params.quasi_identifiers",
                     "measures[0].params.hierarchies.age"}
