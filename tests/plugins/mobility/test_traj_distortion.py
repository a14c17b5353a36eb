"""TrajectoryDistortion and TimeSyncedDistortion: per-id pairing, statistics, hand cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

import anoneval
from anoneval.core.api import Trajectories, load

R = 6_371_008.8


def traj(ids, points):
    """Trajectories from {id: [(t, lon, lat), ...]}."""
    lengths = [len(points[i]) for i in ids]
    flat = [p for i in ids for p in points[i]]
    t, lon, lat = (np.array(c, dtype=float) for c in zip(*flat, strict=True))
    return Trajectories(np.array(ids), np.array(ids), np.r_[0, np.cumsum(lengths)], lon, lat,
                        t.astype(np.int64))


def run(original, anonymized, name, params=None):
    entry = anoneval.evaluate(original, anonymized,
                              [{"name": name, "params": params or {}}]).measures[0]
    assert entry.error is None, entry.error
    return entry


@pytest.fixture(scope="module")
def mock(data_dir):
    return (load(data_dir / "mobility" / "mock_dataset.csv", "trajectories"),
            load(data_dir / "mobility" / "mock_dataset_anonymized.csv", "trajectories"))


@pytest.mark.parametrize("distance", [{"name": "SSPD"}, {"name": "Frechet"},
                                      {"name": "DTW", "params": {"convention": "rms"}}])
def test_distortion_is_the_per_id_distance(mock, distance):
    orig, anon = mock
    entry = run(orig, anon, "TrajectoryDistortion", {"distance": distance, "per_pair": True})
    expected = {}
    for i, tid in enumerate(orig.trajectory_id):
        j = int(anon.index_of([tid])[0])
        a = np.column_stack(orig.points(i)[:2])
        b = np.column_stack(anon.points(j)[:2])
        expected[str(tid)] = anoneval.trajectory_distance(distance["name"], a, b,
                                                          **distance.get("params", {}))
    got = entry.details["per_pair"]
    assert got.keys() == expected.keys()
    for k in got:
        assert got[k] == pytest.approx(expected[k], rel=1e-9)
    assert entry.value == pytest.approx(np.mean(list(expected.values())), rel=1e-12)
    assert entry.details["quantiles"]["0.5"] == pytest.approx(np.median(list(expected.values())))
    median = run(orig, anon, "TrajectoryDistortion", {"distance": distance, "statistic": "median"})
    assert median.value == pytest.approx(np.median(list(expected.values())))


def test_distortion_counts_missing_ids():
    o = traj([1, 2, 3], {1: [(0, 0, 0), (10, 0.001, 0)], 2: [(0, 1, 1)], 3: [(0, 2, 2)]})
    a = traj([1, 2, 9], {1: [(0, 0, 0), (10, 0.001, 0)], 2: [(0, 1, 1)], 9: [(0, 5, 5)]})
    entry = run(o, a, "TrajectoryDistortion", {"statistic": "max"})
    assert entry.value == 0.0
    assert entry.details["original_missing_in_anonymized"] == 1
    assert entry.details["anonymized_without_original"] == 1
    assert len(entry.warnings) == 2


def test_time_synced_hand_case():
    # anonymized: along the equator from lon 0 at t=0 to lon 0.002 at t=10; at t=5 it is at
    # lon 0.001 (slerp on the equator is exact); the original is 0.001° north of that point.
    o = traj([1], {1: [(5, 0.001, 0.001), (20, 0.002, 0.0)]})
    a = traj([1], {1: [(0, 0.0, 0.0), (10, 0.002, 0.0)]})
    deg = R * math.pi / 180
    entry = run(o, a, "TimeSyncedDistortion")
    # second point: t=20 is after the span, clamped to the last point (distance 0)
    assert entry.details["max"] == pytest.approx(0.001 * deg, rel=1e-9)
    assert entry.value == pytest.approx(0.001 * deg / 2, rel=1e-9)
    assert entry.details["outside"] == 1
    skipped = run(o, a, "TimeSyncedDistortion", {"outside": "skip"})
    assert skipped.value == pytest.approx(0.001 * deg, rel=1e-9)
    assert skipped.details["points"] == 1


def test_time_synced_identical_release_is_zero(mock):
    orig, _ = mock
    entry = run(orig, orig, "TimeSyncedDistortion", {"statistic": "max"})
    assert entry.value == pytest.approx(0.0, abs=1e-6)
