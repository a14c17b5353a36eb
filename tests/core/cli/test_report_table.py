"""``-o report.csv`` / ``.parquet`` write the summary as a table; no suffix silently writes
JSON; an unknown suffix is refused before the run (issue 29)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anoneval.core.cli.main import main
from anoneval.core.report.atomic import TEMP_PATTERN


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    df = pd.DataFrame({"a": [1, 1, 2, 3, 3, 3]})
    df.to_csv(tmp_path / "orig.csv", index=False)
    for name, frame in (("k1", df), ("k3", df.assign(a=[1, 1, 1, 3, 3, 3]))):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    cfg = {"original": {"path": "orig.csv"},
           "anonymized": [{"name": "k1", "path": "k1.csv"}, {"name": "k3", "path": "k3.csv"}],
           "defaults": {"quasi_identifiers": ["a"]},
           "measures": [{"name": "KAnonymity", "params": {"k": 3}}, "DM"],
           "report": {"timings": False}}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_table_report_matches_the_json_report(workdir: Path, suffix: str) -> None:
    assert main(["run", "config.json", "-q", "-o", "report.json"]) == 0
    assert main(["run", "config.json", "-q", "-o", f"report{suffix}"]) == 0
    table = (pd.read_csv(workdir / "report.csv") if suffix == ".csv"
             else pd.read_parquet(workdir / "report.parquet"))
    report = json.loads((workdir / "report.json").read_text())
    expected = [(v["variant"], m["label"], m["value"]) for v in report["variants"]
                for m in v["measures"]]
    assert list(zip(table["variant"], table["label"], table["value"], strict=True)) == expected
    assert {"unit", "warnings", "direction", "passed", "error"} <= set(table.columns)
    # written through a temporary file that is gone
    assert not [p for p in workdir.iterdir() if TEMP_PATTERN.match(p.name)]
    # the table is a table, never the JSON report under another name
    assert not (workdir / f"report{suffix}").read_bytes().lstrip().startswith(b"{")


@pytest.mark.parametrize("name", ["report.txt", "report", "report.xlsx"])
def test_unknown_suffix_is_refused_before_the_run(workdir: Path, name: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "config.json", "-q", "-o", name]) == 2
    err = capsys.readouterr().err
    assert ".json, .csv, .parquet" in err
    assert not (workdir / name).exists()


def test_config_output_suffix_is_checked(workdir: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    cfg = json.loads((workdir / "config.json").read_text())
    (workdir / "bad.json").write_text(json.dumps({**cfg, "output": "out.txt"}))
    assert main(["validate", "bad.json"]) == 2
    assert "output" in capsys.readouterr().err
    (workdir / "good.json").write_text(json.dumps({**cfg, "output": "out.csv"}))
    assert main(["run", "good.json", "-q"]) == 0
    assert pd.read_csv(workdir / "out.csv")["label"].tolist() == ["KAnonymity", "DM"] * 2
