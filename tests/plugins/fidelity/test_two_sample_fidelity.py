"""Two-sample fidelity measures: SDMetrics' diagnostics and LogisticDetection on the same data,
scipy's 1-D Wasserstein, brute-force MMD, PRDC and α-precision, copy and independent releases."""

from __future__ import annotations

from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import wasserstein_distance

from anoneval.core import evaluate
from anoneval.core.api import Context, DataError, Microdata
from anoneval.plugins.fidelity import alpha_precision as ap
from anoneval.plugins.fidelity import detection, mmd, prdc, wasserstein
from anoneval.plugins.fidelity._embed import embed

sdmetrics = pytest.importorskip("sdmetrics")
from sdmetrics.single_column import (  # noqa: E402
    BoundaryAdherence,
    CategoryAdherence,
    MissingValueSimilarity,
)
from sdmetrics.single_table import LogisticDetection  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data" / "synthetic"
NUMERIC = ["age", "income", "hours"]
CATEGORICAL = ["job", "region", "smoker"]


@pytest.fixture(scope="module")
def shared():
    ori, syn = (pd.read_csv(DATA / f"{n}.csv") for n in ("original", "released"))
    syn.loc[::29, "income"] = np.nan
    ori.loc[::31, "hours"] = np.nan
    syn.loc[::23, "region"] = np.nan
    syn.loc[::17, "hours"] = np.nan
    syn.loc[::37, "job"] = "pilot"          # a category the original lacks
    syn["age"] = syn.age * 1.2 - 5           # values beyond the original's range
    return ori, syn


def measure(ori, syn, name, **params):
    m = evaluate(ori, syn, [{"name": name, "params": params}]).measures[0]
    assert m.error is None, m.error
    return m


def direct(cls, ori, syn, seed=0, **params):
    return cls(cls.Params(**params)).compute(Microdata(ori), Microdata(syn), Context(seed=seed))


@pytest.mark.parametrize("name, metric, columns", [
    ("BoundaryAdherence", BoundaryAdherence, NUMERIC),
    ("CategoryAdherence", CategoryAdherence, CATEGORICAL),
    ("MissingValueSimilarity", MissingValueSimilarity, NUMERIC + CATEGORICAL),
])
def test_diagnostics_equal_sdmetrics(shared, name, metric, columns):
    ori, syn = shared
    m = measure(ori, syn, name)
    assert [r["column"] for r in m.details["columns"]] == columns
    expected = [metric.compute(ori[c], syn[c]) for c in columns]
    for row, e in zip(m.details["columns"], expected, strict=True):
        assert row["score"] == pytest.approx(e, abs=1e-9), row["column"]
    assert m.value == pytest.approx(np.mean(expected), abs=1e-9)
    assert m.direction == "higher = less loss"
    assert min(expected) < 1  # the fixture exercises each rule


def test_boundary_adherence_missing_rule_by_hand():
    # no missing value in the original: a missing released value is outside (1 of 4 inside
    # [0, 2] → 2 of 4); with one there, missing released values leave the denominator
    ori = pd.DataFrame({"x": [0.0, 1.0, 2.0]})
    syn = pd.DataFrame({"x": [0.0, 2.0, 3.0, np.nan]})
    assert measure(ori, syn, "BoundaryAdherence").value == pytest.approx(2 / 4)
    ori2 = pd.DataFrame({"x": [0.0, 1.0, 2.0, np.nan]})
    assert measure(ori2, syn, "BoundaryAdherence").value == pytest.approx(2 / 3)


def sdmetrics_detection(ori, syn, seed, monkeypatch):
    """SDMetrics' LogisticDetection with its (unseeded) folds given the measure's seed, on the
    records in the measure's canonical order."""
    import sdmetrics.single_table.detection.base as base
    from sklearn.model_selection import StratifiedKFold

    from anoneval.plugins.fidelity._embed import canonical
    fold_seed = int(Context(seed=seed).rng(61).integers(2**31 - 1))
    monkeypatch.setattr(base, "StratifiedKFold", lambda n_splits, shuffle: StratifiedKFold(
        n_splits=n_splits, shuffle=shuffle, random_state=fold_seed))
    return LogisticDetection.compute(canonical(ori).reset_index(drop=True),
                                      canonical(syn).reset_index(drop=True))


@pytest.mark.parametrize("seed", [0, 3])
def test_detection_compat_equals_sdmetrics_logistic_detection(seed, monkeypatch):
    ori, syn = (pd.read_csv(DATA / f"{n}.csv") for n in ("original", "released"))
    syn.loc[::29, "income"] = np.nan
    ori.loc[::31, "hours"] = np.nan
    rng = np.random.default_rng(seed)
    shifted = syn.assign(income=syn.income + rng.normal(0, 5000, len(syn)) + 4000)
    for release in (syn, shifted):
        r = direct(detection.DetectionAUC, ori, release, seed=seed, compat="sdmetrics")
        assert r.value == pytest.approx(sdmetrics_detection(ori, release, seed, monkeypatch),
                                        abs=1e-9)


def test_detection_copy_and_independent_release():
    rng = np.random.default_rng(1)
    ori = pd.DataFrame({"a": rng.normal(size=1500), "b": rng.choice(list("xyz"), 1500),
                        "c": rng.exponential(size=1500)})
    twin = pd.DataFrame({"a": rng.normal(size=1500), "b": rng.choice(list("xyz"), 1500),
                         "c": rng.exponential(size=1500)})
    shifted = twin.assign(a=twin.a + 1.0)
    for model in ("logistic", "forest"):
        same = direct(detection.DetectionAUC, ori, twin, model=model)
        far = direct(detection.DetectionAUC, ori, shifted, model=model)
        assert same.value > 0.85 and same.ci[0] <= same.value <= same.ci[1]
        assert far.value < 0.6 and far.ci[1] < 0.85
    # a near-copy fools a flexible model the wrong way round (AUC well below 0.5): the default
    # counts it as distinguishable, SDMetrics' clip at 0.5 as perfect
    copy = ori.assign(a=ori.a + 1e-3)
    forest = direct(detection.DetectionAUC, ori, copy, model="forest")
    assert forest.details["auc"] < 0.4 and forest.value < 0.8


def test_hanley_mcneil_variance_by_simulation():
    # exact for exponential scores (their derivation): negatives Exp(1), positives Exp(1/4)
    # give AUC = P(neg < pos) = 0.8; the AUC's spread over 4,000 draws of 50 + 40
    rng = np.random.default_rng(0)
    pos, neg = rng.exponential(4.0, (4000, 50)), rng.exponential(1.0, (4000, 40))
    auc = (neg[:, None, :] < pos[:, :, None]).mean(axis=(1, 2))
    assert auc.mean() == pytest.approx(0.8, abs=0.003)
    assert np.sqrt(detection.hanley_mcneil_var(0.8, 50, 40)) == pytest.approx(auc.std(),
                                                                              rel=0.05)


@given(st.lists(st.floats(-50, 50), min_size=1, max_size=30),
       st.lists(st.floats(-50, 50), min_size=1, max_size=30))
@settings(max_examples=60, deadline=None)
def test_w1_equals_scipy(u, v):
    got = wasserstein.w1(np.array([u]), np.array([v]))[0]
    assert got == pytest.approx(wasserstein_distance(u, v), abs=1e-9)


def test_wasserstein_columns_and_one_dimensional_slice(shared):
    ori, syn = shared
    m = measure(ori, syn, "WassersteinDistance")
    for row in m.details["columns"]:
        c = row["column"]
        r, s = ori[c].dropna(), syn[c].dropna()
        assert row["score"] == pytest.approx(wasserstein_distance(r, s) / r.std(ddof=0),
                                             rel=1e-9)
    r = direct(wasserstein.WassersteinDistance, ori, syn)
    assert r.value == pytest.approx(m.value) and r.ci[0] <= r.value <= r.ci[1]
    # one numeric column: every direction is ±1, so the sliced distance is the column's
    one = measure(ori[["income"]].dropna(), syn[["income"]].dropna(), "WassersteinDistance",
                  n_projections=5)
    assert one.value == pytest.approx(one.details["columns"][0]["score"], rel=1e-9)


def brute_mmd(x, y, sigma):
    def k(a, b):
        return np.exp(-np.sum((a - b) ** 2) / (2 * sigma**2))
    n, m = len(x), len(y)
    xx = sum(k(x[i], x[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    yy = sum(k(y[i], y[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    xy = sum(k(x[i], y[j]) for i in range(n) for j in range(m)) / (n * m)
    return xx + yy - 2 * xy


def test_mmd_equals_the_unbiased_u_statistic_by_brute_force():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(23, 3)), rng.normal(size=(17, 3)) + 0.5
    value, se = mmd.mmd2_unbiased(x, y, 1.3)
    assert value == pytest.approx(brute_mmd(x, y, 1.3), abs=1e-12)
    assert se > 0
    pooled = np.vstack([x, y])
    d = [np.linalg.norm(a - b) for i, a in enumerate(pooled) for b in pooled[i + 1:]]
    assert mmd.median_heuristic(x, y, rng) == pytest.approx(np.median(d), abs=1e-12)


def test_mmd_measure_copy_and_shift():
    rng = np.random.default_rng(2)
    ori = pd.DataFrame({"a": rng.normal(size=800), "b": rng.choice(list("xy"), 800)})
    twin = pd.DataFrame({"a": rng.normal(size=800), "b": rng.choice(list("xy"), 800)})
    same = direct(mmd.MMD, ori, twin)
    far = direct(mmd.MMD, ori, twin.assign(a=twin.a + 1))
    assert abs(same.value) < 0.01 and far.value > 0.05 and far.ci[0] > 0.02
    x, y = embed(ori, twin, ["a", "b"])
    sigma = same.details["bandwidth"]
    assert same.value == pytest.approx(mmd.mmd2_unbiased(x, y, sigma)[0], abs=1e-12)


def brute_prdc(x, y, k, closed=False):
    def lt(a, b):
        return a <= b if closed else a < b

    def radii(z):
        return np.array([sorted(np.linalg.norm(z - a, axis=1))[k] for a in z])
    rx, ry = radii(x), radii(y)
    d = np.array([[np.linalg.norm(a - b) for b in y] for a in x])
    n, m = d.shape
    precision = np.mean([any(lt(d[i, j], rx[i]) for i in range(n)) for j in range(m)])
    recall = np.mean([any(lt(d[i, j], ry[j]) for j in range(m)) for i in range(n)])
    density = sum(lt(d[i, j], rx[i]) for i, j in product(range(n), range(m))) / (k * m)
    coverage = np.mean([lt(d[i].min(), rx[i]) for i in range(n)])
    return {"precision": precision, "recall": recall, "density": density,
            "coverage": coverage}


@pytest.mark.parametrize("k, closed", [(1, False), (3, False), (3, True)])
def test_prdc_equals_naeem_by_brute_force_with_ties(k, closed):
    rng = np.random.default_rng(k)
    x = rng.integers(0, 4, size=(40, 2)).astype(float)  # repeated records: ties at 0
    y = rng.integers(0, 5, size=(31, 2)).astype(float)
    got, _, _ = prdc.prdc_indicators(x, y, k, closed)
    want = brute_prdc(x, y, k, closed)
    for s in prdc.STATISTICS:
        assert got[s].mean() == pytest.approx(want[s], abs=1e-12), s


def test_prdc_copy_and_independent_release():
    rng = np.random.default_rng(3)
    ori = pd.DataFrame({"a": rng.normal(size=600), "b": rng.choice(list("xyz"), 600)})
    shifted = pd.DataFrame({"a": rng.normal(size=600) + 3, "b": rng.choice(list("xyz"), 600)})
    copy = direct(prdc.PRDC, ori, ori)
    far = direct(prdc.PRDC, ori, shifted)
    assert copy.details["precision"] == 1 and copy.details["coverage"] == 1
    # precision stays high: the original's outliers have wide balls (Naeem et al.'s point)
    assert far.details["coverage"] < 0.3 and far.details["density"] < 0.5
    assert copy.ci[0] <= copy.value <= copy.ci[1] and far.ci[0] <= far.value <= far.ci[1]


def synthcity_alpha(x, y):
    """synthcity 0.2.12's AlphaPrecision.metrics (real mean as centre), restated with loops."""
    alphas = np.linspace(0, 1, 30)
    c = x.mean(axis=0)
    radii = np.quantile([np.linalg.norm(a - c) for a in x], alphas)
    cy = y.mean(axis=0)
    to_c = np.array([np.linalg.norm(b - c) for b in y])
    rr = np.array([sorted(np.linalg.norm(x - a, axis=1))[1] for a in x])
    dxy = np.array([[np.linalg.norm(a - b) for b in y] for a in x])
    arg = dxy.argmin(axis=1)
    rs = dxy.min(axis=1)
    closest = np.array([np.linalg.norm(y[j] - cy) for j in arg])
    b_radii = np.quantile(closest, alphas)
    pc = [np.mean(to_c <= r) for r in radii]
    bc = [np.mean((rs <= rr) & (closest <= r)) for r in b_radii]
    return (1 - np.sum(np.abs(alphas - pc)) / np.sum(alphas),
            1 - np.sum(np.abs(alphas - bc)) / np.sum(alphas), np.mean(rr[arg] < rs), rr, dxy)


def test_alpha_precision_equals_synthcity_restated():
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(60, 3)), rng.normal(size=(60, 3)) * 1.3
    alphas, precise, recalled, authentic, _ = ap.parts(x, y, 30, "synthcity")
    p, r, a, rr, dxy = synthcity_alpha(x, y)
    assert ap.delta(precise.mean(axis=0), alphas) == pytest.approx(p, abs=1e-12)
    assert ap.delta(recalled.mean(axis=0), alphas) == pytest.approx(r, abs=1e-12)
    assert authentic.mean() == pytest.approx(a, abs=1e-12)
    # the paper's authenticity: per released record, against its nearest original's own
    _, _, _, paper, side = ap.parts(x, y, 30, "paper")
    near = dxy.argmin(axis=0)
    want = np.mean([dxy[near[j], j] > rr[near[j]] for j in range(len(y))])
    assert side == "y" and paper.mean() == pytest.approx(want, abs=1e-12)


def test_prdc_and_alpha_precision_equal_synthcity_fixture():
    import json
    made = json.loads((DATA / "synthcity_prdc_alpha.json").read_text())
    x, y = np.array(made["original"]), np.array(made["released"])
    got, _, _ = prdc.prdc_indicators(x, y, 5)
    for s in prdc.STATISTICS:
        assert got[s].mean() == pytest.approx(made["prdc_k5"][s], abs=1e-12), s
    alphas, precise, recalled, authentic, _ = ap.parts(x, y, 30, "synthcity")
    want = made["alpha_precision"]
    assert precise.mean(axis=0) == pytest.approx(want["alpha_precision_curve"], abs=1e-12)
    assert recalled.mean(axis=0) == pytest.approx(want["beta_coverage_curve"], abs=1e-12)
    assert ap.delta(precise.mean(axis=0), alphas) == pytest.approx(
        want["delta_precision_alpha"], abs=1e-12)
    assert ap.delta(recalled.mean(axis=0), alphas) == pytest.approx(
        want["delta_coverage_beta"], abs=1e-12)
    assert authentic.mean() == pytest.approx(want["authenticity"], abs=1e-12)


def test_mmd_interval_coverage_by_simulation():
    # N(0, 1) against N(1, 1), σ = 1: E k(X, X') = σ/√(σ² + 2) and E k(X, Y) = that times
    # exp(−μ²/(2(σ² + 2))), so MMD² = 2σ/√(σ² + 2)·(1 − exp(−μ²/(2(σ² + 2))))
    truth = 2 / np.sqrt(3) * (1 - np.exp(-1 / 6))
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(400):  # at 150 + 150 records the first-order interval covers only 91 %
        x, y = rng.normal(size=(400, 1)), rng.normal(size=(400, 1)) + 1
        value, se = mmd.mmd2_unbiased(x, y, 1.0)
        hits += abs(value - truth) <= 1.959964 * se
    assert 0.93 <= hits / 400 <= 0.97


def test_alpha_precision_copy_is_not_authentic():
    rng = np.random.default_rng(4)
    ori = pd.DataFrame({"a": rng.normal(size=500), "b": rng.normal(size=500)})
    twin = pd.DataFrame({"a": rng.normal(size=500), "b": rng.normal(size=500)})
    copy = direct(ap.AlphaPrecision, ori, ori)
    indep = direct(ap.AlphaPrecision, ori, twin)
    assert copy.details["authenticity"] == 0 and indep.details["authenticity"] > 0.3
    assert copy.value > 0.9 and indep.value > 0.8
    assert indep.ci[0] <= indep.value <= indep.ci[1]


@given(st.integers(0, 2**16))
@settings(max_examples=10, deadline=None)
def test_row_order_invariance(seed):
    rng = np.random.default_rng(seed)
    ori = pd.DataFrame({"a": rng.integers(0, 5, 40).astype(float),
                        "b": rng.choice(list("xy"), 40)})
    syn = pd.DataFrame({"a": rng.integers(0, 6, 30).astype(float),
                        "b": rng.choice(list("xyz"), 30)})
    perm_o, perm_s = ori.sample(frac=1, random_state=seed), syn.sample(frac=1, random_state=1)
    for cls, params in ((prdc.PRDC, {"k": 2}), (wasserstein.WassersteinDistance, {})):
        a, b = direct(cls, ori, syn, **params), direct(cls, perm_o, perm_s, **params)
        keys = ["precision", "recall", "density", "coverage"] if cls is prdc.PRDC else \
            ["mean_column"]
        for key in keys:
            assert a.details[key] == pytest.approx(b.details[key], abs=1e-9)
        if cls is prdc.PRDC:
            assert 0 <= a.details["precision"] <= 1 and 0 <= a.details["coverage"] <= 1


def test_quadratic_measures_subsample_and_say_so():
    rng = np.random.default_rng(0)
    ori = pd.DataFrame({"a": rng.normal(size=300)})
    for cls in (prdc.PRDC, mmd.MMD, ap.AlphaPrecision):
        r = direct(cls, ori, ori, max_rows=100)
        assert r.details["rows"] == {"original": 100, "anonymized": 100}
        assert any("max_rows" in w for w in r.warnings)


def test_empty_release_is_an_error():
    ori = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    for cls in (mmd.MMD, prdc.PRDC, ap.AlphaPrecision, detection.DetectionAUC,
                wasserstein.WassersteinDistance):
        with pytest.raises(DataError, match="anonymized data has no records"):
            direct(cls, ori, ori.iloc[:0])


def test_copied_rows_against_the_controls_own_rate():
    ori = pd.DataFrame({"a": ["x", "y", "z", "x"], "b": [1.0, 2.0, 3.0, 1.0]})
    control = pd.DataFrame({"a": ["q", "y"], "b": [9.0, 2.5]})
    release = pd.DataFrame({"a": ["x", "q", "y", "w"], "b": [1.0, 9.0, 2.5, 0.0]})
    m = evaluate(ori, release, [{"name": "CopiedRows", "params": {"tolerance": 0}}],
                 control=control).measures[0]
    # copies of the original: row 0; of the control: rows 1 and 2
    assert m.value == pytest.approx(1 / 4)
    assert m.details["control_rate"] == pytest.approx(2 / 4)
    assert m.details["excess"] == pytest.approx(-1 / 4)
    assert "control_rate" not in measure(ori, release, "CopiedRows").details


def test_example_split_shares_no_record():
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
    from make_synthetic_adult import split_distinct
    data = pd.DataFrame({"a": list("aabbbccdde") * 3, "b": [1, 1, 2, 2, 2, 3, 3, 4, 4, 5] * 3})
    training, control = split_distinct(data, np.random.default_rng(0))
    assert len(training) + len(control) == len(data)
    assert len(control.merge(training.drop_duplicates(), how="inner")) == 0
    assert abs(len(training) - len(data) / 2) <= data.value_counts().max()


def test_blocked_nearest_and_prdc_equal_one_block(monkeypatch):
    from anoneval.plugins.fidelity import _embed
    rng = np.random.default_rng(9)
    x = rng.integers(0, 3, (50, 2)).astype(float)  # ties everywhere
    y = rng.integers(0, 3, (40, 2)).astype(float)
    d = np.linalg.norm(x[:, None] - y[None], axis=2)
    whole = prdc.prdc_indicators(x, y, 3)[0]
    monkeypatch.setattr(_embed, "BLOCK", 7)
    dx, ix, dy, iy = ap.nearest(x, y)
    assert (ix == d.argmin(axis=1)).all() and (iy == d.argmin(axis=0)).all()
    assert np.allclose(dx, d.min(axis=1)) and np.allclose(dy, d.min(axis=0))
    blocked = prdc.prdc_indicators(x, y, 3)[0]
    for s in prdc.STATISTICS:
        assert (blocked[s] == whole[s]).all(), s
