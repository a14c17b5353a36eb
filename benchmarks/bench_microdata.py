"""Speed of the microdata measures (issue 3, "Speed").

Cases:
* 1,000,000 rows × 8 quasi-identifiers (adult's columns resampled independently, so that
  there are many small classes; generalized at ARX node [0,2,1,2,2,0,0,0], classes < 5
  suppressed): DM, DMStar, AECS, KAnonymity, LDiversity under 2 s each, NonUniformEntropy
  under 5 s. Baseline: a straightforward pandas ``groupby``
  implementation of the same number, timed in the same run.
* adult (30,162 rows, 8 QIs, sensitive attribute occupation) against pyCANON: k ≥ 10×,
  distinct l ≥ 50×, entropy l ≥ 50× faster.

Ours is timed through ``anoneval.Evaluator(original, [measure]).evaluate(release)`` (the
original None where the measure reads the release alone, as the baselines do), each side on
fresh copies of the loaded frames made outside the clock, after one untimed warm-up call per
side, the sides interleaved; printed: both medians with CPU seconds and the per-round ratio
ours/baseline as min/median/max (see docs/scaling.md, "How benchmarks measure"); the absolute
targets are checked on our median. Run: ``python benchmarks/bench_microdata.py [--quick]
[--rounds N]``.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

import numpy as np
import pandas as pd
from _common import (
    QI,
    SA,
    evaluate_one,
    generalize,
    header,
    hierarchies,
    interleaved,
    read_adult,
    resampled,
    show,
)
from pycanon import anonymity

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


def spec(name: str, **params: Any) -> dict[str, Any]:
    """A measure as a user writes it in ``measures``."""
    return {"name": name, "params": params}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 5, --quick 2)")
    args = ap.parse_args()
    n = 50_000 if args.quick else 1_000_000
    rounds = args.rounds or (2 if args.quick else 5)
    adult = read_adult()
    raw = resampled(adult, n)
    rel = generalize(raw, [0, 2, 1, 2, 2, 0, 0, 0], 5)
    header(f"{n:,} rows × {len(QI)} QIs, {int((rel['sex'] == '*').sum()):,} suppressed: "
           "evaluate() vs a pandas groupby of the same number", rounds)
    cases = [
        ("DM (k=5)", spec("DM", quasi_identifiers=QI, k=5), pd_dm, 2),
        ("DMStar", spec("DMStar", quasi_identifiers=QI), pd_dmstar, 2),
        ("AECS", spec("AECS", quasi_identifiers=QI), pd_aecs, 2),
        ("KAnonymity (k=5)", spec("KAnonymity", quasi_identifiers=QI, k=5), pd_kanon, 2),
        ("LDiversity distinct", spec("LDiversity", quasi_identifiers=QI, sensitive=SA),
         pd_ldiv, 2),
        ("LDiversity entropy", spec("LDiversity", quasi_identifiers=QI, sensitive=SA,
                                    variant="entropy"), pd_ldiv_entropy, 2),
        ("LDiversity recursive c=3", spec("LDiversity", quasi_identifiers=QI, sensitive=SA,
                                          variant="recursive", c=3), pd_ldiv_recursive, 2),
        ("NonUniformEntropy", spec("NonUniformEntropy", quasi_identifiers=QI), None, 5),
        ("NonUniformEntropy, hierarchies", spec(
            "NonUniformEntropy", quasi_identifiers=QI, hierarchies=HIERARCHIES), None, 5),
    ]
    for name, m, base, target in cases:
        if base is None:  # NonUniformEntropy compares the original with the release
            c = interleaved(lambda o, r, m=m: evaluate_one(o, r, m), pd_nue, rounds,
                            lambda: (raw.copy(), rel.copy()), name)
        else:
            c = interleaved(lambda r, m=m: evaluate_one(None, r, m), base, rounds,
                            lambda: (rel.copy(),), name)
        ours = statistics.median(c.ours)
        show(c, "pandas", width=32,
             note=f"  ours < {target} s {'ok' if ours < target else 'SLOW'}")

    df = adult.iloc[:3000] if args.quick else adult
    header("adult vs pyCANON" + (" (first 3,000 rows)" if args.quick else ""), rounds)
    for name, m, fn, target in [
        ("k", spec("KAnonymity", quasi_identifiers=QI), lambda d: anonymity.k_anonymity(d, QI),
         10),
        ("distinct l", spec("LDiversity", quasi_identifiers=QI, sensitive=SA),
         lambda d: anonymity.l_diversity(d, QI, [SA]), 50),
        ("entropy l", spec("LDiversity", quasi_identifiers=QI, sensitive=SA, variant="entropy"),
         lambda d: anonymity.entropy_l_diversity(d, QI, [SA]), 50),
    ]:
        c = interleaved(lambda d, m=m: evaluate_one(None, d, m), fn, rounds,
                        lambda: (df.copy(),), name)
        show(c, "pyCANON", target=1 / target, width=32)


if __name__ == "__main__":
    main()
