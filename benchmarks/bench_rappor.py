"""Speed of MILeakage (issue 6, "Speed").

Cases (targets from the issue):
* unary, uniform prior, m = 100,000 categories: under 1 s (Hamming-weight grouping, O(m)).
  Baseline: the paper's approach, I from the explicit m × 2^m joint distribution, which only
  fits for small m; both are timed at m = 18 for the ratio.
* exact enumeration, unary with a non-uniform prior, m = 20: under 10 s. Baseline: the explicit
  20 × 2^20 joint distribution in numpy, timed in the same run.
* empirical MI on 10,000,000 records (8 categories, direct randomization), Miller–Madow and a
  200-replicate bootstrap CI: under 5 s. Baseline: a pandas ``crosstab`` plug-in MI without
  any bootstrap.

Each timing is the fastest of a few runs, through ``MILeakage.compute`` on fresh datasets.
Run: ``python benchmarks/bench_rappor.py [--quick]``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from _common import best

from anoneval.core.api import Context, Microdata
from anoneval.plugins.perturbation import _channels as ch
from anoneval.plugins.perturbation.mi_leakage import MILeakage
from anoneval.plugins.perturbation.randomized_response import RandomizedResponse


def naive_joint_mi(prior: np.ndarray, beta: float) -> float:
    """I in bits from the explicit m × 2^m joint distribution (outputs enumerated)."""
    m = len(prior)
    z = np.arange(1 << m)
    bits = (z[None, :] >> np.arange(m)[:, None]) & 1          # (m, 2^m)
    w = bits.sum(axis=0)
    # P(z | c): the true bit c is kept w.p. 1 − β, every other bit is flipped w.p. β
    own = np.where(bits == 1, 1 - beta, beta)                 # bit c of z given true bit 1
    rest_ones = w[None, :] - bits                             # ones among the other bits
    cond = own * beta ** rest_ones * (1 - beta) ** (m - 1 - rest_ones)
    joint = prior[:, None] * cond
    q = joint.sum(axis=0)
    nz = joint > 0
    return float((joint[nz] * np.log2((cond / q[None, :])[nz])).sum())


def pandas_mi(x: pd.Series, y: pd.Series) -> float:
    """Plug-in MI in bits from a pandas crosstab."""
    p = pd.crosstab(x, y).to_numpy() / len(x)
    px, py = p.sum(axis=1, keepdims=True), p.sum(axis=0, keepdims=True)
    nz = p > 0
    return float((p[nz] * np.log2((p / (px * py))[nz])).sum())


def row(case: str, seconds: float, target: float | None, baseline: float | None,
        note: str = "") -> None:
    tgt = f"< {target:g} s" if target is not None else "-"
    ok = "" if target is None else ("ok" if seconds < target else "SLOW")
    ratio = f"{baseline / seconds:8.1f}x" if baseline is not None else "       -"
    print(f"{case:<46} {seconds:9.4f} s  {tgt:>9} {ok:>4}  {ratio} vs baseline  {note}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    args = ap.parse_args()
    quick = args.quick
    ctx = Context(seed=0)

    # 1. unary, uniform prior, O(m)
    m_big = 10_000 if quick else 100_000
    leak = MILeakage(mechanism="unary", beta=0.25, categories=m_big, curve_points=0)
    t = best(lambda: leak.compute(None, None, ctx), 3)
    row(f"unary uniform m={m_big:,} (hamming weight)", t, 1.0, None,
        f"I = {leak.compute(None, None, ctx).value:.6f} bits")
    m_small = 12 if quick else 18
    uni = ch.uniform_prior(m_small)
    small = MILeakage(mechanism="unary", beta=0.25, categories=m_small, curve_points=0)
    ours = best(lambda: small.compute(None, None, ctx), 3)
    base = best(lambda: naive_joint_mi(uni, 0.25), 1)
    check = abs(naive_joint_mi(uni, 0.25) - small.compute(None, None, ctx).value)
    row(f"unary uniform m={m_small} vs explicit joint", ours, None, base,
        f"|diff| = {check:.1e}")

    # 2. exact enumeration, non-uniform prior
    m_enum = 14 if quick else 20
    prior = np.random.default_rng(1).dirichlet(np.ones(m_enum))
    prior = prior / prior.sum()
    enum = MILeakage(mechanism="unary", beta=0.25, prior=prior.tolist(), method="exact",
                     curve_points=0)
    ours = best(lambda: enum.compute(None, None, ctx), 3)
    base = best(lambda: naive_joint_mi(prior, 0.25), 1)
    check = abs(naive_joint_mi(prior, 0.25) - enum.compute(None, None, ctx).value)
    row(f"unary enumeration m={m_enum} (any prior)", ours, 10.0, base, f"|diff| = {check:.1e}")

    # 3. empirical MI
    n = 1_000_000 if quick else 10_000_000
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"c": rng.integers(0, 8, n)})
    anon = RandomizedResponse(columns=["c"], mechanism="direct", gamma=0.5).generate(
        Microdata(df), ctx).data.frame
    emp = MILeakage(mode="empirical", original_column="c", randomized_column="c")
    ours = best(lambda: emp.compute(Microdata(df), Microdata(anon), ctx), 2)
    base = best(lambda: pandas_mi(df["c"], anon["c"]), 1)
    res = emp.compute(Microdata(df), Microdata(anon), ctx)
    row(f"empirical MI n={n:,} (+200 bootstrap)", ours, 5.0, base,
        f"I = {res.value:.5f} [{res.details['ci_lower']:.5f}, {res.details['ci_upper']:.5f}]")


if __name__ == "__main__":
    main()
