"""The one-line hint when a parallel engine ran a job below its break-even point (issue 29)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anoneval.core.cli.main import main
from anoneval.core.run.engine import BREAK_EVEN, scale_hint


def test_hint_rule() -> None:
    assert scale_hint(None, 2, 100, 1) is None  # serial
    assert scale_hint({"name": "local", "workers": 1}, 2, 100, 1) is None
    small = scale_hint({"name": "local", "workers": 2}, 2, 100, 3)
    assert small is not None and "2 variants x 100 rows x 3 measures = 600" in small
    assert "break-even of about 2,000,000" in small and "--workers 1" in small
    assert "docs/scaling.md" in small and "\n" not in small
    big = BREAK_EVEN["local"]
    assert scale_hint({"name": "local", "workers": 2}, 1, big, 1) is None
    assert scale_hint({"name": "dask", "workers": 2}, 1, big, 1) is not None  # dask: larger
    # a running scheduler has no start-up to pay back
    assert scale_hint({"name": "dask", "address": "tcp://127.0.0.1:8786"}, 2, 100, 1) is None


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    df = pd.DataFrame({"a": [1, 1, 2, 3, 3, 3]})
    for name in ("orig", "v1", "v2"):
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    cfg = {"original": {"path": "orig.csv"}, "anonymized": {"glob": "v*.csv"},
           "defaults": {"quasi_identifiers": ["a"]}, "measures": ["KAnonymity"]}
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cli_prints_the_hint_for_a_small_parallel_job(workdir: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "c.json", "--workers", "2", "--engine", "local"]) == 0
    err = capsys.readouterr().err
    assert "hint:" in err and "2 variants x 6 rows x 1 measures" in err
    assert main(["run", "c.json"]) == 0  # serial: no hint
    assert "hint:" not in capsys.readouterr().err
    assert main(["run", "c.json", "--workers", "2", "--engine", "local", "-q"]) == 0
    assert "hint:" not in capsys.readouterr().err


def test_no_hint_for_a_job_above_the_break_even(workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from anoneval.core.run import engine

    monkeypatch.setitem(engine.BREAK_EVEN, "local", 12)  # the job: 2 x 6 x 1 = 12
    assert main(["run", "c.json", "--workers", "2", "--engine", "local"]) == 0
    assert "hint:" not in capsys.readouterr().err
    monkeypatch.setitem(engine.BREAK_EVEN, "local", 13)
    assert main(["run", "c.json", "--workers", "2", "--engine", "local"]) == 0
    assert "hint:" in capsys.readouterr().err
