"""Make two synthetic releases of the adult extract and a control split (deterministic).

The adult extract (``examples/data/adult/adult.csv``, 30,162 records) is restricted to seven
columns and split at random (seed 0) into halves: ``training.parquet`` (the records the
releases are made from) and ``control.parquet`` (held out: the attacks' control set). Two
releases of the training half are made by anoneval's own synthesizers:

- ``gaussian_copula.parquet``: GaussianCopula (empirical marginals, categories as latent
  normal slices);
- ``maxent.parquet``: MaxEntCategorical, the maximum-entropy distribution with every two-way
  table of the training half (age as codes), sampled multinomially.

    python examples/make_synthetic_adult.py

Running it twice gives identical files; ``examples/synthetic_adult.json`` evaluates them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from anoneval.core import Context, Microdata
from anoneval.registry import default_registry

HERE = Path(__file__).resolve().parent
OUT = HERE / "data" / "synthetic_adult"
COLUMNS = ["sex", "age", "race", "marital-status", "education", "workclass", "salary-class"]


def main() -> None:
    adult = pd.read_csv(HERE / "data" / "adult" / "adult.csv", sep=";")[COLUMNS]
    order = np.random.default_rng(0).permutation(len(adult))
    half = len(adult) // 2
    training = adult.iloc[np.sort(order[:half])].reset_index(drop=True)
    control = adult.iloc[np.sort(order[half:])].reset_index(drop=True)
    OUT.mkdir(parents=True, exist_ok=True)
    training.to_parquet(OUT / "training.parquet", index=False)
    control.to_parquet(OUT / "control.parquet", index=False)
    registry = default_registry()
    ctx = Context(seed=0, registry=registry)
    for name, synth in (("gaussian_copula", registry.create("synthesizer", "GaussianCopula")),
                        ("maxent", registry.create("synthesizer", "MaxEntCategorical",
                                                   {"columns": COLUMNS}))):
        made = synth.generate(Microdata(training), ctx).data.frame[COLUMNS]
        made.to_parquet(OUT / f"{name}.parquet", index=False)
        print(f"{name}: {len(made)} records")


if __name__ == "__main__":
    main()
