"""Speed of the re-identification and attribute-disclosure models.

Cases:
* adult (30,162 rows, 8 QIs, sensitive attribute occupation) against pyCANON, timed in the same
  run: t-closeness, δ-disclosure and basic β-likeness at least 10× faster. By default adult is
  generalized at ARX node [1,2,0,1,1,1,1,0] (1,055 classes); ``--raw`` uses the raw data
  (12,458 classes; pyCANON then needs minutes per measure).
* 1,000,000 rows × 8 quasi-identifiers (adult's columns resampled independently, generalized at
  ARX node [0,2,1,2,2,0,0,0], classes < 5 suppressed): every model under 5 s. The population of
  journalist, marketer and δ-presence is the raw 10⁶ rows, generalized with the hierarchies.

Timings are "cold": a fresh ``Microdata`` per repetition, so no cached codes or class summary is
reused. Run: ``python benchmarks/bench_risk.py [--quick]``.
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import QI, SA, best, compute, generalize, hierarchies, read_adult, resampled
from pycanon import anonymity

from anoneval.plugins.microdata.alpha_kanonymity import AlphaKAnonymity
from anoneval.plugins.microdata.beta_likeness import BetaLikeness
from anoneval.plugins.microdata.delta_disclosure import DeltaDisclosure
from anoneval.plugins.microdata.delta_presence import DeltaPresence
from anoneval.plugins.microdata.tcloseness import TCloseness
from anoneval.plugins.reidentification.population_uniqueness import PopulationUniqueness
from anoneval.plugins.reidentification.reidentification_risk import ReidentificationRisk

HIERARCHIES = hierarchies([*QI, SA])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    ap.add_argument("--raw", action="store_true", help="pyCANON comparison on raw adult")
    args = ap.parse_args()
    adult = read_adult()

    df = adult if args.raw else generalize(adult, [1, 2, 0, 1, 1, 1, 1, 0], 1)
    df = df.iloc[:3000] if args.quick else df
    print(f"adult vs pyCANON ({len(df):,} rows, {df.groupby(QI).ngroups:,} classes), 8 QIs, "
          "sensitive occupation")
    for name, m, fn in [
        ("t-closeness (equal)", TCloseness(quasi_identifiers=QI, sensitive=SA),
         lambda: anonymity.t_closeness(df, QI, [SA])),
        ("delta-disclosure", DeltaDisclosure(quasi_identifiers=QI, sensitive=SA),
         lambda: anonymity.delta_disclosure(df, QI, [SA])),
        ("basic beta-likeness", BetaLikeness(quasi_identifiers=QI, sensitive=SA),
         lambda: anonymity.basic_beta_likeness(df, QI, [SA])),
    ]:
        ours = best(lambda m=m: compute(m, None, df), 5)
        theirs = best(fn, 1)
        print(f"{name:<28} {ours:8.3f} s   pyCANON {theirs:8.3f} s   ratio "
              f"{theirs / ours:8.1f}×   target ≥ 10×")

    n = 50_000 if args.quick else 1_000_000
    raw = resampled(adult, n)
    raw["income"] = np.random.default_rng(1).integers(0, 200, n)
    rel = generalize(raw, [0, 2, 1, 2, 2, 0, 0, 0], 5)
    print(f"\n{n:,} rows × {len(QI)} QIs, {int((rel['sex'] == '*').sum()):,} suppressed; "
          "target < 5 s each")
    hq = {c: HIERARCHIES[c] for c in QI}
    cases = [
        ("ReidentificationRisk prosecutor", ReidentificationRisk(quasi_identifiers=QI), None),
        ("ReidentificationRisk journalist", ReidentificationRisk(
            quasi_identifiers=QI, attacker="journalist", hierarchies=hq), raw),
        ("ReidentificationRisk marketer", ReidentificationRisk(
            quasi_identifiers=QI, attacker="marketer", hierarchies=hq), raw),
        *[(f"PopulationUniqueness {m}", PopulationUniqueness(
            quasi_identifiers=QI, model=m, sampling_fraction=0.05), None)
          for m in ("dankar", "zayatz", "pitman", "snb")],
        ("PopulationUniqueness dankar, f=0.3", PopulationUniqueness(
            quasi_identifiers=QI, sampling_fraction=0.3), None),
        ("TCloseness equal", TCloseness(quasi_identifiers=QI, sensitive=SA), None),
        ("TCloseness ordered (income)", TCloseness(quasi_identifiers=QI, sensitive="income",
                                                   distance="ordered"), None),
        ("TCloseness hierarchical", TCloseness(
            quasi_identifiers=QI, sensitive=SA, distance="hierarchical",
            hierarchies={SA: HIERARCHIES[SA]}), None),
        ("DeltaDisclosure", DeltaDisclosure(quasi_identifiers=QI, sensitive=SA), None),
        ("BetaLikeness basic", BetaLikeness(quasi_identifiers=QI, sensitive=SA), None),
        ("BetaLikeness enhanced", BetaLikeness(quasi_identifiers=QI, sensitive=SA,
                                               variant="enhanced"), None),
        ("AlphaKAnonymity", AlphaKAnonymity(quasi_identifiers=QI, sensitive=SA), None),
        ("DeltaPresence", DeltaPresence(quasi_identifiers=QI, hierarchies=hq), raw),
    ]
    repeat = 1 if args.quick else 2
    for name, m, population in cases:
        ours = best(lambda m=m, population=population: compute(m, population, rel), repeat)
        print(f"{name:<38} {ours:8.3f} s   {'ok' if ours < 5 else 'SLOW'}")


if __name__ == "__main__":
    main()
