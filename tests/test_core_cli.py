"""The command line: run, validate, plugins, describe, schema; exit codes 0, 1, 2."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from _toy_plugins import TOYS

from anoneval.core.cli import main


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    df = pd.DataFrame({"a": [1, 1, 2, 3, 3, 3], "x": [0.0, 1, 2, 3, 4, 5]})
    df.to_csv(tmp_path / "orig.csv", sep=";", index=False)
    df.to_parquet(tmp_path / "anon.parquet", index=False)
    kinds: dict[str, dict] = {}
    for cls in TOYS:
        kinds.setdefault(cls.kind, {})[cls.name] = {"class": f"_toy_plugins.{cls.__name__}"}
    (tmp_path / "toys.json").write_text(json.dumps(kinds))
    return tmp_path


def write_config(workdir: Path, measures: list, **extra) -> Path:
    cfg = {"original": {"path": "orig.csv"}, "anonymized": {"path": "anon.parquet"},
           "measures": measures, "output": "report.json", **extra}
    path = workdir / "config.json"
    path.write_text(json.dumps(cfg))
    return path


QI = {"name": "ShareBelowK", "params": {"quasi_identifiers": ["a"]}}


def test_run_writes_report_and_prints_summary(workdir: Path, capsys) -> None:
    cfg = write_config(workdir, [QI])
    assert main(["run", str(cfg), "--registry", str(workdir / "toys.json")]) == 0
    out = capsys.readouterr().out
    assert "ShareBelowK" in out and "higher = riskier" in out
    report = json.loads((workdir / "report.json").read_text())
    # classes {1: 2, 2: 1, 3: 3}: one record of six is below k = 2
    assert report["measures"][0]["value"] == pytest.approx(1 / 6)


def test_failing_plugin_gives_exit_1_and_the_others_are_computed(workdir: Path,
                                                                 capsys) -> None:
    cfg = write_config(workdir, ["Boom", QI])
    out_file = workdir / "elsewhere" / "r.json"
    code = main(["run", str(cfg), "-o", str(out_file), "--registry",
                 str(workdir / "toys.json")])
    assert code == 1
    report = json.loads(out_file.read_text())
    assert report["measures"][0]["error"] == "RuntimeError: kaput"
    assert report["measures"][1]["error"] is None
    assert report["measures"][1]["value"] == pytest.approx(1 / 6)
    assert "error in Boom: RuntimeError: kaput" in capsys.readouterr().out


def test_unknown_measure_exits_2_with_did_you_mean(workdir: Path, capsys) -> None:
    cfg = write_config(workdir, [{"name": "ShareBelowKK"}])
    assert main(["run", str(cfg), "--registry", str(workdir / "toys.json")]) == 2
    err = capsys.readouterr().err
    assert "measures[0].name" in err and "Did you mean 'ShareBelowK'" in err
    assert not (workdir / "report.json").exists()


def test_misspelt_param_exits_2_naming_its_json_path(workdir: Path, capsys) -> None:
    cfg = write_config(workdir, [{"name": "ShareBelowK",
                                  "params": {"quasi_identifiers": ["a"], "kk": 3}}])
    assert main(["validate", str(cfg), "--registry", str(workdir / "toys.json")]) == 2
    assert "measures[0].params.kk: unknown key" in capsys.readouterr().err


def test_missing_column_is_a_measure_error_naming_it(workdir: Path) -> None:
    cfg = write_config(workdir, [{"name": "ShareBelowK",
                                  "params": {"quasi_identifiers": ["zip"]}}])
    assert main(["run", str(cfg), "-q", "--registry", str(workdir / "toys.json")]) == 1
    error = json.loads((workdir / "report.json").read_text())["measures"][0]["error"]
    assert "quasi-identifier 'zip' not in the microdata" in error and "a, x" in error


def test_inputs_are_never_modified(workdir: Path) -> None:
    cfg = write_config(workdir, [QI, "Boom"])
    digest = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
              for p in (workdir / "orig.csv", workdir / "anon.parquet", cfg)}
    main(["run", str(cfg), "-q", "--registry", str(workdir / "toys.json")])
    assert digest == {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                      for p in (workdir / "orig.csv", workdir / "anon.parquet", cfg)}


def test_validate_ok(workdir: Path, capsys) -> None:
    cfg = write_config(workdir, [QI])
    assert main(["validate", str(cfg), "--registry", str(workdir / "toys.json")]) == 0
    assert "valid (1 measures" in capsys.readouterr().out


def test_bad_input_file_exits_2(workdir: Path, capsys) -> None:
    (workdir / "anon.parquet").write_text("garbage")
    cfg = write_config(workdir, [QI])
    assert main(["run", str(cfg), "--registry", str(workdir / "toys.json")]) == 2
    assert "cannot read as parquet" in capsys.readouterr().err


def test_describe_lists_params(workdir: Path, capsys) -> None:
    assert main(["describe", "ShareBelowK", "--registry", str(workdir / "toys.json")]) == 0
    out = capsys.readouterr().out
    assert "quasi_identifiers" in out and "QI columns." in out and "default 2" in out
    assert main(["describe", "ShareBelow", "--registry", str(workdir / "toys.json")]) == 2


def test_plugins_json_lists_every_builtin_with_its_kind(root: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "anoneval.core", "plugins", "--json"],
                          capture_output=True, text=True, check=True)
    listed = {(p["kind"], p["name"]) for p in json.loads(proc.stdout)}
    config = json.loads((root / "config.json").read_text())
    builtins = {(kind, name) for kind, names in config.items() if kind != "description"
                for name in names}
    assert builtins <= listed
    for p in json.loads(proc.stdout):
        if (p["kind"], p["name"]) in builtins:
            assert p["distribution"] == "anoneval" and p["description"], p


def test_schema_covers_config_and_every_plugin(capsys) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert "measures" in schema["config"]["properties"]
    assert "quasi_identifiers" in schema["plugins"]["risk_measure"]["KAnonymity"]["properties"]


def test_console_script_is_installed() -> None:
    proc = subprocess.run(["anoneval", "--version"], capture_output=True, text=True, check=True)
    assert proc.stdout.startswith("anoneval ")
