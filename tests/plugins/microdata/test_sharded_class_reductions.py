"""KAnonymity, LDiversity, DM, DM* and AECS on a sharded class summary: reduced part by part
where the parts lie, equal to the local engine, and nothing per class brought to the client."""

from __future__ import annotations

import functools
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _close import close
from _dask_memory import in_process_cluster
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anoneval.core import evaluate
from anoneval.core.data import partitioned
from anoneval.core.data.partitioned import Partitioned
from anoneval.core.data.sharded import ShardedSummary
from anoneval.core.data.summary import ClassSummary, SummarySpec
from anoneval.plugins.microdata import _common, kanonymity, ldiversity
from anoneval.plugins.microdata._common import ClassSizes, _reduce_part

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

QI = ["a", "b", "rid"]


def census(n: int, seed: int = 7, missing: bool = True) -> pd.DataFrame:
    """Classes of sizes 1 to ~40 (rid is geometric: small ids are frequent), suppressed records
    (every QI the token), missing QI and sensitive values, positive weights."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["1", "2", "3", "*", None] if missing else ["1", "2", "3", "*"], n)
    frame = pd.DataFrame({"a": a, "b": rng.choice(["x", "y", "*"], n),
                          "rid": rng.geometric(0.004, n).astype(str),
                          "s": rng.choice(["p", "q", "r", None], n, p=[0.5, 0.3, 0.15, 0.05]),
                          "w": rng.uniform(0.5, 3.0, n)})
    frame.loc[:60, QI] = "*"
    return frame


def measures() -> list[dict[str, Any]]:
    qi = {"quasi_identifiers": QI}
    sa = {**qi, "sensitive": "s"}
    return [{"name": "KAnonymity", "params": {**qi, "k": 3}},
            {"name": "KAnonymity", "label": "weighted, listed",
             "params": {**qi, "k": 4, "weights": "w", "list_violations": 7}},
            {"name": "KAnonymity", "label": "listed uniques",  # ties of size 1 across parts
             "params": {**qi, "k": 2, "list_violations": 40, "risk_threshold": 0.3}},
            {"name": "LDiversity", "params": sa},
            {"name": "LDiversity", "label": "entropy weighted",
             "params": {**sa, "variant": "entropy", "l": 1.8, "weights": "w"}},
            {"name": "LDiversity", "label": "recursive",
             "params": {**sa, "variant": "recursive", "l": 2, "c": 3}},
            {"name": "DM", "params": {**qi, "k": 3}}, {"name": "DMStar", "params": qi},
            {"name": "AECS", "params": {**qi, "k": 2}},
            {"name": "AECS", "label": "quality", "params": {**qi, "suppressed": "ignore"}}]


@pytest.fixture(scope="module")
def cluster():
    """Two in-process workers of 1 GB each (their summary budget is SUMMARY_SHARE of that)
    behind a TCP scheduler address, as the engine config takes it."""
    with in_process_cluster(tcp=True) as cl:
        yield cl


def _write(folder: Path, frame: pd.DataFrame, k: int = 3) -> Partitioned:
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), k)):
        frame.iloc[rows].to_parquet(folder / f"p{i}.parquet", index=False)
    return Partitioned(folder)


@pytest.fixture
def traffic(monkeypatch):
    """Pickled bytes of what each part sent to the client in each reduction of a sharded
    summary by a measure (one list per call)."""
    sent: list[list[int]] = []
    original = ShardedSummary._map

    def recording(self: ShardedSummary, fn: Any) -> list[Any]:
        found = original(self, fn)
        if getattr(fn, "func", None) is _reduce_part:
            sent.append([len(pickle.dumps(f)) for f in found])
        return found

    monkeypatch.setattr(ShardedSummary, "_map", recording)
    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 300_000 / 1e9)  # shard above 300 kB
    return sent


def _same_reports(local: Any, remote: Any) -> None:
    for here, there in zip(local.to_dict()["measures"], remote.to_dict()["measures"],
                           strict=True):
        assert here["error"] is None and there["error"] is None, there["error"]
        assert close(here["value"], there["value"]), here["label"]
        assert close(here["details"], there["details"]), here["label"]
        assert here["warnings"] == there["warnings"], here["label"]


def _sharded(*data: Partitioned) -> list[ShardedSummary]:
    return [s for d in data for key, s in d._cache.items()
            if key[0] == "class_summary" and isinstance(s, ShardedSummary)]


def test_measures_reduce_the_parts_without_gathering(tmp_path, cluster, traffic):
    frame = census(20_000)
    original, released = _write(tmp_path / "o", frame), _write(tmp_path / "r", frame)
    # a gather limit of 1 kB: a measure that needed the records (or a table) would fail
    engine = {"name": "dask", "address": cluster.scheduler_address, "gather_limit": "1KB"}
    remote = evaluate(original, released, measures(), engine=engine)
    local = evaluate(frame, frame.copy(), measures())
    _same_reports(local, remote)
    assert all(not [w for w in m.warnings if "gathered" in w] for m in remote.measures)
    # the released side's summaries were sharded and never assembled here
    sharded = _sharded(released)
    assert {s.spec for s in sharded} >= {SummarySpec("anonymized", tuple(QI)),
                                         SummarySpec("anonymized", tuple(QI), "w", ("s",))}
    assert all(s._assembled is None and len(s.parts) >= 3 for s in sharded)
    classes = min(s.n_classes for s in sharded)
    parts = max(len(s.parts) for s in sharded)
    assert classes > 5_000
    # what crossed to the client: class-size tables, sums, a few listed classes; one per-class
    # int64 array would be 8 bytes per class of the part
    assert len(traffic) == len(measures())
    assert max(max(t) for t in traffic) < 8 * classes / parts / 2, (traffic, classes, parts)
    assert max(sum(t) for t in traffic) < 8 * classes / 2
    listed = remote.measures[2].details["violations"]
    assert len(listed) == 40 and (listed["size"] == 1).all()
    assert remote.measures[0].details["classes"] == frame[frame["a"].ne("*") | frame["b"].ne(
        "*") | frame["rid"].ne("*")].groupby(QI, dropna=False).ngroups


def test_classes_grow_the_reductions_do_not(tmp_path, cluster, traffic, monkeypatch):
    """Parts of four times the classes (a budget four times larger): what a part sends grows
    with the distinct class sizes at most, not with its classes."""
    engine = {"name": "dask", "address": cluster.scheduler_address}
    frame = census(60_000, seed=11)
    found = []
    for budget in (300_000, 1_200_000):
        monkeypatch.setattr(partitioned, "SUMMARY_SHARE", budget / 1e9)
        data = _write(tmp_path / str(budget), frame, k=4)
        traffic.clear()
        evaluate(None, data, measures()[6:], engine=engine)  # DM, DM*, AECS
        sharded = _sharded(data)
        assert sharded
        found.append((sum(s.n_classes for s in sharded) / sum(len(s.parts) for s in sharded),
                      max(max(t) for t in traffic)))
    (small, sent_small), (large, sent_large) = found
    assert large > 3 * small  # classes per part
    assert sent_large < 1.5 * sent_small, found


def test_missing_suppressed_merges_groups_across_parts(tmp_path, cluster, traffic):
    """missing="suppressed": without missing QI values the parts are reduced where they lie;
    with them, groups that differ by a missing vs a token cell merge across parts: the parts
    are regrouped on the merged keys on the workers, and no table is assembled here."""
    engine = {"name": "dask", "address": cluster.scheduler_address, "gather_limit": "1KB"}
    config = [{**m, "params": {**m["params"], "missing": "suppressed"}} for m in measures()]
    for missing in (False, True):
        frame = census(12_000, seed=3, missing=missing)
        data = _write(tmp_path / str(missing), frame)
        remote = evaluate(None, data, config, engine=engine)
        _same_reports(evaluate(None, frame, config), remote)
        assert _sharded(data) and all(s._assembled is None for s in _sharded(data))
        assert not [w for m in remote.measures for w in m.warnings if "gathered" in w]


# -- the reductions themselves: any split of the classes into parts ------------------------


def _parts(frame: pd.DataFrame, spec: SummarySpec, owner: np.ndarray) -> list[ClassSummary]:
    """Summaries of disjoint sets of classes: class ``c`` (pandas' group number) in part
    ``owner[c]``, as a hash-partitioned group-by would place it."""
    group = frame.groupby(list(spec.keys), dropna=False, sort=False).ngroup().to_numpy()
    where = owner[group % len(owner)]
    return [ClassSummary.of_frame(frame[where == i].reset_index(drop=True), spec)
            for i in range(int(owner.max()) + 1)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(1, 400),
       owner=st.lists(st.integers(0, 4), min_size=1, max_size=30),
       listed=st.integers(1, 12), k=st.integers(1, 5))
def test_any_split_into_parts_reduces_to_the_whole(seed, n, owner, listed, k):
    frame = census(n, seed=seed)
    frame["rid"] = (frame["rid"].str.len() % 4).astype(str).where(frame["rid"] != "*", "*")
    spec = SummarySpec("anonymized", tuple(QI), "w", ("s",))
    whole = ClassSummary.of_frame(frame, spec)
    sharded = ShardedSummary(spec, _parts(frame, spec, np.array(owner)))
    kpart = functools.partial(kanonymity._part_figures, k=k, weighted=True, listed=listed,
                              qi=tuple(QI))
    lpart = functools.partial(ldiversity._part_diversity, sensitive=("s",),
                              rule=("recursive", 2.0, 2.0), weighted=True)
    for partial, combine in ((kpart, functools.partial(kanonymity._combine_figures,
                                                       listed=listed, qi=tuple(QI))),
                             (lpart, ldiversity._Diversity.combine)):
        fn = functools.partial(_reduce_part, qi=QI, token="*", missing="value", partial=partial)
        one, many = whole.reduce(fn, list), sharded.reduce(fn, list)
        sizes = ClassSizes.combine([f[1] for f in many])
        expected = ClassSizes.combine([f[1] for f in one])
        assert sizes.as_dict() == expected.as_dict()
        assert (sizes.records, sizes.suppressed) == (expected.records, expected.suppressed)
        got, want = combine([f[2] for f in many]), combine([f[2] for f in one])
        if partial is kpart:
            assert got[0] == want[0]
            pd.testing.assert_frame_equal(got[1], want[1])
        else:
            assert got.attributes == want.attributes
            assert (got.classes, got.violating, got.records) == (
                want.classes, want.violating, want.records)
            assert got.weights == pytest.approx(want.weights, rel=1e-12)
            assert got.weights_violating == pytest.approx(want.weights_violating, rel=1e-12)


def test_class_sizes_by_hand():
    """Sizes 1, 1, 2, 5: four classes, nine records, Σ f² = 31."""
    cl = _common.Classes(records=12, sizes=np.array([2, 1, 5, 1]), group_ids=np.arange(5),
                         class_of_group=np.array([0, 1, 2, 3, -1]), suppressed=3, deleted=0)
    t = ClassSizes.of(cl)
    assert t.as_dict() == {1: 2, 2: 1, 5: 1}
    assert (t.n_classes, t.released, t.squares(), t.smallest) == (4, 9, 31, 1)
    both = ClassSizes.combine([t, ClassSizes.of(_common.Classes(
        5, np.array([5]), np.arange(1), np.zeros(1, dtype=np.int64), 0, 0))])
    assert both.as_dict() == {1: 2, 2: 1, 5: 2}
    assert (both.records, both.suppressed, both.where(both.sizes >= 2).released) == (17, 3, 12)
