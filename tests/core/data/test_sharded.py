"""Class summaries as a hash-partitioned group-by on Dask: the parts against pandas, and the
switch from the tree reduction to the shuffle at the summary budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dask
import numpy as np
import pandas as pd
import pytest
from _close import close
from _dask_memory import in_process_client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anoneval.core.data import partitioned
from anoneval.core.data.partitioned import Oversized, Partitioned
from anoneval.core.data.sharded import ShardedSummary, shuffled_summaries
from anoneval.core.data.summary import ClassSummary, SummarySpec

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

SPEC = SummarySpec("original", ("a", "b"), "w", ("s",))


def _sizes_by_count(part: ClassSummary) -> dict[int, int]:
    values, counts = np.unique(part.counts, return_counts=True)
    return dict(zip(values.tolist(), counts.tolist(), strict=True))


def _add(found: list[dict[int, int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for d in found:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def _max_weight(part: ClassSummary) -> float:
    return float(part.weights.max()) if part.n_classes else -np.inf


frames = st.integers(1, 120).flatmap(lambda n: st.builds(
    lambda a, b, s, w: pd.DataFrame({"a": a, "b": b, "s": s, "w": w}),
    st.lists(st.sampled_from([1.0, 2.0, -0.0, 0.0, np.nan]), min_size=n, max_size=n),
    st.lists(st.sampled_from(["x", "y", "z", None]), min_size=n, max_size=n),
    st.lists(st.sampled_from(["p", "q", None]), min_size=n, max_size=n),
    st.lists(st.floats(0.5, 4.0), min_size=n, max_size=n)))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=frames, n_in=st.integers(1, 4), n_out=st.integers(1, 5))
def test_parts_reduce_to_the_whole_tables_figures(frame, n_in, n_out):
    """Whatever the input and output partitioning, the parts' classes are disjoint, they
    assemble into the summary of the whole frame, and reductions over them give pandas'
    figures of the same group-by."""
    with dask.config.set({"scheduler": "sync", "dataframe.convert-string": False}):
        ddf = dd.from_pandas(frame, npartitions=min(n_in, len(frame)), sort=False)
        parts = dask.compute(*shuffled_summaries(ddf, SPEC, n_out, "tasks"))
    sharded = ShardedSummary(SPEC, parts)
    whole = ClassSummary.of_frame(frame, SPEC)
    assert sharded.assembled().equals(whole, rtol=1e-12)
    # by pandas: -0.0 and 0.0 are one key, missing values a key of their own
    keyed = frame.assign(a=frame["a"] + 0.0)
    groups = keyed.groupby(["a", "b"], dropna=False)
    sizes = groups.size()
    assert sharded.n_classes == len(sizes) == sum(p.n_classes for p in parts)
    assert sharded.n_records == len(frame)
    assert sharded.reduce(_sizes_by_count, _add) == sizes.value_counts().to_dict()
    assert sharded.reduce(_max_weight, max) == pytest.approx(groups["w"].sum().max())
    assert sharded.low_weights == (frame["w"].min(), 0)
    hist = keyed.groupby(["a", "b", "s"], dropna=False).size()
    assert sum(len(p.histograms["s"]) for p in parts) == len(hist)
    # no class is split between two parts
    seen = pd.concat([p.keys for p in parts], ignore_index=True)
    assert not seen.duplicated().any()


# -- the switch on a cluster ----------------------------------------------------------------


def _data(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"sex": rng.choice(["f", "m"], n), "rid": np.arange(n),
                         "disease": rng.choice(["flu", "cold", None], n),
                         "weight": rng.uniform(1, 3, n)})


@pytest.fixture(scope="module")
def limited():
    """A LocalCluster of 2 in-process workers with a memory_limit of 1 GB (its budget for one
    summary is SUMMARY_SHARE of that), so a test can move the switch point."""
    with in_process_client() as client:
        yield client


def _split(frame: pd.DataFrame, k: int) -> list[pd.DataFrame]:
    """``frame`` in ``k`` consecutive parts (``np.array_split`` of a frame is deprecated)."""
    return [frame.iloc[rows] for rows in np.array_split(np.arange(len(frame)), k)]


def _write(folder: Path, frames: list[pd.DataFrame]) -> Partitioned:
    folder.mkdir()
    for i, f in enumerate(frames):
        f.to_parquet(folder / f"p{i}.parquet", index=False)
    return Partitioned(folder)


def test_summary_below_budget_folds_above_shuffles(tmp_path, limited, monkeypatch):
    frame = _data(3000)
    data = _write(tmp_path / "d", _split(frame, 3)).attach(limited)
    small = SummarySpec("original", ("sex",), "weight", ("disease",))
    large = SummarySpec("original", ("sex", "rid"), "weight", ("disease",))
    budget = data.summary_budget()
    assert budget == int(1e9 * partitioned.SUMMARY_SHARE)
    # the large summary would take 40 KB: move the switch point between the two
    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 20_000 / 1e9)
    data.class_summaries([small, large])
    folded, sharded = data.class_summary(small), data.class_summary(large)
    assert not isinstance(folded, ShardedSummary)
    assert isinstance(sharded, ShardedSummary) and len(sharded.parts) >= 3
    assert sharded.__sizeof__() > 20_000  # what the old reduction raised a DataError on
    for spec, got in ((small, folded), (large, sharded)):
        assert got.equals(ClassSummary.of_frame(frame, spec), rtol=1e-12)
    assert sharded.low_weights == (frame["weight"].min(), 0)


def test_the_tree_reduction_switches_when_it_outgrows_the_budget(tmp_path, limited,
                                                                 monkeypatch):
    # the first partition has 2 classes: projected small, found large during the reduction
    first = _data(500).assign(rid=0)
    frame = pd.concat([first, _data(3000, seed=1).assign(rid=np.arange(3000))],
                      ignore_index=True)
    data = _write(tmp_path / "d", [first, frame.iloc[500:2000], frame.iloc[2000:]])
    data.attach(limited)
    spec = SummarySpec("original", ("sex", "rid"))
    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 20_000 / 1e9)
    assert data._projected([spec], list(spec.columns))[spec] < 20_000
    found = data.class_summary(spec)
    assert isinstance(found, ShardedSummary)
    assert found.equals(ClassSummary.of_frame(frame, spec))


def test_measures_reduce_the_parts_or_read_the_whole_table(tmp_path, limited, monkeypatch):
    """Class measures on a sharded summary equal the local engine's, with missing values and
    suppressed records: reduced part by part, or (missing="suppressed", where groups merge
    across parts; violations listed by their keys) from the table assembled here."""
    from anoneval.core import evaluate

    rng = np.random.default_rng(5)
    n = 3000
    frame = pd.DataFrame({"a": rng.choice(["1", "2", "*", None], n),
                          "b": rng.choice(["x", "y", "*", None], n), "rid": np.arange(n) % 700,
                          "s": rng.choice(["p", "q", "r"], n), "w": rng.uniform(1, 2, n)})
    frame["rid"] = frame["rid"].astype(str)
    frame.loc[:40, ["a", "b", "rid"]] = "*"  # suppressed records
    data = _write(tmp_path / "d", _split(frame, 3))
    qi = {"quasi_identifiers": ["a", "b", "rid"]}
    measures = [{"name": "KAnonymity", "params": {**qi, "k": 3}},
                {"name": "KAnonymity", "label": "w",
                 "params": {**qi, "k": 3, "weights": "w", "missing": "suppressed"}},
                {"name": "KAnonymity", "label": "listed",
                 "params": {**qi, "k": 5, "list_violations": 4}},
                {"name": "LDiversity", "params": {**qi, "sensitive": "s", "l": 2}},
                {"name": "LDiversity", "label": "sup",
                 "params": {**qi, "sensitive": "s", "l": 2, "missing": "suppressed"}},
                {"name": "AECS", "params": {**qi, "k": 2}}, {"name": "DM", "params": qi},
                {"name": "DMStar", "params": qi}]
    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 20_000 / 1e9)
    remote = evaluate(data, data, measures, engine=limited)
    local = evaluate(frame, frame, measures)
    assert any(isinstance(s, ShardedSummary) for s in data._cache.values())
    for here, there in zip(local.to_dict()["measures"], remote.to_dict()["measures"],
                           strict=True):
        assert here["error"] is None and there["error"] is None, there["error"]
        assert close(here["value"], there["value"]), here["label"]
        details = {k: v for k, v in there["details"].items() if k != "violations"}
        assert close({k: v for k, v in here["details"].items() if k != "violations"},
                      details), here["label"]
        assert here["details"].get("violations") == there["details"].get("violations")
        assert here["warnings"] == there["warnings"]


def test_oversized_partials_stop_the_fold(monkeypatch):
    monkeypatch.setattr(partitioned, "_summary_budget", lambda: 4_000)
    frame = _data(600)
    small = SummarySpec("original", ("sex",))
    large = SummarySpec("original", ("sex", "rid"), "weight")
    found = partitioned._summaries((small, large), frame)
    assert found[0].n_classes == 2
    assert isinstance(found[1], Oversized)
    assert (found[1].classes, found[1].records) == (600, 600) and found[1].bytes > 4_000
    halves = [partitioned._summaries((small, large), frame.iloc[:300]),
              partitioned._summaries((small, large), frame.iloc[300:])]
    combined = partitioned._combine_all(halves)
    assert combined[0].n_records == 600 and isinstance(combined[1], Oversized)


# -- acceptance: a real scheduler and memory-limited workers ---------------------------------

#: Each worker's memory_limit: the old 5 % limit on one summary is 50 MB of it. A worker that has
#: imported pandas, pyarrow and scipy holds some 200 MiB before any data (Python 3.13), so a
#: tighter limit would measure the libraries' footprint, not anoneval's.
LIMIT = 10**9
RAW_QI = ["age", "zip", "sex", "region"]


def raw_census(n: int = 450_000) -> pd.DataFrame:
    """Raw quasi-identifiers with ~9·10⁶ combinations: nearly every record a class of its own."""
    rng = np.random.default_rng(3)
    zips = np.char.zfill(rng.integers(0, 1000, n).astype(str), 5).astype(object)
    return pd.DataFrame({"age": rng.integers(0, 90, n), "zip": zips,
                         "sex": rng.choice(["f", "m"], n), "region": rng.integers(0, 50, n),
                         "disease": rng.choice(["flu", "cold", "hiv", None], n),
                         "weight": rng.choice([1.5, 2.0, 2.5], n)})


def every_group_by_measure() -> list[dict[str, Any]]:
    qi = {"quasi_identifiers": RAW_QI}
    sensitive = {**qi, "sensitive": "disease"}
    arx = ["Discernibility", "Ambiguity", "Granularity", "SSESST", "Missings",
           "AttributeSquaredError", "RecordSquaredError", "Height", "GeneralizationIntensity",
           "HierarchyKLDivergence"]
    return [{"name": "KAnonymity", "params": {**qi, "k": 3}},
            {"name": "KAnonymity", "label": "weighted",
             "params": {**qi, "k": 3, "weights": "weight", "list_violations": 5}},
            {"name": "LDiversity", "params": sensitive},
            {"name": "LDiversity", "label": "weighted entropy",
             "params": {**sensitive, "weights": "weight", "variant": "entropy"}},
            {"name": "TCloseness", "params": sensitive},
            {"name": "DeltaDisclosure", "params": sensitive},
            {"name": "BetaLikeness", "params": sensitive},
            {"name": "AlphaKAnonymity", "params": sensitive},
            {"name": "DM", "params": qi}, {"name": "DMStar", "params": qi},
            {"name": "AECS", "params": qi},
            {"name": "AECS", "label": "quality", "params": {**qi, "suppressed": "ignore"}},
            {"name": "NonUniformEntropy", "params": qi},
            {"name": "EntropyRisk", "params": {"cells": ["age", "sex", "region"]}},
            *({"name": name, "params": qi} for name in arx),
            {"name": "IndividualRisk", "params": {**qi, "weights": "weight"}},
            {"name": "PopulationUniqueness", "params": {**qi, "sampling_fraction": 0.5}},
            {"name": "ReidentificationRisk", "params": qi},
            {"name": "SUDA", "params": qi},
            {"name": "DeltaPresence", "params": qi}]


def test_every_group_by_measure_at_raw_cardinality_on_real_workers(tmp_path):
    """Issue 30's acceptance: a ``dask scheduler`` and two ``dask worker`` processes with a
    memory_limit of 1 GB; the original (and the release, the same raw records) has ~4.4·10⁵
    classes, a summary the old reduction refused (over 5 % of the memory_limit). Every
    group-by measure equals the local engine's result, value and details."""
    import os
    import sys
    import time

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from _dask_processes import dask_processes

    from anoneval.core import evaluate

    sys.path.pop(0)
    frame = raw_census()
    for side in ("original", "released"):
        (tmp_path / side).mkdir()
        for i, part in enumerate(_split(frame, 4)):
            part.to_parquet(tmp_path / side / f"p{i}.parquet", index=False)
    measures = every_group_by_measure()
    local = evaluate(frame, frame.copy(), measures)
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    started = time.monotonic()
    with dask_processes(2, ["--nworkers", "1", "--memory-limit", str(LIMIT)],
                        env=env) as (address, _), \
            distributed.Client(address, timeout=30, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
        workers = set(client.scheduler_info(n_workers=-1)["workers"])
        original, released = Partitioned(tmp_path / "original"), Partitioned(
            tmp_path / "released")
        remote = evaluate(original, released, measures, engine=client)
        # within its memory_limit: no worker was restarted by its nanny (and its tasks retried)
        assert set(client.scheduler_info(n_workers=-1)["workers"]) == workers
    assert time.monotonic() - started < 300
    assert remote.engine["name"] == "dask"
    # the raw classes outgrew the old limit and were grouped hash-partitioned on the workers
    sharded = [s for data in (original, released) for key, s in data._cache.items()
               if key[0] == "class_summary" and isinstance(s, ShardedSummary)]
    assert {s.spec.side for s in sharded} == {"original", "anonymized"}
    for s in sharded:
        assert s.n_classes > 430_000 and len(s.parts) >= 4
        # what the old tree reduction refused: the whole summary over 5 % of the limit
        whole = ClassSummary.of_frame(frame, s.spec)
        assert whole.__sizeof__() > partitioned.SUMMARY_SHARE * LIMIT, s.spec
    # the class-size measures reduced the parts on the workers: no table assembled here
    plain = released._cache[("class_summary", SummarySpec("anonymized", tuple(RAW_QI)))]
    assert isinstance(plain, ShardedSummary) and plain._assembled is None
    assert original._cache[("class_summary", SummarySpec("original", tuple(RAW_QI)))
                           ]._assembled is None
    for here, there, spec in zip(local.to_dict()["measures"], remote.to_dict()["measures"],
                                 measures, strict=True):
        assert here["error"] is None and there["error"] is None, (spec, here["error"],
                                                                  there["error"])
        assert close(here["value"], there["value"]), spec
        assert close(here["details"], there["details"]), spec
        gathered = [w for w in there["warnings"] if "gathered" in w]
        assert [w for w in there["warnings"] if w not in gathered] == here["warnings"], spec
    assert remote.measures[0].details["classes"] == frame.groupby(RAW_QI).ngroups
    # the class tables stayed on the workers: none was assembled here
    for spec in (SummarySpec("anonymized", tuple(RAW_QI), "weight"),
                 SummarySpec("anonymized", tuple(RAW_QI), None, ("disease",))):
        assert released._cache[("class_summary", spec)]._assembled is None, spec
    # only the measures that read the records gathered them (SUDA: a group-by per subset of
    # the quasi-identifiers); every other one reduced summaries' parts or paired partitions
    # on the workers
    reads_records = {"SUDA"}
    for spec, there in zip(measures, remote.to_dict()["measures"], strict=True):
        gathered = any("gathered" in w for w in there["warnings"])
        assert gathered == (spec["name"] in reads_records), spec


