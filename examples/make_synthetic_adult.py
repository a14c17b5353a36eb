"""Make two synthetic releases of the adult extract and a control split (deterministic).

The adult extract (``examples/data/adult/adult.csv``, 30,162 records) is restricted to seven
columns and split at random (seed 0) into about equal halves by *distinct* records: the
distinct records are shuffled and each goes, with all its repeats, to ``training.parquet``
(the records the releases are made from) until that holds half the records; the rest is
``control.parquet`` (held out: the attacks' control set). On these seven columns adult repeats
many records, so a split of the records themselves would put most control records in the
training half too (10,266 of 15,081 with the seed-0 record split): the control set would then
not be records the releases never saw. Two releases of the training half are made by
anoneval's own synthesizers:

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


def split_distinct(data: pd.DataFrame, rng: np.random.Generator
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Training and control halves sharing no record: distinct records in random order go,
    with their repeats, to training until it holds half the records (original order kept)."""
    group = data.groupby(list(data.columns), sort=True, dropna=False).ngroup().to_numpy()
    order = rng.permutation(group.max() + 1)
    sizes = np.bincount(group)[order]
    take = order[: int(np.searchsorted(np.cumsum(sizes), len(data) // 2)) + 1]
    in_training = np.isin(group, take)
    return (data[in_training].reset_index(drop=True),
            data[~in_training].reset_index(drop=True))


def main() -> None:
    adult = pd.read_csv(HERE / "data" / "adult" / "adult.csv", sep=";")[COLUMNS]
    training, control = split_distinct(adult, np.random.default_rng(0))
    shared = len(control.merge(training.drop_duplicates(), how="inner"))
    assert shared == 0, shared
    print(f"training: {len(training)} records, control: {len(control)} records, "
          f"{shared} control records in training")
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
