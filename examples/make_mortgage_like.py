"""Write examples/data/mortgage_like.csv: a synthetic stand-in for the seed's mortgage data.

Pflughoeft, Soofi & Soyer (2022), Section 4.1 use 400 FHA loans (not public). This script
draws 400 (loan, income) pairs whose logarithms are bivariate normal with the seed's Table 1
moments: loan mean 11.117, variance 0.180; income mean 10.394, variance 0.192; covariance
0.123. Amounts are rounded to whole dollars. Deterministic (seed 20220510); run it again to
rebuild the file byte for byte:

    python examples/make_mortgage_like.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

MEAN = np.array([11.117, 10.394])
COV = np.array([[0.180, 0.123], [0.123, 0.192]])
ROWS = 400
SEED = 20220510


def make(rows: int = ROWS, seed: int = SEED) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = MEAN + rng.standard_normal((rows, 2)) @ np.linalg.cholesky(COV).T
    return pd.DataFrame({"loan": np.round(np.exp(z[:, 0])).astype(np.int64),
                         "income": np.round(np.exp(z[:, 1])).astype(np.int64)})


def main() -> None:
    out = Path(__file__).resolve().parent / "data" / "mortgage_like.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    make().to_csv(out, index=False, lineterminator="\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
