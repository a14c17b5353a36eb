"""Benchmark: the mobility layer against scikit-mobility itself, on the same data.

    python benchmarks/bench_mobility_skmob.py [--quick] [--skmob-python PATH]

Peer: scikit-mobility 1.3.1, which needs Python 3.9 and numpy < 1.24 and is never an anoneval
dependency. Give the Python of an environment where it is installed (``--skmob-python`` or
``ANONEVAL_SKMOB_PYTHON``), e.g. a pyenv 3.9.18 venv with ``scikit-mobility==1.3.1
pandas==1.5.3 "numpy<1.24" "shapely<2" geopandas==0.10.2``. The script writes the data to a
temporary folder, runs skmob in a child process of that Python, which times each operation
itself (wall and CPU time around the skmob call only, the CSV read excluded), and reads its
timings and results back. The CPU-time ratio is the robust one on a shared machine. Without
a skmob Python it says so and runs anoneval's side alone.

Operations (same input on both sides; anoneval timed in this process, JIT compilation and the
tile mapping outside the timing):

* stay points: skmob ``detection.stay_locations`` (0.2 km, 20 min, per trajectory) vs
  ``visits: "stays"`` detection, on a synthetic trace with pauses;
* individual measures on the visit table (tile centres given to skmob as lat/lng): radius of
  gyration, uncorrelated entropy, real entropy, jump lengths, max distance from home;
* collective: visits per location, homes per location;
* attacks: LocationAttack, LocationSequenceAttack (k = 2) and HomeWorkAttack on a small
  release (skmob takes ~0.3 s per knowledge instance).

Each row prints both times, the ratio skmob / anoneval, and whether the results agree (stay
counts and times, per-user values to 1e-9 relative, per-user risks exactly). ``--quick`` runs
small sizes in a few seconds (the skmob side, if given, in well under a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anoneval.core.api import Context, Trajectories
from anoneval.plugins.mobility._collective import home_tiles
from anoneval.plugins.mobility._stays import StaySpec, detect_stays
from anoneval.plugins.mobility._tiles import TileSpec, make_grid, visit_table
from anoneval.plugins.mobility.individual_mobility import lz_entropies, per_user
from anoneval.registry import default_registry

BBOX = [2.20, 48.80, 2.45, 48.92]
T0 = 1_300_000_000

CHILD = r'''
import json, sys, time
import pandas as pd
import skmob
from skmob.measures import collective, individual
from skmob.preprocessing import detection
from skmob.privacy import attacks

folder = sys.argv[1]
out = {"version": skmob.__version__}

def timed(fn):
    start, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return (time.perf_counter() - start, time.process_time() - cpu), value

pts = pd.read_csv(folder + "/points.csv", parse_dates=["datetime"])
tdf = skmob.TrajDataFrame(pts, latitude="lat", longitude="lng", datetime="datetime",
                          user_id="uid")
s, st = timed(lambda: detection.stay_locations(tdf, spatial_radius_km=0.2,
                                              minutes_for_a_stop=20.0, leaving_time=True))
out["stays"] = {"seconds": s[0], "cpu": s[1], "count": len(st),
                "arrive": sorted((st["datetime"].astype("int64") // 10**9).tolist())}

vis = pd.read_csv(folder + "/visits.csv", parse_dates=["datetime"])
vdf = skmob.TrajDataFrame(vis, latitude="lat", longitude="lng", datetime="datetime",
                          user_id="uid")
for name, fn in [
        ("radius_of_gyration", lambda: individual.radius_of_gyration(vdf, show_progress=False)),
        ("uncorrelated_entropy",
         lambda: individual.uncorrelated_entropy(vdf, show_progress=False)),
        ("real_entropy", lambda: individual.real_entropy(vdf, show_progress=False)),
        ("jump_lengths", lambda: individual.jump_lengths(vdf, show_progress=False)),
        ("max_distance_from_home",
         lambda: individual.max_distance_from_home(vdf, show_progress=False))]:
    s, df = timed(fn)
    col = [c for c in df.columns if c != "uid"][0]
    vals = df[col].tolist()
    if name == "jump_lengths":
        vals = [float(sum(v)) for v in vals]
    out[name] = {"seconds": s[0], "cpu": s[1], "uid": df["uid"].astype(str).tolist(),
                 "value": vals}
s, df = timed(lambda: collective.visits_per_location(vdf))
out["visits_per_location"] = {"seconds": s[0], "cpu": s[1],
                              "count": sorted(df["n_visits"].tolist())}
s, df = timed(lambda: collective.homes_per_location(vdf))
out["homes_per_location"] = {"seconds": s[0], "cpu": s[1],
                             "count": sorted(df["n_homes"].tolist())}

rel = pd.read_csv(folder + "/release.csv", parse_dates=["datetime"])
rdf = skmob.TrajDataFrame(rel, latitude="lat", longitude="lng", datetime="datetime",
                          user_id="uid")
for name, attack in [("LocationAttack", attacks.LocationAttack(knowledge_length=2)),
                     ("LocationSequenceAttack",
                      attacks.LocationSequenceAttack(knowledge_length=2)),
                     ("HomeWorkAttack", attacks.HomeWorkAttack())]:
    s, df = timed(lambda: attack.assess_risk(rdf))
    out[name] = {"seconds": s[0], "cpu": s[1], "uid": df["uid"].astype(str).tolist(),
                 "risk": df["risk"].tolist()}
json.dump(out, open(folder + "/out.json", "w"))
'''


def trace(users: int, trajs: int, seed: int = 0) -> Trajectories:
    """Trajectories of walks with pauses (points every 30–300 s)."""
    rng = np.random.default_rng(seed)
    rows: list[tuple[int, int, int, float, float]] = []
    for u in range(users):
        t = T0 + int(rng.integers(0, 86400))
        for k in range(trajs):
            lat, lon = rng.uniform(48.81, 48.91), rng.uniform(2.21, 2.44)
            n_seg = int(rng.integers(3, 8))
            for _ in range(n_seg):
                pause = rng.random() < 0.5
                n = int(rng.integers(3, 25))
                step = rng.integers(30, 300, n)
                times = t + np.cumsum(step)
                t = int(times[-1])
                if pause:
                    la = lat + rng.normal(0, 0.0003, n)
                    lo = lon + rng.normal(0, 0.0004, n)
                else:
                    la = lat + np.cumsum(rng.normal(0, 0.002, n))
                    lo = lon + np.cumsum(rng.normal(0, 0.003, n))
                    lat, lon = float(la[-1]), float(lo[-1])
                rows += [(u, u * 1000 + k, int(a), float(b), float(c))
                         for a, b, c in zip(times, lo, la, strict=True)]
            t += int(rng.integers(1800, 7200))
    frame = pd.DataFrame(rows, columns=["user_id", "trajectory_id", "timestamp", "lon", "lat"])
    frame["lat"] = frame["lat"].clip(48.801, 48.919)
    frame["lon"] = frame["lon"].clip(2.201, 2.449)
    return Trajectories.from_frame(frame)


def release(users: int, visits: int, seed: int = 3) -> Trajectories:
    """A small release: single-point trajectories at a few shared places."""
    rng = np.random.default_rng(seed)
    places = np.column_stack([rng.uniform(2.21, 2.44, 12), rng.uniform(48.81, 48.91, 12)])
    uid = np.repeat(np.arange(users), visits)
    pick = rng.integers(0, 12, len(uid))
    t = T0 + np.arange(len(uid)) * 977 % (30 * 86400)
    frame = pd.DataFrame({"user_id": uid, "trajectory_id": np.arange(len(uid)),
                          "timestamp": t, "lon": places[pick, 0], "lat": places[pick, 1]})
    return Trajectories.from_frame(frame)


def visit_frame(data: Trajectories, visits: str) -> pd.DataFrame:
    """The visit table with tile centres, as skmob reads it (lat, lng, datetime, uid)."""
    grid = make_grid(TileSpec(bbox=BBOX))
    table = visit_table(data, grid, visits)  # type: ignore[arg-type]
    lng, lat = grid.centroid(table.tile)
    return pd.DataFrame({"lat": lat, "lng": lng,
                         "datetime": pd.to_datetime(table.t, unit="s"),
                         "uid": table.users[table.uid]})


def timed(fn: Any) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, result) of ``fn()``."""
    start, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return time.perf_counter() - start, time.process_time() - cpu, value


def ours(points: Trajectories, visits: Trajectories, rel: Trajectories) -> dict[str, Any]:
    """anoneval's side: each operation timed alone, on prepared tables."""
    out: dict[str, Any] = {}
    spec = StaySpec()
    detect_stays(points.subset(np.arange(min(3, len(points)))), spec)  # JIT outside timing
    lz_entropies(np.array([0, 1, 0]), np.array([0, 3]))
    wall, cpu, st = timed(lambda: detect_stays(points, spec))
    out["stays"] = {"seconds": wall, "cpu": cpu, "count": len(st),
                    "arrive": sorted(st.arrive.tolist())}
    grid = make_grid(TileSpec(bbox=BBOX))
    table = visit_table(visits, grid, "points")
    for name in ("radius_of_gyration", "uncorrelated_entropy", "real_entropy", "jump_lengths",
                 "max_distance_from_home"):
        wall, cpu, vals = timed(lambda name=name: per_user(name, table, grid, 2))
        if name == "jump_lengths":
            vals = [float(sum(v)) for v in vals]
        out[name] = {"seconds": wall, "cpu": cpu, "uid": [str(u) for u in table.users],
                     "value": vals, "name": name}
    wall, cpu, (_, counts) = timed(lambda: np.unique(table.tile, return_counts=True))
    out["visits_per_location"] = {"seconds": wall, "cpu": cpu,
                                  "count": sorted(counts.tolist())}
    out["tied_homes"] = tied_homes(table)
    wall, cpu, (_, counts) = timed(lambda: np.unique(home_tiles(table, grid)[1],
                                                     return_counts=True))
    out["homes_per_location"] = {"seconds": wall, "cpu": cpu, "count": sorted(counts.tolist())}
    for name in ("LocationAttack", "LocationSequenceAttack", "HomeWorkAttack"):
        cls = default_registry().get("risk_measure", name)
        params: dict[str, Any] = {"knowledge_length": 2, "visits": "points",
                                  "tiles": {"bbox": BBOX}}
        if name == "HomeWorkAttack":
            params["compat"] = "skmob"
        measure = cls(cls.Params(**params))
        fresh = Trajectories(rel.trajectory_id, rel.user_id, rel.offsets, rel.lon, rel.lat,
                             rel.t)
        wall, cpu, res = timed(lambda m=measure, d=fresh: m.compute(None, d, Context(seed=1)))
        per = res.details["per_user"]
        out[name] = {"seconds": wall, "cpu": cpu, "uid": list(per), "risk": list(per.values())}
    return out


def tied_homes(table: Any) -> list[str]:
    """Users whose most frequent night tile is tied: skmob's home among more than 16 tied
    candidates depends on pandas' unstable sort (reference/mobility_semantics.md §4)."""
    tod = table.t % 86400
    night = (tod >= 22 * 3600) | (tod <= 7 * 3600)
    has_night = np.bincount(table.uid[night], minlength=len(table.users)) > 0
    use = night | ~has_night[table.uid]
    n = int(table.tile.max()) + 1
    keys, counts = np.unique(table.uid[use].astype(np.int64) * n + table.tile[use],
                             return_counts=True)
    user = keys // n
    top = np.zeros(len(table.users), dtype=np.int64)
    np.maximum.at(top, user, counts)
    n_top = np.bincount(user[counts == top[user]], minlength=len(table.users))
    return [str(u) for u in table.users[n_top > 1]]


def agree(a: dict[str, Any], b: dict[str, Any], tied: list[str]) -> str:
    """Whether two sides' results of one operation agree (values by user); home-based results
    may differ for users with tied homes (skmob's order is unspecified there)."""
    if "count" in a and "arrive" in a:
        return "yes" if a["count"] == b["count"] and a["arrive"] == b["arrive"] else "NO"
    if "count" in a:
        if a["count"] == b["count"]:
            return "yes"
        diff = sum((Counter(a["count"]) - Counter(b["count"])).values())
        same_total = sum(a["count"]) == sum(b["count"])
        return (f"yes, but {len(tied)} tied homes" if same_total and diff <= 2 * len(tied)
                else "NO")
    key = "risk" if "risk" in a else "value"
    x = dict(zip(a["uid"], a[key], strict=True))
    y = dict(zip(b["uid"], b[key], strict=True))
    if "home" in a.get("name", "") and tied:
        for u in tied:
            x.pop(u, None)
            y.pop(u, None)
        return (f"yes, {len(tied)} tied homes left out"
                if _values_agree(x, y, key) else "NO")
    return "yes" if _values_agree(x, y, key) else "NO"


def _values_agree(x: dict[str, float], y: dict[str, float], key: str) -> bool:
    if set(x) != set(y):
        return False
    u = sorted(x)
    xa = np.array([x[k] for k in u], dtype=float)
    ya = np.array([y[k] for k in u], dtype=float)
    if key == "risk":
        return bool(np.allclose(xa, ya, rtol=1e-9, atol=1e-12))
    return bool(np.allclose(xa, ya, rtol=1e-9, atol=1e-12, equal_nan=True))


def run_skmob(python: str, points: Trajectories, visits: Trajectories,
              rel: Trajectories) -> dict[str, Any]:
    """skmob's side in a child process of ``python``; its own timings."""
    with tempfile.TemporaryDirectory(prefix="anoneval-skmob-") as folder:
        f = points.to_frame(timestamp_format=None)
        pd.DataFrame({"lat": f.lat, "lng": f.lon,
                      "datetime": pd.to_datetime(f.timestamp, unit="s"),
                      "uid": f.user_id, "tid": f.trajectory_id}).to_csv(
            Path(folder) / "points.csv", index=False)
        visit_frame(visits, "points").to_csv(Path(folder) / "visits.csv", index=False)
        visit_frame(rel, "points").to_csv(Path(folder) / "release.csv", index=False)
        script = Path(folder) / "child.py"
        script.write_text(CHILD)
        subprocess.run([python, str(script), folder], check=True)
        return json.loads((Path(folder) / "out.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--skmob-python", default=os.environ.get("ANONEVAL_SKMOB_PYTHON"),
                        help="Python of a scikit-mobility 1.3.1 environment "
                             "(default: $ANONEVAL_SKMOB_PYTHON)")
    args = parser.parse_args()
    if args.quick:
        points, visits, rel = trace(5, 2), trace(20, 3, seed=1), release(8, 5)
    else:
        points, visits, rel = trace(200, 5), trace(300, 5, seed=1), release(25, 8)
    print(f"stays on {points.n_points:,} points; individual/collective on "
          f"{visits.n_points:,} visits of {len(np.unique(visits.user_id))} users; attacks on "
          f"{rel.n_points} visits of {len(np.unique(rel.user_id))} users")
    mine = ours(points, visits, rel)
    theirs = None
    if args.skmob_python:
        theirs = run_skmob(args.skmob_python, points, visits, rel)
        print(f"peer: scikit-mobility {theirs['version']} ({args.skmob_python})")
    else:
        print("peer: no scikit-mobility Python given (--skmob-python or "
              "ANONEVAL_SKMOB_PYTHON): anoneval's side only")
    print(f"{'operation':24s} {'anoneval s':>10s} {'skmob s':>9s} {'ratio':>7s} "
          f"{'cpu: anoneval':>13s} {'skmob':>8s} {'ratio':>7s}  agree")
    tied = mine.pop("tied_homes")
    for name, row in mine.items():
        if theirs is None:
            print(f"{name:24s} {row['seconds']:10.4f} {'-':>9s} {'-':>7s} {row['cpu']:13.4f}")
            continue
        peer = theirs[name]
        ratio = peer["seconds"] / max(row["seconds"], 1e-9)
        cpu_ratio = peer["cpu"] / max(row["cpu"], 1e-9)
        print(f"{name:24s} {row['seconds']:10.4f} {peer['seconds']:9.3f} {ratio:6.0f}× "
              f"{row['cpu']:13.4f} {peer['cpu']:8.3f} {cpu_ratio:6.0f}×  "
              f"{agree(row, peer, tied)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
