"""The adult extract and the measure set the evaluate_many benchmarks run on its variants."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from make_adult_variants import QUASI_IDENTIFIERS, generalize  # noqa: E402

ADULT = ROOT / "examples" / "data" / "adult"


def read_adult() -> pd.DataFrame:
    """The shipped adult extract, every column as text."""
    return pd.read_csv(ADULT / "adult.csv", sep=";", dtype=str, keep_default_na=False)


def measures() -> list[dict[str, object]]:
    """KAnonymity (k = 10), DM, AECS and NonUniformEntropy with the shipped hierarchies."""
    qi = {"quasi_identifiers": QUASI_IDENTIFIERS}
    hierarchies = {c: str(ADULT / f"adult_hierarchy_{c}.csv") for c in QUASI_IDENTIFIERS}
    return [{"name": "KAnonymity", "params": {**qi, "k": 10}},
            {"name": "DM", "params": qi},
            {"name": "AECS", "params": qi},
            {"name": "NonUniformEntropy", "params": {**qi, "hierarchies": hierarchies}}]


__all__ = ["ADULT", "QUASI_IDENTIFIERS", "generalize", "measures", "read_adult"]
