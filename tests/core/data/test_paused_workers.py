"""A run whose Dask workers are all paused fails with a clear error instead of waiting forever."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from anoneval.core.data import sharded
from anoneval.core.data.partitioned import Partitioned
from anoneval.core.data.summary import SummarySpec
from anoneval.core.errors import DataError

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")


def _write(folder, n: int = 400) -> Partitioned:
    folder.mkdir()
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 5, n), "b": rng.integers(0, 7, n)})
    for i, rows in enumerate(np.array_split(np.arange(n), 2)):
        frame.iloc[rows].to_parquet(folder / f"p{i}.parquet", index=False)
    return Partitioned(folder)


def test_all_paused_workers_fail_the_wait_with_their_memory(tmp_path, monkeypatch):
    """In-process workers whose memory_limit (40 MB) is below this process's memory pass the
    pause threshold at once and run no task: the wait fails after PAUSED_PATIENCE seconds
    without progress, naming the memory_limit and the pause threshold."""
    monkeypatch.setattr(sharded, "PAUSED_PATIENCE", 2.0)
    monkeypatch.setattr(sharded, "POLL_SECONDS", 0.2)
    data = _write(tmp_path / "d")
    spec = SummarySpec("original", ("a", "b"))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  memory_limit="40MB",
                                  dashboard_address="127.0.0.1:0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        data.attach(client)
        deadline = time.monotonic() + 10
        while any(w["status"] != "paused"
                  for w in client.scheduler_info(n_workers=-1)["workers"].values()):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        started = time.monotonic()
        with pytest.raises(DataError) as caught:
            data.class_summary(spec)
        assert time.monotonic() - started < 20
        text = str(caught.value)
        assert "every Dask worker is paused (2:" in text
        assert "memory_limit 38 MiB" in text and "distributed.worker.memory.pause" in text
        assert "no task finished for 2 s" in text
    # the same data on a cluster that can work
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address="127.0.0.1:0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        data._cache.clear()
        assert data.attach(client).class_summary(spec).n_records == 400


def test_a_wait_with_a_running_worker_is_not_cut(tmp_path, monkeypatch):
    """A slow task on a running worker is waited for, however long past the patience."""
    monkeypatch.setattr(sharded, "PAUSED_PATIENCE", 0.3)
    monkeypatch.setattr(sharded, "POLL_SECONDS", 0.1)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address="127.0.0.1:0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        future = client.submit(lambda: time.sleep(1.0) or 7, pure=False)
        assert sharded.gathered(client, [future]) == [7]


def test_variants_as_tasks_on_paused_workers_fail_too(monkeypatch):
    """In-memory variants run as tasks end with the same error, and no report, instead of
    waiting forever (here when scattering the original finds no running worker, after
    Dask's own timeout of about 30 s)."""
    from anoneval.core import evaluate_many

    monkeypatch.setattr(sharded, "PAUSED_PATIENCE", 2.0)
    monkeypatch.setattr(sharded, "POLL_SECONDS", 0.2)
    rng = np.random.default_rng(1)
    original = pd.DataFrame({"a": rng.integers(0, 5, 300), "b": rng.integers(0, 7, 300)})
    variants = {f"v{i}": original.sample(frac=1.0, random_state=i) for i in range(4)}
    measures = [{"name": "KAnonymity", "params": {"quasi_identifiers": ["a", "b"], "k": 2}}]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  memory_limit="40MB",
                                  dashboard_address="127.0.0.1:0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        deadline = time.monotonic() + 10
        while any(w["status"] != "paused"
                  for w in client.scheduler_info(n_workers=-1)["workers"].values()):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        started = time.monotonic()
        with pytest.raises(DataError, match="every Dask worker is paused"):
            evaluate_many(original, variants, measures, engine=client)
        assert time.monotonic() - started < 90


def test_a_cluster_without_workers_fails_the_wait(monkeypatch):
    """Tasks on a cluster with no worker (all died and were not restarted, or were stopped)
    wait for one forever: the wait fails after NO_WORKER_PATIENCE seconds without any, and a
    worker that joins before then is waited for."""
    monkeypatch.setattr(sharded, "NO_WORKER_PATIENCE", 1.0)
    monkeypatch.setattr(sharded, "POLL_SECONDS", 0.1)
    with distributed.LocalCluster(n_workers=0, processes=False,
                                  dashboard_address="127.0.0.1:0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        futures = [client.submit(lambda i=i: i * 2, pure=False) for i in range(3)]
        started = time.monotonic()
        with pytest.raises(DataError) as caught:
            sharded.gathered(client, futures)
        assert 1.0 <= time.monotonic() - started < 10
        assert str(caught.value).startswith("the Dask cluster has had no worker for 1 s and no "
                                            "task finished (0 of 3 done)")
        monkeypatch.setattr(sharded, "NO_WORKER_PATIENCE", 60.0)
        cluster.scale(1)  # joins within the patience: the same futures finish
        assert sharded.gathered(client, futures) == [0, 2, 4]
