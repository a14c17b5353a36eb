"""Speed of the re-identification and attribute-disclosure models.

Cases:
* adult (30,162 rows, 8 QIs, sensitive attribute occupation) against pyCANON, timed in the same
  run: t-closeness, δ-disclosure and basic β-likeness at least 10× faster (``--quick``: its
  first 1,000 rows). By default adult is
  generalized at ARX node [1,2,0,1,1,1,1,0] (1,055 classes); ``--raw`` uses the raw data
  (12,458 classes; pyCANON then needs minutes per measure).
* 1,000,000 rows × 8 quasi-identifiers (adult's columns resampled independently, generalized at
  ARX node [0,2,1,2,2,0,0,0], classes < 5 suppressed): every model under 5 s. The population of
  journalist, marketer and δ-presence is the raw 10⁶ rows, generalized with the hierarchies.

Everything is timed through ``anoneval.Evaluator(original, [measure]).evaluate(release)``, what
a user calls (the original is None where the measure reads the release alone, as pyCANON's
functions do), on fresh copies of the loaded frames made outside the clock, after one untimed
warm-up call per side. Against pyCANON the sides run interleaved and the per-round ratio
ours/pyCANON is printed as min/median/max (target ≤ 0.1); the 10⁶-row cases print the median
of ``--rounds`` calls against 5 s. Run: ``python benchmarks/bench_risk.py [--quick]
[--raw] [--rounds N]``.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import pandas as pd
from _common import (
    QI,
    SA,
    compare,
    evaluate_one,
    generalize,
    header,
    hierarchies,
    read_adult,
    resampled,
    timed_rounds,
)
from pycanon import anonymity

HIERARCHIES = hierarchies([*QI, SA])


def spec(name: str, **params: Any) -> dict[str, Any]:
    """A measure as a user writes it in ``measures``."""
    return {"name": name, "params": params}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    ap.add_argument("--raw", action="store_true", help="pyCANON comparison on raw adult")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 5, --quick 2)")
    args = ap.parse_args()
    rounds = args.rounds or (2 if args.quick else 5)
    adult = read_adult()

    df = adult if args.raw else generalize(adult, [1, 2, 0, 1, 1, 1, 1, 0], 1)
    df = df.iloc[:1000] if args.quick else df
    header(f"adult vs pyCANON ({len(df):,} rows, {df.groupby(QI).ngroups:,} classes), 8 QIs, "
           "sensitive occupation; target ours/pyCANON ≤ 0.1", rounds)
    for name, m, fn in [
        ("t-closeness (equal)", spec("TCloseness", quasi_identifiers=QI, sensitive=SA),
         lambda d: anonymity.t_closeness(d, QI, [SA])),
        ("delta-disclosure", spec("DeltaDisclosure", quasi_identifiers=QI, sensitive=SA),
         lambda d: anonymity.delta_disclosure(d, QI, [SA])),
        ("basic beta-likeness", spec("BetaLikeness", quasi_identifiers=QI, sensitive=SA),
         lambda d: anonymity.basic_beta_likeness(d, QI, [SA])),
    ]:
        compare(name, lambda d, m=m: evaluate_one(None, d, m), fn, rounds, peer_name="pyCANON",
                target=0.1, fresh=lambda: (df.copy(),), width=28)

    n = 50_000 if args.quick else 1_000_000
    raw = resampled(adult, n)
    raw["income"] = np.random.default_rng(1).integers(0, 200, n)
    rel = generalize(raw, [0, 2, 1, 2, 2, 0, 0, 0], 5)
    header(f"{n:,} rows × {len(QI)} QIs, {int((rel['sex'] == '*').sum()):,} suppressed; "
           "through evaluate(); target < 5 s each", rounds, peers=False)
    hq = {c: HIERARCHIES[c] for c in QI}
    cases = [
        ("ReidentificationRisk prosecutor", spec("ReidentificationRisk", quasi_identifiers=QI),
         None),
        ("ReidentificationRisk journalist", spec(
            "ReidentificationRisk", quasi_identifiers=QI, attacker="journalist",
            hierarchies=hq), raw),
        ("ReidentificationRisk marketer", spec(
            "ReidentificationRisk", quasi_identifiers=QI, attacker="marketer", hierarchies=hq),
         raw),
        *[(f"PopulationUniqueness {m}", spec(
            "PopulationUniqueness", quasi_identifiers=QI, model=m, sampling_fraction=0.05),
           None) for m in ("dankar", "zayatz", "pitman", "snb")],
        ("PopulationUniqueness dankar, f=0.3", spec(
            "PopulationUniqueness", quasi_identifiers=QI, sampling_fraction=0.3), None),
        ("TCloseness equal", spec("TCloseness", quasi_identifiers=QI, sensitive=SA), None),
        ("TCloseness ordered (income)", spec("TCloseness", quasi_identifiers=QI,
                                             sensitive="income", distance="ordered"), None),
        ("TCloseness hierarchical", spec(
            "TCloseness", quasi_identifiers=QI, sensitive=SA, distance="hierarchical",
            hierarchies={SA: HIERARCHIES[SA]}), None),
        ("DeltaDisclosure", spec("DeltaDisclosure", quasi_identifiers=QI, sensitive=SA), None),
        ("BetaLikeness basic", spec("BetaLikeness", quasi_identifiers=QI, sensitive=SA), None),
        ("BetaLikeness enhanced", spec("BetaLikeness", quasi_identifiers=QI, sensitive=SA,
                                       variant="enhanced"), None),
        ("AlphaKAnonymity", spec("AlphaKAnonymity", quasi_identifiers=QI, sensitive=SA), None),
        ("DeltaPresence", spec("DeltaPresence", quasi_identifiers=QI, hierarchies=hq), raw),
    ]
    for name, m, population in cases:
        def fresh(population: pd.DataFrame | None = population) -> tuple[Any, ...]:
            return (None if population is None else population.copy(), rel.copy())
        wall, cpu = timed_rounds(lambda o, r, m=m: evaluate_one(o, r, m), rounds, fresh)
        print(f"{name:<38} {wall:8.3f} s (cpu {cpu:7.3f})   {'ok' if wall < 5 else 'SLOW'}",
              flush=True)


if __name__ == "__main__":
    main()
