"""Benchmark: skmob's eight attacks (k = 3, 10,000 users × 200 visits) and the utility measures.

    python benchmarks/bench_mobility_attacks.py [--quick] [--rounds N] [--subset U,V]
        [--skmob-python PATH]

Target (issue 26): every attack with k = 3 on 10,000 users × 200 visits in under 60 s on this
machine, exact or sampled with the interval stated (``max_instances`` instances per user above
which a user's instances are a seeded sample; the report says how many users were sampled).

Data: a synthetic city of 4,000 tiles with Zipf popularity; each user has 5–40 favourite
places (drawn by popularity) and 200 visits over 30 days, drawn from them with Zipf weights, so
that popular places are shared and users have a long tail (every point is a visit).

Peer: scikit-mobility 1.3.1 (Python 3.9, numpy < 1.24: never an anoneval dependency; its
Python as in bench_mobility_skmob.py, ``--skmob-python``, ``ANONEVAL_SKMOB_PYTHON`` or
``/work/oracles/skmob39/bin/python``; install steps in docs/scaling.md, "Peers in other
processes"). Its LocationAttack cannot finish at this size (one pandas group-by and merge per
(instance, user)), so it runs in a persistent child process (``benchmarks/_remote.py``) on a
subset, ``--subset USERS,VISITS`` of the same city (default 12 users × 8 visits, ``--quick``
6 × 6), interleaved with ours on the same subset (``--rounds`` rounds after one untimed call
per side, whose per-user risks must agree), and its CPU seconds per (distinct instance, user)
pair are extrapolated linearly to all instances × users of the full data: an estimate of
skmob's cost, printed beside our exact run. Without a skmob Python the subset comparison is
skipped. ``--quick`` runs 500 users × 50 visits in a few seconds.

Every measure and attack is timed through the public API, ``anoneval.Evaluator(original,
[measure]).evaluate(release)`` (attacks: original None), on fresh objects over the loaded
arrays (no visit table cached by an earlier call).

Utility measures (VisitsPerLocation, HomesPerLocation, ODFlows, TileCoverage,
IndividualMobility with its default radius_of_gyration, TripDistribution, ScikitMeasures,
PropensityScore, and variants: real entropy, visits as stay points, H3 cells, two more
ScikitMeasures) on 10^6 points (5,000 users × 200 points, every point a visit) against a noisy
copy: target < 10 s each, the visit tables built inside the timing (skmob itself is compared in
bench_mobility_skmob.py).
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import header, interleaved, show
from _remote import HERE, RemotePeer
from bench_mobility_skmob import DEFAULT_SKMOB, skmob_python, visit_frame

import anoneval
from anoneval.core.api import Trajectories

ATTACKS = [("LocationAttack", {}), ("LocationSequenceAttack", {}),
           ("LocationTimeAttack", {"time_precision": "hour"}), ("UniqueLocationAttack", {}),
           ("LocationFrequencyAttack", {}), ("LocationProbabilityAttack", {}),
           ("LocationProportionAttack", {}), ("HomeWorkAttack", {})]
BBOX = [2.20, 48.80, 2.45, 48.92]


def city(users: int, visits: int, seed: int = 0) -> Trajectories:
    """One trajectory of ``visits`` points per user on a Zipf-popular grid of places."""
    rng = np.random.default_rng(seed)
    n_places = 4000
    lon = rng.uniform(BBOX[0], BBOX[2], n_places)
    lat = rng.uniform(BBOX[1], BBOX[3], n_places)
    pop = 1 / np.arange(1, n_places + 1) ** 0.8
    pop /= pop.sum()
    n_fav = rng.integers(5, 41, users)
    fav = rng.choice(n_places, size=(users, 40), p=pop)
    rank = rng.random((users, visits))
    # Zipf weights over a user's favourites: index = floor(n_fav · u²)
    pick = np.minimum((n_fav[:, None] * rank ** 2).astype(np.int64), n_fav[:, None] - 1)
    place = fav[np.arange(users)[:, None], pick].ravel()
    t = np.sort(rng.integers(1_300_000_000, 1_300_000_000 + 30 * 86400, (users, visits)),
                axis=1).ravel()
    ids = np.arange(users)
    offsets = np.arange(users + 1) * visits
    return Trajectories(ids, ids, offsets, lon[place], lat[place], t)


def copy(data: Trajectories) -> Trajectories:
    """A new object over the same arrays: no cache of an earlier call (a visit table) is kept."""
    return Trajectories(data.trajectory_id, data.user_id, data.offsets, data.lon, data.lat,
                        data.t)


def evaluated(original: Trajectories | None, data: Trajectories, name: str,
              params: dict[str, Any]) -> tuple[float, float, float, dict[str, Any]]:
    """What a user calls, ``Evaluator(original, [measure]).evaluate(data)`` on fresh objects:
    wall and CPU seconds (this process), the value and the details (an error is raised)."""
    original = copy(original) if original is not None else None
    data = copy(data)
    start, cpu = time.perf_counter(), time.process_time()
    entry = anoneval.Evaluator(original, [{"name": name, "params": params}]).evaluate(
        data).measures[0]
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    if entry.error:
        raise RuntimeError(f"{name}: {entry.error}")
    return seconds, cpu, float(entry.value), entry.details


def attack_params(k: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"knowledge_length": k, "visits": "points", "tiles": {"bbox": BBOX}, **(extra or {})}


#: The peer: skmob's LocationAttack in its own Python, on the subset's visits (tile centres).
CHILD = r'''
import sys
sys.path.insert(0, sys.argv[1])
from _remote import serve
import pandas as pd
import skmob
from skmob.privacy import attacks

frame = pd.read_csv(sys.argv[2], parse_dates=["datetime"])
tdf = skmob.TrajDataFrame(frame, latitude="lat", longitude="lng", datetime="datetime",
                          user_id="uid")
k = int(sys.argv[3])


def location_attack():
    df = attacks.LocationAttack(knowledge_length=k).assess_risk(tdf)
    return {"uid": df["uid"].astype(str).tolist(), "risk": df["risk"].tolist()}


serve({"LocationAttack": location_attack})
'''


def skmob_subset(python: str, users: int, visits: int, k: int, rounds: int
                 ) -> tuple[float, int, int]:
    """LocationAttack on ``users`` × ``visits`` of the city, ours against skmob interleaved
    (printed); skmob's median CPU seconds, the distinct instances and the users."""
    data = city(users, visits, seed=5)
    params = attack_params(k)
    _, _, _, details = evaluated(None, data, "LocationAttack", params)  # our warm-up
    with tempfile.TemporaryDirectory(prefix="anoneval-skmob-") as folder:
        csv = Path(folder) / "visits.csv"
        visit_frame(data, "points").to_csv(csv, index=False)
        script = Path(folder) / "skmob_peer.py"
        script.write_text(CHILD)
        with RemotePeer([python, str(script), str(HERE), str(csv), str(k)], timeout=600,
                        name="skmob") as peer:
            theirs = peer.run("LocationAttack").value  # skmob's warm-up
            ours = {str(u): r for u, r in details["per_user"].items()}
            same = set(ours) == set(theirs["uid"]) and all(
                math.isclose(ours[u], r, rel_tol=1e-12, abs_tol=1e-12)
                for u, r in zip(theirs["uid"], theirs["risk"], strict=True))
            header(f"LocationAttack (k = {k}) on {users} users × {visits} visits, against "
                   "scikit-mobility (timed in its own process)", rounds)
            c = show(interleaved(lambda: evaluated(None, data, "LocationAttack", params),
                                 peer.op("LocationAttack"), rounds, name="LocationAttack",
                                 warm_up=False),
                     "skmob", width=16, note=f"  per-user risks agree: {'yes' if same else 'NO'}")
    return float(np.median(c.peer_cpu)), int(details["instances"]), users


UTILITY = ["VisitsPerLocation", "HomesPerLocation", "ODFlows", "TileCoverage",
           "IndividualMobility", "TripDistribution", "ScikitMeasures", "PropensityScore"]
#: Extra variants timed besides each measure's defaults.
VARIANTS = [("IndividualMobility", {"measure": "real_entropy"}),
            ("IndividualMobility", {"visits": "stays", "measure": "radius_of_gyration"}),
            ("VisitsPerLocation", {"tiles": {"kind": "h3", "resolution": 9}}),
            ("ScikitMeasures", {"measure": "uncorrelated_location_entropy"}),
            ("ScikitMeasures", {"measure": "mean_square_displacement"})]


def utility(users: int, visits: int) -> None:
    orig = city(users, visits, seed=1)
    rng = np.random.default_rng(2)
    anon = Trajectories(orig.trajectory_id, orig.user_id, orig.offsets,
                        orig.lon + rng.normal(0, 0.002, orig.n_points),
                        orig.lat + rng.normal(0, 0.002, orig.n_points), orig.t)
    print(f"utility on {orig.n_points:,} points; target < 10 s each (wall; the CPU time of "
          f"this process beside it; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores)")
    print(f"{'measure':60s} {'wall s':>8s} {'cpu s':>8s} {'value':>9s}  ok")
    for name, extra in [(n, {}) for n in UTILITY] + VARIANTS:
        params: dict = {"tiles": {"bbox": BBOX}}
        if name not in ("TileCoverage", "TripDistribution"):
            params["visits"] = "points"
        if name in ("TripDistribution", "ScikitMeasures", "PropensityScore"):
            params = {}
        params.update(extra)
        if "kind" in params.get("tiles", {}):
            params["tiles"]["bbox"] = BBOX
        seconds, cpu, value, _ = evaluated(orig, anon, name, params)
        label = name + ("" if not extra else " " + ",".join(
            f"{k}={v if not isinstance(v, dict) else v.get('kind')}" for k, v in extra.items()))
        ok = "yes" if seconds < 10 else ("cpu only (busy machine)" if cpu < 10 else "NO")
        print(f"{label:60s} {seconds:8.2f} {cpu:8.2f} {value:9.4f}  {ok}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 users × 50 visits")
    parser.add_argument("--rounds", type=int, help="interleaved rounds against skmob "
                                                   "(default 3, --quick 1)")
    parser.add_argument("--subset", help="USERS,VISITS of skmob's subset (default 12,8, "
                                         "--quick 6,6)")
    parser.add_argument("--skmob-python", default=os.environ.get("ANONEVAL_SKMOB_PYTHON"),
                        help="Python of a scikit-mobility 1.3.1 environment "
                             f"(default: $ANONEVAL_SKMOB_PYTHON, else {DEFAULT_SKMOB})")
    args = parser.parse_args()
    users, visits = (500, 50) if args.quick else (10_000, 200)
    rounds = args.rounds or (1 if args.quick else 3)
    sub_users, sub_visits = (int(v) for v in (args.subset or ("6,6" if args.quick else "12,8")
                                              ).split(","))
    utility(*((500, 50) if args.quick else (5_000, 200)))
    k = 3
    data = city(users, visits)
    print(f"{users} users × {visits} visits, k = {k}, evaluate(); target < 60 s per attack")
    print(f"{'attack':28s} {'wall s':>8s} {'cpu s':>8s} {'value':>8s} {'sampled users':>14s}  ok")
    exact = n_inst = None
    for name, extra in ATTACKS:
        seconds, cpu, value, d = evaluated(None, data, name, attack_params(k, extra))
        ok = "yes" if seconds < 60 else ("cpu only (busy machine)" if cpu < 60 else "NO")
        print(f"{name:28s} {seconds:8.2f} {cpu:8.2f} {value:8.4f} {d['sampled_users']:14d}  "
              f"{ok}", flush=True)
        if name == "LocationAttack":
            exact, n_inst = cpu, int(d["instances"])
    python = skmob_python(args.skmob_python)
    if python is None:
        print("peer: no scikit-mobility Python (--skmob-python, ANONEVAL_SKMOB_PYTHON or "
              f"{DEFAULT_SKMOB}): no comparison")
        return
    peer_cpu, sub_inst, sub_users = skmob_subset(python, sub_users, sub_visits, k, rounds)
    per_pair = peer_cpu / (sub_inst * sub_users)
    estimate = per_pair * n_inst * users
    print(f"skmob's LocationAttack at full size (estimated from the subset's CPU seconds): "
          f"{per_pair * 1e3:.3f} ms per (distinct instance, user) × {n_inst:,} instances × "
          f"{users:,} users ≈ {estimate:,.0f} s of CPU; anoneval {exact:.2f} s of CPU "
          f"(≈ {estimate / exact:,.0f}× less)")


if __name__ == "__main__":
    main()
