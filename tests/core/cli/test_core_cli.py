"""The command line: run, validate, plugins, describe, schema; exit codes 0, 1, 2."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from _toy_plugins import TOYS

from anoneval.core.cli.main import main


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


def test_plugins_json_lists_every_builtin_with_its_kind(root: Path, capsys) -> None:
    assert main(["plugins", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    listed = {(p["kind"], p["name"]) for p in shown}
    config = json.loads((root / "config.json").read_text())
    builtins = {(kind, name) for kind, names in config.items()
                if kind not in ("description", "report_sections", "hook_plugins")
                for name in names}
    assert builtins <= listed
    for p in shown:
        if (p["kind"], p["name"]) in builtins:
            assert p["distribution"] == "anoneval" and p["description"], p


def test_schema_covers_config_and_every_plugin(capsys) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert "measures" in schema["config"]["properties"]
    assert "quasi_identifiers" in schema["plugins"]["risk_measure"]["KAnonymity"]["properties"]


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).with_name("anoneval")  # this interpreter's console script
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True,
                          check=True)
    assert proc.stdout.startswith("anoneval ")


def threshold_config(workdir: Path, max_: float) -> Path:
    # ShareBelowK on a: classes {1: 2, 2: 1, 3: 3} -> 1/6
    return write_config(workdir, [{**QI, "threshold": {"max": max_}}])


def test_strict_exits_3_when_a_threshold_fails(workdir: Path, capsys) -> None:
    reg = ["--registry", str(workdir / "toys.json")]
    cfg = threshold_config(workdir, 0.1)
    assert main(["run", str(cfg), "-q", *reg]) == 0  # FAIL is not an error without --strict
    assert main(["run", str(cfg), "-q", "--strict", *reg]) == 3
    err = capsys.readouterr().err
    assert "threshold FAIL: ShareBelowK = 0.1666" in err and '"max": 0.1' in err
    assert json.loads((workdir / "report.json").read_text())["measures"][0]["passed"] is False
    assert main(["run", str(threshold_config(workdir, 0.5)), "--strict", *reg]) == 0
    # a failed measure takes precedence: exit 1
    cfg = write_config(workdir, [{**QI, "threshold": {"max": 0.1}}, "Boom"])
    assert main(["run", str(cfg), "-q", "--strict", *reg]) == 1


def test_strict_fails_a_threshold_on_a_null_value_and_warnings_reach_the_console(
        workdir: Path, capsys) -> None:
    # issue 23: a NaN value (reported as null) under a threshold passed --strict
    reg = ["--registry", str(workdir / "toys.json")]
    cfg = write_config(workdir, [{"name": "NotANumber", "threshold": {"max": 0.5}}, QI])
    assert main(["run", str(cfg), *reg]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("NotANumber"))
    assert "FAIL (3 warnings)" in row
    qi_row = next(line for line in out.splitlines() if line.startswith("ShareBelowK"))
    assert "  ok  " in qi_row and "warning" not in qi_row
    assert "warning in NotANumber: 578 records could not be linked" in out
    assert "warning in NotANumber: the threshold FAILs: the measure gave no value" in out
    assert main(["run", str(cfg), "-q", "--strict", *reg]) == 3
    assert "threshold FAIL: NotANumber = None" in capsys.readouterr().err
    report = json.loads((workdir / "report.json").read_text())
    assert report["measures"][0]["value"] is None and report["measures"][0]["passed"] is False
    # one warning of several measures is one line naming them
    cfg = write_config(workdir, [{"name": "NotANumber", "label": "n1"},
                                 {"name": "NotANumber", "label": "n2"}])
    assert main(["run", str(cfg), *reg]) == 0
    out = capsys.readouterr().out
    assert out.count("578 records could not be linked") == 1
    assert "warning in n1, n2: 578 records could not be linked" in out


def test_quiet_still_prints_measure_errors_to_stderr(workdir: Path, capsys) -> None:
    cfg = write_config(workdir, ["Boom", QI])
    assert main(["run", str(cfg), "-q", "--registry", str(workdir / "toys.json")]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "error in Boom: RuntimeError: kaput" in err


def test_usage_errors_exit_2(capsys) -> None:
    assert main(["run"]) == 2
    assert "Missing argument 'CONFIG'" in capsys.readouterr().err
    assert main(["run", "x.json", "--no-such-flag"]) == 2
    assert main(["plugins", "--kind", "nonsense"]) == 2
    assert main([]) == 2
    assert main(["describe", "--all"]) == 2
    assert "--all needs --markdown" in capsys.readouterr().err
    assert main(["--help"]) == 0 and "sweep" in capsys.readouterr().out
    assert main(["run", "--help"]) == 0 and "--strict" in capsys.readouterr().out


def test_readme_documents_every_exit_code(root: Path) -> None:
    from anoneval.core.run import commands

    text = (root / "README.md").read_text()
    section = text.split("### Exit codes")[1].split("\n## ")[0]
    codes = {v for k, v in vars(commands).items() if k.startswith("EXIT_")}
    documented = {int(c) for c in re.findall(r"^\| (\d+) \|", section, re.M)}
    assert documented == codes


def test_python_dash_m_anoneval_and_version() -> None:
    import anoneval

    proc = subprocess.run([sys.executable, "-m", "anoneval", "--version"], capture_output=True,
                          text=True, check=True)
    assert proc.stdout == f"anoneval {anoneval.__version__}\n"
    from importlib.metadata import version

    assert anoneval.__version__ == version("anoneval")
    assert anoneval.evaluate is __import__("anoneval.core").core.evaluate
    assert {"evaluate", "evaluate_many", "Evaluator", "load", "__version__"} <= set(
        anoneval.__all__)


def test_describe_with_kind_and_plugins_by_kind(workdir: Path, capsys) -> None:
    reg = ["--registry", str(workdir / "toys.json")]
    assert main(["describe", "ShareBelowK", "--kind", "risk_measure", *reg]) == 0
    assert capsys.readouterr().out.startswith("ShareBelowK (risk_measure, from registry file")
    assert main(["plugins", "--kind", "distance", *reg]) == 0
    out = capsys.readouterr().out
    assert out.startswith("distance:\n") and "RowDistance" in out and "ShareBelowK" not in out


def test_a_closed_pipe_ends_quietly() -> None:
    # `anoneval schema | head -c 10` (the schema is larger than a pipe's buffer): no
    # traceback, exit 0
    proc = subprocess.Popen([sys.executable, "-m", "anoneval", "schema"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.wait(timeout=120) == 0
    assert "Traceback" not in err
