"""Partitioned inputs on the dask engine: same results as local, pruning, fallback, hashes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _close import close
from _toy_plugins import MeanAge, SeenColumns

from anoneval.core import evaluate
from anoneval.core.api import RiskMeasure
from anoneval.core.data.kinds import load
from anoneval.core.data.partitioned import (
    SCAN_COLUMNS,
    TASKS_PER_WORKER,
    Partitioned,
    RowHash,
    RowHasher,
)
from anoneval.core.errors import DataError
from anoneval.core.run.config import validate_config
from anoneval.core.run.runner import run_plan

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

ROOT = Path(__file__).resolve().parents[3]
QI = ["age", "sex", "region"]
GROUP_BY = [
    {"name": "KAnonymity", "params": {"quasi_identifiers": QI, "k": 3}},
    {"name": "KAnonymity", "label": "weighted",
     "params": {"quasi_identifiers": QI, "k": 3, "weights": "weight"}},
    {"name": "LDiversity", "params": {"quasi_identifiers": QI, "sensitive": "disease"}},
    {"name": "DM", "params": {"quasi_identifiers": QI}},
    {"name": "DMStar", "params": {"quasi_identifiers": QI}},
    {"name": "AECS", "params": {"quasi_identifiers": QI}},
    {"name": "NonUniformEntropy", "params": {"quasi_identifiers": QI}},
    {"name": "EntropyRisk", "params": {"cells": ["sex", "region"]}},
    {"name": "SensitivityRules", "params": {
        "cells": ["sex"], "magnitude": "age",
        "rules": [{"rule": "nk", "n": 1, "k": 5}, {"rule": "freq", "min_contributors": 3}]}},
]

LOSS = ("DM", "DMStar", "AECS", "NonUniformEntropy")


def _docs_example() -> type:
    """The partition-wise example measure of docs/writing-plugins.md, executed as written."""
    text = (ROOT / "docs" / "writing-plugins.md").read_text()
    section = text[text.index("### Partial, combine, finalize"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict[str, Any] = {"__name__": "writing_plugins_example"}
    exec(code, namespace)
    return namespace["MissingShare"]


MissingShare = _docs_example()


def census(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(20, 70, n), "sex": rng.choice(["f", "m"], n),
        "disease": rng.choice(["flu", "cold", "none", None], n),
        "weight": rng.uniform(1, 3, n).round(2), "region": rng.choice([1, 2, 3], n)})


@pytest.fixture(scope="module")
def hive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """An original and a generalized release, hive-partitioned by region (rows aligned)."""
    root = tmp_path_factory.mktemp("hive")
    original = census()
    released = original.assign(age=original["age"] // 10 * 10)
    original.to_parquet(root / "original", partition_cols=["region"], index=False)
    released.to_parquet(root / "released", partition_cols=["region"], index=False)
    return root / "original", root / "released"


def test_every_group_by_family_equals_the_local_engine(hive, cluster):
    original, released = hive
    measures = [*GROUP_BY, MissingShare(columns=["disease"])]
    local = evaluate(Partitioned(original), Partitioned(released), measures)
    remote = evaluate(Partitioned(original), Partitioned(released), measures, engine=cluster)
    assert remote.engine["name"] == "dask"
    for here, there, spec in zip(local.to_dict()["measures"], remote.to_dict()["measures"],
                                 [*GROUP_BY, {"name": "MissingShare"}], strict=True):
        assert here["error"] is None and there["error"] is None, (here["error"], there["error"])
        assert close(here["value"], there["value"]), spec
        assert close(here["details"], there["details"]), spec
        gathered = [w for w in there["warnings"] if "gathered" in w]
        assert [w for w in there["warnings"] if w not in gathered] == here["warnings"]
    by_name = {m.label: m for m in remote.measures}
    assert by_name["MissingShare"].value == pytest.approx(
        census()["disease"].isna().mean())
    assert not [w for w in by_name["MissingShare"].warnings if "gathered" in w]
    # rows partition-wise; the hash is the partitioned one, the in-memory one locally
    assert remote.inputs["original"]["rows"] == local.inputs["original"]["rows"] == 600
    assert remote.inputs["original"]["hash"].startswith("partitioned-sha256:")
    assert local.inputs["original"]["hash"] == load(original).content_hash()


def test_summary_measures_never_gather(hive, cluster):
    from anoneval.registry import default_registry

    registry = default_registry()
    original, released = hive
    ported = [m for m in GROUP_BY
              if registry.create("loss_measure" if m["name"] in LOSS else "risk_measure",
                                 m["name"], m["params"]).summaries()]
    if not ported:
        pytest.skip("no group-by measure declares summaries() on this branch yet")
    report = evaluate(Partitioned(original), Partitioned(released), ported, engine=cluster)
    for m in report.measures:
        assert m.error is None and not [w for w in m.warnings if "gathered" in w], m.name


def test_only_declared_columns_are_read(hive, cluster):
    _, released = hive
    report = evaluate(None, Partitioned(released), [SeenColumns()], engine=cluster)
    assert report.measures[0].value == 600
    assert report.measures[0].details["columns"] == ["region", "sex"]
    local = evaluate(None, Partitioned(released), [SeenColumns()])  # one block: every column
    assert local.measures[0].details["columns"] == sorted(census().columns)


def test_gathered_fallback_warns_and_too_large_is_an_error(hive, cluster):
    original, released = hive
    measures = [MeanAge(), MissingShare(columns=["disease"])]
    ok = evaluate(Partitioned(original), Partitioned(released), measures, engine=cluster)
    assert ok.measures[0].value == pytest.approx(float((census()["age"] // 10 * 10).mean()))
    assert any("MeanAge" in w and "gathered 1200 rows" in w for w in ok.measures[0].warnings)
    tight = {"name": "dask", "address": cluster.scheduler.address, "gather_limit": "1KB"}
    refused = evaluate(Partitioned(original), Partitioned(released), measures, engine=tight)
    error = refused.measures[0].error
    assert "MeanAge" in error and "9.4 KiB" in error and "gather limit of 1000 B" in error
    assert refused.measures[1].error is None and refused.measures[1].value == ok.measures[1].value


def test_a_config_on_the_dask_engine_reads_partitions(hive, cluster, tmp_path, monkeypatch):
    from anoneval.core.run import placement

    monkeypatch.setattr(placement, "TASK_SHARE", 0.0)  # as if larger than a worker's share
    original, released = hive
    plan = validate_config({"original": {"path": str(original)},
                            "anonymized": {"path": str(released)},
                            "measures": GROUP_BY[:1]}, base_dir=tmp_path)
    remote = run_plan(plan, engine=cluster)
    local = run_plan(plan)
    assert remote.engine["name"] == "dask"
    assert remote.inputs["anonymized"]["hash"].startswith("partitioned-sha256:")
    assert remote.measures[0].value == local.measures[0].value


@pytest.mark.parametrize("cuts", [[], [1], [100, 101, 377], list(range(0, 600, 97))])
def test_rows_and_hash_are_the_same_for_any_partitioning(tmp_path, cuts):
    frame = census().drop(columns="region")
    whole = tmp_path / "whole"
    whole.mkdir()
    frame.to_parquet(whole / "part-0.parquet", index=False)
    split = tmp_path / "split"
    split.mkdir()
    for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(frame)], strict=True)):
        frame.iloc[a:b].to_parquet(split / f"part-{i:03d}.parquet", index=False)
    one, many = Partitioned(whole), Partitioned(split)
    assert len(one) == len(many) == len(frame)
    assert one.content_hash() == many.content_hash()
    assert many.gather().frame.equals(load(split).frame)
    parts = [RowHash.of_frame(frame.iloc[a:b])
             for a, b in zip([0, *cuts], [*cuts, len(frame)], strict=True)]
    assert RowHash.combine(parts) == RowHash.of_frame(frame) == one.scan().hash


def test_the_hash_sees_row_order_values_and_types(tmp_path):
    frame = census()
    variants = {"same": frame, "swapped": frame.iloc[[1, 0, *range(2, len(frame))]],
                "value": frame.assign(age=frame["age"].where(frame.index != 5, 99)),
                "type": frame.assign(age=frame["age"].astype(float))}
    hashes = {}
    for name, f in variants.items():
        folder = tmp_path / name
        folder.mkdir()
        f.to_parquet(folder / "p.parquet", index=False)
        hashes[name] = Partitioned(folder).content_hash()
    assert len(set(hashes.values())) == len(hashes)


def test_hive_partitions_are_typed_as_the_local_loader_types_them(hive):
    original, _ = hive
    lazy = Partitioned(original).gather().frame
    eager = load(original).frame
    assert lazy.equals(eager) and (lazy.dtypes == eager.dtypes).all()


def test_partial_without_combine_is_refused_when_the_class_is_made():
    with pytest.raises(TypeError, match="partial, combine and finalize"):
        class Half(RiskMeasure):
            def partial(self, frame, ctx):
                return 0


def test_row_hasher_fed_column_by_column_equals_pandas_row_hashes():
    frame = census().assign(when=pd.Timestamp("2020-01-01") + pd.to_timedelta(
        np.arange(600), unit="D"), flag=lambda f: f["age"] > 40, sex=lambda f: f["sex"].astype(
        "category"))
    hasher = RowHasher(frame.shape[1])
    for c in frame.columns:
        hasher.add(frame[c])
    expected = pd.util.hash_pandas_object(frame, index=False).to_numpy(np.uint64)
    assert np.array_equal(hasher.hashes(), expected)
    short = RowHasher(frame.shape[1] + 1)
    for c in frame.columns:
        short.add(frame[c])
    with pytest.raises(ValueError, match="7 of 8 columns"):
        short.hashes()


def test_a_scan_reading_a_few_columns_at_a_time_sees_the_whole_rows(tmp_path):
    wide = census().assign(**{f"q{i}": np.arange(600) * i % 7 for i in range(SCAN_COLUMNS + 3)})
    wide.to_parquet(tmp_path / "wide", partition_cols=["region"], index=False)
    data = Partitioned(tmp_path / "wide")
    whole = data.gather().frame
    scan = data.scan()
    assert len(data.columns) > 2 * SCAN_COLUMNS and data.columns[-1] == "region"
    assert scan.hash == RowHash.of_frame(whole)
    assert scan.memory == {c: int(v) for c, v in
                           whole.memory_usage(deep=True, index=False).items()}


def test_reduce_folds_consecutive_partitions_in_path_order(tmp_path, cluster):
    folder = tmp_path / "ten"
    folder.mkdir()
    for i in range(10):
        pd.DataFrame({"i": [i, i]}).to_parquet(folder / f"p{i:02d}.parquet", index=False)
    data = Partitioned(folder).attach(cluster)
    with distributed.get_task_stream(cluster) as stream:
        order = data.reduce(["i"], lambda f: [int(f["i"].iloc[0])],
                            lambda parts: [x for p in parts for x in p])
    assert order == list(range(10))
    folds = [t for t in stream.data if str(t["key"]).startswith("_fold_pieces")]
    assert len(folds) == TASKS_PER_WORKER * 2  # runs of consecutive files, not one per file


def test_hive_values_keep_their_text_on_both_engines(tmp_path):
    # issue 23: zip=007 and zip=7 were both read as 7 and merged into one class
    for zip_, ages in (("007", [30, 31]), ("7", [40]), ("070", [50])):
        d = tmp_path / "ds" / f"zip={zip_}"
        d.mkdir(parents=True)
        pd.DataFrame({"age": ages}).to_parquet(d / "p.parquet", index=False)
    eager = load(tmp_path / "ds").frame
    lazy = Partitioned(tmp_path / "ds").gather().frame
    assert eager["zip"].tolist() == ["007", "007", "070", "7"]
    assert lazy.equals(eager) and (lazy.dtypes == eager.dtypes).all()
    # canonical integers are still integers
    d = tmp_path / "ints" / "year=2021"
    d.mkdir(parents=True)
    pd.DataFrame({"age": [1]}).to_parquet(d / "p.parquet", index=False)
    (tmp_path / "ints" / "year=-3").mkdir()
    pd.DataFrame({"age": [2]}).to_parquet(tmp_path / "ints" / "year=-3" / "p.parquet")
    for frame in (load(tmp_path / "ints").frame, Partitioned(tmp_path / "ints").gather().frame):
        assert frame["year"].dtype == "int64" and sorted(frame["year"]) == [-3, 2021]


def test_hive_key_that_is_a_file_column_errors_on_both_engines(tmp_path):
    d = tmp_path / "ds" / "zip=1"
    d.mkdir(parents=True)
    pd.DataFrame({"age": [30], "zip": [2]}).to_parquet(d / "p.parquet", index=False)
    message = r"partition key\(s\) \['zip'\] are also columns of the file"
    with pytest.raises(DataError, match=message):
        load(tmp_path / "ds")
    lazy = Partitioned(tmp_path / "ds")
    with pytest.raises(DataError, match=message):
        lazy.frame(["age"])  # the projection does not read the file's zip column
