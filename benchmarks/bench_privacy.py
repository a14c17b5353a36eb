"""Speed of the synthetic-data privacy scores (CategoricalCAP, DisclosureProtection,
NewRowSynthesis, IdentifiabilityScore, DOMIAS, EmpiricalEpsilon, AttributeInference's model
attackers), against SDMetrics where it has the measure.

Two parts. (1) Peers: on ``--peer-rows`` records per side (SDMetrics loops over records in
Python, so it cannot run on the full size), ours and SDMetrics' run interleaved (ours, peer,
ours, peer, ...) ``--repeat`` times on the same data; the best times and the ratio
peer/ours are printed, and the values are checked equal. (2) Targets: each measure on
10⁵ × 15 mixed-type records per side (``--quick``: 5,000) through the evaluator, best of
``--repeat``, against the 30 s target, with the machine's 1-minute load average and the
process's CPU seconds (a shared machine's other jobs slow every run; the CPU time does not
grow with them: divided by the cores used, it is the wall time on an idle machine).
synthcity (IdentifiabilityScore, DOMIAS) is no peer here: it needs a CUDA torch stack. Usage:
``python benchmarks/bench_privacy.py [--quick] [--repeat N] [--peer-rows N] [--only NAME]``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from bench_synthetic import records

from anoneval.core import Evaluator, Microdata
from anoneval.core.api import Context
from anoneval.registry import build_registry

KEYS = ["c1", "c2", "c3"]
#: Six keys: most originals' keys are missing from the release (the generalized CAP's work).
WIDE_KEYS = ["c1", "c2", "c3", "c4", "c5", "c6"]
SENSITIVE = ["c0"]
#: Our measures and their params on the data of :func:`bench_synthetic.records`.
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
REGISTRY = build_registry(entry_points=False)
META_TYPES = {**{f"x{j}": "numerical" for j in range(8)},
              **{c: "categorical" for c in ("c0", "c1", "c2", "c3", "c4", "c5", "c6")}}


def released_copy(ori: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Half the records copied, half perturbed: every measure has something to find."""
    syn = ori.copy()
    half = rng.random(len(ori)) < 0.5
    for j in range(8):
        syn.loc[half, f"x{j}"] += np.round(rng.normal(size=int(half.sum())), 3)
    return syn


def peers(ori: pd.DataFrame, syn: pd.DataFrame) -> dict[str, Callable[[], float]]:
    """SDMetrics' computations of the same quantities (our value's convention)."""
    from sdmetrics.single_table import DisclosureProtection, NewRowSynthesis
    from sdmetrics.single_table.privacy.cap import CategoricalCAP, CategoricalGeneralizedCAP

    meta = {"columns": {c: {"sdtype": t} for c, t in META_TYPES.items()}}
    return {
        "CategoricalCAP": lambda: CategoricalCAP.compute(
            ori, syn, key_fields=KEYS, sensitive_fields=SENSITIVE),
        "CategoricalCAP (gen.)": lambda: CategoricalGeneralizedCAP.compute(
            ori, syn, key_fields=WIDE_KEYS, sensitive_fields=SENSITIVE),
        "DisclosureProtection": lambda: DisclosureProtection.compute(
            ori, syn, [*KEYS, "x0"], SENSITIVE, continuous_column_names=["x0"]),
        "NewRowSynthesis": lambda: NewRowSynthesis.compute(ori, syn, meta),
    }


def ours_once(name: str, params: dict[str, Any], ori: pd.DataFrame, syn: pd.DataFrame,
              ctl: pd.DataFrame) -> float | None:
    measure = REGISTRY.create("risk_measure", name, params)
    ctx = Context(control=Microdata(ctl) if measure.control_use() != "none" else None)
    return measure.compute(Microdata(ori), Microdata(syn), ctx).value


def bench_peers(n: int, repeat: int) -> None:
    try:
        import sdmetrics  # noqa: F401
    except ImportError:
        print("peers: SDMetrics not installed")
        return
    rng = np.random.default_rng(2)
    ori, ctl = records(n, rng), records(n, rng)
    syn = released_copy(ori, rng)
    print(f"peers: {n} × {ori.shape[1]} records per side, interleaved, best of {repeat}")
    for label, peer in peers(ori, syn).items():
        name, params = SPECS[label]
        t_ours, t_peer = float("inf"), float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            mine = ours_once(name, params, ori, syn, ctl)
            t_ours = min(t_ours, time.perf_counter() - t0)
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = peer()
            t_peer = min(t_peer, time.perf_counter() - t0)
        same = "equal" if mine is not None and abs(mine - theirs) < 1e-9 else \
            f"DIFFER ({mine} vs {theirs})"
        print(f"{label:<30} ours {t_ours:8.3f} s  SDMetrics {t_peer:8.3f} s  "
              f"{t_peer / t_ours:8.1f}x  values {same}")


def bench_targets(n: int, repeat: int, only: str | None) -> None:
    rng = np.random.default_rng(3)
    ori, ctl = records(n, rng), records(n, rng)
    released = Microdata(released_copy(ori, rng))
    released.content_hash()
    print(f"targets: {n} × {ori.shape[1]} records per side, best of {repeat}")
    for label, (name, params) in SPECS.items():
        if only and not label.startswith(only):
            continue
        ev = Evaluator(ori, [{"name": name, "label": label, "params": params}], control=ctl)
        ev.prepare()
        load = os.getloadavg()[0]
        best, cpu = float("inf"), float("inf")
        for _ in range(repeat):
            c0, t0 = time.process_time(), time.perf_counter()
            rep = ev.evaluate(released)
            best = min(best, time.perf_counter() - t0)
            cpu = min(cpu, time.process_time() - c0)
        m = rep.measures[0]  # type: ignore[attr-defined]
        if m.error:
            raise RuntimeError(f"{label}: {m.error}")
        flag = "ok" if best < 30 else "SLOW"
        print(f"{label:<30} {best:8.2f} s (load {load:4.1f}, cpu {cpu:7.2f} s)  "
              f"value {m.value:.4g}  target < 30 s {flag}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peer-rows", type=int, default=None)
    parser.add_argument("--only", help="time only the measures whose label starts so "
                                       "(no peers)")
    args = parser.parse_args()
    if not args.only:
        bench_peers(args.peer_rows or (300 if args.quick else 2_000), args.repeat)
    bench_targets(5_000 if args.quick else 100_000, args.repeat, args.only)


if __name__ == "__main__":
    main()
