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

Ours is what a user calls, ``anoneval.Evaluator(original, [MILeakage]).evaluate(release)``
(original and release None for the analytic modes), and each baseline runs interleaved with it
after one untimed warm-up call each (see docs/scaling.md, "How benchmarks measure"): both
medians with CPU seconds and the per-round ratio ours/baseline as min/median/max are printed;
the absolute targets are checked on our median. Run: ``python benchmarks/bench_rappor.py
[--quick] [--rounds N]``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from _common import evaluate_one, header, interleaved, show, timed_rounds

import anoneval
from anoneval.core.api import Context, Microdata
from anoneval.plugins.perturbation import _channels as ch
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


def mi(**params: object) -> dict[str, object]:
    return {"name": "MILeakage", "params": params}


def target_note(seconds: float, target: float | None) -> str:
    return "" if target is None else f"  ours < {target:g} s {'ok' if seconds < target else 'SLOW'}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 3, --quick 1)")
    args = ap.parse_args()
    quick = args.quick
    rounds = args.rounds or (1 if quick else 3)
    header("MILeakage through evaluate(), against the explicit computations", rounds)

    # 1. unary, uniform prior, O(m)
    m_big = 10_000 if quick else 100_000
    leak = mi(mechanism="unary", beta=0.25, categories=m_big, curve_points=0)
    value = evaluate_one(None, None, leak)
    t, cpu = timed_rounds(lambda: evaluate_one(None, None, leak), rounds, warm_up=False)
    print(f"{f'unary uniform m={m_big:,} (hamming weight)':<46} ours {t:8.3f} s (cpu "
          f"{cpu:7.3f}){target_note(t, 1.0)}  I = {value:.6f} bits", flush=True)
    m_small = 12 if quick else 18
    uni = ch.uniform_prior(m_small)
    small = mi(mechanism="unary", beta=0.25, categories=m_small, curve_points=0)
    check = abs(naive_joint_mi(uni, 0.25) - evaluate_one(None, None, small))
    show(interleaved(lambda: evaluate_one(None, None, small), lambda: naive_joint_mi(uni, 0.25),
                     rounds, name=f"unary uniform m={m_small} vs explicit joint",
                     warm_up=False), "joint", width=46, note=f"  |diff| = {check:.1e}")

    # 2. exact enumeration, non-uniform prior
    m_enum = 14 if quick else 20
    prior = np.random.default_rng(1).dirichlet(np.ones(m_enum))
    prior = prior / prior.sum()
    enum = mi(mechanism="unary", beta=0.25, prior=prior.tolist(), method="exact",
              curve_points=0)
    check = abs(naive_joint_mi(prior, 0.25) - evaluate_one(None, None, enum))
    c = interleaved(lambda: evaluate_one(None, None, enum), lambda: naive_joint_mi(prior, 0.25),
                    rounds, name=f"unary enumeration m={m_enum} (any prior)", warm_up=False)
    show(c, "joint", width=46,
         note=f"{target_note(float(np.median(c.ours)), 10.0)}  |diff| = {check:.1e}")

    # 3. empirical MI
    n = 1_000_000 if quick else 10_000_000
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"c": rng.integers(0, 8, n)})
    anon = RandomizedResponse(columns=["c"], mechanism="direct", gamma=0.5).generate(
        Microdata(df), Context(seed=0)).data.frame
    emp = mi(mode="empirical", original_column="c", randomized_column="c")
    res = anoneval.Evaluator(df, [emp]).evaluate(anon).measures[0]
    pandas_mi(df["c"], anon["c"])  # the baseline's warm-up
    c = interleaved(lambda o, a: evaluate_one(o, a, emp), lambda o, a: pandas_mi(o["c"], a["c"]),
                    rounds, lambda: (df.copy(), anon.copy()),
                    f"empirical MI n={n:,} (+200 bootstrap)", warm_up=False)
    show(c, "pandas", width=46,
         note=f"{target_note(float(np.median(c.ours)), 5.0)}  I = {res.value:.5f} "
              f"[{res.details['ci_lower']:.5f}, {res.details['ci_upper']:.5f}]")


if __name__ == "__main__":
    main()
