"""Engines: variants as tasks in local processes and on Dask (LocalCluster and real processes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _dask_processes import dask_processes, free_port

from anoneval.core import ConfigError, evaluate, evaluate_many
from anoneval.core.run.engine import EngineError, close_pool, engine_spec, public_address

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

QI = ["age", "sex", "zip"]
MEASURES = [
    {"name": "KAnonymity", "params": {"quasi_identifiers": QI, "k": 3}},
    {"name": "DM", "params": {"quasi_identifiers": QI}},
    {"name": "LDiversity", "params": {"quasi_identifiers": QI, "sensitive": "disease"}},
    {"name": "DistanceToClosestRecord", "params": {"columns": ["age", "income"]}},
]


def frames(n: int = 400, seed: int = 0) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(seed)
    original = pd.DataFrame({
        "age": rng.integers(20, 70, n), "sex": rng.choice(["f", "m"], n),
        "zip": rng.choice(["1000", "1001", "1002", "2000"], n),
        "income": rng.normal(50, 10, n).round(1),
        "disease": rng.choice(["flu", "cold", "none"], n)})
    variants = {}
    for width in (5, 10, 20):
        v = original.copy()
        v["age"] = (v["age"] // width) * width
        v["income"] = v["income"] + rng.normal(0, 1, n).round(1)
        variants[f"w{width}"] = v
    return original, variants


def without_timings(report) -> dict:
    data = report.to_dict()
    data.pop("engine", None)
    for variant in data.get("variants", [data]):
        variant.pop("engine", None)
        for m in variant["measures"]:
            m["seconds"] = 0.0
    return data


def test_spec_validation_names_the_path():
    with pytest.raises(ConfigError) as err:
        engine_spec({"name": "dask", "workers": 0})
    assert "engine.workers" in str(err.value)
    with pytest.raises(ConfigError) as err:
        engine_spec({"name": "dask", "address": "localhost 8786"})
    assert "engine.address" in str(err.value) and "tcp://" in str(err.value)
    with pytest.raises(ConfigError):
        engine_spec({"name": "local", "address": "tcp://127.0.0.1:8786"})
    with pytest.raises(ConfigError):
        engine_spec({"name": "dask", "memory_limit": "lots"})
    assert engine_spec({"name": "dask", "workers": 2, "memory_limit": "4GB"})[0].workers == 2


def test_address_in_reports_has_no_credentials():
    assert public_address("tls://user:secret@10.0.0.5:8786") == "tls://10.0.0.5:8786"


def test_local_workers_give_the_serial_report():
    original, variants = frames()
    serial = evaluate_many(original, variants, MEASURES, seed=3)
    parallel = evaluate_many(original, variants, MEASURES, seed=3,
                             engine={"name": "local", "workers": 2})
    assert serial.engine == {"name": "local", "address": None, "workers": 1} or \
        serial.engine["workers"] >= 1
    assert parallel.engine == {"name": "local", "address": None, "workers": 2}
    assert without_timings(parallel) == without_timings(serial)


def test_dask_client_gives_the_local_report(cluster):
    original, variants = frames()
    local = evaluate_many(original, variants, MEASURES, seed=5)
    remote = evaluate_many(original, variants, MEASURES, seed=5, engine=cluster)
    assert remote.engine["name"] == "dask" and remote.engine["workers"] == 2
    assert without_timings(remote) == without_timings(local)
    one = evaluate(original, variants["w5"], MEASURES, seed=5, engine=cluster)
    assert without_timings(one) == without_timings(evaluate(original, variants["w5"],
                                                            MEASURES, seed=5))


def test_a_local_cluster_started_for_the_run_is_closed():
    original, variants = frames(120)
    # the local engine's processes kept from an earlier test (one may still be starting,
    # then kept for the next run) end first: only the cluster's must be gone after the run
    close_pool()
    before = {p.pid for p in _children()}
    report = evaluate_many(original, variants, MEASURES[:2],
                           engine={"name": "dask", "workers": 1, "memory_limit": "1GB"})
    assert report.engine["name"] == "dask" and report.engine["workers"] == 1
    deadline = time.monotonic() + 20
    while {p.pid for p in _children()} - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not {p.pid for p in _children()} - before


def _children():
    """This process's running children, less multiprocessing's resource tracker: started once
    by the first pool or cluster, it lives as long as this process by design. A child that
    has ended but is not reaped yet (a zombie) is not running."""
    import psutil

    return [p for p in psutil.Process().children(recursive=True)
            if not any("resource_tracker" in part for part in _cmdline(p))
            and _status(p) != psutil.STATUS_ZOMBIE]


def _status(process) -> str | None:
    import psutil

    try:
        return process.status()
    except psutil.Error:  # gone
        return None


def _cmdline(process) -> list[str]:
    import psutil

    try:
        return process.cmdline()
    except psutil.Error:
        return []


def test_unreachable_scheduler_is_a_clear_error_within_the_timeout():
    port = free_port()
    t = time.monotonic()
    with pytest.raises(EngineError) as err:
        evaluate_many(*frames(50), MEASURES[:1],
                      engine={"name": "dask", "address": f"tcp://127.0.0.1:{port}",
                              "connect_timeout": 0.5})
    assert f"tcp://127.0.0.1:{port}" in str(err.value)
    assert time.monotonic() - t < 30


def test_missing_dask_extra_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(EngineError, match=r"anoneval\[dask\]"):
        evaluate_many(*frames(50), MEASURES[:1], engine="dask")


# -- real scheduler and worker processes -----------------------------------------------------


@pytest.fixture(scope="module")
def real_cluster():
    """``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1, stopped after."""
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    with dask_processes(2, ["--nworkers", "1"], env=env) as (address, workers):
        with distributed.Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, workers


def run_cli(*args: str) -> int:
    """``anoneval run ...`` in this process (its engines start their own processes)."""
    from anoneval.core.cli.main import main

    return main(["run", *args])


def test_cli_against_real_scheduler_and_workers(real_cluster, tmp_path, capsys):
    address, _ = real_cluster
    original, variants = frames()
    original.to_csv(tmp_path / "original.csv", index=False)
    for name, frame in variants.items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    config = {"original": {"path": "original.csv"},
              "anonymized": [{"name": n, "path": f"{n}.csv"} for n in variants],
              "measures": MEASURES, "seed": 2, "report": {"timings": False}}
    reports = {}
    for engine in ({"name": "local", "workers": 1}, {"name": "dask", "address": address}):
        (tmp_path / "c.json").write_text(json.dumps({**config, "engine": engine}))
        out = tmp_path / f"{engine['name']}.json"
        assert run_cli(str(tmp_path / "c.json"), "-o", str(out), "-q") == 0, \
            capsys.readouterr().err
        reports[engine["name"]] = json.loads(out.read_text())
    assert reports["dask"].pop("engine") == {"name": "dask", "address": address, "workers": 2}
    assert reports["local"].pop("engine")["name"] == "local"
    # variants that fit a worker run as tasks that read their files: the very same report,
    # hashes included (partitions, and their partition-wise hash, are for larger inputs)
    assert reports["dask"] == reports["local"]


def _slow_loader(frame: pd.DataFrame, seconds: float):
    def load() -> pd.DataFrame:
        time.sleep(seconds)
        return frame
    return load


def _kill_when_busy(client, worker: subprocess.Popen) -> None:
    """SIGKILL ``worker``'s process group once both workers are running variant tasks."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        busy = [w for w, tasks in client.processing().items()
                if any(str(t).startswith("run_variant") for t in tasks)]
        if len(busy) >= 2:
            os.killpg(worker.pid, signal.SIGKILL)
            return
        time.sleep(0.05)


def test_killed_worker_tasks_are_retried_elsewhere(real_cluster):
    address, workers = real_cluster
    original, variants = frames()
    six = {f"{n}_{i}": f for i in range(2) for n, f in variants.items()}
    slow = {n: _slow_loader(f, 0.4) for n, f in six.items()}
    with distributed.Client(address, timeout=30, set_as_default=False) as client:
        killer = threading.Thread(target=_kill_when_busy, args=(client, workers[0]))
        killer.start()
        report = evaluate_many(original, slow, MEASURES[:2], seed=1, engine=client)
        killer.join(timeout=60)
    assert workers[0].wait(timeout=10) is not None  # it really died mid-run
    undisturbed = evaluate_many(original, six, MEASURES[:2], seed=1)
    assert without_timings(report) == without_timings(undisturbed)


def test_cli_engine_flags_override_the_config(tmp_path: Path, capsys) -> None:
    original, variants = frames(120)
    original.to_csv(tmp_path / "original.csv", index=False)
    for name, frame in variants.items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    (tmp_path / "c.json").write_text(json.dumps({
        "original": {"path": "original.csv"},
        "anonymized": [{"name": n, "path": f"{n}.csv"} for n in variants],
        "measures": MEASURES[:2], "engine": {"connect_timeout": 0.5}}))
    out = tmp_path / "r.json"
    code = run_cli(str(tmp_path / "c.json"), "-o", str(out), "-q", "--engine", "local",
                   "--workers", "2")
    assert code == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["engine"] == {"name": "local", "address": None,
                                                      "workers": 2}
    port = free_port()
    capsys.readouterr()
    assert run_cli(str(tmp_path / "c.json"), "-o", str(tmp_path / "r2.json"), "-q",
                   "--scheduler", f"tcp://127.0.0.1:{port}") == 2
    assert f"tcp://127.0.0.1:{port}" in capsys.readouterr().err
    assert not (tmp_path / "r2.json").exists()
    assert run_cli(str(tmp_path / "c.json"), "--workers", "0") == 2
    assert "engine.workers" in capsys.readouterr().err
