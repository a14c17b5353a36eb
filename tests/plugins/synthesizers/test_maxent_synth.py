"""Maximum-entropy synthesizers (issue 7): MaxEntNormal, MaxEntLogistic, MaxEntMoments,
MaxEntCategorical, GaussianCopula, and their helpers (_logistic, _dual, _ipf).

Published values come from Pflughoeft, Soofi & Soyer (2022), Tables 1, 3 and 6;
oracles are hand arithmetic (in comments), scipy quadrature and scipy.stats densities.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from _toy_plugins import ReplicaMeanLogGap
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from anoneval.core.api import ConfigError, Context, DataError, Microdata
from anoneval.core.run.config import validate_config
from anoneval.core.run.runner import run_plan
from anoneval.plugins._shared.continuous import coin_index, m_index
from anoneval.plugins.synthesizers import _dual, _ipf, _logistic
from anoneval.plugins.synthesizers.gaussian_copula import GaussianCopula, category_scores
from anoneval.plugins.synthesizers.maxent_categorical import MaxEntCategorical
from anoneval.plugins.synthesizers.maxent_logistic import MaxEntLogistic
from anoneval.plugins.synthesizers.maxent_moments import MaxEntMoments
from anoneval.plugins.synthesizers.maxent_normal import MaxEntNormal
from anoneval.registry import build_registry

CTX = Context(seed=7)


def exact_moments(z: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Rows with sample mean ``mean`` and covariance ``cov`` (divisor n), written independently
    of the plugin: symmetric inverse square root of the sample covariance, then Cholesky."""
    zc = z - z.mean(axis=0)
    w, v = np.linalg.eigh(zc.T @ zc / len(z))
    white = zc @ (v / np.sqrt(w)) @ v.T
    return mean + white @ np.linalg.cholesky(cov).T


def mortgage(cov12: float, n: int = 400) -> pd.DataFrame:
    """Dollar-scale data whose logs have Pflughoeft et al.'s Table 1 moments (loan, income)."""
    mean = np.array([11.117, 10.394])
    cov = np.array([[0.180, cov12], [cov12, 0.192]])
    x = exact_moments(np.random.default_rng(3).standard_normal((n, 2)), mean, cov)
    return pd.DataFrame(np.exp(x), columns=["loan", "income"])


# ------------------------------------------------------------------------------------------
# Published values
# ------------------------------------------------------------------------------------------

# Pflughoeft et al. publish moments and entropies rounded to 3 decimals, so a value computed
# from the published moments can differ from a published entropy in the last digit. These
# helpers give the range of a closed form over every moment vector that rounds to the published
# one (the forms are monotone in each moment, so the range is reached at the corners of the box).
ROUND = 0.0005
TWO_PI_E = 1 + math.log(2 * math.pi)


def normal_h(var: float) -> float:
    return 0.5 * (TWO_PI_E + math.log(var))


def normal_h2(v1: float, v2: float, c: float) -> float:
    return TWO_PI_E + 0.5 * math.log(v1 * v2 - c * c)


def corners(*published: float) -> list[tuple[float, ...]]:
    grids = [(x - ROUND, x + ROUND) for x in published]
    return [tuple(g) for g in np.array(np.meshgrid(*grids)).reshape(len(grids), -1).T]


def reachable(value: float, f, *published: float) -> bool:  # type: ignore[no-untyped-def]
    """Whether a published 3-decimal ``value`` is f(moments) for moments within rounding."""
    vals = [f(*c) for c in corners(*published)]
    return value - ROUND <= max(vals) and value + ROUND >= min(vals)


def test_me_entropies_from_the_published_moments():
    """Tables 1 and 3 (mortgage data, log scale): the ME (normal) entropies."""
    res = MaxEntNormal(transform="log").generate(Microdata(mortgage(0.123)), CTX)
    h = res.details["entropy"]
    # H = ½(1 + log 2π + log σ²), 1 + log 2π = 2.837877:
    #   loan:   ½(2.837877 + log 0.180 = −1.714798) = 0.561539
    #   income: ½(2.837877 + log 0.192 = −1.650260) = 0.593809
    # joint: 1 + log 2π + ½ log(0.180·0.192 − 0.123²) = 2.837877 + ½ log 0.019431
    #        = 2.837877 − 1.970443 = 0.867434
    assert h["marginal"]["loan"] == pytest.approx(0.561539, abs=1e-6)
    assert h["marginal"]["income"] == pytest.approx(0.593809, abs=1e-6)
    assert h["joint"] == pytest.approx(0.867434, abs=1e-6)
    # The published entropies (loan 0.563 in Tables 1 and 3; income 0.594 in Table 1 and 0.595
    # in Table 3; joint 0.868 in Table 3) all follow from moments within rounding of the
    # published ones ...
    assert reachable(0.563, normal_h, 0.180)
    assert reachable(0.594, normal_h, 0.192) and reachable(0.595, normal_h, 0.192)
    assert reachable(0.868, normal_h2, 0.180, 0.192, 0.123)
    # ... but Table 1's joint 0.925 does not (at most 0.875): it contradicts Table 3's 0.868
    # for the same model and is not reproducible from the published moments.
    assert not reachable(0.925, normal_h2, 0.180, 0.192, 0.123)
    # dollar scale, H(Y_k) = H(X_k) + μ_k (seed, Sec. 4.1): 0.561539 + 11.117 = 11.678539
    orig = res.details["entropy_original_scale"]
    assert orig["marginal"]["loan"] == pytest.approx(11.678539, abs=1e-6)
    assert orig["marginal"]["income"] == pytest.approx(10.987809, abs=1e-6)
    assert orig["joint"] == pytest.approx(0.867434 + 11.117 + 10.394, abs=1e-6)


def test_table3_information_measures():
    """Table 3: mutual information, M index and coin index of the ME models."""
    # eq. 17 on Table 3's own entropies gives its MI exactly, and the index chain its indices:
    #   actual:  0.563 + 0.595 − 0.868 = 0.290; 1 − e^(−0.580) = 0.440; ½(1 + √0.440) = 0.832
    #   replica: 0.583 + 0.593 − 0.923 = 0.253; 1 − e^(−0.506) = 0.397; ½(1 + √0.397) = 0.815
    for h1, h2, h12, mi, m_idx, coin in [(0.563, 0.595, 0.868, 0.290, 0.440, 0.832),
                                         (0.583, 0.593, 0.923, 0.253, 0.397, 0.815)]:
        m = h1 + h2 - h12
        assert round(m, 3) == mi
        assert round(m_index(m), 3) == m_idx
        assert round(coin_index(m_index(m)), 3) == coin
    # From the published moments themselves the synthesizer gives ρ² = 0.123²/(0.180·0.192)
    # = 0.437760, M = −½ log(1 − 0.437760) = 0.287914, index 0.437760, coin ½(1 + 0.661635)
    # = 0.830817; the published 0.290 lies within the rounding of those moments.
    res = MaxEntNormal(transform="log").generate(Microdata(mortgage(0.123)), CTX).details
    assert res["mutual_information"] == pytest.approx(0.287914, abs=1e-6)
    assert res["m_index"] == pytest.approx(0.437760, abs=1e-6)
    assert res["coin_index"] == pytest.approx(0.830817, abs=1e-6)

    def mi(v1: float, v2: float, c: float) -> float:
        return -0.5 * math.log(1 - c * c / (v1 * v2))

    assert reachable(0.290, mi, 0.180, 0.192, 0.123)
    # for a bivariate normal the index is ρ² exactly (seed, eq. 32)
    rho = res["parameters"]["correlation"][0][1]
    assert res["m_index"] == pytest.approx(rho**2, abs=1e-12)


def logistic_data(s: np.ndarray, n: int = 416, seed: int = 5) -> pd.DataFrame:
    """Log-scale data with sd π·s/√3 (divisor n), so the moment fit gives scales ``s``."""
    x = _logistic.sample(np.random.default_rng(seed), n, np.zeros(2), np.ones(2))
    x = (x - x.mean(axis=0)) / x.std(axis=0) * (math.pi * s / math.sqrt(3)) + [9.0, 4.0]
    return pd.DataFrame(np.exp(x), columns=["asset", "score"])


def test_table6_logistic_entropies_and_mutual_information():
    res = MaxEntLogistic(transform="log").generate(
        Microdata(logistic_data(np.array([1.045, 0.798]))), CTX).details
    assert res["parameters"]["scale"]["asset"] == pytest.approx(1.045, abs=1e-12)
    assert res["parameters"]["scale"]["score"] == pytest.approx(0.798, abs=1e-12)
    # H(X_k) = 2 + log s_k: 2 + 0.044017 = 2.044, 2 − 0.225647 = 1.774
    # H(X1, X2) = 4.5 − log 2 + log(1.045·0.798) = 3.806853 − 0.181630 = 3.625
    assert round(res["entropy"]["marginal"]["asset"], 3) == 2.044
    assert round(res["entropy"]["marginal"]["score"], 3) == 1.774
    assert round(res["entropy"]["joint"], 3) == 3.625
    # M = log 2 − ½ = 0.693147 − 0.5 = 0.193147
    assert res["mutual_information"] == pytest.approx(math.log(2) - 0.5, abs=1e-12)
    assert round(res["mutual_information"], 3) == 0.193


# ------------------------------------------------------------------------------------------
# Gumbel logistic helper
# ------------------------------------------------------------------------------------------

def test_bivariate_logistic_density_entropy_by_quadrature():
    # composite Simpson's rule on a 0.1 grid over a box holding all but ~1e-9 of the mass
    loc, scale = np.array([0.3, -1.0]), np.array([1.2, 0.7])
    x, y = np.linspace(-25, 25, 501), np.linspace(-20, 20, 401)
    grid = np.stack(np.meshgrid(x, y, indexing="ij"), axis=-1).reshape(-1, 2)
    f = _logistic.pdf(grid, loc, scale).reshape(len(x), len(y))
    flogf = -f * np.log(np.where(f > 0, f, 1.0))

    def integral(values: np.ndarray) -> float:
        return float(integrate.simpson(integrate.simpson(values, x=y, axis=1), x=x))

    mass, h = integral(f), integral(flogf)
    assert mass == pytest.approx(1.0, abs=1e-6)
    assert h == pytest.approx(_logistic.entropy(scale), abs=1e-5)
    assert h == pytest.approx(4.5 - math.log(2) + math.log(1.2 * 0.7), abs=1e-5)


def test_logistic_sampler_marginals_and_joint_cdf():
    rng = np.random.default_rng(11)
    x = _logistic.sample(rng, 200_000, np.array([1.0, 2.0, -1.0]), np.array([2.0, 0.5, 1.0]))
    for k, (m, s) in enumerate([(1.0, 2.0), (2.0, 0.5), (-1.0, 1.0)]):
        assert stats.kstest(x[:, k], stats.logistic(m, s).cdf).pvalue > 1e-3
    # F(a, b) = 1/(1 + e^{−u} + e^{−v}); at the locations 1/3
    emp = np.mean((x[:, 0] <= 1.0) & (x[:, 1] <= 2.0))
    assert emp == pytest.approx(1 / 3, abs=0.005)
    # trivariate entropy −E log f by Monte Carlo against the closed form
    # −log 3! + 4·H_3 + log(2·0.5·1) = −1.791759 + 4·1.833333 + 0 = 5.541574
    mc = -_logistic.logpdf(x, [1.0, 2.0, -1.0], [2.0, 0.5, 1.0]).mean()
    assert mc == pytest.approx(5.541574, abs=0.02)
    assert _logistic.entropy(np.array([2.0, 0.5, 1.0])) == pytest.approx(5.541574, abs=1e-6)


def test_logistic_ml_fit_recovers_parameters():
    x = _logistic.sample(np.random.default_rng(2), 20_000, np.array([3.0, -2.0]),
                         np.array([0.8, 1.5]))
    loc, scale, info = _logistic.fit_ml(x)
    assert info["converged"]
    np.testing.assert_allclose(loc, [3.0, -2.0], atol=0.05)
    np.testing.assert_allclose(scale, [0.8, 1.5], rtol=0.03)
    frame = pd.DataFrame(x, columns=["a", "b"])
    res = MaxEntLogistic(fit="ml").generate(Microdata(frame), CTX).details
    assert res["parameters"]["scale"]["a"] == pytest.approx(scale[0], rel=1e-6)


# ------------------------------------------------------------------------------------------
# MaxEntMoments and the dual
# ------------------------------------------------------------------------------------------

def _kl(true: stats.rv_continuous, fit_logpdf, lo: float, hi: float) -> float:
    """K(true : fitted) = ∫ p log(p/f) by adaptive quadrature against scipy's density."""

    def integrand(x: float) -> float:
        p = true.pdf(x)
        return p * (true.logpdf(x) - fit_logpdf(x)) if p > 0 else 0.0

    return integrate.quad(integrand, lo, hi, limit=400)[0]


RECOVERY = [
    ("normal", stats.norm(1.0, 2.0), ["x", "x**2"], "real"),
    ("exponential", stats.expon(scale=0.5), ["x"], "positive"),
    ("gamma", stats.gamma(3.0, scale=0.5), ["x", "log(x)"], "auto"),
    # Table A2's location-scale form of the logistic's T_2 = log(1 + e^{−x})
    ("logistic", stats.logistic(0.5, 1.3), ["x", "softplus(-(x - 0.5)/1.3)"], "real"),
    ("beta", stats.beta(2.0, 3.0), ["log(x)", "log(1 - x)"], "auto"),
]


@pytest.mark.parametrize(("label", "dist", "moments", "support"), RECOVERY,
                         ids=[r[0] for r in RECOVERY])
def test_maxent_moments_recovers_density(label, dist, moments, support):
    lo, hi = dist.support()
    fns = [_dual.compile_moment(m, 1) for m in moments]
    targets = [integrate.quad(lambda v, f=f: dist.pdf(v) * float(f({"x": np.array(v)})), lo, hi,
                              limit=400)[0] for f in fns]
    sample = pd.DataFrame({"v": dist.rvs(size=300, random_state=1)})
    synth = MaxEntMoments(moments=moments, targets=targets, support=support)
    res = synth.generate(Microdata(sample), CTX)
    assert res.details["all_matched"]
    fit = synth.fit(Microdata(sample)).model
    kl = _kl(dist, lambda v: float(fit.logpdf(np.array([[v]]))[0]), lo, hi)
    assert abs(kl) < 1e-3, (label, kl)
    # the grid entropy is the density's: H(f) = log C + Σ λθ (seed, eq. 9)
    assert res.details["entropy"]["joint"] == pytest.approx(float(dist.entropy()), abs=1e-3)
    assert len(res.data) == 300


def test_maxent_moments_bivariate_logistic_mi():
    x = _logistic.sample(np.random.default_rng(4), 3000, np.zeros(2), np.array([1.0, 0.5]))
    frame = pd.DataFrame(x, columns=["a", "b"])
    synth = MaxEntMoments(moments=["x1", "x2", "log(1 + exp(-x1) + exp(-x2/0.5))"],
                          targets=[0.0, 0.0, 1.5])  # Table A3 logistic: E log(1+S) = H_2 = 3/2
    res = synth.generate(Microdata(frame), CTX).details
    assert res["all_matched"]
    lam = res["parameters"]["lambda"]
    # f ∝ exp(−u1 − u2 − 3 log(1 + S)): λ = (1/s1, 1/s2, 3) = (1, 2, 3)
    np.testing.assert_allclose(list(lam.values()), [1.0, 2.0, 3.0], atol=0.02)
    assert res["mutual_information"] == pytest.approx(math.log(2) - 0.5, abs=0.005)


def test_maxent_moments_divergent_dual_is_an_error():
    frame = pd.DataFrame({"v": np.random.default_rng(0).normal(size=200)})
    with pytest.raises(DataError, match="diverges"):  # exp(−λx) is not integrable on ℝ
        MaxEntMoments(moments=["x"]).generate(Microdata(frame), CTX)
    with pytest.raises(DataError, match="diverges"):  # E[x²] < E[x]²: outside the moment space
        MaxEntMoments(moments=["x", "x**2"], targets=[1.0, 0.5]).generate(Microdata(frame), CTX)


def test_maxent_moments_bad_expressions_and_columns():
    frame = pd.DataFrame({"v": [1.0, 2.0, 3.5, 4.0], "w": [1.0, 0.0, 2.0, 5.0],
                          "g": list("abab")})
    with pytest.raises(DataError, match="unknown function '__import__'"):
        MaxEntMoments(moments=["__import__('os')"], columns=["v"]).generate(Microdata(frame), CTX)
    with pytest.raises(DataError, match="unknown name 'y'"):
        MaxEntMoments(moments=["y"], columns=["v"]).generate(Microdata(frame), CTX)
    # log(0) on the data
    with pytest.raises(DataError, match=r"'log\(x\)' is undefined on 1 of 4 rows"):
        MaxEntMoments(moments=["log(x)"], columns=["w"]).generate(Microdata(frame), CTX)
    with pytest.raises(DataError, match="categorical"):
        MaxEntMoments(moments=["x"], columns=["g"]).generate(Microdata(frame), CTX)
    with pytest.raises(DataError, match="targets has 1 values"):
        MaxEntMoments(moments=["x", "x**2"], targets=[1.0], columns=["v"]).generate(
            Microdata(frame), CTX)


def test_maxent_moments_log_transform_entropy_shift():
    # lognormal data, log transform, moments x and x² → normal on the log scale;
    # H(Y) = H(X) + μ (seed, below Table 3), computed on the grid against the closed form
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"y": np.exp(rng.normal(2.0, 0.5, 2000))})
    res = MaxEntMoments(moments=["x", "x**2"], transform="log").generate(Microdata(frame), CTX)
    det = res.details
    mu = np.log(frame.y).mean()
    assert det["entropy_original_scale"]["joint"] == pytest.approx(
        det["entropy"]["joint"] + mu, abs=1e-6)
    assert (res.data.frame.y > 0).all()


# ------------------------------------------------------------------------------------------
# MaxEntNormal
# ------------------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(5, 200), ddof=st.sampled_from([0, 1]))
def test_adjust_moments_replica_has_exact_sample_moments(seed, n, ddof):
    rng = np.random.default_rng(seed % 1000)
    frame = pd.DataFrame(rng.lognormal(size=(50, 3)) * [1, 10, 100], columns=list("abc"))
    res = MaxEntNormal(transform="log", adjust_moments=True, n=n, ddof=ddof).generate(
        Microdata(frame), Context(seed=seed))
    x = np.log(frame.to_numpy())
    y = np.log(res.data.frame.to_numpy())
    np.testing.assert_allclose(y.mean(axis=0), x.mean(axis=0), atol=1e-9)
    np.testing.assert_allclose(np.cov(y.T, ddof=ddof), np.cov(x.T, ddof=ddof), atol=1e-9)


def test_normal_replica_matches_model_and_is_seeded():
    frame = mortgage(0.123, n=400)
    a = MaxEntNormal(transform="log", n=50_000).generate(Microdata(frame), Context(seed=1))
    b = MaxEntNormal(transform="log", n=50_000).generate(Microdata(frame), Context(seed=1))
    c = MaxEntNormal(transform="log", n=50_000).generate(Microdata(frame), Context(seed=2))
    pd.testing.assert_frame_equal(a.data.frame, b.data.frame)
    assert not a.data.frame.equals(c.data.frame)
    y = np.log(a.data.frame.to_numpy())
    np.testing.assert_allclose(y.mean(axis=0), [11.117, 10.394], atol=0.01)
    np.testing.assert_allclose(np.cov(y.T), [[0.180, 0.123], [0.123, 0.192]], atol=0.006)
    assert len(MaxEntNormal().generate(Microdata(frame), CTX).data) == 400


def test_normal_bad_input():
    frame = pd.DataFrame({"a": [1.0, 2.0, 0.0, -3.0, 5.0], "b": [2.0, 4.0, 0.0, -6.0, 10.0],
                          "c": [1.0, 3.0, 2.0, 5.0, 4.0], "g": list("xyxyx")})
    with pytest.raises(DataError, match=r"'a'.*2 of 5"):  # log of 0 and −3
        MaxEntNormal(columns=["a", "c"], transform="log").generate(Microdata(frame), CTX)
    with pytest.raises(DataError, match=r"'a', 'b' are collinear"):  # b = 2a
        MaxEntNormal(columns=["a", "b", "c"]).generate(Microdata(frame), CTX)
    with pytest.raises(DataError, match="categorical"):
        MaxEntNormal(columns=["a", "g"]).generate(Microdata(frame), CTX)
    for cls in (MaxEntLogistic, GaussianCopula):
        with pytest.raises(DataError, match="'zz'"):
            cls(columns=["zz"]).generate(Microdata(frame), CTX)
    with pytest.raises(DataError, match="categorical"):
        MaxEntLogistic(columns=["g"]).generate(Microdata(frame), CTX)


# ------------------------------------------------------------------------------------------
# IPF and MaxEntCategorical
# ------------------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), shape=st.lists(st.integers(2, 4), min_size=2, max_size=4))
def test_ipf_matches_margins(seed, shape):
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.ones(int(np.prod(shape)))).reshape(shape)
    pairs = [(a, b) for a in range(len(shape)) for b in range(a + 1, len(shape))]
    margins = [(m, _ipf.marginal(truth, m)) for m in pairs]
    fit = _ipf.ipf(shape, margins, tol=1e-12, max_sweeps=5000)
    assert fit.converged
    for m, target in margins:
        np.testing.assert_allclose(_ipf.marginal(fit.table, m), target, atol=1e-8)


def test_ipf_is_the_maximum_entropy_table():
    # one-way margins → the product of the margins (independence)
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.6, 0.4])
    fit = _ipf.ipf((3, 2), [((0,), p), ((1,), q)])
    np.testing.assert_allclose(fit.table, np.outer(p, q), atol=1e-14)
    # all two-way margins of a 2×2×2 table → no three-way interaction: the log odds-ratio
    # of (a, b) is the same in both layers of c
    truth = np.random.default_rng(1).dirichlet(np.ones(8)).reshape(2, 2, 2)
    pairs = [(0, 1), (0, 2), (1, 2)]
    t = _ipf.ipf((2, 2, 2), [(m, _ipf.marginal(truth, m)) for m in pairs]).table
    lor = np.log(t[0, 0, :] * t[1, 1, :] / (t[0, 1, :] * t[1, 0, :]))
    assert lor[0] == pytest.approx(lor[1], abs=1e-9)
    # and its entropy is at least the truth's (same margins)
    assert -(t * np.log(t)).sum() >= -(truth * np.log(truth)).sum() - 1e-12


def categorical_frame(n: int = 2000) -> pd.DataFrame:
    rng = np.random.default_rng(6)
    a = rng.choice(["x", "y", "z"], n, p=[0.5, 0.3, 0.2])
    b = np.where(rng.random(n) < 0.7, np.where(a == "x", "u", "v"), rng.choice(["u", "v"], n))
    c = pd.Categorical(rng.choice(["p", "q", None], n, p=[0.45, 0.45, 0.1]))
    return pd.DataFrame({"a": a, "b": b, "c": c, "num": rng.normal(size=n)})


def test_maxent_categorical_matches_two_way_margins():
    frame = categorical_frame()
    res = MaxEntCategorical(sampling="rounded").generate(Microdata(frame), CTX)
    det = res.details
    assert det["columns"] == ["a", "b", "c"]  # numeric 'num' is not categorical by default
    assert det["ipf"]["converged"] and det["ipf"]["max_margin_error"] < 1e-8
    out = res.data.frame
    assert len(out) == len(frame)
    assert isinstance(out["c"].dtype, pd.CategoricalDtype)
    # one-way counts of the rounded replica are within the rounding of n·p per cell aggregated
    for col in ("a", "b"):
        np.testing.assert_allclose(out[col].value_counts().sort_index().to_numpy(),
                                   frame[col].value_counts().sort_index().to_numpy(), atol=7)
    assert out["c"].isna().sum() == pytest.approx(frame["c"].isna().sum(), abs=7)
    # mutual information of the fitted table equals the empirical a–b mutual information
    # (a two-way margin is kept exactly): brute force from the crosstab
    tab = pd.crosstab(frame.a, frame.b).to_numpy() / len(frame)
    mi_ab = float((tab * np.log(tab / np.outer(tab.sum(1), tab.sum(0)))).sum())
    assert det["pairwise_mutual_information"]["a | b"] == pytest.approx(mi_ab, abs=1e-9)


def test_maxent_categorical_one_way_is_independent_and_errors():
    frame = categorical_frame()
    det = MaxEntCategorical(margins="one-way", columns=["a", "b"]).generate(
        Microdata(frame), CTX).details
    assert det["mutual_information"] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(DataError, match="max_cells"):
        MaxEntCategorical(columns=["a", "num"], max_cells=100).generate(Microdata(frame), CTX)
    with pytest.raises(DataError, match=r"\['c'\] are in no margin"):
        MaxEntCategorical(margins=[["a", "b"]], columns=["a", "b", "c"]).generate(
            Microdata(frame), CTX)


# ------------------------------------------------------------------------------------------
# GaussianCopula
# ------------------------------------------------------------------------------------------

def test_gaussian_copula_normal_data_and_mixed_marginals():
    rng = np.random.default_rng(9)
    n = 4000
    z = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], n)
    frame = pd.DataFrame({"inc": np.exp(z[:, 0]), "age": np.rint(40 + 10 * z[:, 1]).astype(int),
                          "grp": np.where(z[:, 0] > 0.5, "hi", np.where(z[:, 0] > -0.5, "mid",
                                                                         "lo"))})
    res = GaussianCopula(transform={"inc": "log"}, n=20_000).generate(Microdata(frame), CTX)
    det = res.details
    r = np.array(det["parameters"]["copula_correlation"])
    assert r[0, 1] == pytest.approx(0.6, abs=0.04)
    out = res.data.frame
    # empirical marginals stay within the observed range; categories keep their frequencies
    assert out.inc.min() >= frame.inc.min() and out.inc.max() <= frame.inc.max()
    assert pd.api.types.is_integer_dtype(out.age)  # integer columns stay integers
    freq = frame.grp.value_counts(normalize=True)
    np.testing.assert_allclose(out.grp.value_counts(normalize=True)[freq.index], freq, atol=0.015)
    # categories follow the latent normal: 'hi' rows have the larger incomes
    assert out.loc[out.grp == "hi", "inc"].median() > out.loc[out.grp == "lo", "inc"].median()
    # continuous pair: MI = −½ log(1 − r²)
    assert det["pairwise_mutual_information"]["inc | age"] == pytest.approx(
        -0.5 * math.log(1 - r[0, 1] ** 2), abs=1e-12)
    # normal marginals on the log scale: the model is the bivariate lognormal
    two = GaussianCopula(columns=["inc", "age"], transform={"inc": "log"}, marginal="normal")
    det2 = two.generate(Microdata(frame), CTX).details
    # H = ½ log(2πe σ²) per column; joint = ΣH − M
    sd = np.log(frame.inc).to_numpy().std()  # divisor n
    assert det2["parameters"]["marginals"]["age"]["sd"] == pytest.approx(frame.age.std(ddof=0))
    assert det2["entropy"]["marginal"]["inc"] == pytest.approx(
        0.5 * math.log(2 * math.pi * math.e * sd**2), abs=1e-12)
    assert det2["entropy"]["joint"] == pytest.approx(
        sum(det2["entropy"]["marginal"].values()) - det2["mutual_information"], abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(probs=st.lists(st.floats(0.01, 1.0), min_size=1, max_size=8))
def test_category_scores_have_mean_zero(probs):
    # conditional means of a standard normal over a partition average to E[Z] = 0
    p = np.array(probs) / sum(probs)
    scores = category_scores(np.arange(len(p)), p)
    assert float(p @ scores) == pytest.approx(0.0, abs=1e-9)
    assert np.all(np.diff(scores) > 0)


# ------------------------------------------------------------------------------------------
# Through a config and the runner
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("synth", [
    {"name": "MaxEntNormal", "params": {"transform": "log", "adjust_moments": True}},
    {"name": "MaxEntLogistic", "params": {"transform": "log", "fit": "ml"}},
    {"name": "MaxEntMoments", "params": {"transform": "log", "moments": ["x1", "x2", "x1**2",
                                                                        "x2**2", "x1*x2"]}},
    {"name": "GaussianCopula", "params": {"transform": "log", "marginal": "normal"}},
])
def test_synthesizers_run_from_a_config(tmp_path, synth):
    mortgage(0.123, n=300).to_csv(tmp_path / "actual.csv", index=False)
    config = {"original": {"path": "actual.csv"},
              "synthesizer": {**synth, "output": "replica.csv"},
              "measures": [{"name": "ReplicaMeanLogGap"}], "seed": 3}
    (tmp_path / "config.json").write_text(json.dumps(config))
    registry = build_registry(entry_points=False)
    registry.register(ReplicaMeanLogGap)
    plan = validate_config(config, tmp_path, registry)
    report = run_plan(plan)
    replica = pd.read_csv(tmp_path / "replica.csv")
    assert list(replica.columns) == ["loan", "income"] and len(replica) == 300
    entry = report.measures[0]
    assert entry.error is None and entry.value < 0.25  # ML logistic on lognormal data: misfit
    assert report.synthesizer["details"]["mutual_information"] > 0.15
    json.loads(report.to_json())  # details are JSON-friendly


def test_config_rejects_bad_synthesizer_params(tmp_path):
    mortgage(0.123, n=50).to_csv(tmp_path / "actual.csv", index=False)
    registry = build_registry(entry_points=False)
    registry.register(ReplicaMeanLogGap)
    config = {"original": {"path": "actual.csv"},
              "synthesizer": {"name": "MaxEntNormal", "params": {"ddof": 2, "transfrom": "log"}},
              "measures": [{"name": "ReplicaMeanLogGap"}]}
    with pytest.raises(ConfigError) as info:
        validate_config(config, tmp_path, registry)
    text = str(info.value)
    assert "synthesizer.params.ddof" in text and "synthesizer.params.transfrom" in text
    assert "did you mean 'transform'" in text
    config["synthesizer"] = {"name": "MaxEntNormal", "params": {"transform": "log",
                                                                "columns": ["loan", "zz"]}}
    plan = validate_config(config, tmp_path, registry)
    with pytest.raises(DataError, match="'zz'"):
        run_plan(plan)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), mu=st.floats(-50, 50), sigma=st.floats(0.1, 20))
def test_maxent_moments_normal_multipliers(seed, mu, sigma):
    # moments x, x² → N(m, v) with the sample mean m and variance v (divisor n); with the
    # paper's sign f ∝ exp(−λ₁x − λ₂x²): λ₁ = −m/v, λ₂ = 1/(2v)
    x = np.random.default_rng(seed).normal(mu, sigma, 200)
    det = MaxEntMoments(moments=["x", "x**2"]).generate(
        Microdata(pd.DataFrame({"v": x})), CTX).details
    m, v = x.mean(), x.var()
    lam = det["parameters"]["lambda"]
    assert det["all_matched"]
    assert lam["x**2"] == pytest.approx(1 / (2 * v), rel=1e-3)
    assert lam["x"] == pytest.approx(-m / v, rel=1e-3, abs=1e-3 / v)
    assert det["entropy"]["joint"] == pytest.approx(0.5 * math.log(2 * math.pi * math.e * v),
                                                    abs=1e-3)


def test_maxent_moments_converges_where_the_line_search_stalls():
    # hypothesis found it: Newton reaches the optimum to rounding (x² off by 4e-6 of 360) and
    # the Armijo search then finds no decrease; that is convergence, not divergence
    x = np.random.default_rng(849).normal(0.0, 18.407627118644065, 200)
    det = MaxEntMoments(moments=["x", "x**2"]).generate(
        Microdata(pd.DataFrame({"v": x})), CTX).details
    assert det["all_matched"]
    assert det["parameters"]["lambda"]["x**2"] == pytest.approx(1 / (2 * x.var()), rel=1e-3)


def test_boxcox_transform_round_trip():
    rng = np.random.default_rng(12)
    frame = pd.DataFrame({"a": rng.gamma(2.0, 3.0, 500), "b": rng.gamma(5.0, 1.0, 500)})
    res = MaxEntNormal(transform="boxcox", adjust_moments=True).generate(Microdata(frame), CTX)
    lam = {t["column"]: t["lambda"] for t in res.details["transforms"]}
    assert set(lam) == {"a", "b"}
    assert res.details["entropy_original_scale"]["method"] == "monte_carlo"
    out = res.data.frame
    assert not res.warnings and out.notna().all().all()  # no draw left the inverse's domain
    # Box-Cox with the original's λ brings the replica back to the fitted normal's moments
    z = stats.boxcox(out["a"].to_numpy(), lam["a"])
    x = stats.boxcox(frame["a"].to_numpy(), lam["a"])
    assert z.mean() == pytest.approx(x.mean(), abs=1e-8)
    assert z.var() == pytest.approx(x.var(), rel=1e-8)
    assert (out > 0).all().all()


def test_maxent_moments_mckay_bivariate_gamma():
    # McKay (Table A3): X2 ~ G(α, λ), X1 − X2 ~ G(β, λ) independent, support 0 < x2 < x1.
    # Moments E[X1] = (α+β)/λ, E[log X2] = ψ(α) − log λ, E[log(X1 − X2)] = ψ(β) − log λ.
    # (x2, x1 − x2) has unit Jacobian, so H = H(G(α)) + H(G(β)).
    from scipy.special import digamma

    a, b = 3.0, 2.0
    rng = np.random.default_rng(13)
    x2 = rng.gamma(a, size=1000)
    frame = pd.DataFrame({"x1": x2 + rng.gamma(b, size=1000), "x2": x2})
    synth = MaxEntMoments(moments=["x1", "log(x2)", "log(x1 - x2)"],
                          targets=[a + b, float(digamma(a)), float(digamma(b))], grid=384, n=5000)
    res = synth.generate(Microdata(frame), CTX)
    det = res.details
    assert det["all_matched"]
    assert det["grid"]["support"][1][0] == 0.0  # log(x2) bounds x2 below by 0
    out = res.data.frame
    assert (out.x2 > 0).all() and (out.x1 > out.x2).all()  # jitter stays in the support
    h = stats.gamma(a).entropy() + stats.gamma(b).entropy()
    assert det["entropy"]["joint"] == pytest.approx(float(h), abs=0.01)
    lam = det["parameters"]["lambda"]  # f ∝ x2^(α−1) (x1−x2)^(β−1) e^(−x1): λ = (1, −2, −1)
    np.testing.assert_allclose(list(lam.values()), [1.0, -(a - 1), -(b - 1)], atol=0.02)


@pytest.mark.parametrize(("kind", "lam"), [("identity", None), ("log", None), ("log1p", None),
                                           ("boxcox", 0.0), ("boxcox", 0.4), ("boxcox", -0.3)])
def test_log_jacobian_matches_numeric_derivative(kind, lam):
    from anoneval.plugins._shared.continuous import FittedTransform
    from anoneval.plugins.synthesizers._synth import log_jacobian

    f = FittedTransform("a", kind, lam)
    x, h = np.array([-0.5, 0.3, 1.2]), 1e-6
    numeric = np.log((f.backward(x + h) - f.backward(x - h)) / (2 * h))
    np.testing.assert_allclose(log_jacobian(x, f), numeric, atol=1e-6)
