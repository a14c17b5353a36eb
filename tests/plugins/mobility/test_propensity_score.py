"""PropensityScore (the MobiDataLab anonymizer's): features and score by hand, behaviour."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anoneval.core import evaluate
from anoneval.core.api import Context, Trajectories
from anoneval.plugins.mobility._tiles import TileSpec, make_grid
from anoneval.plugins.mobility.propensity_score import (
    PropensityScore,
    feature_matrix,
    propensity,
    tile_sequences,
)

T0 = 1_300_000_000


def walks(n: int, seed: int, shift: float = 0.0) -> Trajectories:
    """``n`` random walks of 8 points in Paris (``shift`` degrees east)."""
    rng = np.random.default_rng(seed)
    walk = np.cumsum(rng.normal(0, 0.004, (n, 8)), axis=1)
    lon = 2.25 + shift + walk + rng.uniform(0, .1, (n, 1))
    lat = 48.82 + np.cumsum(rng.normal(0, 0.003, (n, 8)), axis=1) + rng.uniform(0, .06, (n, 1))
    return Trajectories.from_frame(pd.DataFrame({
        "user_id": np.repeat(np.arange(n), 8), "trajectory_id": np.repeat(np.arange(n), 8),
        "timestamp": T0 + np.tile(np.arange(8) * 60, n) + np.repeat(np.arange(n) * 7, 8),
        "lon": lon.ravel(), "lat": lat.ravel()}))


def test_sequences_are_distinct_tiles_in_first_visit_order():
    grid = make_grid(TileSpec(size=500, bbox=[2.20, 48.80, 2.45, 48.92]))
    lon_c, lat_c = grid.centroid(np.array([5, 7, 9]))
    # trajectory 0 visits tiles 5, 7, 5, 9; trajectory 1 visits 9 and a point off the grid
    frame = pd.DataFrame({"user_id": [1, 1, 1, 1, 2, 2], "trajectory_id": [0, 0, 0, 0, 1, 1],
                          "timestamp": T0 + np.array([0, 60, 120, 180, 0, 3600]),
                          "lon": [lon_c[0], lon_c[1], lon_c[0], lon_c[2], lon_c[2], 3.0],
                          "lat": [lat_c[0], lat_c[1], lat_c[0], lat_c[2], lat_c[2], 48.85]})
    data = Trajectories.from_frame(frame)
    ids, lengths, max_id = tile_sequences(data, grid, None, T0)
    assert ids.tolist() == [5, 7, 9, 9] and lengths.tolist() == [3, 1]
    assert max_id == grid.n_tiles - 1 == 56 * 41 - 1
    # half-hour slices: trajectory 0 all in slice 0; the second point of trajectory 1 is
    # off the grid, its first in slice 0 → 9; the data reach slice 2 (T0 + 3600)
    ids, lengths, max_id = tile_sequences(data, grid, 1800.0, T0)
    assert ids.tolist() == [5, 7, 9, 9] and max_id == 3 * grid.n_tiles - 1
    # 60 s slices: 5 (slice 0), 7 + n (1), 5 + 2n (2), 9 + 3n (3)
    n = grid.n_tiles
    ids, lengths, _ = tile_sequences(data, grid, 60.0, T0)
    assert ids.tolist() == [5, 7 + n, 5 + 2 * n, 9 + 3 * n, 9] and lengths.tolist() == [4, 1]


def test_features_scaled_and_left_padded():
    X = feature_matrix(np.array([5, 7, 9, 3]), np.array([3, 1]), 10)
    assert X.tolist() == [[0.5, 0.7, 0.9], [0.0, 0.0, 0.3]]


def test_score_formula():
    # 4 · mean((0.5 − ½)², (1 − ½)², (0 − ½)²) = 4 · (0 + ¼ + ¼)/3 = 2/3
    assert propensity(np.array([0.5, 1.0, 0.0])) == pytest.approx(2 / 3)


def run(orig, anon, **params):
    entry = evaluate(orig, anon, [{"name": "PropensityScore", "params": params}],
                     seed=3).measures[0]
    assert entry.error is None, entry.error
    return entry


def test_separable_release_scores_high_and_a_copy_low():
    orig = walks(300, 1)
    measure = PropensityScore(PropensityScore.Params())
    far = measure.compute(orig, walks(300, 2, shift=0.5), Context(seed=3))  # other tiles
    same = measure.compute(orig, walks(300, 1), Context(seed=3))  # an exact copy
    assert far.value > 0.9 and far.details["accuracy"]["test"] > 0.95
    assert same.value < 0.2 and same.details["accuracy"]["test"] < 0.65
    for e in (far, same):
        assert e.ci is not None
        low, high = e.ci
        assert low <= e.value <= high and e.details["propensity"] == round(e.value, 4)


def test_compat_mdl_ignores_the_parameters_as_upstream():
    orig, anon = walks(120, 1), walks(120, 4)
    default = run(orig, anon)
    mdl = run(orig, anon, compat="mdl", tile_size=1000.0, time_interval=60.0)
    assert mdl.value == default.value and mdl.details["tiles"]["size"] == 200.0
    sliced = run(orig, anon, time_interval=60.0)
    assert sliced.details["sequence_length"] >= default.details["sequence_length"]


def test_too_few_trajectories_is_an_error():
    entry = evaluate(walks(1, 1), walks(1, 2), [{"name": "PropensityScore"}]).measures[0]
    assert entry.error is not None and "split" in str(entry.error)


def test_seeded_and_independent_of_row_order():
    orig, anon = walks(80, 1), walks(80, 5)
    first = run(orig, anon)
    assert run(orig, anon).value == first.value  # the same seed, the same split and model
    shuffled = [Trajectories.from_frame(d.to_frame(timestamp_format=None).sample(
        frac=1.0, random_state=3)) for d in (orig, anon)]
    assert run(*shuffled).value == first.value
