"""Make ``synthcity_prdc_alpha.json``: synthcity's PRDC and AlphaPrecision on two seeded arrays.

Run once in a throwaway environment (python 3.11, ``pip install synthcity==0.2.12`` with the
CPU build of torch 2.2.2 and opacus<1.5, which that torch needs); the test suite only reads the
JSON (arrays and values), so it needs no synthcity. The arrays: 250 × 4 original records and
250 released ones (the same size: synthcity's AlphaPrecision requires it), continuous so that
no two distances tie (synthcity computes distances as ‖a‖² + ‖b‖² − 2a·b, whose rounding
decides ties differently from exact differences); the released ones drawn from a shifted,
wider model.

    python tests/data/synthetic/make_synthcity_fixture.py
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
from synthcity.metrics.eval_statistical import AlphaPrecision, PRDCScore

OUT = Path(__file__).resolve().parent / "synthcity_prdc_alpha.json"


def main() -> None:
    rng = np.random.default_rng(2026)
    x = rng.normal(size=(250, 4))
    y = rng.normal(size=(250, 4)) * 1.2 + 0.3
    prdc = {k: float(v) for k, v in PRDCScore(nearest_k=5)._compute_prdc(x, y).items()}
    _, p_curve, b_curve, dp, db, auth = AlphaPrecision().metrics(x, y)
    OUT.write_text(json.dumps({
        "made_with": {"synthcity": version("synthcity"), "numpy": version("numpy")},
        "original": x.tolist(), "released": y.tolist(), "prdc_k5": prdc,
        "alpha_precision": {"delta_precision_alpha": float(dp), "delta_coverage_beta": float(db),
                            "authenticity": float(auth),
                            "alpha_precision_curve": [float(v) for v in p_curve],
                            "beta_coverage_curve": [float(v) for v in b_curve]}},
        indent=1) + "\n")


if __name__ == "__main__":
    main()
