"""Regenerate skmob_stays_values.json: scikit-mobility's stay_locations on skmob_stays.csv.

Run with the pinned scikit-mobility environment (never an anoneval dependency), e.g. a pyenv
Python 3.9.18 venv with ``scikit-mobility==1.3.1 pandas==1.5.3 "numpy<1.24" "shapely<2"
geopandas==0.10.2``:

    python gen_skmob_stays.py  # writes skmob_stays.csv (once) and skmob_stays_values.json

The input is synthetic: 6 users, 3 trajectories each, points every 30-400 s; a walk that
pauses at places (jitter of about 40 m) for 5-60 minutes, with some long data gaps.
"""

import json
import os

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(HERE, "skmob_stays.csv")


def make() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    rows = []
    t0 = 1_300_000_000
    for u in range(1, 7):
        t = t0 + int(rng.integers(0, 3600))
        for tid in range(3):
            lat, lng = 48.80 + rng.random() * 0.1, 2.20 + rng.random() * 0.2
            for _ in range(int(rng.integers(3, 7))):
                pause = rng.random() < 0.6
                n = int(rng.integers(2, 14))
                for _ in range(n):
                    if pause:
                        jl, jg = rng.normal(0, 0.0003), rng.normal(0, 0.0004)
                    else:
                        lat += rng.normal(0, 0.003)
                        lng += rng.normal(0, 0.004)
                        jl = jg = 0.0
                    step = int(rng.integers(30, 400))
                    if rng.random() < 0.05:
                        step += int(rng.integers(1800, 7200))  # a data gap
                    t += step
                    rows.append((round(lat + jl, 6), round(lng + jg, 6), t, u, u * 10 + tid))
            t += int(rng.integers(600, 3600))
    return pd.DataFrame(rows, columns=["lat", "lng", "t", "uid", "tid"])


def main() -> None:
    import skmob
    from skmob.preprocessing import detection

    if not os.path.exists(CSV):
        make().to_csv(CSV, index=False)
    df = pd.read_csv(CSV)
    df["datetime"] = pd.to_datetime(df["t"], unit="s")
    cases = []
    for radius, minutes, gap, with_tid in [(0.2, 20.0, 1e12, True), (0.1, 5.0, 1e12, True),
                                           (0.2, 10.0, 30.0, True), (0.2, 20.0, 1e12, False),
                                           (0.05, 3.0, 20.0, False)]:
        cols = ["lat", "lng", "datetime", "uid"] + (["tid"] if with_tid else [])
        tdf = skmob.TrajDataFrame(df[cols].copy(), latitude="lat", longitude="lng",
                                  datetime="datetime", user_id="uid")
        st = detection.stay_locations(tdf, spatial_radius_km=radius, minutes_for_a_stop=minutes,
                                      no_data_for_minutes=gap, leaving_time=True)
        epoch = pd.Timestamp("1970-01-01")
        cases.append({
            "params": {"spatial_radius_km": radius, "minutes_for_a_stop": minutes,
                       "no_data_for_minutes": gap, "tid_column": with_tid},
            "uid": st["uid"].astype(int).tolist(),
            "lat": st["lat"].tolist(), "lng": st["lng"].tolist(),
            "arrive": ((st["datetime"] - epoch) // pd.Timedelta("1s")).astype(int).tolist(),
            "leave": ((st["leaving_datetime"] - epoch)
                      // pd.Timedelta("1s")).astype(int).tolist(),
        })
    note = (f"scikit-mobility {skmob.__version__} (Python 3.9.18, pandas {pd.__version__}, "
            f"numpy {np.__version__}; pinned throwaway venv, "
            "never a dependency): skmob.preprocessing.detection.stay_locations on "
            "skmob_stays.csv (lat, lng, t = epoch s UTC, uid, tid), made by gen_skmob_stays.py; "
            "tid_column false drops the tid column (stays over all of a user's points).")
    with open(os.path.join(HERE, "skmob_stays_values.json"), "w") as f:
        json.dump({"_note": note, "cases": cases}, f, indent=1)


if __name__ == "__main__":
    main()
