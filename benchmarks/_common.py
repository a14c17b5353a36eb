"""Helpers shared by the microdata and risk benchmarks: timing, adult data and its generalization.

A benchmark imports them as ``from _common import ...`` (``python benchmarks/bench_X.py`` puts
this folder first on ``sys.path``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anoneval.core.api import Context, Microdata

ADULT = Path(__file__).resolve().parents[1] / "examples" / "data" / "adult"
#: adult's eight quasi-identifiers, in ARX's order (the order of generalization levels).
QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
      "salary-class"]
#: adult's sensitive attribute.
SA = "occupation"


def best(fn: Callable[[], object], repeat: int) -> float:
    """Fastest of ``repeat`` runs, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def read_adult() -> pd.DataFrame:
    """The adult extract (30,162 rows) as shipped in ``examples/data/adult``."""
    return pd.read_csv(ADULT / "adult.csv", sep=";")


def hierarchies(columns: Sequence[str]) -> dict[str, str]:
    """Paths of adult's ARX hierarchies for ``columns``."""
    return {c: str(ADULT / f"adult_hierarchy_{c}.csv") for c in columns}


def resampled(adult: pd.DataFrame, n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` rows, each column drawn from adult's independently (many small classes)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({c: adult[c].to_numpy()[rng.integers(0, len(adult), n)]
                         for c in adult.columns})


def generalize(df: pd.DataFrame, levels: Sequence[int], k: int) -> pd.DataFrame:
    """``df`` with the QIs at ARX node ``levels`` and classes smaller than ``k`` suppressed."""
    out = df.copy()
    for c, path in hierarchies(QI).items():
        h = pd.read_csv(path, sep=";", header=None, dtype=str, keep_default_na=False)
        out[c] = df[c].astype(str).map(dict(zip(h[0], h[levels[QI.index(c)]], strict=True)))
    small = out.groupby(QI)["sex"].transform("size") < k
    out.loc[small, QI] = "*"
    return out


def compute(measure: Any, original: pd.DataFrame | None, anonymized: pd.DataFrame) -> Any:
    """A measure's value on fresh (cold) datasets."""
    o = Microdata(original) if original is not None else None
    return measure.compute(o, Microdata(anonymized), Context()).value
