"""The ME family's shared helpers and the seven inspections of the information architecture.

Reference values: hand computations (arithmetic in comments), the seed's published figures
(Pflughoeft, Soofi & Soyer 2022, Table 3), /work/shared/reference/synthetic_metrics.md (§2.4,
§5), dcor 0.7 and scipy used only here, and brute-force implementations written in the tests.
dcor runs in a fresh interpreter, once, by one test: importing it compiles numba kernels (about
10 s, one of them uncached on every import), which would otherwise be paid by every test worker
at collection.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from anoneval.core import evaluate
from anoneval.core.api import DataError, Microdata
from anoneval.plugins._shared import continuous as C
from anoneval.plugins.fidelity.energy_statistic import (
    BLOCK,
    _labels,
    _sums_nd,
    energy_statistic,
)
from anoneval.plugins.similarity.close_pairs import close_pair_count

INSPECTIONS = ["EnergyStatistic", "KLDivergence", "MomentDiscrepancy", "KSDistance",
               "MutualInformationChange", "ClosePairs", "DistanceToClosestRecord"]


def exact_moments(rng, n, mean, cov):
    """A sample whose mean and covariance (ddof = 1) are exactly ``mean`` and ``cov``."""
    z = rng.standard_normal((n, len(mean)))
    z -= z.mean(axis=0)
    z = z @ np.linalg.inv(np.linalg.cholesky(np.atleast_2d(np.cov(z, rowvar=False)))).T
    return np.asarray(mean) + z @ np.linalg.cholesky(np.asarray(cov)).T


def lognormal_frame(n, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal([11.117 + shift, 10.394], [[0.180, 0.123], [0.123, 0.192]], n)
    return pd.DataFrame({"loan": np.exp(z[:, 0]), "income": np.exp(z[:, 1]),
                         "region": rng.choice(["n", "s"], n)})


# --------------------------------------------------------------------------------------------
# closed forms (_continuous)
# --------------------------------------------------------------------------------------------


def test_normal_entropy_from_the_seed_table1_moments():
    # H = ½(1 + log 2π) + ½ log σ²: loan 1.4189385 + ½·(−1.7147984) = 0.5615393
    assert C.normal_entropy(np.array([[0.180]])) == pytest.approx(0.5615393, abs=1e-6)
    # income: 1.4189385 + ½·log 0.192 = 1.4189385 − 0.8251300 = 0.5938085
    assert C.normal_entropy(np.array([[0.192]])) == pytest.approx(0.5938085, abs=1e-6)
    cov = np.array([[0.180, 0.123], [0.123, 0.192]])
    # |Σ| = 0.03456 − 0.015129 = 0.019431; H = 2.8378771 + ½·(−3.9408850) = 0.8674346
    assert C.normal_entropy(cov) == pytest.approx(0.8674346, abs=1e-6)
    assert C.normal_entropy(cov) == pytest.approx(stats.multivariate_normal(cov=cov).entropy(),
                                                  rel=1e-12)


def test_table3_indices_and_mutual_information_of_the_moments():
    # the seed's Table 3 (actual data): M = 0.290 → M index 0.440, coin index 0.832
    assert round(C.m_index(0.290), 3) == 0.440
    assert round(C.coin_index(C.m_index(0.290)), 3) == 0.832
    # from the rounded Table 1 moments: ρ² = 0.123²/(0.180·0.192) = 0.437760,
    # M = −½ log(1 − ρ²) = 0.287914 and the M index is ρ² exactly (eq. 32)
    cov = np.array([[0.180, 0.123], [0.123, 0.192]])
    mi = C.normal_mutual_information(cov)
    assert mi == pytest.approx(0.287914, abs=5e-7)
    assert C.m_index(mi) == pytest.approx(0.123**2 / (0.180 * 0.192), rel=1e-12)


def test_logistic_information_index_from_the_reference_note():
    # M = log 2 − ½ (Table 6); index 1 − e^(−2M) = 1 − e/4 = 0.3204295 (synthetic_metrics §5)
    assert C.information_index(math.log(2) - 0.5) == pytest.approx(1 - math.e / 4, rel=1e-12)
    assert C.coin_index(0.0) == 0.5 and C.coin_index(1.0) == 1.0


def test_normal_kl_hand_value_and_grid_agreement():
    # K(N(0,1) : N(1,4)) = ½[1/4 + 1/4 − log(1/4) − 1] = ½·0.886294 = 0.443147
    k = C.normal_kl(np.array([0.0]), np.array([[1.0]]), np.array([1.0]), np.array([[4.0]]))
    assert k == pytest.approx(0.4431472, abs=1e-7)
    # the grid KL of eqs. (22)-(25) between two bivariate normals matches eq. (33) to 1e-3
    mu1, mu2 = np.array([0.0, 0.0]), np.array([0.4, -0.3])
    c1, c2 = np.array([[1.0, 0.6], [0.6, 2.0]]), np.array([[1.5, 0.1], [0.1, 0.8]])
    axes = C.grid_axes(np.array([-10.0, -10.0]), np.array([10.0, 10.0]), 200)
    P = np.exp(C.log_grid_probabilities(C.normal_logpdf_on_grid(mu1, c1, axes), axes))
    logq = C.log_grid_probabilities(C.normal_logpdf_on_grid(mu2, c2, axes), axes)
    assert C.grid_kl(P, logq) == pytest.approx(C.normal_kl(mu1, c1, mu2, c2), abs=1e-3)
    # and eq. (26)'s grid entropy and eq. (16)'s grid MI match the closed forms
    assert C.grid_entropy(P, axes) == pytest.approx(C.normal_entropy(c1), abs=1e-3)
    assert C.grid_mutual_information(P) == pytest.approx(C.normal_mutual_information(c1),
                                                         abs=1e-3)


def test_singular_covariance_names_the_collinear_columns():
    rng = np.random.default_rng(0)
    a, c = rng.normal(size=50), rng.normal(size=50)
    cov = np.cov(np.column_stack([a, 2 * a + 1, c]), rowvar=False)
    with pytest.raises(DataError, match="singular covariance") as err:
        C.normal_entropy(cov, ["a", "b", "c"])
    assert "'a'" in str(err.value) and "'b'" in str(err.value) and "'c'" not in str(err.value)
    with pytest.raises(DataError, match=r"'k'.*zero variance"):
        C.normal_mutual_information(np.diag([1.0, 0.0]), ["j", "k"])


def test_transforms_domain_errors_name_column_and_count():
    frame = pd.DataFrame({"x": [1.0, 0.0, -2.0, 3.0], "y": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(DataError, match=r"column 'x': log transform .* 2 of 4"):
        C.forward(frame, ["x", "y"], "log")
    with pytest.raises(DataError, match=r"column 'x': log1p .* 1 of 4"):
        C.forward(frame, ["x"], {"x": "log1p"})
    with pytest.raises(DataError, match=r"'z'.*not among the selected"):
        C.forward(frame, ["y"], {"z": "log"})
    with pytest.raises(DataError, match="'x' has 1 missing"):
        C.forward(pd.DataFrame({"x": [1.0, np.nan]}), ["x"], "identity")


def test_boxcox_lambda_is_scipys_mle_and_transforms_round_trip():
    y = np.random.default_rng(3).lognormal(1.0, 0.6, 300)
    X, fitted = C.forward(pd.DataFrame({"y": y}), ["y"], "boxcox")
    _, lam = stats.boxcox(y)
    assert fitted[0].lam == pytest.approx(lam, rel=1e-6)
    assert np.allclose(X[:, 0], stats.boxcox(y, lam), rtol=1e-6)
    assert np.allclose(C.backward(X, fitted)[:, 0], y, rtol=1e-9)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.01, 1e4), min_size=3, max_size=30),
       st.sampled_from(["identity", "log", "log1p"]))
def test_forward_backward_round_trip(values, kind):
    frame = pd.DataFrame({"v": values})
    X, fitted = C.forward(frame, ["v"], kind)
    assert np.allclose(C.backward(X, fitted)[:, 0], values, rtol=1e-9)


def test_select_columns_rejects_categorical_columns():
    data = Microdata(lognormal_frame(20, 0))
    assert C.select_columns(data, None) == ["loan", "income"]
    with pytest.raises(DataError, match=r"categorical columns passed to a continuous .*'region'"):
        C.select_columns(data, ["loan", "region"])
    with pytest.raises(DataError, match="'nope'"):
        C.select_columns(data, ["nope"])


# --------------------------------------------------------------------------------------------
# EnergyStatistic
# --------------------------------------------------------------------------------------------


def test_energy_hand_values_and_reference_note():
    # x = [0, 1, 3], y = [2, 5]: mean|x−y| = 15/6 = 2.5, mean|x−x′| = 12/9, mean|y−y′| = 6/4;
    # ED = 5 − 1.333333 − 1.5 = 2.1666667 (dcor's energy_distance, reference §2.4);
    # E = nm/(n+m)·ED = 6/5·2.1666667 = 2.6
    r = energy_statistic(np.array([[0.0], [1.0], [3.0]]), np.array([[2.0], [5.0]]))
    assert r.energy_distance == pytest.approx(13 / 6, rel=1e-12)
    assert r.statistic == pytest.approx(2.6, rel=1e-12)
    # reference §2.4: X = {(0,0),(1,0),(0,1)}, Y = {(1,1),(2,1),(1,2)}
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    r = energy_statistic(X, X + 1)
    assert r.energy_distance == pytest.approx(1.7525221149717054, rel=1e-12)
    assert r.statistic == pytest.approx(2.628783172457558, rel=1e-12)


DCOR_SCRIPT = """
import io, json, sys
import dcor, numpy as np
d = np.load(io.BytesIO(sys.stdin.buffer.read()))
keys = sorted({k[:-2] for k in d.files})
print(json.dumps({k: float(dcor.homogeneity.energy_test_statistic(d[k + "_x"], d[k + "_y"]))
                  for k in keys}))
"""

SAMPLES = [(1, 137, 211, False), (1, 80, 60, True), (2, 150, 97, False), (5, 120, 180, False),
           (3, 90, 90, True)]


def energy_pairs() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every sample pair checked against dcor, by name."""
    pairs = {}
    for d, n, m, rounded in SAMPLES:
        rng = np.random.default_rng(d * 1000 + n)
        x = rng.normal(size=(n, d))
        y = rng.normal(0.3, 1.2, size=(m, d))
        if rounded:  # ties within and between the samples
            x, y = np.round(x, 1), np.round(y, 1)
        pairs[f"sample-{d}-{n}-{m}"] = (x, y)
    # x spans two distance blocks (and y a third): the blockwise sums must still be exact
    rng = np.random.default_rng(11)
    pairs["blocks"] = (rng.normal(size=(BLOCK + 100, 3)), rng.normal(0.1, 1.1, size=(150, 3)))
    a, b = lognormal_frame(300, 1), lognormal_frame(250, 2)
    x, y = np.log(a[["loan", "income"]].to_numpy()), np.log(b[["loan", "income"]].to_numpy())
    pairs["lognormal"] = (x, y)
    pairs["lognormal-loan"] = (x[:, :1], y[:, :1])
    return pairs


def dcor_energy(pairs: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    """dcor's energy test statistic (nm/(n+m) times the energy distance) of every pair."""
    arrays = {}
    for key, (x, y) in pairs.items():
        arrays[key + "_x"], arrays[key + "_y"] = x, y
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    out = subprocess.run([sys.executable, "-c", DCOR_SCRIPT], input=buf.getvalue(),
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-3000:]
    return json.loads(out.stdout)


def test_energy_agrees_with_dcor():
    pairs = energy_pairs()
    ref = dcor_energy(pairs)
    assert set(ref) == set(pairs)
    for key, (x, y) in pairs.items():
        assert energy_statistic(x, y).statistic == pytest.approx(ref[key], rel=1e-9), key
    # through evaluate: the joint statistic and the per-column one
    a, b = lognormal_frame(300, 1), lognormal_frame(250, 2)
    m = evaluate(a, b, [{"name": "EnergyStatistic", "params": {
        "columns": ["loan", "income"], "transform": "log", "resamples": 9}}], seed=3).measures[0]
    assert m.value == pytest.approx(ref["lognormal"], rel=1e-9)
    assert m.details["columns"]["loan"]["statistic"] == pytest.approx(ref["lognormal-loan"],
                                                                      rel=1e-9)


def test_energy_blockwise_equals_one_block():
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(53, 3))
    lab = _labels(20, 33, 4, rng)
    small = _sums_nd(Z, lab, lambda k: None, block=7)
    whole = _sums_nd(Z, lab, lambda k: None, block=1000)
    for a, b in zip(small, whole, strict=True):
        assert np.allclose(a, b, rtol=1e-12)
    # without random splits only block sums are taken (blocks split at the x/y boundary)
    for a, b in zip(_sums_nd(Z, lab[:1], lambda k: None, block=7), whole, strict=True):
        assert a[0] == pytest.approx(b[0], rel=1e-12)


def test_energy_permutation_pvalue_matches_exact_enumeration():
    # pooled [0, 1, 3, 2, 5], x = first three: enumerate all C(5, 3) = 10 splits by brute force
    z = np.array([0.0, 1.0, 3.0, 2.0, 5.0])

    def ed(ix):
        xs, ys = z[list(ix)], np.delete(z, list(ix))
        return (2 * np.abs(xs[:, None] - ys).mean() - np.abs(xs[:, None] - xs).mean()
                - np.abs(ys[:, None] - ys).mean())

    obs = ed((0, 1, 2))
    exact = np.mean([ed(ix) >= obs - 1e-12 for ix in itertools.combinations(range(5), 3)])
    r = energy_statistic(z[:3, None], z[3:, None], resamples=4000,
                         rng=np.random.default_rng(0))
    assert r.pvalue == pytest.approx(exact, abs=0.03)


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 25), st.integers(2, 25), st.integers(1, 3), st.integers(0, 10**6))
def test_energy_invariants(n, m, d, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(n, d)), rng.normal(size=(m, d))
    e = energy_statistic(x, y).statistic
    assert e >= -1e-12
    assert energy_statistic(y, x).statistic == pytest.approx(e, rel=1e-9, abs=1e-12)
    assert energy_statistic(x[rng.permutation(n)], y).statistic == pytest.approx(
        e, rel=1e-9, abs=1e-12)


def test_energy_through_evaluate_reports_columns_and_cramer_half():
    a, b = lognormal_frame(300, 1), lognormal_frame(250, 2)
    rep = evaluate(a, b, [{"name": "EnergyStatistic", "params": {
        "columns": ["loan", "income"], "transform": "log", "resamples": 99}}], seed=3)
    m = rep.measures[0]
    assert m.error is None
    x, y = np.log(a[["loan", "income"]].to_numpy()), np.log(b[["loan", "income"]].to_numpy())
    assert m.value == pytest.approx(energy_statistic(x, y).statistic, rel=1e-12)
    assert m.details["joint"]["cramer_statistic"] == pytest.approx(m.value / 2)
    assert m.details["columns"]["loan"]["statistic"] == pytest.approx(
        energy_statistic(x[:, :1], y[:, :1]).statistic, rel=1e-12)
    assert set(m.details["columns"]) == {"loan", "income"}
    assert 0 < m.details["joint"]["pvalue"] <= 1
    # a replica from a shifted model is detected
    far = evaluate(a, lognormal_frame(250, 2, shift=0.3), [{"name": "EnergyStatistic", "params": {
        "columns": ["loan", "income"], "transform": "log", "resamples": 99}}]).measures[0]
    assert far.details["joint"]["pvalue"] == pytest.approx(0.01)


# --------------------------------------------------------------------------------------------
# KLDivergence, MutualInformationChange
# --------------------------------------------------------------------------------------------


def test_kl_normal_method_uses_eq33_on_the_fitted_models():
    rng = np.random.default_rng(0)
    a = pd.DataFrame(exact_moments(rng, 200, [0.0], [[1.0]]), columns=["v"])
    b = pd.DataFrame(exact_moments(rng, 150, [1.0], [[4.0]]), columns=["v"])
    m = evaluate(a, b, ["KLDivergence"]).measures[0]
    assert m.value == pytest.approx(0.4431472, abs=1e-7)  # hand value above
    d2 = 1 - math.exp(-2 * 0.4431472)
    assert m.details["joint"]["information_index"] == pytest.approx(d2, abs=1e-6)
    assert m.details["joint"]["coin_index"] == pytest.approx(0.5 * (1 + math.sqrt(d2)), abs=1e-6)


def test_kl_grid_methods():
    rng = np.random.default_rng(1)
    a = pd.DataFrame(rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], 3000),
                     columns=["p", "q"])
    same = evaluate(a, a, [{"name": "KLDivergence", "params": {"method": "kde"}}]).measures[0]
    assert same.value == pytest.approx(0.0, abs=1e-12)
    fit = evaluate(a, a, [{"name": "KLDivergence", "params": {"method": "kde_normal"}}])
    assert 0 < fit.measures[0].value < 0.02  # a kernel density of normal data is near normal
    shifted = a + 1.0
    far = evaluate(a, shifted, [{"name": "KLDivergence", "params": {"method": "kde_normal"}}])
    # K(N(0,R) : N(1,R)) = ½·1ᵀR⁻¹1 = ½·2/1.5 = 0.6667, the kernel blurs it slightly
    assert far.measures[0].value == pytest.approx(2 / 3, abs=0.06)
    wide = pd.DataFrame(rng.normal(size=(50, 4)), columns=list("abcd"))
    err = evaluate(wide, wide, [{"name": "KLDivergence", "params": {"method": "kde"}}])
    assert "1 to 3 columns" in err.measures[0].error


def test_mutual_information_change_normal_and_kde():
    rng = np.random.default_rng(2)
    a = pd.DataFrame(exact_moments(rng, 400, [0, 0], [[1, 0.6], [0.6, 1]]), columns=["p", "q"])
    b = pd.DataFrame(exact_moments(rng, 300, [0, 0], [[1, 0.0], [0.0, 1]]), columns=["p", "q"])
    m = evaluate(a, b, ["MutualInformationChange"]).measures[0]
    # M = −½ log(1 − 0.36) = 0.223144; replica independent: M = 0
    assert m.value == pytest.approx(0.2231436, abs=1e-6)
    assert m.details["joint"]["m_index_actual"] == pytest.approx(0.36, abs=1e-9)
    big = pd.DataFrame(rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], 20000),
                       columns=["p", "q"])
    k = evaluate(big, big, [{"name": "MutualInformationChange", "params": {"model": "kde"}}])
    assert k.measures[0].details["joint"]["mi_actual"] == pytest.approx(0.2231, abs=0.02)
    three = pd.DataFrame(rng.normal(size=(300, 3)), columns=["p", "q", "r"])
    three["r"] += three["p"]
    pairs = evaluate(three, three, ["MutualInformationChange"]).measures[0].details["pairs"]
    rho = np.corrcoef(three["p"], three["r"])[0, 1]
    row = pairs.set_index("columns").loc["p × r"]
    assert row["mi_actual"] == pytest.approx(-0.5 * math.log(1 - rho**2), rel=1e-9)
    assert row["change"] == 0.0
    one = evaluate(a, b, [{"name": "MutualInformationChange", "params": {"columns": ["p"]}}])
    assert "at least two columns" in one.measures[0].error


# --------------------------------------------------------------------------------------------
# MomentDiscrepancy, KSDistance
# --------------------------------------------------------------------------------------------


def test_moment_discrepancy_hand_values():
    a, b = pd.DataFrame({"x": [1.0, 2, 3, 4]}), pd.DataFrame({"x": [2.0, 2, 2, 6]})
    m = evaluate(a, b, [{"name": "MomentDiscrepancy", "params": {
        "moments": ["mean", "variance"], "tolerance": 1.0}}]).measures[0]
    table = m.details["moments"].set_index("moment")
    # means 2.5 and 3 → 0.5; variances (divisor n) 5/4 and 12/4 → 1.75
    assert table.loc["mean", "abs_diff"] == pytest.approx(0.5)
    assert table.loc["variance", "abs_diff"] == pytest.approx(1.75)
    assert m.value == pytest.approx(1.75)
    assert m.details["passed"] is False and m.details["failed"] == ["variance of x"]
    se = evaluate(a, b, [{"name": "MomentDiscrepancy", "params": {
        "moments": ["mean"], "tolerance_kind": "standard_error"}}]).measures[0]
    # se = √(1.25/4 + 3/4) = 1.030776; 0.5/1.030776 = 0.485071
    assert se.value == pytest.approx(0.485071, abs=1e-6)
    bad = evaluate(pd.DataFrame({"x": [-1.0, 2]}), pd.DataFrame({"x": [1.0, 2]}),
                   [{"name": "MomentDiscrepancy", "params": {"moments": ["log"]}}])
    assert "'log' of column 'x' needs positive" in bad.measures[0].error


def test_ks_distance_hand_and_brute_force():
    # x = [1, 2, 3], y = [2.5, 4]: at t = 2, F = 2/3 and G = 0, the largest gap
    m = evaluate(pd.DataFrame({"v": [1.0, 2, 3]}), pd.DataFrame({"v": [2.5, 4.0]}),
                 ["KSDistance"]).measures[0]
    assert m.value == pytest.approx(2 / 3)
    rng = np.random.default_rng(4)
    x, y = np.round(rng.normal(size=60), 1), np.round(rng.normal(0.2, 1, 45), 1)
    pts = np.concatenate([x, y])
    brute = max(abs((x <= t).mean() - (y <= t).mean()) for t in pts)
    m = evaluate(pd.DataFrame({"v": x}), pd.DataFrame({"v": y}), ["KSDistance"]).measures[0]
    assert m.value == pytest.approx(brute)


# --------------------------------------------------------------------------------------------
# ClosePairs, DistanceToClosestRecord
# --------------------------------------------------------------------------------------------


def test_close_pairs_hand_value_counts_ties():
    # d0 = 1: (0,0)-(1,0) at 1 and (3,0)-(3,1) at 1 count (≤); 2 of 2·3 pairs
    a = pd.DataFrame({"p": [0.0, 3.0], "q": [0.0, 0.0]})
    b = pd.DataFrame({"p": [1.0, 0.0, 3.0], "q": [0.0, 2.0, 1.0]})
    m = evaluate(a, b, [{"name": "ClosePairs", "params": {"d0": 1.0}}]).measures[0]
    assert m.value == pytest.approx(1 / 3)
    # per column: p pairs within 1: (0,1),(0,0),(3,3) → 3/6; q: all but |0−2| twice → 4/6
    assert m.details["columns"] == pytest.approx({"p": 0.5, "q": 4 / 6})


@pytest.mark.parametrize("d", [1, 2, 3])
def test_close_pairs_matches_brute_force(d):
    rng = np.random.default_rng(d)
    x, y = rng.normal(size=(300, d)), rng.normal(size=(200, d))
    brute = int((np.linalg.norm(x[:, None, :] - y[None, :, :], axis=2) <= 0.3).sum())
    assert close_pair_count(x, y, 0.3) == brute


def test_close_pairs_standardized_scale():
    rng = np.random.default_rng(9)
    a = pd.DataFrame({"p": rng.normal(0, 10, 200), "q": rng.normal(0, 0.1, 200)})
    b = pd.DataFrame({"p": rng.normal(0, 10, 150), "q": rng.normal(0, 0.1, 150)})
    m = evaluate(a, b, [{"name": "ClosePairs", "params": {"d0": 0.2, "scale": "std"}}])
    sd = a.std().to_numpy()
    x, y = a.to_numpy() / sd, b.to_numpy() / sd
    brute = (np.linalg.norm(x[:, None] - y[None], axis=2) <= 0.2).mean()
    assert m.measures[0].value == pytest.approx(brute)


def test_distance_to_closest_record_brute_force():
    rng = np.random.default_rng(7)
    a = pd.DataFrame(rng.normal(size=(200, 2)), columns=["p", "q"])
    b = pd.concat([a.iloc[:30], pd.DataFrame(rng.normal(size=(170, 2)), columns=["p", "q"])],
                  ignore_index=True)
    m = evaluate(a, b, [{"name": "DistanceToClosestRecord", "params": {"scale": "none"}}])
    x, y = a.to_numpy(), b.to_numpy()
    dxx = np.linalg.norm(x[:, None] - x[None], axis=2)
    np.fill_diagonal(dxx, np.inf)
    t = np.percentile(dxx.min(axis=1), 5)
    dcr = np.linalg.norm(y[:, None] - x[None], axis=2).min(axis=1)
    assert m.measures[0].value == pytest.approx((dcr < t).mean())
    assert m.measures[0].details["exact_copies"] == 30


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 40), st.integers(2, 40), st.integers(1, 3), st.integers(0, 10**6),
       st.floats(0.05, 2.0))
def test_pair_measures_are_symmetric_bounded_and_order_free(n, m, d, seed, d0):
    rng = np.random.default_rng(seed)
    cols = [f"c{j}" for j in range(d)]
    a = pd.DataFrame(np.round(rng.normal(size=(n, d)), 1), columns=cols)
    b = pd.DataFrame(np.round(rng.normal(size=(m, d)), 1), columns=cols)
    specs = [{"name": "ClosePairs", "params": {"d0": d0}}, "KSDistance",
             {"name": "EnergyStatistic", "params": {"resamples": 0}}]
    fwd = [x.value for x in evaluate(a, b, specs).measures]
    back = [x.value for x in evaluate(b, a, specs).measures]
    shuffled = [x.value for x in evaluate(a.sample(frac=1, random_state=seed), b,
                                          specs).measures]
    assert fwd == pytest.approx(back, rel=1e-9, abs=1e-12)
    assert fwd == pytest.approx(shuffled, rel=1e-9, abs=1e-12)
    assert 0 <= fwd[0] <= 1 and 0 <= fwd[1] <= 1


# --------------------------------------------------------------------------------------------
# the public API and bad input
# --------------------------------------------------------------------------------------------


def test_all_inspections_through_evaluate_on_a_lognormal_pair():
    a, b = lognormal_frame(400, 10), lognormal_frame(400, 11)
    specs = [{"name": n, "params": {"columns": ["loan", "income"], "transform": "log"}}
             for n in INSPECTIONS]
    specs[0]["params"]["resamples"] = 49
    rep = evaluate(a, b, specs, seed=1)
    for m in rep.measures:
        assert m.error is None, (m.name, m.error)
        assert m.value is not None and m.value >= 0
    values = {m.name: m.value for m in rep.measures}
    assert values["KLDivergence"] < 0.05 and values["ClosePairs"] < 0.01


@pytest.mark.parametrize("name", INSPECTIONS)
def test_bad_input_is_a_clear_error(name):
    a, b = lognormal_frame(50, 1), lognormal_frame(50, 2)
    cat = evaluate(a, b, [{"name": name, "params": {"columns": ["loan", "region"]}}])
    assert "categorical columns passed to a continuous" in cat.measures[0].error
    neg = a.assign(loan=a["loan"] - a["loan"].median())
    log = evaluate(neg, b, [{"name": name, "params": {"columns": ["loan", "income"],
                                                       "transform": "log"}}])
    assert "column 'loan': log transform needs positive values (> 0), but 25 of 50" \
        in log.measures[0].error
    with pytest.raises(Exception, match="transform"):
        evaluate(a, b, [{"name": name, "params": {"transform": "sqrt"}}])
