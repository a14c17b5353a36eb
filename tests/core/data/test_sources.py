"""Inputs at scale: Parquet dataset folders (plain and hive-partitioned) and globs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from anoneval.core import DataError, load


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({"age": [30, 41, 52, 63, 30, 41], "sex": list("fmfmff"),
                         "zip": ["1000", "1000", "2000", "2000", "3000", "3000"]})


def test_folder_of_parquet_files_in_sorted_order(tmp_path: Path, frame: pd.DataFrame) -> None:
    folder = tmp_path / "ds"
    folder.mkdir()
    frame.iloc[3:].to_parquet(folder / "part-1.parquet")
    frame.iloc[:3].to_parquet(folder / "part-0.parquet")
    (folder / "_SUCCESS").write_text("")
    got = load(folder).frame  # type: ignore[attr-defined]
    pd.testing.assert_frame_equal(got, frame)


def test_hive_partitions_become_columns(tmp_path: Path, frame: pd.DataFrame) -> None:
    for (year, zip_), part in frame.assign(year=[2020, 2020, 2021, 2021, 2021, 2022]).groupby(
            ["year", "zip"]):
        d = tmp_path / "ds" / f"year={year}" / f"zip={zip_}"
        d.mkdir(parents=True)
        part.drop(columns=["year", "zip"]).to_parquet(d / "data.parquet")
    got = load(tmp_path / "ds").frame  # type: ignore[attr-defined]
    assert list(got.columns) == ["age", "sex", "year", "zip"]
    assert got["year"].dtype == "int64" and got["year"].tolist() == [2020, 2020, 2021, 2021,
                                                                     2021, 2022]
    assert got["zip"].tolist() == [1000, 1000, 2000, 2000, 3000, 3000]  # canonical integers


def test_glob_of_csv_files(tmp_path: Path, frame: pd.DataFrame) -> None:
    frame.iloc[:2].to_csv(tmp_path / "a.csv", index=False)
    frame.iloc[2:].to_csv(tmp_path / "b.csv", index=False)
    got = load(tmp_path / "*.csv").frame  # type: ignore[attr-defined]
    assert got["age"].tolist() == frame["age"].tolist() and len(got) == 6


def test_bad_folders_and_globs_name_the_problem(tmp_path: Path, frame: pd.DataFrame) -> None:
    with pytest.raises(DataError, match="no data file matches"):
        load(tmp_path / "*.parquet")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="holds no data file"):
        load(tmp_path / "empty")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    frame.to_csv(mixed / "a.csv", index=False)
    frame.to_parquet(mixed / "b.parquet")
    with pytest.raises(DataError, match="several formats"):
        load(mixed)
    other = tmp_path / "other"
    other.mkdir()
    frame.to_csv(other / "a.csv", index=False)
    frame.drop(columns="zip").to_csv(other / "b.csv", index=False)
    with pytest.raises(DataError, match="differ from those"):
        load(other)


def test_config_accepts_a_dataset_folder(tmp_path: Path, frame: pd.DataFrame) -> None:
    (tmp_path / "orig").mkdir()
    frame.to_parquet(tmp_path / "orig" / "part-0.parquet")
    config = {"original": {"path": "orig"},
              "measures": [{"name": "KAnonymity",
                            "params": {"quasi_identifiers": ["age", "sex"], "k": 2}}]}
    (tmp_path / "c.json").write_text(json.dumps(config))
    proc = subprocess.run([sys.executable, "-m", "anoneval.core", "run", str(tmp_path / "c.json"),
                           "-o", str(tmp_path / "r.json"), "-q"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["inputs"]["original"]["rows"] == 6
    assert report["measures"][0]["value"] == pytest.approx(4 / 6)
