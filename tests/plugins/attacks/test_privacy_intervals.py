"""Coverage of the privacy scores' intervals by simulation: over 400 seeded repetitions with a
known true value, a nominal 95 % interval covers it 93–97 % of the time (NewRowSynthesis'
Wilson interval, CategoricalCAP's bootstrap over the targets, DOMIAS' stratified bootstrap
of the AUC)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from anoneval.core.api import Context, Microdata, percentile_interval
from anoneval.plugins.attacks.domias import auc, bootstrap_auc
from anoneval.registry import build_registry

REG = build_registry(entry_points=False)
REPS = 400


def covered(hits: list[bool]) -> float:
    rate = float(np.mean(hits))
    assert 0.93 <= rate <= 0.97, rate
    return rate


def compute(name: str, ori: pd.DataFrame, syn: pd.DataFrame, params: dict, seed: int):
    measure = REG.create("risk_measure", name, params)
    return measure.compute(Microdata(ori), Microdata(syn), Context(seed=seed))


def test_new_row_synthesis_wilson_coverage():
    # a generator that copies an original record with probability 0.3: the share of new
    # records it makes is 0.7
    rng = np.random.default_rng(100)
    ori = pd.DataFrame({"x": rng.normal(size=300), "y": rng.normal(size=300)})
    hits = []
    for rep in range(REPS):
        copies = rng.random(200) < 0.3
        syn = pd.DataFrame({"x": rng.normal(size=200) + 50, "y": rng.normal(size=200)})
        syn.loc[copies, ["x", "y"]] = ori.iloc[rng.integers(0, 300, copies.sum())].to_numpy()
        res = compute("NewRowSynthesis", ori, syn, {}, rep)
        hits.append(res.ci[0] <= 0.7 <= res.ci[1])
    covered(hits)


def test_cap_bootstrap_coverage():
    # a fixed release; targets drawn from a population with known P(key) and P(s | key):
    # the mean CAP is Σ_k P(k) Σ_s P(s | k) · share of s among the released records of k
    rng = np.random.default_rng(101)
    keys, values = np.arange(6), np.array(list("uvw"))
    p_s = rng.dirichlet(np.ones(3), size=6)
    syn = pd.DataFrame({"k": np.repeat(keys, 20), "s": rng.choice(values, 120)})
    share = pd.crosstab(syn.k, syn.s).reindex(columns=values, fill_value=0).to_numpy() / 20
    truth = 1 - float(np.mean((p_s * share).sum(axis=1)))
    hits = []
    for rep in range(REPS):
        k = rng.integers(0, 6, 300)
        s = values[(rng.random(300)[:, None] > np.cumsum(p_s[k], axis=1)).sum(axis=1)]
        ori = pd.DataFrame({"k": k, "s": s})
        res = compute("CategoricalCAP", ori, syn, {"key_fields": ["k"],
                                                   "sensitive_fields": ["s"]}, rep)
        hits.append(res.ci[0] <= truth <= res.ci[1])
    covered(hits)


@pytest.mark.parametrize("shift", [0.0, 0.7])
def test_domias_auc_bootstrap_coverage(shift):
    # members' scores N(shift, 1), non-members' N(0, 1): AUC = Φ(shift / √2)
    rng = np.random.default_rng(102)
    truth = float(norm.cdf(shift / np.sqrt(2)))
    hits = []
    for _ in range(REPS):
        m, o = rng.normal(shift, 1, 300), rng.normal(0, 1, 300)
        ci = percentile_interval(bootstrap_auc(m, o, rng, 300), 0.95)
        assert ci[0] <= auc(m, o) <= ci[1]
        hits.append(ci[0] <= truth <= ci[1])
    covered(hits)
