"""The pairwise measures' exact Euclidean search (KD-tree and BLAS paths against ``cdist``)
and their seeded samples (sample = all is exhaustive; the interval covers the exhaustive
value in seeded simulations)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from anoneval.core import evaluate
from anoneval.plugins._shared.euclidean import EuclideanIndex
from anoneval.plugins._shared.sampling import sample_rows, sample_size


def _points(seed: int, n: int, m: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Reference and query rows with a constant column, duplicated reference rows, exact
    copies among the queries and integer-valued columns (exact ties)."""
    rng = np.random.default_rng(seed)
    R = rng.normal(size=(n, d)) * rng.uniform(0.1, 100, d)
    R[:, 0] = 7.25  # constant
    R[:, 1] = rng.integers(0, 4, n)  # integers: many equal distances
    R[n // 2:n // 2 + 10] = R[0]  # duplicates
    Q = np.vstack([R[: m // 3], rng.normal(size=(m - m // 3, d)) * 30])
    Q[m // 3:, 0] = 7.25
    return R, Q


@pytest.mark.parametrize("method", ["kdtree", "blas"])
@pytest.mark.parametrize("seed,d", [(0, 3), (1, 9), (2, 20)])
def test_index_equals_cdist(method: str, seed: int, d: int) -> None:
    R, Q = _points(seed, 700, 300, d)
    D = cdist(Q, R)
    idx, dist = EuclideanIndex(R, method).query(Q, k=3)
    np.testing.assert_allclose(dist, np.sort(D, axis=1)[:, :3], rtol=1e-9, atol=0)
    np.testing.assert_array_equal(dist, np.take_along_axis(D, idx, 1))  # bitwise cdist's
    assert (dist[:100, 0] == 0).all()  # exact copies at exactly 0
    first, d1 = EuclideanIndex(R, method).query(Q, k=1, first_on_ties=True)
    np.testing.assert_array_equal(first[:, 0], np.argmin(D, axis=1))  # ties: first row
    np.testing.assert_array_equal(d1[:, 0], D.min(axis=1))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 40), st.integers(1, 25))
def test_blas_and_tree_paths_agree(seed: int, n: int, d: int) -> None:
    rng = np.random.default_rng(seed)
    R = np.round(rng.normal(size=(n, d)), 1)
    Q = np.vstack([R[: n // 2], np.round(rng.normal(size=(5, d)), 1)])
    a = EuclideanIndex(R, "kdtree").query(Q, k=1, first_on_ties=True)
    b = EuclideanIndex(R, "blas").query(Q, k=1)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(b[1][:, 0], cdist(Q, R).min(axis=1))


def test_sample_sizes() -> None:
    rng = np.random.default_rng(0)
    assert sample_size(100, None) == 100 and sample_size(100, 1.0) == 100
    assert sample_size(100, 0.25) == 25 and sample_size(100, 30) == 30
    assert sample_size(100, 500) == 100 and sample_size(3, 0.01) == 1
    assert sample_rows(100, 100, rng) is None and sample_rows(100, 1.0, rng) is None
    rows = sample_rows(100, 10, rng)
    assert rows is not None and len(np.unique(rows)) == 10 and (np.diff(rows) > 0).all()


def _numeric(seed: int, n: int, copies: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    ori = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    rel = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    rel.iloc[:copies] = ori.iloc[:copies].to_numpy()
    return ori, rel


def _measure(ori: pd.DataFrame, rel: pd.DataFrame, spec: dict, seed: int = 0):
    m = evaluate(ori, rel, [spec], seed=seed).measures[0]
    assert m.error is None, m.error
    return m


def test_dcr_search_paths_give_the_same_result() -> None:
    ori, rel = _numeric(0, 600, copies=30)
    ori.iloc[100:110] = ori.iloc[:10].to_numpy()  # duplicated actual rows
    out = [_measure(ori, rel, {"name": "DistanceToClosestRecord", "params": {"search": s}})
           for s in ("kdtree", "blas")]
    assert out[0].value == out[1].value and out[0].ci == out[1].ci
    assert out[0].details["exact_copies"] == 30
    assert {k: v for k, v in out[0].details.items() if k != "search"} == \
        {k: v for k, v in out[1].details.items() if k != "search"}


@pytest.mark.parametrize("sample", [1.0, 600, 10_000])
def test_dcr_sample_of_all_is_exhaustive(sample: float) -> None:
    ori, rel = _numeric(1, 600, copies=20)
    full = _measure(ori, rel, {"name": "DistanceToClosestRecord"})
    same = _measure(ori, rel, {"name": "DistanceToClosestRecord", "params": {"sample": sample}})
    assert (same.value, same.ci, same.details) == (full.value, full.ci, full.details)
    assert "sample" not in same.details


def _coverage(ori: pd.DataFrame, rel: pd.DataFrame, spec: dict, sample: float,
              seeds: int = 100) -> tuple[float, list[int]]:
    """Share of seeds whose sampled interval covers the exhaustive value, and the sizes."""
    truth = _measure(ori, rel, spec).value
    hits, sizes = 0, []
    for seed in range(seeds):
        params = {**spec.get("params", {}), "sample": sample}
        m = _measure(ori, rel, {**spec, "params": params}, seed=seed)
        hits += m.ci[0] <= truth <= m.ci[1]
        sizes.append(next(v for k, v in m.details["sample"].items() if not k.startswith("of")))
    return hits / seeds, sizes


def test_dcr_sampled_interval_covers_the_exhaustive_share() -> None:
    ori, rel = _numeric(2, 3000, copies=150)
    rate, sizes = _coverage(ori, rel, {"name": "DistanceToClosestRecord",
                                       "params": {"n_boot": 200}}, 400)
    assert set(sizes) == {400}
    assert rate >= 0.90, rate


def test_nndr_sample() -> None:
    ori, rel = _numeric(3, 1500, copies=60)
    spec = {"name": "NNDR", "params": {"distance": {"name": "Euclidean"}}}
    full = _measure(ori, rel, spec)
    same = _measure(ori, rel, {**spec, "params": {**spec["params"], "sample": 1.0}})
    assert (same.value, same.ci, same.details) == (full.value, full.ci, full.details)
    rate, sizes = _coverage(ori, rel, spec, 0.2)
    assert set(sizes) == {300}
    assert rate >= 0.90, rate


def _linkage(seed: int, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    ori = pd.DataFrame({"a": rng.integers(0, 6, n), "b": rng.integers(0, 4, n),
                        "c": np.round(rng.normal(size=n), 1)})
    rel = ori + np.round(rng.normal(0, 0.6, (n, 3)), 1)
    return ori, rel


@pytest.mark.parametrize("distance", ["Euclidean", "Mahalanobis"])
def test_record_linkage_euclidean_path_equals_the_matrix_search(distance: str,
                                                                monkeypatch) -> None:
    """The mapped-once index search against the generic blockwise matrix search (cdist)."""
    from anoneval.plugins.linkage import record_linkage as rl

    ori, rel = _linkage(4, 800)
    spec = {"name": "RecordLinkage", "params": {"distance": {"name": distance},
                                                "per_record": True}}
    fast = _measure(ori, rel, spec)
    assert 0 < fast.value < 1
    # no index prepared: the generic search over cdist matrices
    monkeypatch.setattr(rl, "LinearMapDistance", type("NotLinear", (), {}))
    slow = _measure(ori, rel, spec)
    assert fast.value == slow.value
    pd.testing.assert_frame_equal(fast.details.pop("records"), slow.details.pop("records"))
    assert fast.details == slow.details


def test_record_linkage_sample() -> None:
    ori, rel = _linkage(5, 2000)
    spec = {"name": "RecordLinkage", "params": {"distance": {"name": "Euclidean"}}}
    full = _measure(ori, rel, spec)
    assert full.ci is None
    same = _measure(ori, rel, {**spec, "params": {**spec["params"], "sample": 2000}})
    assert (same.value, same.ci, same.details) == (full.value, full.ci, full.details)
    rate, sizes = _coverage(ori, rel, spec, 300)
    assert set(sizes) == {300}
    assert rate >= 0.90, rate
