"""Runs anonymeter's SinglingOutEvaluator on the 4,000-record fixtures over seeds.

Run once in a separate environment (anonymeter 1.0.0 from PyPI, numpy 1.26.4, Python 3.11:
anonymeter pins numpy < 1.27, see ../README.md), from this folder:
``python run_anonymeter.py SEEDS RELEASE...`` writes ``anonymeter_sizes.json``: for each
release (``near_copy``, ``independent``), with the 2,000-record control and its first 1,000
rows, anonymeter's multivariate attack (300 attacks, ``n_cols=3``) with its module generator
seeded 0 to SEEDS - 1. Only the counts, rates and risks are stored. Run here with
``python run_anonymeter.py 3 near_copy`` (about two CPU-minutes a run).
"""

import json
import sys
import time

import numpy as np
import pandas as pd
from anonymeter.evaluators import SinglingOutEvaluator
from anonymeter.evaluators import singling_out_evaluator as so

ori = pd.read_csv("original4k.csv.gz")
control = pd.read_csv("control4k.csv.gz")
seeds = range(int(sys.argv[1]))
releases = {name: pd.read_csv(f"{name}4k.csv.gz") for name in sys.argv[2:]}
out = {"anonymeter": "1.0.0", "n_attacks": 300, "n_cols": 3, "runs": []}
for release, syn in releases.items():
    for n_control in (2000, 1000):
        for seed in seeds:
            so.rng = np.random.default_rng(seed)
            np.random.seed(seed)  # pandas' sampling in the size correction
            start = time.perf_counter()
            ev = SinglingOutEvaluator(ori=ori, syn=syn, control=control.iloc[:n_control],
                                      n_attacks=300, n_cols=3).evaluate(mode="multivariate")
            res, risk = ev.results(), ev.risk()
            out["runs"].append({
                "release": release, "n_control": n_control, "seed": seed,
                "n_success": res.n_success, "n_control_corrected": float(res.n_control),
                "n_baseline": res.n_baseline,
                "attack_rate": [res.attack_rate.value, res.attack_rate.error],
                "control_rate": [res.control_rate.value, res.control_rate.error],
                "risk": risk.value, "risk_ci": list(risk.ci),
                "seconds": round(time.perf_counter() - start, 1)})
            print(out["runs"][-1], flush=True)
with open("anonymeter_sizes.json", "w") as f:
    json.dump(out, f, indent=1)
