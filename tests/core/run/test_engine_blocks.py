"""Blockwise measures and task-parallel workflows: identical results on every engine."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anoneval.core.api import Context, Microdata, Trajectories
from anoneval.core.data.blocks import SERIAL_BLOCKS, as_task, in_task, spans, task_threads
from anoneval.core.run.engine import DaskEngine, LocalEngine
from anoneval.core.run.evaluator import evaluate
from anoneval.plugins.distances import martinez2021
from anoneval.plugins.fidelity import energy_statistic
from anoneval.plugins.linkage import record_linkage
from anoneval.plugins.similarity import close_pairs, distance_to_closest_record, nndr
from anoneval.plugins.workflows._sweep import sweep
from anoneval.plugins.workflows.architecture.run import run_architectures
from anoneval.registry import build_registry

REGISTRY = build_registry(entry_points=False)


def where(shared: object, block: int) -> tuple[int, int, int]:
    """A block function: the process, the identity of the shared object, the block."""
    return os.getpid(), id(shared), block


@pytest.fixture(scope="module")
def local2():
    engine = LocalEngine(2)
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def runners(local2, cluster):
    return {"processes": local2.blocks(), "dask": DaskEngine(cluster, None).blocks()}


def use_small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Block sizes small enough that tiny data make several blocks."""
    monkeypatch.setattr(record_linkage, "BLOCK_PAIRS", 150)
    monkeypatch.setattr(record_linkage, "EUCLIDEAN_ROWS", 16)
    monkeypatch.setattr(martinez2021, "LAMBDA_BLOCK", 3000)
    monkeypatch.setattr(distance_to_closest_record, "QUERY_ROWS", 16)
    monkeypatch.setattr(distance_to_closest_record, "BLOCK_PAIRS", 900)
    monkeypatch.setattr(close_pairs, "QUERY_ROWS", 16)
    monkeypatch.setattr(nndr, "BLOCK_PAIRS", 200)
    monkeypatch.setattr(energy_statistic, "BLOCK", 16)


def trajectories(n: int, seed: int) -> tuple[Trajectories, Trajectories]:
    """n short walks (3 to 8 points, 30-90 s apart) and a noisy, time-shifted copy."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, 9, n)
    offsets = np.r_[0, np.cumsum(lengths)]
    p = int(offsets[-1])
    t = np.repeat(rng.integers(0, 3600, n), lengths) + np.concatenate(
        [np.cumsum(rng.integers(30, 90, k)) for k in lengths])
    lon = np.repeat(rng.uniform(2.10, 2.20, n), lengths) + rng.normal(0, 0.002, p)
    lat = np.repeat(rng.uniform(41.30, 41.40, n), lengths) + rng.normal(0, 0.002, p)
    ids = np.arange(n) + 1
    orig = Trajectories(ids, ids, offsets, lon, lat, t)
    anon = Trajectories(ids, ids, offsets, lon + rng.normal(0, 0.003, p),
                        lat + rng.normal(0, 0.003, p),
                        t + np.repeat(rng.integers(-300, 300, n), lengths))
    return orig, anon


def microdata(n: int, m: int, seed: int) -> tuple[Microdata, Microdata]:
    rng = np.random.default_rng(seed)
    x = pd.DataFrame({"a": rng.normal(0, 1, n).round(2), "b": rng.normal(5, 2, n).round(1),
                      "c": rng.choice(["u", "v", "w"], n)})
    y = x.sample(m, random_state=seed, replace=True).reset_index(drop=True)
    y[["a", "b"]] += rng.normal(0, 0.05, (m, 2)).round(2)
    return Microdata(x), Microdata(y)


CASES = [
    ("RecordLinkage", {}, "trajectories"),
    ("RecordLinkage", {"percen_window_size": 20, "ties": "distance", "tie_tolerance": 1.0},
     "trajectories"),
    ("RecordLinkage", {"distance": {"name": "Frechet"}, "exact": True}, "trajectories"),
    ("RecordLinkage", {"distance": {"name": "ERP", "params": {"g": [2.3, 48.85]}}},
     "trajectories"),
    ("RecordLinkage", {"distance": {"name": "Euclidean", "params": {"columns": ["a", "b"]}},
                       "ties": "distance"}, "microdata_same"),
    ("RecordLinkage", {"distance": {"name": "Euclidean", "params": {"columns": ["a", "b"]}},
                       "sample": 40}, "microdata_same"),
    ("DistanceToClosestRecord", {"columns": ["a", "b"]}, "microdata"),
    ("DistanceToClosestRecord", {"columns": ["a", "b"], "search": "blas", "sample": 0.5},
     "microdata"),
    ("DistanceToClosestRecord", {"mode": "baseline"}, "microdata"),
    ("ClosePairs", {"columns": ["a", "b"], "d0": 0.1}, "microdata"),
    ("EnergyStatistic", {"columns": ["a", "b"], "resamples": 9}, "microdata"),
    ("EnergyStatistic", {"columns": ["a", "b"], "resamples": 0}, "microdata"),
    ("NNDR", {}, "microdata"),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


def data_for(kind: str):
    if kind == "trajectories":
        return trajectories(60, 1)
    return microdata(70, 70 if kind == "microdata_same" else 50, 2)


def run(name: str, params: dict, original, anonymized, runner) -> dict:
    kind = next(k for k in ("risk_measure", "loss_measure") if name in REGISTRY.names(k))
    measure = REGISTRY.create(kind, name, params)
    ctx = Context(seed=3, registry=REGISTRY, block_runner=runner)
    ctx.prepared = measure.prepare(original, ctx)
    return measure.compute(original, anonymized, ctx).model_dump()


def assert_close(a, b, path: str = "") -> None:
    """Equal, floats to 1e-12 relative (1e-12 absolute near 0)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            assert_close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and not isinstance(b, bool):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12), (path, a, b)
    else:
        assert a == b, (path, a, b)


@pytest.mark.parametrize(("name", "params", "kind"), CASES, ids=IDS)
def test_blockwise_measure_is_identical_on_every_engine(name, params, kind, runners,
                                                        monkeypatch):
    original, anonymized = data_for(kind)
    use_small_blocks(monkeypatch)
    serial = run(name, params, original, anonymized, SERIAL_BLOCKS)
    for label, runner in runners.items():
        assert run(name, params, original, anonymized, runner) == serial, label


@pytest.mark.parametrize(("name", "params", "kind"), CASES, ids=IDS)
def test_blocks_change_floats_by_rounding_only(name, params, kind, monkeypatch):
    original, anonymized = data_for(kind)
    whole = run(name, params, original, anonymized, SERIAL_BLOCKS)
    use_small_blocks(monkeypatch)
    assert_close(run(name, params, original, anonymized, SERIAL_BLOCKS), whole)


def test_blocks_come_back_in_order_and_shared_is_shipped_once_per_process(local2):
    local2.pool()  # started: no block runs here while the processes start
    out = local2.blocks().map(where, list(range(12)), {"big": list(range(1000))})
    assert [b for _, _, b in out] == list(range(12))
    per_process: dict[int, set[int]] = {}
    for pid, ident, _ in out:
        per_process.setdefault(pid, set()).add(ident)
    assert os.getpid() not in per_process
    assert all(len(idents) == 1 for idents in per_process.values())


def test_tasks_and_blocks_come_back_in_order(local2, cluster):
    dask = DaskEngine(cluster, None)
    assert dask.blocks().map(pow, [2, 3, 4, 5], 2) == [4, 8, 16, 32]
    assert local2.map(abs, [-3, 1, -2]) == dask.map(abs, [-3, 1, -2]) == [3, 1, 2]


def test_inside_a_task_plugins_use_one_thread():
    assert not in_task()
    with as_task():
        assert in_task() and task_threads() == 1
    assert not in_task()
    assert spans(7, 3) == [(0, 3), (3, 6), (6, 7)] and spans(0, 3) == []


def test_one_evaluation_spreads_its_blocks_and_times_the_fit(cluster, monkeypatch):
    original, anonymized = trajectories(40, 4)
    use_small_blocks(monkeypatch)
    measures = [{"name": "RecordLinkage"}]
    serial = evaluate(original, anonymized, measures, data_kind="trajectories")
    on_dask = evaluate(original, anonymized, measures, data_kind="trajectories",
                       engine=cluster)
    assert on_dask.measures[0].details == serial.measures[0].details
    assert on_dask.measures[0].value == serial.measures[0].value
    assert on_dask.engine["name"] == "dask" and on_dask.measures[0].seconds > 0


def sweep_config(tmp_path: Path) -> dict:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"age": rng.integers(20, 60, 80), "zip": rng.choice(["1", "2"], 80)})
    frame.to_csv(tmp_path / "orig.csv", index=False)
    frame.assign(age=frame["age"] // 10 * 10).to_csv(tmp_path / "anon.csv", index=False)
    return {"original": {"path": "orig.csv"}, "anonymized": {"path": "anon.csv"},
            "measures": [{"name": "KAnonymity",
                          "params": {"quasi_identifiers": ["age", "zip"], "k": 2}},
                         {"name": "DM", "params": {"quasi_identifiers": ["age", "zip"]}}]}


def untimed(report: dict) -> dict:
    for run_ in report["runs"]:
        for m in run_["report"]["measures"]:
            m["seconds"] = 0.0
    return report


def test_sweep_points_as_tasks_give_the_serial_report(tmp_path, cluster):
    cfg = sweep_config(tmp_path)
    args = (cfg, "measures[0].params.k", "2:5:1")
    serial = untimed(sweep(*args, base_dir=tmp_path).to_dict())
    assert [r["report"]["measures"][0]["params"]["k"] for r in serial["runs"]] == [2, 3, 4, 5]
    assert untimed(sweep(*args, base_dir=tmp_path, engine=cluster).to_dict()) == serial


def test_architecture_runs_as_tasks_give_the_serial_reports(tmp_path, data_dir, cluster):
    def cfg(k: int, transform: str) -> dict:
        out = tmp_path / f"run{k}"
        return {"data": str(data_dir / "mortgage_like.csv"), "columns": ["loan", "income"],
                "transform": transform, "synthesizer": {"name": "MaxEntNormal", "params": {}},
                "energy_resamples": 19, "max_attempts": 1,
                "output": {"released": str(out / "released.csv"),
                           "report": str(out / "report.json"), "plots": None}}

    def untimed_runs(reports: list[dict]) -> list[dict]:
        return [{k: v for k, v in r.items() if k != "seconds"} for r in reports]

    configs = [cfg(0, "identity"), cfg(1, "log")]
    serial = untimed_runs(run_architectures(configs))
    assert [r["status"] for r in serial] == ["rejected", "released"]
    # grid moments go through BLAS, whose thread count (one per worker) may change the last bit
    assert_close(untimed_runs(run_architectures(configs, engine=cluster)), serial)
