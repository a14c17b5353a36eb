"""Speed of ARX's quality models (plugins/generalization).

Cases:
* adult (30,162 rows, 8 quasi-identifiers with ARX's hierarchies), 50 transformations of the
  ARX lattice (seeded sample; classes < 5 suppressed), all ten quality models plus AECS in one
  ``evaluate_many`` call: target < 10 s. Peer: pyCANON's ``discernability_metric`` and
  ``average_ecsize`` on the same 50 releases (the two it has), and our ``Discernibility`` and
  ``AECS`` alone.
* 1,000,000 rows × 8 quasi-identifiers (adult's columns resampled independently, generalized at
  ARX node [0,2,1,2,2,0,0,0], classes < 5 suppressed): every model through evaluate(), target
  < 3 s each; Discernibility + AECS in one evaluate() against pyCANON's DM and AECS.
Everything is timed as a user runs it (``anoneval.Evaluator(original, measures)
.evaluate_many(variants)`` or ``.evaluate(release)``), on fresh copies of the loaded frames made
outside the clock, after one untimed warm-up call per side; against pyCANON the sides are
interleaved and the per-round ratio ours/pyCANON is printed as min/median/max (see
docs/scaling.md, "How benchmarks measure"). Run: ``python benchmarks/bench_quality.py
[--quick] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
from _common import compare, evaluate_one, header, interleaved, show, timed_rounds
from pycanon import metrics

from anoneval.core import Evaluator

DATA = Path(__file__).resolve().parents[1] / "examples" / "data" / "adult"
QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
      "salary-class"]
HEIGHTS = [1, 4, 1, 2, 3, 2, 2, 1]
HIERARCHIES = {c: str(DATA / f"adult_hierarchy_{c}.csv") for c in QI}
MODELS = ["Granularity", "GeneralizationIntensity", "AttributeSquaredError", "Missings",
          "Ambiguity", "Discernibility", "RecordSquaredError", "SSESST",
          "HierarchyKLDivergence", "Height"]


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


def lattice_case(adult: pd.DataFrame, count: int, rounds: int) -> None:
    rng = np.random.default_rng(0)
    nodes = list(itertools.product(*(range(h + 1) for h in HEIGHTS)))
    picked = [nodes[i] for i in rng.choice(len(nodes), count, replace=False)]
    variants = {"".join(map(str, n)): release(adult, list(n), 5) for n in picked}
    report = Evaluator(adult, specs()).evaluate_many(variants)
    if not report.ok:
        raise SystemExit([m.error for v in report.variants for m in v.measures if m.error][:3])

    def fresh() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
        return adult.copy(), {k: v.copy() for k, v in variants.items()}

    def peer(a: pd.DataFrame, vs: dict[str, pd.DataFrame]) -> None:
        for v in vs.values():
            pycanon_dm_aecs(a, v)
    few = [{"name": "Discernibility", "params": {"quasi_identifiers": QI}},
           {"name": "AECS", "params": {"quasi_identifiers": QI, "suppressed": "ignore"}}]
    header(f"adult, {count} lattice nodes: one evaluate_many against pyCANON's DM + AECS per "
           "node", rounds)
    c = interleaved(lambda a, vs: Evaluator(a, specs()).evaluate_many(vs), peer, rounds,
                    fresh, f"all {len(MODELS) + 1} models")
    show(c, "pyCANON", width=30,
         note=f"  ours < 10 s {'ok' if np.median(c.ours) < 10 else 'SLOW'}")
    compare("Discernibility + AECS", lambda a, vs: Evaluator(a, few).evaluate_many(vs), peer,
            rounds, peer_name="pyCANON", fresh=fresh, width=30)


def million_case(adult: pd.DataFrame, n: int, rounds: int) -> None:
    rng = np.random.default_rng(0)  # each column drawn from adult's, independently
    raw = pd.DataFrame({c: adult[c].to_numpy()[rng.integers(0, len(adult), n)]
                        for c in adult.columns})
    rel = release(raw, [0, 2, 1, 2, 2, 0, 0, 0], 5)

    def fresh() -> tuple[pd.DataFrame, pd.DataFrame]:
        return raw.copy(), rel.copy()
    header(f"{n:,} rows × {len(QI)} QIs, {int((rel['sex'] == '*').sum()):,} suppressed: "
           "Discernibility + AECS in one evaluate() vs pyCANON's DM + AECS", rounds)
    two = [{"name": "Discernibility", "params": {"quasi_identifiers": QI}},
           {"name": "AECS", "params": {"quasi_identifiers": QI, "suppressed": "ignore"}}]
    compare("Discernibility + AECS", lambda o, r: Evaluator(o, two).evaluate(r),
            pycanon_dm_aecs, rounds, peer_name="pyCANON", fresh=fresh, width=30)
    header("each model alone through evaluate(), target < 3 s", rounds, peers=False)
    for spec in specs():
        wall, cpu = timed_rounds(lambda o, r, spec=spec: evaluate_one(o, r, spec), rounds, fresh)
        print(f"{spec['name']:<30} {wall:8.3f} s (cpu {cpu:7.3f})  "
              f"{'ok' if wall < 3 else 'SLOW'}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 nodes and 50,000 rows")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 3, --quick 1)")
    args = ap.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    adult = pd.read_csv(DATA / "adult.csv", sep=";")
    lattice_case(adult, 10 if args.quick else 50, rounds)
    million_case(adult, 50_000 if args.quick else 1_000_000, rounds)


if __name__ == "__main__":
    main()
