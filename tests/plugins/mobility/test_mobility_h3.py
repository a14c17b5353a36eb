"""H3 hexagonal tiles (``tiles: {"kind": "h3", "resolution": r}``).

Known cells are published values of other H3 implementations (h3geo.org's CLI example,
Databricks' ``h3_longlatash3`` examples, Palantir Foundry's and Snowflake's H3 function
examples), so the grid is checked against the H3 specification, not against itself.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from anoneval.core import evaluate
from anoneval.core.api import ConfigError, Trajectories
from anoneval.plugins.mobility._report import heat_map
from anoneval.plugins.mobility._tiles import H3Grid, TileSpec, make_grid, visit_table

T0 = 1_300_000_000

# (lon, lat, resolution, cell): published examples
KNOWN = [
    (40.0, 45.0, 2, 0x822D57FFFFFFFFF),  # h3geo.org: h3 latLngToCell --lat 45 --lng 40 -r 2
    (100.0, 45.0, 6, 604116085645508607),  # Databricks h3_longlatash3(100, 45, 6)
    (-122.4783, 37.8199, 13, 635714569676958015),  # Databricks: the Golden Gate Bridge
    (80.0, -20.0, 5, 0x85AA614BFFFFFFF),  # Palantir Foundry example
    (-77.0599, 38.9031, 5, 0x852AA84FFFFFFFF),  # Palantir Foundry example
    (13.377704, 52.516262, 8, 613036919424548863),  # Snowflake h3_latlng_to_cell
]


@pytest.mark.parametrize(("lon", "lat", "res", "cell"), KNOWN)
def test_points_fall_in_their_published_cells(lon, lat, res, cell):
    d = 0.001 if res > 8 else 0.5
    grid = make_grid(TileSpec(kind="h3", resolution=res,
                              bbox=[lon - d, lat - d, lon + d, lat + d]))
    assert isinstance(grid, H3Grid)
    tile = grid.tile_of(np.array([lon]), np.array([lat]))
    assert tile[0] >= 0 and int(grid.cells[tile[0]]) == cell


def test_cells_cover_the_box_in_lat_lng_order_and_centres_map_back():
    grid = make_grid(TileSpec(kind="h3", resolution=8, bbox=[2.20, 48.80, 2.45, 48.92]))
    # res 8 cells are ≈ 0.737 km²; the box is ≈ 18.3 km × 13.3 km ≈ 244 km²: ≈ 330 cells
    # inside, plus the ring overlapping the edges
    assert 330 < grid.n_tiles < 480
    assert np.all(np.diff(grid.lat) >= 0)  # dense ids follow the centre (lat, lng) order
    lng, lat = grid.centroid(np.arange(grid.n_tiles))
    inside = (lng > 2.20) & (lng < 2.45) & (lat > 48.80) & (lat < 48.92)
    assert grid.tile_of(lng[inside], lat[inside]).tolist() == np.flatnonzero(inside).tolist()
    rng = np.random.default_rng(1)
    lon_p, lat_p = rng.uniform(2.20, 2.45, 500), rng.uniform(48.80, 48.92, 500)
    assert np.all(grid.tile_of(lon_p, lat_p) >= 0)  # every point of the box has its cell
    assert grid.tile_of(np.array([2.5]), np.array([48.85])).tolist() == [-1]
    assert grid == make_grid(TileSpec(kind="h3", resolution=8, bbox=[2.20, 48.80, 2.45, 48.92]))


def test_h3_params_are_checked():
    for bad, msg in [({"kind": "h3", "size": 300.0}, "size applies to kind 'square'"),
                     ({"resolution": 9}, "resolution applies to kind 'h3'"),
                     ({"kind": "h3", "resolution": 16}, "less than or equal to 15")]:
        with pytest.raises(ValueError, match=msg):
            TileSpec(**bad)
    data = Trajectories.from_frame(pd.DataFrame({
        "user_id": ["u"], "trajectory_id": [1], "timestamp": [T0], "lon": [2.3], "lat": [48.85]}))
    with pytest.raises(ConfigError, match=r"measures\[0\]\.params\.tiles.*applies to kind"):
        evaluate(data, data, [{"name": "LocationAttack", "params": {"tiles": {
            "kind": "h3", "projection": "ground"}}}])


def test_missing_h3_names_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "h3" else real(name, *a))
    with pytest.raises(ValueError, match=r"pip install 'anoneval\[h3\]'"):
        TileSpec(kind="h3")


def test_too_many_cells_is_a_clear_error():
    data = Trajectories.from_frame(pd.DataFrame({
        "user_id": ["u"], "trajectory_id": [1], "timestamp": [T0], "lon": [2.3], "lat": [48.85]}))
    entry = evaluate(data, data, [{"name": "TileCoverage", "params": {"tiles": {
        "kind": "h3", "resolution": 15, "bbox": [2.0, 48.0, 3.0, 49.0]}}}]).measures[0]
    assert entry.error is not None and "tiles.resolution" in str(entry.error)


def test_attacks_and_measures_run_on_h3_cells():
    places = {"A": (2.25, 48.81), "B": (2.30, 48.85), "C": (2.40, 48.90)}
    rows = [("u", "A"), ("u", "B"), ("v", "B"), ("v", "C"), ("w", "C"), ("w", "B")]
    frame = pd.DataFrame({"user_id": [u for u, _ in rows], "trajectory_id": range(len(rows)),
                          "timestamp": [T0 + 60 * i for i in range(len(rows))],
                          "lon": [places[p][0] for _, p in rows],
                          "lat": [places[p][1] for _, p in rows]})
    data = Trajectories.from_frame(frame)
    tiles = {"kind": "h3", "resolution": 9}
    report = evaluate(data, data, [
        {"name": "LocationAttack", "params": {"tiles": tiles, "knowledge_length": 1}},
        {"name": "TileCoverage", "params": {"tiles": tiles}}])
    attack, coverage = report.measures
    assert attack.error is None and coverage.error is None
    # k = 1: u's A is unique → 1; v's and w's places are all shared by two users → 1/2
    assert attack.details["per_user"] == {"u": 1.0, "v": 0.5, "w": 0.5}
    assert attack.details["tiles"]["kind"] == "h3" and attack.details["tiles"]["resolution"] == 9
    assert coverage.value == 1.0 and coverage.details["tiles_covered"]["original"] == 3
    grid = make_grid(TileSpec(**tiles), data)
    table = visit_table(data, grid)
    assert sorted(set(grid.cells[table.tile].tolist())) == sorted(
        {int(grid.cells[grid.tile_of(np.array([x]), np.array([y]))[0]])
         for x, y in places.values()})
    assert "centres" in attack.details["tile_visits"]
    html = heat_map({"name": "LocationAttack", "details": attack.details})
    assert html is not None and "visits per H3 cell" in str(html) and "<img" in str(html)
