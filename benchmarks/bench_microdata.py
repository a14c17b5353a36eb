"""Speed of the microdata measures (issue 3, "Speed").

Cases:
* 1,000,000 rows × 8 quasi-identifiers (adult's columns resampled independently, so that
  there are many small classes; generalized at ARX node [0,2,1,2,2,0,0,0], classes < 5
  suppressed): DM, DMStar, AECS, KAnonymity, LDiversity under 2 s each, NonUniformEntropy
  under 5 s. Baseline: a straightforward pandas ``groupby``
  implementation of the same number, timed in the same run.
* adult (30,162 rows, 8 QIs, sensitive attribute occupation) against pyCANON: k ≥ 10×,
  distinct l ≥ 50×, entropy l ≥ 50× faster.

Every anoneval timing is "cold": a fresh ``Microdata`` per repetition, so no cached codes or
group ids are reused (the warm figure, after another measure ran on the same dataset, is
printed too). Run: ``python benchmarks/bench_microdata.py [--quick]``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from _common import QI, SA, best, compute, generalize, hierarchies, read_adult, resampled
from pycanon import anonymity

from anoneval.core.api import Context, Microdata
from anoneval.plugins.generalization.aecs import AECS
from anoneval.plugins.generalization.dm import DM
from anoneval.plugins.generalization.dmstar import DMStar
from anoneval.plugins.generalization.nonuniform_entropy import NonUniformEntropy
from anoneval.plugins.microdata.kanonymity import KAnonymity
from anoneval.plugins.microdata.ldiversity import LDiversity

HIERARCHIES = hierarchies(QI)


# -- naive pandas baselines ------------------------------------------------------------------


def pd_sizes(df: pd.DataFrame) -> tuple[pd.Series, int]:
    sup = (df[QI].astype(str) == "*").all(axis=1)
    return df[~sup].groupby(QI).size(), int(sup.sum())


def pd_dm(df: pd.DataFrame, k: int = 5) -> float:
    f, s = pd_sizes(df)
    n = len(df)
    return float((f[f >= k] ** 2).sum() + n * (f[f < k].sum() + s))


def pd_dmstar(df: pd.DataFrame) -> float:
    f, s = pd_sizes(df)
    return float((f**2).sum() + s * s)


def pd_aecs(df: pd.DataFrame) -> float:
    f, s = pd_sizes(df)
    return len(df) / (len(f) + (1 if s else 0))


def pd_kanon(df: pd.DataFrame, k: int = 5) -> float:
    f, _ = pd_sizes(df)
    return float(f[f < k].sum()) / len(df)


def pd_ldiv(df: pd.DataFrame, l_: int = 2) -> float:
    sup = (df[QI].astype(str) == "*").all(axis=1)
    d = df[~sup].groupby(QI)[SA].agg(["nunique", "size"])
    return float(d.loc[d["nunique"] < l_, "size"].sum()) / len(df)


def pd_counts(df: pd.DataFrame) -> pd.Series:
    sup = (df[QI].astype(str) == "*").all(axis=1)
    return df[~sup].groupby([*QI, SA]).size()


def pd_ldiv_entropy(df: pd.DataFrame, l_: float = 2) -> float:
    r = pd_counts(df)
    f = r.groupby(level=QI).transform("sum")
    p = r / f
    h = (-(p * np.log(p))).groupby(level=QI).sum()
    size = r.groupby(level=QI).sum()
    return float(size[h < np.log(l_) - 1e-9].sum()) / len(df)


def pd_ldiv_recursive(df: pd.DataFrame, l_: int = 2, c: float = 3) -> float:
    r = pd_counts(df).rename("r").reset_index()
    r = r.sort_values([*QI, "r"], ascending=[True] * len(QI) + [False])
    r["rank"] = r.groupby(QI).cumcount()
    g = r.groupby(QI)
    r1 = g["r"].max()
    tail = r[r["rank"] >= l_ - 1].groupby(QI)["r"].sum().reindex(r1.index, fill_value=0)
    size = g["r"].sum()
    return float(size[~(r1 < c * tail)].sum()) / len(df)


def pd_nue(raw: pd.DataFrame, rel: pd.DataFrame) -> float:
    total = 0.0
    for c in QI:
        j = pd.DataFrame({"a": raw[c].to_numpy(), "b": rel[c].to_numpy()})
        pair = j.groupby(["a", "b"]).size()
        per_b = pair.groupby(level="b").transform("sum")
        total -= float((pair * np.log2(pair / per_b)).sum())
    return total


def row(case: str, ours: float, target: str, base_name: str, base: float) -> None:
    print(f"{case:<38} {ours:8.3f} s   target {target:<10} {base_name:<22} {base:8.3f} s   "
          f"ratio {base / ours:7.1f}×")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    args = ap.parse_args()
    n = 50_000 if args.quick else 1_000_000
    repeat = 2 if args.quick else 3
    adult = read_adult()
    raw = resampled(adult, n)
    rel = generalize(raw, [0, 2, 1, 2, 2, 0, 0, 0], 5)
    print(f"{n:,} rows × {len(QI)} QIs, {int((rel['sex'] == '*').sum()):,} suppressed")
    cases = [
        ("DM (k=5)", DM(quasi_identifiers=QI, k=5), None, pd_dm, "< 2 s"),
        ("DMStar", DMStar(quasi_identifiers=QI), None, pd_dmstar, "< 2 s"),
        ("AECS", AECS(quasi_identifiers=QI), None, pd_aecs, "< 2 s"),
        ("KAnonymity (k=5)", KAnonymity(quasi_identifiers=QI, k=5), None, pd_kanon, "< 2 s"),
        ("LDiversity distinct", LDiversity(quasi_identifiers=QI, sensitive=SA), None, pd_ldiv,
         "< 2 s"),
        ("LDiversity entropy", LDiversity(quasi_identifiers=QI, sensitive=SA,
                                          variant="entropy"), None, pd_ldiv_entropy, "< 2 s"),
        ("LDiversity recursive c=3", LDiversity(quasi_identifiers=QI, sensitive=SA,
                                                variant="recursive", c=3), None, pd_ldiv_recursive,
         "< 2 s"),
        ("NonUniformEntropy", NonUniformEntropy(quasi_identifiers=QI), raw, "nue", "< 5 s"),
        ("NonUniformEntropy, hierarchies", NonUniformEntropy(
            quasi_identifiers=QI, hierarchies=HIERARCHIES), raw, "nue", "< 5 s"),
    ]
    base_nue = best(lambda: pd_nue(raw, rel), 1)
    for name, m, original, base, target in cases:
        ours = best(lambda m=m, original=original: compute(m, original, rel), repeat)
        if base == "nue":
            row(name, ours, target, "pandas groupby", base_nue)
        else:
            row(name, ours, target, "pandas groupby", best(lambda b=base: b(rel), 1))
    data = Microdata(rel)  # warm: codes and group ids cached by a first measure
    DM(quasi_identifiers=QI, k=5).compute(None, data, Context())
    warm = best(lambda: KAnonymity(quasi_identifiers=QI).compute(None, data, Context()), repeat)
    print(f"{'KAnonymity, warm (after DM)':<38} {warm:8.3f} s")

    print("\nadult vs pyCANON" + (" (first 3,000 rows)" if args.quick else ""))
    df = adult.iloc[:3000] if args.quick else adult
    pc_repeat = 1 if args.quick else 2
    for name, m, fn, target in [
        ("k", KAnonymity(quasi_identifiers=QI), lambda: anonymity.k_anonymity(df, QI), "≥ 10×"),
        ("distinct l", LDiversity(quasi_identifiers=QI, sensitive=SA),
         lambda: anonymity.l_diversity(df, QI, [SA]), "≥ 50×"),
        ("entropy l", LDiversity(quasi_identifiers=QI, sensitive=SA, variant="entropy"),
         lambda: anonymity.entropy_l_diversity(df, QI, [SA]), "≥ 50×"),
    ]:
        ours = best(lambda m=m: compute(m, None, df), 7)
        row(f"{name} (cold)", ours, target, "pyCANON", best(fn, pc_repeat))


if __name__ == "__main__":
    main()
