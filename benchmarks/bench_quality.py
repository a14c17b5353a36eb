"""Speed of ARX's quality models (plugins/generalization).

Cases:
* adult (30,162 rows, 8 quasi-identifiers with ARX's hierarchies), 50 transformations of the
  ARX lattice (seeded sample; classes < 5 suppressed), all ten quality models plus AECS in one
  ``evaluate_many`` call: target < 10 s. Peer: pyCANON's ``discernability_metric`` and
  ``average_ecsize`` on the same 50 releases (the two it has), and our ``Discernibility`` and
  ``AECS`` alone.
* 1,000,000 rows × 8 quasi-identifiers (adult's columns resampled independently, generalized at
  ARX node [0,2,1,2,2,0,0,0], classes < 5 suppressed): every model on a fresh released dataset
  (no cached codes or classes), the original's side cached as an evaluator keeps it across
  variants, target < 3 s each; and once fully cold (both sides fresh). Peer: pyCANON's DM and
  AECS on the same data.

Run: ``python benchmarks/bench_quality.py [--quick]``.
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from pycanon import metrics

from anoneval.core import Evaluator, Microdata
from anoneval.core.api import Context
from anoneval.registry import default_registry

DATA = Path(__file__).resolve().parents[1] / "examples" / "data" / "adult"
QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
      "salary-class"]
HEIGHTS = [1, 4, 1, 2, 3, 2, 2, 1]
HIERARCHIES = {c: str(DATA / f"adult_hierarchy_{c}.csv") for c in QI}
MODELS = ["Granularity", "GeneralizationIntensity", "AttributeSquaredError", "Missings",
          "Ambiguity", "Discernibility", "RecordSquaredError", "SSESST",
          "HierarchyKLDivergence", "Height"]


def timed(fn: Callable[[], object], repeat: int = 1) -> float:
    """Fastest of ``repeat`` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def release(df: pd.DataFrame, levels: list[int], k: int) -> pd.DataFrame:
    """Generalize with ARX's hierarchies to ``levels``; classes smaller than k become '*'."""
    out = df.astype({c: object for c in QI})
    for c, lev in zip(QI, levels, strict=True):
        h = pd.read_csv(HIERARCHIES[c], sep=";", header=None, dtype=str, keep_default_na=False)
        out[c] = df[c].astype(str).map(dict(zip(h[0], h[lev], strict=True)))
    small = (out.groupby(QI)["sex"].transform("size") < k).to_numpy()
    out.loc[small, QI] = "*"
    return out


def specs() -> list[dict]:
    base = {"quasi_identifiers": QI, "hierarchies": HIERARCHIES}
    return [*({"name": n, "params": base if n != "Discernibility" else {"quasi_identifiers": QI}}
              for n in MODELS),
            {"name": "AECS", "params": {"quasi_identifiers": QI, "suppressed": "ignore"}}]


def pycanon_dm_aecs(raw: pd.DataFrame, anon: pd.DataFrame) -> None:
    kept = anon[~(anon[QI] == "*").all(axis=1)]  # pyCANON deletes suppressed records
    metrics.discernability_metric(raw, kept, QI)
    metrics.average_ecsize(raw, kept, QI)


def row(case: str, ours: float, target: str, peer: str, theirs: float) -> None:
    print(f"{case:<44} {ours:8.3f} s   target {target:<8} {peer:<30} {theirs:8.3f} s   "
          f"ratio {theirs / ours:6.2f}×")


def lattice_case(adult: pd.DataFrame, count: int) -> None:
    rng = np.random.default_rng(0)
    nodes = list(itertools.product(*(range(h + 1) for h in HEIGHTS)))
    picked = [nodes[i] for i in rng.choice(len(nodes), count, replace=False)]
    variants = {"".join(map(str, n)): release(adult, list(n), 5) for n in picked}
    print(f"adult, {count} lattice nodes, {len(MODELS) + 1} measures")
    report = Evaluator(adult, specs()).evaluate_many(variants)
    if not report.ok:
        raise SystemExit([m.error for v in report.variants for m in v.measures if m.error][:3])
    ours = timed(lambda: Evaluator(adult, specs()).evaluate_many(variants))
    few = [{"name": "Discernibility", "params": {"quasi_identifiers": QI}},
           {"name": "AECS", "params": {"quasi_identifiers": QI, "suppressed": "ignore"}}]
    two = timed(lambda: Evaluator(adult, few).evaluate_many(variants))
    theirs = timed(lambda: [pycanon_dm_aecs(adult, v) for v in variants.values()])
    row("all models, one evaluate_many", ours, "< 10 s", "pyCANON DM + AECS", theirs)
    row("Discernibility + AECS, one evaluate_many", two, "", "pyCANON DM + AECS", theirs)


def million_case(adult: pd.DataFrame, n: int) -> None:
    rng = np.random.default_rng(0)  # each column drawn from adult's, independently
    raw = pd.DataFrame({c: adult[c].to_numpy()[rng.integers(0, len(adult), n)]
                        for c in adult.columns})
    rel = release(raw, [0, 2, 1, 2, 2, 0, 0, 0], 5)
    print(f"\n{n:,} rows × {len(QI)} QIs, {int((rel['sex'] == '*').sum()):,} suppressed (cold)")
    registry = default_registry()
    theirs = timed(lambda: pycanon_dm_aecs(raw, rel))
    original = Microdata(raw)
    models = [registry.create("loss_measure", s["name"], s["params"]) for s in specs()]
    cold = timed(lambda: models[0].compute(original, Microdata(rel), Context()))
    row(f"{models[0].name}, both sides cold", cold, "", "pyCANON DM + AECS", theirs)
    for m in models:
        # a fresh released dataset: nothing cached from the previous model
        ours = timed(lambda m=m: m.compute(original, Microdata(rel), Context()))
        row(m.name, ours, "< 3 s", "pyCANON DM + AECS", theirs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 nodes and 50,000 rows")
    args = ap.parse_args()
    adult = pd.read_csv(DATA / "adult.csv", sep=";")
    lattice_case(adult, 10 if args.quick else 50)
    million_case(adult, 50_000 if args.quick else 1_000_000)


if __name__ == "__main__":
    main()
