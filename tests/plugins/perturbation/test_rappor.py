"""Tests of the rappor family: MILeakage and RandomizedResponse.

Oracles are independent of the plugin code: a brute-force I(C;C′) computed from the joint
distribution built here with itertools (every output enumerated, probabilities multiplied bit by
bit, RAPPOR's two steps summed over the permanent bit), hand computations written out in
comments, values from Aditya & Škorić and the reference notes (part B), and closed-form
capacities of binary channels.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import evaluate
from anoneval.core.api import ConfigError, Context, DataError, Microdata
from anoneval.plugins.perturbation import _channels as ch
from anoneval.plugins.perturbation.mi_leakage import MILeakage
from anoneval.plugins.perturbation.randomized_response import RandomizedResponse

# -- brute-force oracle ------------------------------------------------------------------------


def brute_mi(prior, rows):
    """I(C;C′) in bits from the joint π_c W(y|c): Σ π W log2(π W / (π_c q_y))."""
    outputs = sorted({y for row in rows for y in row})
    q = {y: math.fsum(prior[c] * rows[c].get(y, 0.0) for c in range(len(prior)))
         for y in outputs}
    terms = []
    for c, row in enumerate(rows):
        for y, w in row.items():
            joint = prior[c] * w
            if joint > 0:
                terms.append(joint * math.log2(w / q[y]))
    return math.fsum(terms)


def brute_output_entropy(prior, rows):
    outputs = {y for row in rows for y in row}
    q = [math.fsum(prior[c] * rows[c].get(y, 0.0) for c in range(len(prior))) for y in outputs]
    return -math.fsum(v * math.log2(v) for v in q if v > 0)


def brute_direct(m, gamma):
    return [{y: gamma if y == c else (1 - gamma) / (m - 1) for y in range(m)} for c in range(m)]


def brute_bits(m, bit_prob):
    """Channel of a one-hot encoding whose bit j is reported 1 w.p. bit_prob(true bit j)."""
    rows = []
    for c in range(m):
        row = {}
        for z in itertools.product((0, 1), repeat=m):
            prob = 1.0
            for j, bit in enumerate(z):
                one = bit_prob(1 if j == c else 0)
                prob *= one if bit else 1 - one
            row[z] = prob
        rows.append(row)
    return rows


def brute_unary(m, beta):
    return brute_bits(m, lambda t: 1 - beta if t else beta)


def brute_unary_asym(m, p, q):
    return brute_bits(m, lambda t: p if t else q)


def brute_rappor(m, f, p, q):
    """google/rappor: permanent bit (keep w.p. 1−f, else 1 w.p. f/2), then report 1 w.p. q
    (permanent 1) or p (permanent 0); summed over the permanent bit."""

    def one(t):
        prr1 = (1 - f) * t + f / 2
        return prr1 * q + (1 - prr1) * p

    return brute_bits(m, one)


def analytic(**params):
    params.setdefault("curve_points", 0)
    return MILeakage(**params).compute(None, None, Context())


def priors(m, seed=0):
    """Uniform, a random prior and one with a zero."""
    rng = np.random.default_rng(seed + m)
    rand = rng.dirichlet(np.ones(m))
    zero = rng.dirichlet(np.ones(m))
    zero[0] = 0.0
    return [[1 / m] * m, list(rand / rand.sum()), list(zero / zero.sum())]


GRID = [0.0, 0.05, 0.25, 0.5, 0.6, 0.93, 1.0]

# -- exact computation against brute force -----------------------------------------------------


@pytest.mark.parametrize("m", range(2, 7))
def test_direct_matches_brute_force(m):
    for gamma in [*GRID, 1 / m]:
        for prior in priors(m):
            got = analytic(mechanism="direct", gamma=gamma, prior=prior).value
            assert got == pytest.approx(brute_mi(prior, brute_direct(m, gamma)), abs=1e-12)


@pytest.mark.parametrize("m", range(2, 7))
def test_unary_matches_brute_force(m):
    for beta in GRID:
        rows = brute_unary(m, beta)
        for i, prior in enumerate(priors(m)):
            res = analytic(mechanism="unary", beta=beta, prior=prior)
            assert res.details["method"] == ("hamming_weight" if i == 0 else "enumeration")
            assert res.value == pytest.approx(brute_mi(prior, rows), abs=1e-12)
            assert res.details["H(C')"] == pytest.approx(brute_output_entropy(prior, rows),
                                                         abs=1e-12)


@pytest.mark.parametrize("m", range(2, 7))
def test_unary_asymmetric_matches_brute_force(m):
    for p, q in itertools.product([0.0, 0.5, 0.8, 1.0], [0.0, 0.1, 0.5, 1.0]):
        rows = brute_unary_asym(m, p, q)
        for prior in priors(m, seed=3):
            got = analytic(mechanism="unary_asymmetric", p=p, q=q, prior=prior).value
            assert got == pytest.approx(brute_mi(prior, rows), abs=1e-12)


@pytest.mark.parametrize("m", range(2, 7))
def test_rappor_matches_brute_force(m):
    for f, p, q in [(0.5, 0.5, 0.75), (0.0, 0.25, 0.75), (1.0, 0.5, 0.75), (0.3, 0.9, 0.1),
                    (0.2, 0.0, 1.0)]:
        rows = brute_rappor(m, f, p, q)
        for prior in priors(m, seed=5):
            got = analytic(mechanism="rappor", f=f, p=p, q=q, prior=prior).value
            assert got == pytest.approx(brute_mi(prior, rows), abs=1e-12)
        # the permanent response alone is a symmetric flip with beta = f/2
        perm = analytic(mechanism="rappor", f=f, rappor_report="permanent", categories=m).value
        assert perm == pytest.approx(brute_mi([1 / m] * m, brute_unary(m, f / 2)), abs=1e-12)


def test_matrix_matches_brute_force():
    w = [[0.7, 0.2, 0.1], [0.0, 0.5, 0.5], [0.3, 0.3, 0.4]]
    for prior in priors(3):
        rows = [dict(enumerate(r)) for r in w]
        got = analytic(mechanism="matrix", matrix=w, prior=prior).value
        assert got == pytest.approx(brute_mi(prior, rows), abs=1e-12)


def test_published_and_reference_values():
    # Direct, m = 4, gamma = 0.75, uniform prior (paper eq. 9):
    # log2 4 − h(0.75) − 0.25·log2 3 = 2 − 0.811278 − 0.396241 = 0.792481 bits.
    res = analytic(mechanism="direct", gamma=0.75, categories=4)
    assert res.value == pytest.approx(0.792481, abs=1e-6)
    assert res.details["H(C'|C)"] == pytest.approx(0.811278 + 0.396241, abs=1e-6)
    # Non-uniform prior (reference notes B1): eq. 9 would say 0.792481, the truth is 0.498489.
    res = analytic(mechanism="direct", gamma=0.75, prior=[0.7, 0.1, 0.1, 0.1])
    assert res.value == pytest.approx(0.498489, abs=1e-6)
    # Unary m = 4: beta = 0.25 gives 0.548283 (capacity in B4); beta 0.6 and 0.4 give 0.086836.
    assert analytic(mechanism="unary", beta=0.25, categories=4).value == pytest.approx(
        0.548283, abs=1e-6)
    for beta in (0.4, 0.6):
        assert analytic(mechanism="unary", beta=beta, categories=4).value == pytest.approx(
            0.086836, abs=1e-6)
    # google/rappor defaults f = 0.5, p = 0.5, q = 0.75, one report, one-hot (B5).
    for m, want in zip(range(2, 6), [0.023930, 0.031830, 0.035749, 0.038088], strict=True):
        res = analytic(mechanism="rappor", categories=m)
        assert res.value == pytest.approx(want, abs=1e-6)
        # q* = ½·0.5·1.25 + 0.5·0.75 = 0.6875, p* = 0.3125 + 0.25 = 0.5625
        assert res.details["bit_probabilities"] == {"p1": 0.6875, "p0": 0.5625}


# -- boundaries and invariants -----------------------------------------------------------------


@pytest.mark.parametrize("m", [2, 3, 4, 5, 9, 1000])
def test_boundaries(m):
    assert analytic(mechanism="direct", gamma=1 / m, categories=m).value == pytest.approx(
        0.0, abs=1e-12)
    assert analytic(mechanism="direct", gamma=1.0, categories=m).value == pytest.approx(
        math.log2(m), abs=1e-12)
    assert analytic(mechanism="unary", beta=0.5, categories=m).value == pytest.approx(
        0.0, abs=1e-12)
    assert analytic(mechanism="unary", beta=0.0, categories=m).value == pytest.approx(
        math.log2(m), abs=1e-9)
    for beta in (0.01, 0.2, 0.37):
        a = analytic(mechanism="unary", beta=beta, categories=m).value
        b = analytic(mechanism="unary", beta=1 - beta, categories=m).value
        assert a == pytest.approx(b, abs=1e-9)
    # direct at gamma = 0 (never keep): log m − log(m − 1), e.g. 1 bit for m = 2
    assert analytic(mechanism="direct", gamma=0.0, categories=m).value == pytest.approx(
        math.log2(m / (m - 1)), abs=1e-12)


def test_large_m_hamming_weight_and_base():
    res = analytic(mechanism="unary", beta=0.25, categories=100_000)
    assert res.details["method"] == "hamming_weight"
    # I <= log2 m and the leakage of one flipped bit pair stays below the beta = 0 value
    assert 0 < res.value < math.log2(100_000)
    nats = analytic(mechanism="unary", beta=0.25, categories=100_000, base=math.e).value
    assert nats == pytest.approx(res.value * math.log(2), rel=1e-12)
    # H(C′|C) = m·h(β) bits for symmetric flips (paper eq. 11): h(0.25) = 0.8112781245
    assert res.details["H(C'|C)"] == pytest.approx(100_000 * 0.8112781244591328, rel=1e-12)
    # I grows with m towards its limit slowly; the m = 2000 value is checked by Monte Carlo
    # in test_monte_carlo_is_labelled_and_agrees, here only monotonicity in m
    smaller = analytic(mechanism="unary", beta=0.25, categories=10_000).value
    assert smaller < res.value


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 7), st.floats(0, 1), st.floats(0, 1), st.integers(0, 10**6))
def test_bounds_and_permutation_invariance(m, a, b, seed):
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.ones(m))
    prior = list(prior / prior.sum())
    perm = list(np.asarray(prior)[rng.permutation(m)])
    for params in ({"mechanism": "direct", "gamma": a}, {"mechanism": "unary", "beta": a},
                   {"mechanism": "unary_asymmetric", "p": a, "q": b}):
        res = analytic(prior=prior, **params)
        d = res.details
        assert -1e-12 <= res.value <= min(d["H(C)"], d["H(C')"]) + 1e-9
        assert d["H(C')"] - d["H(C'|C)"] == pytest.approx(res.value, abs=1e-9)
        assert 0.0 <= d["normalized_leakage"] <= 1.0
        assert res.value <= d["capacity"] + 1e-9
        assert analytic(prior=perm, **params).value == pytest.approx(res.value, abs=1e-12)


def test_matrix_mechanism_reproduces_direct_and_unary():
    prior = priors(4)[1]
    direct = [[0.6 if i == j else 0.4 / 3 for j in range(4)] for i in range(4)]
    assert analytic(mechanism="matrix", matrix=direct, prior=prior).value == pytest.approx(
        analytic(mechanism="direct", gamma=0.6, prior=prior).value, abs=1e-12)


def test_monte_carlo_is_labelled_and_agrees():
    prior = list(np.random.default_rng(1).dirichlet(np.ones(12)))
    exact = analytic(mechanism="unary", beta=0.3, prior=prior)
    mc = analytic(mechanism="unary", beta=0.3, prior=prior, method="monte_carlo")
    assert exact.details["estimate"] is False and "standard_error" not in exact.details
    assert mc.details["method"] == "monte_carlo" and mc.details["estimate"] is True
    se = mc.details["standard_error"]
    assert 0 < se < 0.02
    assert abs(mc.value - exact.value) < 4 * se
    assert exact.ci is None
    assert mc.ci == pytest.approx([mc.value - 1.959963985 * se, mc.value + 1.959963985 * se])
    uniform = analytic(mechanism="unary", beta=0.3, categories=500)
    mc = analytic(mechanism="unary", beta=0.3, categories=500, method="monte_carlo")
    assert abs(mc.value - uniform.value) < 4 * mc.details["standard_error"]
    # above the enumeration limit, 'auto' switches to Monte Carlo for a non-uniform prior
    big = [0.5] + [0.5 / 24] * 24
    entry = evaluate(None, None, measures=[{"name": "MILeakage", "params": {
        "mechanism": "rappor", "prior": big}}]).measures[0]
    assert entry.details["method"] == "monte_carlo" and entry.details["estimate"] is True
    assert "Monte-Carlo estimate" in entry.warnings[0]


def test_capacity():
    # symmetric channels: capacity = uniform-prior I, whatever the prior asked for
    for params in ({"mechanism": "direct", "gamma": 0.75}, {"mechanism": "unary", "beta": 0.25},
                   {"mechanism": "rappor"}, {"mechanism": "unary_asymmetric", "p": 0.5,
                                             "q": 0.2}):
        for m in (2, 4, 7):
            uniform = analytic(categories=m, **params).value
            skewed = analytic(prior=priors(m)[1], **params)
            assert skewed.details["capacity"] == pytest.approx(uniform, abs=1e-9)
            assert skewed.details["capacity_method"] == "blahut_arimoto"
    assert analytic(mechanism="direct", gamma=0.75, categories=4).details[
        "capacity"] == pytest.approx(0.792481, abs=1e-6)
    big = analytic(mechanism="direct", gamma=0.3, categories=5000)
    assert big.details["capacity_method"].startswith("symmetry")
    assert big.details["capacity"] == pytest.approx(big.value, abs=1e-12)
    # Blahut–Arimoto from a skewed start on channels built here
    for rows in (brute_unary(4, 0.25), brute_direct(5, 0.4)):
        outs = sorted(rows[0])
        w = np.array([[r[y] for y in outs] for r in rows])
        cap = ch.blahut_arimoto(w, init=np.array([0.7] + [0.3 / (len(w) - 1)] * (len(w) - 1)))
        assert cap.value / math.log(2) == pytest.approx(
            brute_mi([1 / len(w)] * len(w), rows), abs=1e-9)
    # non-symmetric channels with known capacity (Cover & Thomas 2006, ch. 7 problems):
    # Z-channel 0→0, 1→0 w.p. e: C = log2(1 + (1−e)·e^(e/(1−e))); e = 1/2: log2(5/4).
    z = analytic(mechanism="matrix", matrix=[[1.0, 0.0], [0.5, 0.5]])
    assert z.details["capacity"] == pytest.approx(math.log2(1.25), abs=1e-9)
    assert z.details["capacity_prior"] == pytest.approx([0.6, 0.4], abs=1e-6)
    # binary erasure channel, erasure 0.3: C = 0.7 bits
    bec = analytic(mechanism="matrix", matrix=[[0.7, 0.3, 0.0], [0.0, 0.3, 0.7]])
    assert bec.details["capacity"] == pytest.approx(0.7, abs=1e-9)


def brute_epsilon(rows):
    outs = {y for r in rows for y in r}
    best = 0.0
    for y in outs:
        vals = [r.get(y, 0.0) for r in rows]
        if max(vals) == 0:
            continue
        if min(vals) == 0:
            return math.inf
        best = max(best, math.log(max(vals) / min(vals)))
    return best


def test_ldp_epsilon():
    for m, gamma in [(2, 0.75), (4, 0.75), (5, 0.1), (3, 1 / 3), (3, 1.0)]:
        got = analytic(mechanism="direct", gamma=gamma, categories=m).details["ldp_epsilon"]
        assert got == pytest.approx(brute_epsilon(brute_direct(m, gamma)))
    for m in (2, 3, 4):
        for beta in (0.0, 0.1, 0.5, 0.8):
            got = analytic(mechanism="unary", beta=beta, categories=m).details["ldp_epsilon"]
            assert got == pytest.approx(brute_epsilon(brute_unary(m, beta)))
        for p, q in [(0.5, 0.2), (1.0, 1.0), (0.0, 0.3), (0.9, 0.9)]:
            got = analytic(mechanism="unary_asymmetric", p=p, q=q,
                           categories=m).details["ldp_epsilon"]
            assert got == pytest.approx(brute_epsilon(brute_unary_asym(m, p, q)))
    # Wang et al.: OUE with p = 1/2, q = 1/(e^ε + 1) is ε-LDP; SUE with beta = 1/(e^(ε/2)+1).
    eps = 1.3
    oue = analytic(mechanism="unary_asymmetric", p=0.5, q=1 / (math.exp(eps) + 1), categories=8)
    sue = analytic(mechanism="unary", beta=1 / (math.exp(eps / 2) + 1), categories=8)
    assert oue.details["ldp_epsilon"] == pytest.approx(eps)
    assert sue.details["ldp_epsilon"] == pytest.approx(eps)
    # google/rappor defaults, h = 1: ε1 = ln(q*(1−p*)/(p*(1−q*))) = 0.53714, ε∞ = 2 ln 3
    rap = analytic(mechanism="rappor", categories=4).details
    assert rap["ldp_epsilon"] == pytest.approx(1.0743 / 2, abs=1e-4)
    assert rap["ldp_epsilon_permanent"] == pytest.approx(4.3944 / 2, abs=1e-4)


def test_curve():
    res = MILeakage(mechanism="direct", gamma=0.5, categories=3,
                    curve_points=11).compute(None, None, Context())
    curve = res.details["curve"]
    assert curve["param"] == "gamma" and len(curve["x"]) == 11
    for x, y in zip(curve["x"], curve["y"], strict=True):
        assert y == pytest.approx(brute_mi([1 / 3] * 3, brute_direct(3, x)), abs=1e-12)
    res = MILeakage(mechanism="unary", beta=0.2, categories=4).compute(None, None, Context())
    assert res.details["curve"]["param"] == "beta"
    assert res.details["curve"]["y"][0] == pytest.approx(2.0)
    skewed = MILeakage(mechanism="unary", beta=0.2, prior=priors(4)[1])
    assert "curve" not in skewed.compute(None, None, Context()).details


# -- public API ---------------------------------------------------------------------------------


def test_evaluate_without_data():
    report = evaluate(None, None, measures=[
        {"name": "MILeakage", "params": {"mechanism": "direct", "gamma": 0.75, "categories": 4}},
        {"name": "MILeakage", "label": "rappor", "params": {"mechanism": "rappor",
                                                           "categories": 3}},
    ])
    first, second = report.measures
    assert first.error is None and second.error is None
    assert first.value == pytest.approx(0.792481, abs=1e-6)
    assert second.value == pytest.approx(0.031830, abs=1e-6)
    data = json.loads(report.to_json())
    assert data["measures"][0]["details"]["normalized_leakage"] == pytest.approx(0.792481 / 2,
                                                                                abs=1e-6)
    assert MILeakage(mechanism="direct", gamma=0.5, categories=3).required_inputs() == "none"


def test_prior_from_data():
    df = pd.DataFrame({"c": ["x"] * 6 + ["y"] * 3 + ["z"]})
    params = {"mechanism": "direct", "gamma": 0.8, "prior": "data", "original_column": "c"}
    report = evaluate(df, None, measures=[{"name": "MILeakage", "params": params}])
    entry = report.measures[0]
    assert entry.error is None
    want = brute_mi([0.6, 0.3, 0.1], brute_direct(3, 0.8))
    assert entry.value == pytest.approx(want, abs=1e-12)
    # categories beyond those observed get prior 0
    padded = evaluate(df, None, measures=[{"name": "MILeakage",
                                           "params": {**params, "categories": 5}}]).measures[0]
    assert padded.value == pytest.approx(brute_mi([0.6, 0.3, 0.1, 0, 0],
                                                  brute_direct(5, 0.8)), abs=1e-12)
    missing = evaluate(None, None, measures=[{"name": "MILeakage", "params": params}])
    assert "needs" in missing.measures[0].error


# -- empirical mode and the closed loop ---------------------------------------------------------


def test_empirical_miller_madow_by_hand():
    # x = y = [a, a, b, b]: plug-in I = H(X) = 1 bit. Cells K_xy = 2, K_x = K_y = 2, N = 4:
    # Miller–Madow adds (K_x−1 + K_y−1 − (K_xy−1))/(2N) = 1/8 nat = 0.180337 bits.
    orig = pd.DataFrame({"c": list("aabb")})
    anon = pd.DataFrame({"r": list("aabb")})
    res = MILeakage(mode="empirical", original_column="c", randomized_column="r",
                    bootstrap=0).compute(Microdata(orig), Microdata(anon), Context())
    assert res.details["plugin"] == pytest.approx(1.0, abs=1e-12)
    assert res.value == pytest.approx(1.0 + 0.125 / math.log(2), abs=1e-12)
    # x = [a,a,a,b], y = [u,v,u,v]: joint cells (a,u)=2, (a,v)=1, (b,v)=1.
    # plug-in I = Σ p log2(p/(px py)) = .5 log2(.5/(.75·.5)) + .25 log2(.25/(.75·.5))
    #            + .25 log2(.25/(.25·.5)) = 0.207519 − 0.146241 + 0.25 = 0.311278 bits;
    # correction (1 + 1 − 2)/8 nat = 0.
    orig = pd.DataFrame({"c": list("aaab")})
    anon = pd.DataFrame({"r": list("uvuv")})
    res = MILeakage(mode="empirical", original_column="c", randomized_column="r",
                    bootstrap=0).compute(Microdata(orig), Microdata(anon), Context())
    assert res.value == pytest.approx(0.311278, abs=1e-6)
    assert res.details["H(C)"] == pytest.approx(0.811278 + 0.5 / (4 * math.log(2)), abs=1e-6)


def closed_loop(mechanism_params, n=200_000, seed=0):
    rng = np.random.default_rng(123)
    df = pd.DataFrame({"c": rng.choice(list("abcd"), size=n, p=[0.4, 0.3, 0.2, 0.1]),
                       "other": np.arange(n)})
    made = RandomizedResponse(columns=["c"], **mechanism_params).generate(
        Microdata(df), Context(seed=seed))
    out = made.data.frame
    assert (out["other"] == df["other"]).all()
    measure = {"name": "MILeakage", "params": {"mode": "empirical", "original_column": "c",
                                               "randomized_column": "c", **mechanism_params}}
    return evaluate(df, out, measures=[measure], seed=seed).measures[0], df, out


@pytest.mark.parametrize("params", [
    {"mechanism": "direct", "gamma": 0.6},
    {"mechanism": "unary", "beta": 0.2},
    {"mechanism": "rappor"},
    {"mechanism": "unary_asymmetric", "p": 0.5, "q": 0.2},
    {"mechanism": "matrix", "matrix": [[0.7, 0.1, 0.1, 0.1], [0.2, 0.5, 0.2, 0.1],
                                       [0.1, 0.1, 0.8, 0.0], [0.25, 0.25, 0.25, 0.25]]},
])
def test_closed_loop_empirical_within_ci_of_analytic(params):
    entry, df, _ = closed_loop(params)
    d = entry.details
    assert entry.error is None
    assert d["analytic_within_ci"] is True
    assert d["ci_lower"] <= d["analytic_value"] <= d["ci_upper"]
    assert d["ci_upper"] - d["ci_lower"] < 0.02  # the CI is narrow, so this can fail
    assert entry.ci == pytest.approx([max(d["ci_lower"], 0.0), max(d["ci_upper"], 0.0)])
    assert entry.confidence_level == 0.95
    if params["mechanism"] == "direct":  # the analytic side uses the data's prior
        counts = df["c"].value_counts(normalize=True).sort_index().to_numpy()
        want = brute_mi(list(counts), brute_direct(4, params["gamma"]))
        assert d["analytic_value"] == pytest.approx(want, abs=1e-12)


def test_bootstrap_ci_coverage():
    hits = 0
    reps = 40
    for seed in range(reps):
        rng = np.random.default_rng(1000 + seed)
        df = pd.DataFrame({"c": rng.choice(3, size=4000, p=[0.5, 0.3, 0.2])})
        out = RandomizedResponse(columns=["c"], mechanism="direct", gamma=0.7).generate(
            Microdata(df), Context(seed=seed)).data
        res = MILeakage(mode="empirical", original_column="c", randomized_column="c",
                        mechanism="direct", gamma=0.7).compute(Microdata(df), out,
                                                               Context(seed=seed))
        hits += res.details["analytic_within_ci"]
    assert 0.85 * reps <= hits <= reps


def test_unary_bits_as_string_or_columns():
    _, df, out = closed_loop({"mechanism": "unary", "beta": 0.3}, n=20_000)
    bits = pd.DataFrame({f"b{j}": out["c"].str[j] for j in range(4)})
    one = evaluate(df, out, measures=[{"name": "MILeakage", "params": {
        "mode": "empirical", "original_column": "c", "randomized_column": "c"}}])
    many = evaluate(df, bits, measures=[{"name": "MILeakage", "params": {
        "mode": "empirical", "original_column": "c",
        "randomized_column": ["b0", "b1", "b2", "b3"]}}])
    assert many.measures[0].value == pytest.approx(one.measures[0].value, abs=1e-12)


# -- RandomizedResponse ------------------------------------------------------------------------


def test_randomized_response_frequencies_and_reproducibility():
    n = 100_000
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"c": rng.choice(["p", "q", "r"], size=n), "k": rng.integers(0, 5, n)})
    before = df.copy()
    rr = RandomizedResponse(columns=["c"], mechanism="direct", gamma=0.7)
    out = rr.generate(Microdata(df), Context(seed=3)).data.frame
    pd.testing.assert_frame_equal(df, before)  # input untouched
    stay = (out["c"] == df["c"]).mean()
    assert abs(stay - 0.7) < 4 * math.sqrt(0.21 / n)
    moved = out.loc[(out["c"] != df["c"]) & (df["c"] == "p"), "c"].value_counts(normalize=True)
    assert moved.to_dict() == pytest.approx({"q": 0.5, "r": 0.5}, abs=0.02)
    again = rr.generate(Microdata(df), Context(seed=3)).data.frame
    pd.testing.assert_frame_equal(out, again)
    other = rr.generate(Microdata(df), Context(seed=4)).data.frame
    assert not out["c"].equals(other["c"])


def test_randomized_response_rappor_bits():
    n = 200_000
    df = pd.DataFrame({"c": np.random.default_rng(2).choice(["a", "b", "c"], size=n)})
    out = RandomizedResponse(columns=["c"], mechanism="rappor", f=0.4, p=0.2,
                             q=0.9).generate(Microdata(df), Context()).data.frame["c"]
    assert out.str.len().eq(3).all()
    # bit 0 ↔ category 'a'. P(report 1 | true 1): permanent bit is 1 w.p. 0.6 + 0.2 = 0.8,
    # so 0.8·0.9 + 0.2·0.2 = 0.76; P(report 1 | true 0): 0.2·0.9 + 0.8·0.2 = 0.34.
    bit0 = out.str[0].eq("1")
    is_a = df["c"].eq("a")
    assert bit0[is_a].mean() == pytest.approx(0.76, abs=0.01)
    assert bit0[~is_a].mean() == pytest.approx(0.34, abs=0.01)


def test_randomized_response_domain():
    df = pd.DataFrame({"c": ["a", "b"] * 500})
    made = RandomizedResponse(columns=["c"], mechanism="direct", gamma=0.0,
                              domain={"c": ["a", "b", "z"]}).generate(Microdata(df), Context())
    assert made.details["columns"]["c"]["categories"] == 3
    assert set(made.data.frame["c"]) == {"a", "b", "z"}
    assert (made.data.frame["c"] != df["c"]).all()  # gamma = 0 never keeps
    with pytest.raises(DataError, match=r"column 'c', data row 2 .*: value 'b' is not in domain"):
        RandomizedResponse(columns=["c"], mechanism="direct", gamma=0.5,
                           domain={"c": ["a", "z"]}).generate(Microdata(df), Context())
    with pytest.raises(DataError, match="'nope'"):
        RandomizedResponse(columns=["nope"], mechanism="unary", beta=0.1).generate(
            Microdata(df), Context())


# -- bad input ---------------------------------------------------------------------------------


def config_error(params, name="MILeakage"):
    with pytest.raises(ConfigError) as info:
        evaluate(None, None, measures=[{"name": name, "params": params}])
    return str(info.value)


@pytest.mark.parametrize("params, path, words", [
    ({"mechanism": "direct", "gamma": 1.5, "categories": 3}, "params.gamma",
     "less than or equal to 1"),
    ({"mechanism": "unary", "beta": -0.1, "categories": 3}, "params.beta",
     "greater than or equal to 0"),
    ({"mechanism": "unary_asymmetric", "p": 2, "q": 0.1, "categories": 3}, "params.p",
     "less than or equal to 1"),
    ({"mechanism": "rappor", "f": 1.2, "categories": 3}, "params.f", "less than or equal to 1"),
    ({"mechanism": "direct", "gamma": 0.5, "categories": 1}, "params.categories",
     "greater than or equal to 2"),
    ({"mechanism": "direct", "gamma": 0.5, "prior": [0.5, 0.4]}, "params.prior",
     "prior sums to 0.9; it must sum to 1 within 1e-9"),
    ({"mechanism": "direct", "gamma": 0.5, "prior": [1.5, -0.5]}, "params.prior",
     "prior[0] = 1.5; probabilities must lie in [0, 1]"),
    ({"mechanism": "direct", "gamma": 0.5, "prior": [1.0]}, "params.prior",
     "categories m >= 2"),
    ({"mechanism": "matrix", "matrix": [[0.5, 0.4], [0.5, 0.5]]}, "params.matrix",
     "matrix row 0 sums to 0.9"),
    ({"mechanism": "matrix", "matrix": [[1.2, -0.2], [0.5, 0.5]]}, "params.matrix",
     "entries must lie in [0, 1]"),
    ({"mechanism": "matrix", "matrix": [[1.0]]}, "params.matrix", "categories m >= 2"),
    ({"mechanism": "unary", "beta": 0.2, "method": "exact",
      "prior": [0.5] + [0.5 / 24] * 24}, "params", "method 'exact'"),
    ({"mechanism": "direct", "categories": 3}, "params", "needs 'gamma'"),
    ({"mechanism": "direct", "gamma": 0.5, "beta": 0.1, "categories": 3}, "params",
     "'beta' does not apply to mechanism 'direct'"),
    ({"mechanism": "direct", "gamma": 0.5}, "params", "give 'categories'"),
    ({"mechanism": "direct", "gamma": 0.5, "categories": 3, "prior": [0.5, 0.5]}, "params",
     "disagrees"),
    ({"mechanism": "direct", "gamma": 0.5, "categories": 3, "method": "monte_carlo"},
     "params", "monte_carlo"),
    ({"mechanism": "direct", "gamma": 0.5, "categories": 3, "base": 1}, "params.base",
     "greater than 1"),
    ({"mode": "empirical", "original_column": "c"}, "params", "randomized_column"),
    ({"gamma": 0.5, "categories": 3}, "params", "set 'mechanism'"),
    ({"mechanism": "direct", "gamma": 0.5, "categories": 3, "bootstrap": 10}, "params",
     "'bootstrap' applies to mode 'empirical' only"),
    ({"mode": "empirical", "original_column": "c", "randomized_column": "r", "samples": 500},
     "params", "'samples' applies to mode 'analytic' only"),
    ({"categories": 3}, "params", "mode 'analytic' needs 'mechanism'"),
    ({"mechanism": "direct", "gamma": 0.5, "categories": 3, "prior": "zipf"}, "params.prior",
     "'uniform', 'data'"),
])
def test_bad_input_names_param_and_range(params, path, words):
    msg = config_error(params)
    assert f"measures[0].{path}" in msg
    assert words in msg


def test_enumeration_limit_message():
    msg = config_error({"mechanism": "unary", "beta": 0.2, "method": "exact",
                        "prior": [0.5] + [0.5 / 20] * 20})
    assert "categories <= 20" in msg and "got categories = 21" in msg
    # with a data prior the limit is checked when the prior is known
    df = pd.DataFrame({"c": np.arange(30) % 25})
    entry = evaluate(df, None, measures=[{"name": "MILeakage", "params": {
        "mechanism": "unary", "beta": 0.2, "method": "exact", "prior": "data",
        "original_column": "c"}}]).measures[0]
    assert "categories <= 20" in entry.error


def test_empirical_bad_data():
    df = pd.DataFrame({"c": list("ab")})
    params = {"mode": "empirical", "original_column": "c", "randomized_column": "r"}
    entry = evaluate(df, pd.DataFrame({"x": list("ab")}),
                     measures=[{"name": "MILeakage", "params": params}]).measures[0]
    assert "randomized_column 'r' not in" in entry.error
    entry = evaluate(df, pd.DataFrame({"r": list("abc")}),
                     measures=[{"name": "MILeakage", "params": params}]).measures[0]
    assert "row-aligned" in entry.error
    entry = evaluate(df, None, measures=[{"name": "MILeakage", "params": params}]).measures[0]
    assert "needs 'anonymized' data" in entry.error


def test_synthesizer_bad_params():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="less than or equal to 1"):
        RandomizedResponse(columns=["c"], mechanism="direct", gamma=2)
    with pytest.raises(ValidationError, match="'mechanism' is required"):
        RandomizedResponse(columns=["c"])
    with pytest.raises(ValidationError, match="matrix must be square"):
        RandomizedResponse(columns=["c"], mechanism="matrix", matrix=[[0.5, 0.5, 0], [0, 1, 0]])


def test_example_writes_figures(tmp_path, root):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(root / "examples" / "rappor_leakage.py"),
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for name in ("fig1_direct.png", "fig2_unary.png", "fig3_normalized.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the printed values at 0.75 are the paper's curves: direct m = 4 → 0.792481
    assert "m=4: 0.792481" in done.stdout


def test_config_without_data_and_synthesizer_closed_loop(tmp_path):
    from anoneval.core.run.config import validate_config
    from anoneval.core.run.runner import run_plan

    analytic = {"measures": [{"name": "MILeakage", "params": {
        "mechanism": "unary", "beta": 0.25, "categories": 4}}]}
    report = run_plan(validate_config(analytic, base_dir=tmp_path))
    assert report.measures[0].value == pytest.approx(0.548283, abs=1e-6)

    rng = np.random.default_rng(9)
    pd.DataFrame({"c": rng.choice(["u", "v", "w"], size=50_000, p=[0.6, 0.3, 0.1]),
                  "k": rng.integers(0, 3, 50_000)}).to_csv(tmp_path / "orig.csv", index=False)
    loop = {"original": {"path": "orig.csv"}, "seed": 5,
            "synthesizer": {"name": "RandomizedResponse", "params": {
                "columns": ["c", "k"], "mechanism": "direct", "gamma": 0.5}},
            "measures": [{"name": "MILeakage", "params": {
                "mode": "empirical", "original_column": "c", "randomized_column": "c",
                "mechanism": "direct", "gamma": 0.5}}]}
    entry = run_plan(validate_config(loop, base_dir=tmp_path)).measures[0]
    assert entry.error is None
    assert entry.details["analytic_within_ci"] is True
    again = run_plan(validate_config(loop, base_dir=tmp_path)).measures[0]
    assert again.value == entry.value  # the evaluation seed makes the run reproducible


def test_randomized_response_keeps_input_and_dtypes():
    df = pd.DataFrame({"a": np.arange(1000) % 4, "b": np.arange(1000) % 3, "s": ["x", "y"] * 500})
    before = df.copy()
    for params in ({"mechanism": "direct", "gamma": 0.2}, {"mechanism": "unary", "beta": 0.3},
                   {"mechanism": "matrix", "matrix": [[0.5, 0.5, 0, 0], [0, 0.5, 0.5, 0],
                                                      [0, 0, 0.5, 0.5], [0.5, 0, 0, 0.5]]}):
        cols = ["a"] if params["mechanism"] == "matrix" else ["a", "s"]
        out = RandomizedResponse(columns=cols, **params).generate(Microdata(df), Context()).data
        pd.testing.assert_frame_equal(df, before)
        assert out.frame["b"].equals(df["b"])
        if params["mechanism"] != "unary":
            assert out.frame["a"].dtype == df["a"].dtype
            assert set(out.frame["a"]) <= {0, 1, 2, 3}
        if params["mechanism"] == "matrix":  # row c moves only to c or c + 1 (mod 4)
            step = (out.frame["a"] - df["a"]) % 4
            assert set(step) == {0, 1}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), min_size=2, max_size=60),
       st.integers(0, 10**6))
def test_empirical_invariants(pairs, seed):
    x, y = (list(v) for v in zip(*pairs, strict=True))
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(x))
    relabel = {v: f"L{(v * 7) % 5}" for v in range(5)}

    def run(xs, ys):
        return MILeakage(mode="empirical", original_column="c", randomized_column="r",
                         bootstrap=0).compute(Microdata(pd.DataFrame({"c": xs})),
                                              Microdata(pd.DataFrame({"r": ys})), Context())

    res = run(x, y)
    d = res.details
    # plug-in: 0 <= I <= min(H(X), H(Y)); brute force from the pairs' counts
    joint = pd.Series(list(zip(x, y, strict=True))).value_counts(normalize=True)
    px = pd.Series(x).value_counts(normalize=True)
    py = pd.Series(y).value_counts(normalize=True)
    want = math.fsum(p * math.log2(p / (px[a] * py[b])) for (a, b), p in joint.items())
    assert d["plugin"] == pytest.approx(want, abs=1e-12)
    assert res.value >= 0.0
    shuffled = run([x[i] for i in order], [y[i] for i in order])
    renamed = run(x, [relabel[v] for v in y])
    assert shuffled.value == pytest.approx(res.value, abs=1e-12)
    assert renamed.value == pytest.approx(res.value, abs=1e-12)
