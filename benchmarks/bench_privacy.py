"""Speed of the synthetic-data privacy scores (CategoricalCAP, DisclosureProtection,
NewRowSynthesis, IdentifiabilityScore, DOMIAS, EmpiricalEpsilon, AttributeInference's model
attackers), against SDMetrics where it has the measure.

Ours is always what a user calls, ``anoneval.Evaluator(original, [measure], control=...)
.evaluate(release)``, on fresh copies of the loaded frames made outside the clock, after one
untimed warm-up call (see docs/scaling.md, "How benchmarks measure"). Two parts. (1) Peers: on
``--peer-rows`` records per side (SDMetrics loops over records in Python, so it cannot run on
the full size), ours and SDMetrics' interleaved over ``--rounds`` rounds; both medians with
their CPU seconds and the per-round ratio ours/SDMetrics as min/median/max are printed, and
the values are checked equal. (2) Targets: each measure on 10⁵ × 15 mixed-type records per side
(``--quick``: 5,000), the median of ``--rounds`` calls against the 30 s target, with the
machine's load average and the CPU seconds (a shared machine's other jobs slow every run; the
CPU time does not grow with them: divided by the cores used, it is the wall time on an idle
machine). synthcity (IdentifiabilityScore, DOMIAS) is no peer here: it needs a CUDA torch
stack. Usage: ``python benchmarks/bench_privacy.py [--quick] [--rounds N] [--peer-rows N]
[--only NAME]``.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from _common import evaluate_one, header, interleaved, records, show, timed_rounds

KEYS = ["c1", "c2", "c3"]
#: Six keys: most originals' keys are missing from the release (the generalized CAP's work).
WIDE_KEYS = ["c1", "c2", "c3", "c4", "c5", "c6"]
SENSITIVE = ["c0"]
#: Our measures and their params on the data of :func:`_common.records`.
SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "CategoricalCAP": ("CategoricalCAP", {"key_fields": KEYS, "sensitive_fields": SENSITIVE}),
    "CategoricalCAP (gen.)": ("CategoricalCAP", {"key_fields": WIDE_KEYS,
                                                 "sensitive_fields": SENSITIVE,
                                                 "variant": "generalized_cap"}),
    "DisclosureProtection": ("DisclosureProtection", {
        "key_fields": [*KEYS, "x0"], "sensitive_fields": SENSITIVE,
        "continuous_columns": ["x0"]}),
    "NewRowSynthesis": ("NewRowSynthesis", {}),
    "IdentifiabilityScore": ("IdentifiabilityScore", {}),
    "DOMIAS": ("DOMIAS", {"n_attacks": 2000}),
    "EmpiricalEpsilon": ("EmpiricalEpsilon", {"n_attacks": 2000}),
    "AttributeInference (logistic)": ("AttributeInference", {
        "secret": "c5", "aux_cols": ["x0", "x1", "x2", "c1", "c2", "c3"], "n_attacks": 2000,
        "attacker": "logistic"}),
    "AttributeInference (forest)": ("AttributeInference", {
        "secret": "c5", "aux_cols": ["x0", "x1", "x2", "c1", "c2", "c3"], "n_attacks": 2000,
        "attacker": "forest"}),
}
META_TYPES = {**{f"x{j}": "numerical" for j in range(8)},
              **{c: "categorical" for c in ("c0", "c1", "c2", "c3", "c4", "c5", "c6")}}


def released_copy(ori: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Half the records copied, half perturbed: every measure has something to find."""
    syn = ori.copy()
    half = rng.random(len(ori)) < 0.5
    for j in range(8):
        syn.loc[half, f"x{j}"] += np.round(rng.normal(size=int(half.sum())), 3)
    return syn


def peers() -> dict[str, Callable[[pd.DataFrame, pd.DataFrame, pd.DataFrame], float]]:
    """SDMetrics' computations of the same quantities (our value's convention)."""
    from sdmetrics.single_table import DisclosureProtection, NewRowSynthesis
    from sdmetrics.single_table.privacy.cap import CategoricalCAP, CategoricalGeneralizedCAP

    meta = {"columns": {c: {"sdtype": t} for c, t in META_TYPES.items()}}
    return {
        "CategoricalCAP": lambda o, s, c: CategoricalCAP.compute(
            o, s, key_fields=KEYS, sensitive_fields=SENSITIVE),
        "CategoricalCAP (gen.)": lambda o, s, c: CategoricalGeneralizedCAP.compute(
            o, s, key_fields=WIDE_KEYS, sensitive_fields=SENSITIVE),
        "DisclosureProtection": lambda o, s, c: DisclosureProtection.compute(
            o, s, [*KEYS, "x0"], SENSITIVE, continuous_column_names=["x0"]),
        "NewRowSynthesis": lambda o, s, c: NewRowSynthesis.compute(o, s, meta),
    }


def spec(label: str) -> dict[str, Any]:
    name, params = SPECS[label]
    return {"name": name, "label": label, "params": params}


def ours(label: str) -> Callable[[pd.DataFrame, pd.DataFrame, pd.DataFrame], Any]:
    """Our measure as a user runs it: ``Evaluator(original, [it], control=...).evaluate()``."""
    return lambda o, s, c: evaluate_one(o, s, spec(label), control=c)


def quiet(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its warnings silenced (SDMetrics warns on every call)."""
    def run(*args: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    return run


def bench_peers(n: int, rounds: int) -> None:
    try:
        import sdmetrics  # noqa: F401
    except ImportError:
        print("peers: SDMetrics not installed")
        return
    rng = np.random.default_rng(2)
    ori, ctl = records(n, rng), records(n, rng)
    syn = released_copy(ori, rng)
    header(f"peers: {n} × {ori.shape[1]} records per side, evaluate() vs SDMetrics", rounds)
    for label, peer in peers().items():
        # the values compared are also each side's warm-up call
        mine = ours(label)(ori.copy(), syn.copy(), ctl.copy())
        theirs = quiet(peer)(ori.copy(), syn.copy(), ctl.copy())
        same = "equal" if mine is not None and abs(mine - theirs) < 1e-9 else \
            f"DIFFER ({mine} vs {theirs})"
        c = interleaved(ours(label), quiet(peer), rounds,
                        lambda: (ori.copy(), syn.copy(), ctl.copy()), label, warm_up=False)
        show(c, "SDMetrics", width=30, note=f"  values {same}")


def bench_targets(n: int, rounds: int, only: str | None) -> None:
    rng = np.random.default_rng(3)
    ori, ctl = records(n, rng), records(n, rng)
    syn = released_copy(ori, rng)
    header(f"targets: {n} × {ori.shape[1]} records per side, evaluate()", rounds, peers=False)
    for label in SPECS:
        if only and not label.startswith(only):
            continue
        value = ours(label)(ori.copy(), syn.copy(), ctl.copy())  # also the warm-up
        wall, cpu = timed_rounds(ours(label), rounds,
                                 lambda: (ori.copy(), syn.copy(), ctl.copy()), warm_up=False)
        flag = "ok" if wall < 30 else "SLOW"
        print(f"{label:<30} {wall:8.2f} s (cpu {cpu:7.2f} s)  value {value:.4g}  "
              f"target < 30 s {flag}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 3, --quick 1)")
    parser.add_argument("--peer-rows", type=int, default=None)
    parser.add_argument("--only", help="time only the measures whose label starts so "
                                       "(no peers)")
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    if not args.only:
        bench_peers(args.peer_rows or (200 if args.quick else 2_000), rounds)
    bench_targets(5_000 if args.quick else 100_000, rounds, args.only)


if __name__ == "__main__":
    main()
