"""CategoricalCAP, DisclosureProtection, DOMIAS, EmpiricalEpsilon and AttributeInference's model
attackers: SDMetrics 0.32's values on the same data, scipy's densities, hand-worked cases,
copy and independent releases, simulated coverage of the ε bound, and bad input."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import gaussian_kde, multivariate_normal

from anoneval.core import ConfigError, evaluate
from anoneval.core.api import Context, Microdata, clopper_pearson
from anoneval.plugins.attacks.categorical_cap import cap_scores
from anoneval.plugins.attacks.domias import (
    auc,
    bootstrap_auc,
    design,
    domias_scores,
    log_density,
)
from anoneval.plugins.attacks.empirical_epsilon import (
    _cp_bounds,
    epsilon,
    operating_point,
)
from anoneval.registry import build_registry

sdmetrics = pytest.importorskip("sdmetrics")
from sdmetrics.single_table import DisclosureProtection as SDMDisclosure  # noqa: E402
from sdmetrics.single_table import DisclosureProtectionEstimate  # noqa: E402
from sdmetrics.single_table.privacy.cap import (  # noqa: E402
    CategoricalCAP as SDMCAP,
)
from sdmetrics.single_table.privacy.cap import (  # noqa: E402
    CategoricalGeneralizedCAP as SDMGeneralized,
)
from sdmetrics.single_table.privacy.cap import (  # noqa: E402
    CategoricalZeroCAP as SDMZero,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "synthetic"
REG = build_registry(entry_points=False)
SDM_CAP = {"cap": SDMCAP, "zero_cap": SDMZero, "generalized_cap": SDMGeneralized}
VARIANTS = list(SDM_CAP)


def compute(name: str, ori: pd.DataFrame, syn: pd.DataFrame, params: dict,
            control: pd.DataFrame | None = None, seed: int = 0):
    """The measure's MeasureResult (value, ci, details) from a direct call."""
    measure = REG.create("risk_measure", name, params)
    ctx = Context(seed=seed, control=None if control is None else Microdata(control))
    return measure.compute(Microdata(ori), Microdata(syn), ctx)


def categories(n: int, rng: np.random.Generator, missing: float = 0.0) -> pd.DataFrame:
    d = pd.DataFrame({"a": rng.choice(list("xyz"), n), "b": rng.integers(0, 4, n).astype(str),
                      "c": rng.choice(list("pq"), n), "x": rng.normal(size=n).round(2),
                      "s": rng.choice(list("uvw"), n), "t": rng.choice(list("01"), n)})
    if missing:
        for c in ("a", "x", "s"):
            d.loc[rng.random(n) < missing, c] = np.nan
    return d


def sdm(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# -- CategoricalCAP -------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cap_equals_sdmetrics(variant, seed):
    rng = np.random.default_rng(seed)
    ori, syn = categories(300, rng), categories(40 + 30 * seed, rng)
    keys, sens = ["a", "b", "c"], ["s", "t"]
    res = compute("CategoricalCAP", ori, syn, {"key_fields": keys, "sensitive_fields": sens,
                                                "variant": variant})
    theirs = sdm(SDM_CAP[variant].compute, ori, syn, key_fields=keys, sensitive_fields=sens)
    assert res.value == pytest.approx(theirs, abs=1e-9)
    assert res.ci[0] <= res.value <= res.ci[1]


@pytest.mark.parametrize("join_cost", [0.0, 1e12])  # always joins / always the matrix
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_generalized_cap_paths_equal_sdmetrics(monkeypatch, join_cost, seed):
    import anoneval.plugins.attacks.categorical_cap as module

    monkeypatch.setattr(module, "JOIN_COST", join_cost)
    rng = np.random.default_rng(seed)
    n_keys = 1 + seed  # up to 4 key columns: unmatched keys at distances 1 to 4
    keys = [f"k{j}" for j in range(n_keys)]

    def draw(n: int) -> pd.DataFrame:
        out = {k: rng.integers(0, 5, n).astype(str) for k in keys}
        return pd.DataFrame({**out, "s": rng.choice(list("uvw"), n)})

    ori, syn = draw(150), draw(12)
    res = compute("CategoricalCAP", ori, syn, {"key_fields": keys, "sensitive_fields": ["s"],
                                                "variant": "generalized_cap"})
    theirs = sdm(SDMGeneralized.compute, ori, syn, key_fields=keys, sensitive_fields=["s"])
    assert res.value == pytest.approx(theirs, abs=1e-9)


def test_cap_by_hand():
    # released: key x → sensitive u, u, v; key y → w. Originals: (x, u) 2/3, (x, v) 1/3,
    # (y, u) 0, (z, u) unmatched
    syn = pd.DataFrame({"k": ["x", "x", "x", "y"], "s": ["u", "u", "v", "w"]})
    ori = pd.DataFrame({"k": ["x", "x", "y", "z"], "s": ["u", "v", "u", "u"]})
    params = {"key_fields": ["k"], "sensitive_fields": ["s"]}
    cap = compute("CategoricalCAP", ori, syn, params)
    assert cap.value == pytest.approx(1 - (2 / 3 + 1 / 3 + 0) / 3)
    assert cap.details["n_counted"] == 3 and cap.details["n_unmatched"] == 1
    zero = compute("CategoricalCAP", ori, syn, {**params, "variant": "zero_cap"})
    assert zero.value == pytest.approx(1 - (2 / 3 + 1 / 3 + 0 + 0) / 4)
    # generalized: z is at Hamming distance 1 from both x and y: all four released records
    # pooled, two of them hold u
    gen = cap_scores(ori, syn, ["k"], ["s"], "generalized_cap")
    np.testing.assert_allclose(gen, [2 / 3, 1 / 3, 0, 2 / 4])


def test_cap_copy_with_unique_keys_discloses_everything():
    rng = np.random.default_rng(3)
    ori = pd.DataFrame({"id": np.arange(200).astype(str), "s": rng.choice(list("uvw"), 200)})
    res = compute("CategoricalCAP", ori, ori.copy(), {"key_fields": ["id"],
                                                      "sensitive_fields": ["s"]})
    assert res.value == 0.0 and res.details["mean_cap"] == 1.0


def test_cap_without_any_matching_key_has_no_value():
    ori = pd.DataFrame({"k": ["a", "b"], "s": ["u", "v"]})
    syn = pd.DataFrame({"k": ["c", "d"], "s": ["u", "v"]})
    res = compute("CategoricalCAP", ori, syn, {"key_fields": ["k"], "sensitive_fields": ["s"]})
    assert res.value is None and "undefined" in res.warnings[0]
    zero = compute("CategoricalCAP", ori, syn, {"key_fields": ["k"], "sensitive_fields": ["s"],
                                                "variant": "zero_cap"})
    assert zero.value == 1.0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(VARIANTS))
def test_cap_bounds_and_row_order(seed, variant):
    rng = np.random.default_rng(seed)
    ori, syn = categories(60, rng, 0.1), categories(30, rng, 0.1)
    params = {"key_fields": ["a", "b"], "sensitive_fields": ["s"], "variant": variant}
    res = compute("CategoricalCAP", ori, syn, params)
    shuffled = compute("CategoricalCAP", ori.sample(frac=1, random_state=seed),
                       syn.sample(frac=1, random_state=seed + 1), params)
    if res.value is None:
        assert shuffled.value is None
        return
    assert 0.0 <= res.value <= 1.0
    assert shuffled.value == pytest.approx(res.value, abs=1e-12)


def test_cap_params_are_checked():
    ori = categories(10, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="both key and sensitive"):
        evaluate(ori, ori, [{"name": "CategoricalCAP", "params": {
            "key_fields": ["a", "s"], "sensitive_fields": ["s"]}}])
    with pytest.raises(ConfigError, match="variant"):
        evaluate(ori, ori, [{"name": "CategoricalCAP", "params": {
            "key_fields": ["a"], "sensitive_fields": ["s"], "variant": "0cap"}}])
    rep = evaluate(ori, ori.drop(columns="s"), [{"name": "CategoricalCAP", "params": {
        "key_fields": ["a"], "sensitive_fields": ["s"]}}])
    assert "'s' not in the anonymized data" in rep.measures[0].error


# -- DisclosureProtection -------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_disclosure_protection_equals_sdmetrics(variant):
    rng = np.random.default_rng(5)
    ori, syn = categories(400, rng, 0.05), categories(300, rng, 0.05)
    keys, sens = ["a", "b", "x"], ["s", "t"]
    res = compute("DisclosureProtection", ori, syn, {
        "key_fields": keys, "sensitive_fields": sens, "variant": variant,
        "continuous_columns": ["x"], "num_discrete_bins": 7})
    theirs = sdm(SDMDisclosure.compute_breakdown, ori, syn, keys, sens, variant, ["x"], 7)
    assert res.value == pytest.approx(theirs["score"], abs=1e-9)
    assert res.details["cap_protection"] == pytest.approx(theirs["cap_protection"], abs=1e-9)
    assert res.details["baseline_protection"] == pytest.approx(theirs["baseline_protection"],
                                                               abs=1e-12)
    assert res.ci[0] <= res.value <= res.ci[1]


def test_disclosure_protection_on_the_shared_data():
    ori, syn = (pd.read_csv(DATA / f"{n}.csv") for n in ("original", "released"))
    keys, sens = ["age", "region", "smoker"], ["job"]
    res = compute("DisclosureProtection", ori, syn, {
        "key_fields": keys, "sensitive_fields": sens, "continuous_columns": ["age"]})
    theirs = sdm(SDMDisclosure.compute_breakdown, ori, syn, keys, sens, "cap", ["age"], 10)
    assert res.value == pytest.approx(theirs["score"], abs=1e-9)


def test_disclosure_protection_compat_without_subsampling_equals_the_estimate():
    # with a subsample as large as the data, every iteration sees all records (in another
    # order): SDMetrics' estimate is the exact value, and so is compat's
    rng = np.random.default_rng(6)
    ori, syn = categories(200, rng), categories(150, rng)
    keys, sens = ["a", "b"], ["s"]
    params = {"key_fields": keys, "sensitive_fields": sens}
    exact = compute("DisclosureProtection", ori, syn, params)
    compat = compute("DisclosureProtection", ori, syn, {
        **params, "compat": True, "num_rows_subsample": 500, "num_iterations": 3})
    theirs = sdm(DisclosureProtectionEstimate.compute_breakdown, ori, syn, keys, sens,
                 num_rows_subsample=500, num_iterations=3, verbose=False)
    assert compat.value == pytest.approx(theirs["score"], abs=1e-9)
    assert compat.value == pytest.approx(exact.value, abs=1e-9)
    assert compat.ci[0] <= compat.value <= compat.ci[1]


def copy_and_independent(n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Keys that almost identify a record, a sensitive value that depends on nothing."""
    rng = np.random.default_rng(seed)

    def draw() -> pd.DataFrame:
        return pd.DataFrame({"k1": rng.integers(0, 100, n), "k2": rng.integers(0, 100, n),
                             "k3": rng.integers(0, 100, n), "s": rng.choice(list("uvwxyz"), n)})

    ori = draw()
    return ori, ori.copy(), draw()


def test_disclosure_protection_copy_and_independent():
    ori, copy, indep = copy_and_independent(2000, 7)
    # keys that (almost) identify: the copy discloses every sensitive value
    on_copy = compute("DisclosureProtection", ori, copy, {"key_fields": ["k1", "k2", "k3"],
                                                          "sensitive_fields": ["s"]})
    # coarse keys every release shares: the independent release tells no more than chance
    on_indep = compute("DisclosureProtection", ori, indep, {"key_fields": ["k1"],
                                                            "sensitive_fields": ["s"]})
    assert on_copy.value < 0.05
    assert on_indep.value > 0.9
    assert on_copy.ci[1] < on_indep.ci[0]


def test_disclosure_protection_subsampling_defect():
    # SDMetrics' estimate subsamples the release too: most originals then find no released
    # record with their key, and a copy looks safe (zero_cap scores them 0)
    ori, copy, _ = copy_and_independent(5000, 8)
    params = {"key_fields": ["k1", "k2", "k3"], "sensitive_fields": ["s"],
              "variant": "zero_cap"}
    exact = compute("DisclosureProtection", ori, copy, params)
    compat = compute("DisclosureProtection", ori, copy, {**params, "compat": True})
    assert exact.value < 0.05
    assert compat.value > 0.7


def test_disclosure_protection_checks():
    ori = categories(20, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="neither key nor sensitive"):
        evaluate(ori, ori, [{"name": "DisclosureProtection", "params": {
            "key_fields": ["a"], "sensitive_fields": ["s"], "continuous_columns": ["x"]}}])
    one = ori.assign(s="u")
    res = compute("DisclosureProtection", one, one, {"key_fields": ["a"],
                                                     "sensitive_fields": ["s"]})
    assert res.value is None and "baseline" in res.warnings[0]


# -- DOMIAS ----------------------------------------------------------------------------------


@pytest.mark.parametrize("bandwidth", ["scott", "silverman", 0.4])
def test_kde_log_density_equals_scipy(bandwidth):
    rng = np.random.default_rng(9)
    sample = rng.normal(size=(400, 3)) @ np.array([[1, 0.5, 0], [0, 1, 0.3], [0, 0, 2.0]])
    query = rng.normal(size=(60, 3)) * 2
    query[0] = 25  # far from every kernel: the underflow path
    ours, ridged = log_density(sample, query, "kde", bandwidth)
    theirs = gaussian_kde(sample.T, bw_method=bandwidth).logpdf(query.T)
    assert not ridged
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)


def test_gaussian_log_density_equals_scipy():
    rng = np.random.default_rng(10)
    sample = rng.normal(size=(300, 2)) + np.array([1, -2])
    query = rng.normal(size=(20, 2))
    ours = log_density(sample, query, "gaussian", "scott")[0]
    theirs = multivariate_normal(sample.mean(axis=0), np.cov(sample.T)).logpdf(query)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_auc_and_its_bootstrap_by_brute_force():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(11)
    m, o = rng.normal(0.3, 1, 80).round(1), rng.normal(0, 1, 70).round(1)  # with ties
    truth = np.r_[np.ones(80), np.zeros(70)]
    assert auc(m, o) == pytest.approx(roc_auc_score(truth, np.r_[m, o]), abs=1e-12)
    reps = bootstrap_auc(m, o, np.random.default_rng(0), 20)
    check = np.random.default_rng(0)
    im, io = check.integers(0, 80, (20, 80)), check.integers(0, 70, (20, 70))
    brute = [roc_auc_score(truth, np.r_[m[im[b]], o[io[b]]]) for b in range(20)]
    np.testing.assert_allclose(reps, brute, atol=1e-12)


def numeric_people(n: int, rng: np.random.Generator) -> pd.DataFrame:
    x = rng.normal(size=(n, 3))
    return pd.DataFrame({"a": x[:, 0], "b": x[:, 1] + 0.5 * x[:, 0], "c": x[:, 2]})


def test_domias_score_ranks_as_synthcity_ratio():
    # synthcity: p_G / (p_R + 1e-10) with scipy's gaussian_kde; no underflow in 3-D, so the
    # AUC and the median-rule accuracy are the same as ours (log ratio)
    rng = np.random.default_rng(12)
    mem, oth, ref, syn = (numeric_people(n, rng) for n in (300, 300, 600, 900))
    s_m, s_o, _ = domias_scores(mem, oth, ref, syn, ["a", "b", "c"], "kde", "scott")
    enc_m, enc_o, enc_r, enc_s = design([ref, syn], [mem, oth, ref, syn], ["a", "b", "c"])
    test = np.vstack([enc_m, enc_o]).T
    ratio = gaussian_kde(enc_s.T)(test) / (gaussian_kde(enc_r.T)(test) + 1e-10)
    assert auc(s_m, s_o) == pytest.approx(auc(ratio[:300], ratio[300:]), abs=1e-12)
    np.testing.assert_array_equal(np.r_[s_m, s_o] > np.median(np.r_[s_m, s_o]),
                                  ratio > np.median(ratio))


def test_domias_copy_and_independent():
    # eight columns: the kernels are narrow enough (relative to the spread) to see the copies
    rng = np.random.default_rng(13)

    def draw(n: int) -> pd.DataFrame:
        frame = pd.DataFrame(rng.normal(size=(n, 7)), columns=[f"x{j}" for j in range(7)])
        frame["g"] = rng.choice(list("pqr"), n)
        return frame

    ori, ctl, indep = draw(1500), draw(1500), draw(1500)
    copy = compute("DOMIAS", ori, ori.copy(), {"n_attacks": 600}, control=ctl)
    other = compute("DOMIAS", ori, indep, {"n_attacks": 600}, control=ctl)
    assert copy.value > 0.8 and copy.ci[0] > 0.75
    assert abs(other.value - 0.5) < 0.06 and other.ci[0] < 0.5 < other.ci[1]
    assert copy.details["accuracy"] > 0.7
    assert copy.details["n_members"] == copy.details["n_non_members"] == 600
    assert copy.details["n_reference"] == 900
    # in three dimensions Scott's kernels are wide: a narrower bandwidth finds the copies
    low = numeric_people(1500, rng)
    wide = compute("DOMIAS", low, low.copy(), {"n_attacks": 600},
                   control=numeric_people(1500, rng))
    narrow = compute("DOMIAS", low, low.copy(), {"n_attacks": 600, "bandwidth": 0.05},
                     control=numeric_people(1500, rng))
    assert 0.5 < wide.value < narrow.value and narrow.value > 0.7


def test_domias_needs_the_control_set_and_complete_numbers():
    rng = np.random.default_rng(14)
    ori = numeric_people(50, rng)
    with pytest.raises(ConfigError, match="control"):
        evaluate(ori, ori, [{"name": "DOMIAS"}])
    small = evaluate(ori, ori, [{"name": "DOMIAS"}], control=numeric_people(2, rng))
    assert "at least three control records" in small.measures[0].error
    gap = ori.copy()
    gap.loc[3, "a"] = np.nan
    rep = evaluate(ori, gap, [{"name": "DOMIAS"}], control=numeric_people(50, rng))
    assert "column 'a' holds missing numbers" in rep.measures[0].error


# -- EmpiricalEpsilon -----------------------------------------------------------------------


def test_epsilon_by_hand():
    assert float(epsilon(0.5, 0.1, 0.0)) == pytest.approx(np.log(5))
    assert float(epsilon(0.9, 0.5, 0.0)) == pytest.approx(np.log(0.5 / 0.1))
    assert float(epsilon(0.5, 0.1, 0.05)) == pytest.approx(np.log(4.5))
    assert float(epsilon(0.3, 0.4, 0.0)) == 0.0  # worse than chance proves nothing
    assert float(epsilon(0.5, 0.0, 0.0)) == np.inf


def test_vectorised_clopper_pearson_equals_the_helper():
    ks = np.arange(0, 31)
    low, high = _cp_bounds(ks, 30, 0.9)
    for k in ks:
        assert (low[k], high[k]) == pytest.approx(clopper_pearson(int(k), 30, 0.9), abs=1e-12)


def randomized_response(eps: float, n: int, rng: np.random.Generator):
    """Scores of an ε-DP randomized response on one bit: members say 1 with e^ε/(1+e^ε),
    non-members with 1/(1+e^ε). The test "1 → member" meets both DP inequalities exactly."""
    p = np.exp(eps) / (1 + np.exp(eps))
    return (rng.random(n) < p).astype(float), (rng.random(n) < 1 - p).astype(float)


def test_epsilon_bound_is_valid_by_simulation():
    # a true ε of 1: the 95 % lower bound may exceed it in at most ~5 % of audits
    rng = np.random.default_rng(15)
    lows = []
    for _ in range(400):
        m, o = randomized_response(1.0, 1000, rng)
        lows.append(operating_point(m, o, 0.0, 0.95, rng)["epsilon_lower"])
    lows = np.array(lows)
    assert np.mean(lows > 1.0) <= 0.05
    assert 0.5 < np.median(lows) < 1.0  # and it is not vacuous


def test_epsilon_same_selection_is_the_best_threshold():
    rng = np.random.default_rng(16)
    m, o = rng.normal(1, 1, 500), rng.normal(0, 1, 500)
    same = operating_point(m, o, 0.0, 0.95, None)
    split = operating_point(m, o, 0.0, 0.95, np.random.default_rng(0))
    assert same["n_members"] == 500 and split["n_members"] == 250
    assert same["epsilon_lower"] >= 0
    tp = int((m >= same["threshold"]).sum())
    assert same["tp"] == tp and same["tpr_ci"] == pytest.approx(
        list(clopper_pearson(tp, 500, 0.95)))


def test_empirical_epsilon_copy_and_independent():
    rng = np.random.default_rng(17)
    ori, ctl, indep = (numeric_people(1200, rng) for _ in range(3))
    for params in ({"attack": "dcr"}, {"attack": "domias", "bandwidth": 0.05}):
        params = {**params, "n_attacks": 500}
        copy = compute("EmpiricalEpsilon", ori, ori.copy(), params, control=ctl)
        other = compute("EmpiricalEpsilon", ori, indep, params, control=ctl)
        assert copy.value > 1.0, (params, copy.details)
        assert other.value == 0.0, (params, other.details)
        assert copy.ci is None or copy.ci[0] == copy.value


# -- AttributeInference's model attackers -------------------------------------------------


def learnable(n: int, rng: np.random.Generator) -> pd.DataFrame:
    a, b = rng.normal(size=n), rng.choice(list("xyz"), n)
    return pd.DataFrame({"a": a, "b": b, "s": np.where(a + (b == "x") > 0.5, "hi", "lo"),
                         "y": 3 * a + 10 * (b == "y") + 50})


@pytest.mark.parametrize("attacker", ["logistic", "forest"])
def test_model_attackers_learn_the_secret(attacker):
    rng = np.random.default_rng(18)
    ori, ctl, syn = (learnable(2000, rng) for _ in range(3))
    for secret in ("s", "y"):
        rep = evaluate(ori, syn, [{"name": "AttributeInference", "params": {
            "aux_cols": ["a", "b"], "secret": secret, "attacker": attacker,
            "n_attacks": 300}}], control=ctl)
        m = rep.measures[0]
        assert m.error is None, m.error
        # a rule the release teaches: every attack and every control attack succeeds alike
        assert m.details["attack_rate"]["value"] > 0.9, (attacker, secret)
        assert m.details["control_rate"]["value"] > 0.9
        assert m.details["attacker"] == attacker


def test_model_attacker_trains_on_a_bounded_seeded_sample():
    rng = np.random.default_rng(19)
    ori, ctl, syn = (learnable(600, rng) for _ in range(3))
    spec = {"name": "AttributeInference", "params": {
        "aux_cols": ["a", "b"], "secret": "s", "attacker": "forest", "n_estimators": 5,
        "max_train_rows": 50, "n_attacks": 100}}
    first = evaluate(ori, syn, [spec], control=ctl, seed=3).measures[0]
    again = evaluate(ori, syn, [spec], control=ctl, seed=3).measures[0]
    assert first.error is None and first.value == again.value
    assert first.details == again.details
    with pytest.raises(ConfigError, match="attacker"):
        evaluate(ori, syn, [{"name": "AttributeInference", "params": {
            "aux_cols": ["a"], "secret": "s", "attacker": "svm"}}], control=ctl)
