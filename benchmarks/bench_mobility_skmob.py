"""Benchmark: the mobility layer against scikit-mobility itself, on the same data, interleaved.

    python benchmarks/bench_mobility_skmob.py [--quick] [--rounds N] [--long S]
        [--skmob-python PATH]

Peer: scikit-mobility 1.3.1, which needs Python 3.9 and numpy < 1.24 and is never an anoneval
dependency. Give the Python of an environment where it is installed (``--skmob-python`` or
``ANONEVAL_SKMOB_PYTHON``, default ``/work/oracles/skmob39/bin/python`` when present; install
steps in docs/scaling.md, "Peers in other processes"). The script writes the data to a
temporary folder and starts skmob once in a child process of that Python, which reads it and
builds its TrajDataFrames (untimed), then runs one operation per request and times it itself
(wall and CPU seconds around the skmob call only; ``benchmarks/_remote.py``). Without a skmob
Python it says so and times anoneval's side alone.

Operations (same input on both sides):

* stay points: skmob ``detection.stay_locations`` (0.2 km, 20 min, per trajectory) vs
  anoneval's stay detection (``visits: "stays"``), on a synthetic trace with pauses;
* individual measures on the visit table (tile centres given to skmob as lat/lng): radius of
  gyration, uncorrelated entropy, real entropy, jump lengths, max distance from home;
* collective: visits per location, homes per location;
* attacks: LocationAttack, LocationSequenceAttack (k = 2) and HomeWorkAttack on a small
  release (skmob takes ~0.3 s per knowledge instance).

The attacks are timed through the public API, ``Evaluator(None, [attack]).evaluate(release)``
on a fresh copy of the loaded release. No public call computes one side's per-user values or
stays alone (the measures compare two datasets), so for stays, individual and collective
operations ours is the function those measures run (``detect_stays``, ``per_user``, the visit
and home counts) on the loaded visit table, JIT-compiled before the clock. Each side makes one
untimed call whose results are compared (stay counts and times, per-user values to 1e-9
relative, per-user risks), then ``--rounds`` interleaved rounds (one round where skmob's first
call took over ``--long`` seconds); printed per operation: both medians, the per-round ratio
anoneval/skmob min / median / max and the CPU ratio (docs/scaling.md, "How benchmarks
measure"), and whether the results agree. ``--quick`` runs small sizes in a few seconds (the
skmob side, if given, in about a minute).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _common import header, interleaved, show, timed_rounds
from _remote import HERE, RemotePeer

import anoneval
from anoneval.core.api import Trajectories
from anoneval.plugins.mobility._collective import home_tiles
from anoneval.plugins.mobility._stays import StaySpec, detect_stays
from anoneval.plugins.mobility._tiles import TileSpec, make_grid, visit_table
from anoneval.plugins.mobility.individual_mobility import lz_entropies, per_user

BBOX = [2.20, 48.80, 2.45, 48.92]
T0 = 1_300_000_000
#: The skmob Python used when neither --skmob-python nor ANONEVAL_SKMOB_PYTHON is given.
DEFAULT_SKMOB = "/work/oracles/skmob39/bin/python"
INDIVIDUAL = ("radius_of_gyration", "uncorrelated_entropy", "real_entropy", "jump_lengths",
              "max_distance_from_home")
ATTACKS = ("LocationAttack", "LocationSequenceAttack", "HomeWorkAttack")

#: The peer: skmob in its own Python, serving one operation per request (``_remote.serve``).
CHILD = r'''
import sys
sys.path.insert(0, sys.argv[1])
from _remote import serve
import pandas as pd
import skmob
from skmob.measures import collective, individual
from skmob.preprocessing import detection
from skmob.privacy import attacks

folder = sys.argv[2]


def tdf(name):
    frame = pd.read_csv(folder + "/" + name + ".csv", parse_dates=["datetime"])
    return skmob.TrajDataFrame(frame, latitude="lat", longitude="lng", datetime="datetime",
                               user_id="uid")


pts, vdf, rdf = tdf("points"), tdf("visits"), tdf("release")


def stays():
    st = detection.stay_locations(pts, spatial_radius_km=0.2, minutes_for_a_stop=20.0,
                                  leaving_time=True)
    return {"count": len(st), "arrive": sorted((st["datetime"].astype("int64") // 10**9).tolist())}


def per_user(fn):
    def run():
        df = fn(vdf, show_progress=False)
        col = [c for c in df.columns if c != "uid"][0]
        vals = df[col].tolist()
        if fn is individual.jump_lengths:
            vals = [float(sum(v)) for v in vals]
        return {"uid": df["uid"].astype(str).tolist(), "value": vals}
    return run


def attack(make):
    def run():
        df = make().assess_risk(rdf)
        return {"uid": df["uid"].astype(str).tolist(), "risk": df["risk"].tolist()}
    return run


ops = {"version": lambda: skmob.__version__, "stays": stays,
       "visits_per_location": lambda: {"count": sorted(
           collective.visits_per_location(vdf)["n_visits"].tolist())},
       "homes_per_location": lambda: {"count": sorted(
           collective.homes_per_location(vdf)["n_homes"].tolist())},
       "LocationAttack": attack(lambda: attacks.LocationAttack(knowledge_length=2)),
       "LocationSequenceAttack": attack(
           lambda: attacks.LocationSequenceAttack(knowledge_length=2)),
       "HomeWorkAttack": attack(attacks.HomeWorkAttack)}
for name in ("radius_of_gyration", "uncorrelated_entropy", "real_entropy", "jump_lengths",
             "max_distance_from_home"):
    ops[name] = per_user(getattr(individual, name))
serve(ops)
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


def copy(data: Trajectories) -> Trajectories:
    """A new object over the same arrays: no cache of an earlier call (a visit table) is kept."""
    return Trajectories(data.trajectory_id, data.user_id, data.offsets, data.lon, data.lat,
                        data.t)


def attack_risks(name: str, release: Trajectories) -> dict[str, Any]:
    """What a user calls: ``Evaluator(None, [attack]).evaluate(release)``; per-user risks."""
    params: dict[str, Any] = {"knowledge_length": 2, "visits": "points", "tiles": {"bbox": BBOX}}
    if name == "HomeWorkAttack":
        params["compat"] = "skmob"
    entry = anoneval.Evaluator(None, [{"name": name, "params": params}]).evaluate(
        release).measures[0]
    if entry.error:
        raise RuntimeError(f"{name}: {entry.error}")
    per = entry.details["per_user"]
    return {"uid": list(per), "risk": list(per.values())}


def our_ops(points: Trajectories, visits: Trajectories, rel: Trajectories
            ) -> tuple[dict[str, Callable[[], dict[str, Any]]], list[str]]:
    """anoneval's side of each operation (inputs loaded, JIT compiled), and the users with tied
    homes."""
    spec = StaySpec()
    detect_stays(points.subset(np.arange(min(3, len(points)))), spec)  # JIT outside timing
    lz_entropies(np.array([0, 1, 0]), np.array([0, 3]))
    grid = make_grid(TileSpec(bbox=BBOX))
    table = visit_table(visits, grid, "points")

    def stays() -> dict[str, Any]:
        st = detect_stays(copy(points), spec)
        return {"count": len(st), "arrive": sorted(st.arrive.tolist())}

    def individual(name: str) -> Callable[[], dict[str, Any]]:
        def run() -> dict[str, Any]:
            vals = per_user(name, table, grid, 2)
            if name == "jump_lengths":
                vals = [float(sum(v)) for v in vals]
            return {"uid": [str(u) for u in table.users], "value": vals, "name": name}
        return run

    def visits_per_location() -> dict[str, Any]:
        return {"count": sorted(np.unique(table.tile, return_counts=True)[1].tolist())}

    def homes_per_location() -> dict[str, Any]:
        homes = home_tiles(table, grid)[1]
        return {"count": sorted(np.unique(homes, return_counts=True)[1].tolist())}
    ops: dict[str, Callable[[], dict[str, Any]]] = {"stays": stays}
    ops.update({name: individual(name) for name in INDIVIDUAL})
    ops["visits_per_location"] = visits_per_location
    ops["homes_per_location"] = homes_per_location
    ops.update({name: (lambda name=name: attack_risks(name, copy(rel))) for name in ATTACKS})
    return ops, tied_homes(table)


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


def start_skmob(python: str, points: Trajectories, visits: Trajectories, rel: Trajectories,
                folder: str) -> RemotePeer:
    """skmob in a child process of ``python``, with the data written to ``folder`` and loaded."""
    f = points.to_frame(timestamp_format=None)
    pd.DataFrame({"lat": f.lat, "lng": f.lon, "datetime": pd.to_datetime(f.timestamp, unit="s"),
                  "uid": f.user_id, "tid": f.trajectory_id}).to_csv(
        Path(folder) / "points.csv", index=False)
    visit_frame(visits, "points").to_csv(Path(folder) / "visits.csv", index=False)
    visit_frame(rel, "points").to_csv(Path(folder) / "release.csv", index=False)
    script = Path(folder) / "skmob_peer.py"
    script.write_text(CHILD)
    return RemotePeer([python, str(script), str(HERE), folder], timeout=600, name="skmob")


def skmob_python(given: str | None) -> str | None:
    """The skmob Python: ``given``, else the default install; None (with a note when ``given``
    is not a file) when there is none."""
    if given and not Path(given).is_file():
        print(f"peer: {given} (the scikit-mobility Python given) is not a file")
        return None
    path = given or DEFAULT_SKMOB
    return path if Path(path).is_file() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 3, --quick 1)")
    parser.add_argument("--long", type=float, default=60.0,
                        help="one round where skmob's first call took longer (s; default 60)")
    parser.add_argument("--skmob-python", default=os.environ.get("ANONEVAL_SKMOB_PYTHON"),
                        help="Python of a scikit-mobility 1.3.1 environment "
                             f"(default: $ANONEVAL_SKMOB_PYTHON, else {DEFAULT_SKMOB})")
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    if args.quick:
        points, visits, rel = trace(5, 2), trace(20, 3, seed=1), release(8, 5)
    else:
        points, visits, rel = trace(200, 5), trace(300, 5, seed=1), release(25, 8)
    print(f"stays on {points.n_points:,} points; individual/collective on "
          f"{visits.n_points:,} visits of {len(np.unique(visits.user_id))} users; attacks on "
          f"{rel.n_points} visits of {len(np.unique(rel.user_id))} users")
    ops, tied = our_ops(points, visits, rel)
    python = skmob_python(args.skmob_python)
    if python is None:
        print("peer: no scikit-mobility Python (--skmob-python, ANONEVAL_SKMOB_PYTHON or "
              f"{DEFAULT_SKMOB}): anoneval's side only")
        header("anoneval alone", rounds, peers=False)
        for name, fn in ops.items():
            wall, cpu = timed_rounds(fn, rounds)
            print(f"{name:24s} {wall:10.4f} s (cpu {cpu:8.4f})", flush=True)
        return
    with tempfile.TemporaryDirectory(prefix="anoneval-skmob-") as folder, \
            start_skmob(python, points, visits, rel, folder) as peer:
        print(f"peer: scikit-mobility {peer.run('version').value} ({python})")
        header("anoneval against scikit-mobility (skmob timed in its own process)", rounds)
        for name, fn in ops.items():
            mine = fn()  # the warm-up calls, compared
            first = peer.run(name)
            n = 1 if first.wall > args.long else rounds
            c = interleaved(fn, peer.op(name), n, name=name, warm_up=False)
            note = f"  agree: {agree(mine, first.value, tied)}" + (
                f" ({n} round: skmob's first call took {first.wall:.0f} s)" if n < rounds
                else "")
            show(c, "skmob", width=24, note=note)


if __name__ == "__main__":
    main()
