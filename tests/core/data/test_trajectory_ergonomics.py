"""Trajectories: ISO 8601 timestamps (explicit and detected, with a warning) and an id map for
relabelled anonymized ids (issue 29)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

from anoneval.core.api import DataError
from anoneval.core.data.kinds import Trajectories
from anoneval.core.run.config import validate_config
from anoneval.core.run.runner import run_plan

POINTS = pd.DataFrame({
    "user_id": [1, 1, 2, 2], "trajectory_id": [10, 10, 20, 20],
    "timestamp": ["2024-05-01T08:30:00Z", "2024-05-01T08:31:05Z",
                  "2024-05-01T10:30:00+02:00", "2024-05-01 08:45:30"],
    "lon": [2.35, 2.36, 2.30, 2.31], "lat": [48.86, 48.87, 48.80, 48.81]})
# by hand: 2024-05-01T00:00:00Z is 1714521600
EXPECTED = [1714521600 + 8 * 3600 + 30 * 60, 1714521600 + 8 * 3600 + 31 * 60 + 5,
            1714521600 + 8 * 3600 + 30 * 60, 1714521600 + 8 * 3600 + 45 * 60 + 30]


def test_iso8601_format_reads_offsets_and_utc() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # asked for: no warning
        traj = Trajectories.from_frame(POINTS, timestamp_format="iso8601")
    assert list(traj.t) == EXPECTED


def test_iso8601_is_detected_under_the_default_format_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="ISO 8601"):
        traj = Trajectories.from_frame(POINTS)
    assert list(traj.t) == EXPECTED


def test_unreadable_iso8601_names_the_row() -> None:
    bad = POINTS.assign(timestamp=[*POINTS["timestamp"][:3], "yesterday"])
    with pytest.raises(DataError, match="row 4"):
        Trajectories.from_frame(bad, timestamp_format="iso8601")


def _write(tmp_path: Path) -> None:
    original = POINTS.assign(timestamp=[EXPECTED[0], EXPECTED[1], EXPECTED[2], EXPECTED[3]])
    original.to_csv(tmp_path / "orig.csv", index=False)
    anon = original.assign(trajectory_id=["a", "a", "b", "b"],
                           lon=original["lon"] + 0.001)
    anon.to_csv(tmp_path / "anon.csv", index=False)
    (tmp_path / "ids.csv").write_text("anonymized,original\na,10\nb,20\n")


def test_id_map_pairs_relabelled_trajectories(tmp_path: Path) -> None:
    _write(tmp_path)
    measure = {"name": "TrajectoriesRemoved"}
    cfg = {"original": {"path": "orig.csv", "kind": "trajectories",
                        "options": {"timestamp_format": "epoch"}},
           "anonymized": {"path": "anon.csv", "options": {"id_map": "ids.csv"}},
           "measures": [measure]}
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    mapped = run_plan(validate_config(cfg, tmp_path)).measures[0]
    unmapped = run_plan(validate_config({**cfg, "anonymized": {"path": "anon.csv"}},
                                        tmp_path)).measures[0]
    assert mapped.error is None and mapped.value == 0  # both trajectories found again
    assert unmapped.value == 1  # without the map no id matches: every one is "removed"


def test_id_map_problems(tmp_path: Path) -> None:
    _write(tmp_path)
    (tmp_path / "short.csv").write_text("anonymized,original\na,10\n")
    frame = pd.read_csv(tmp_path / "anon.csv")
    with pytest.raises(DataError, match="'b', which id_map"):
        Trajectories.from_frame(frame, timestamp_format="epoch", id_map=tmp_path / "short.csv")
    (tmp_path / "twice.csv").write_text("anonymized,original\na,10\na,20\nb,3\n")
    with pytest.raises(DataError, match="listed twice"):
        Trajectories.from_frame(frame, timestamp_format="epoch", id_map=tmp_path / "twice.csv")
    cfg = {"original": {"path": "orig.csv", "kind": "trajectories",
                        "options": {"timestamp_format": "epoch"}},
           "anonymized": {"path": "anon.csv", "options": {"id_map": "none.csv"}},
           "measures": ["TrajectoriesRemoved"]}
    from anoneval.core.api import ConfigError

    with pytest.raises(ConfigError, match=r"anonymized\.options\.id_map"):
        validate_config(cfg, tmp_path)
