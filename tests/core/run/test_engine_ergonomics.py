"""Engines that say when they pay: an unreachable scheduler fails fast, in-memory variants of
one original go to the cluster without a "large graph" (issue 29). Real LocalClusters."""

from __future__ import annotations

import socket
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from anoneval.core import evaluate_many
from anoneval.core.run.engine import ALLOW_REMOTE_ENV, REACH_TIMEOUT, EngineError

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

KANON = {"name": "KAnonymity", "params": {"quasi_identifiers": ["a", "b"]}}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_scheduler_fails_in_under_five_seconds() -> None:
    frame = pd.DataFrame({"a": [1, 2, 3], "b": [1, 1, 2]})
    address = f"tcp://127.0.0.1:{_free_port()}"
    started = time.monotonic()
    with pytest.raises(EngineError, match="cannot reach the Dask scheduler") as err:
        evaluate_many(frame, {"x": frame, "y": frame}, [KANON],
                      engine={"name": "dask", "address": address})  # connect_timeout 30 s
    assert time.monotonic() - started < 5
    assert address in str(err.value) and "refused" in str(err.value).lower()


def test_a_silent_host_fails_in_under_five_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_REMOTE_ENV, "1")
    frame = pd.DataFrame({"a": [1, 2, 3], "b": [1, 1, 2]})
    started = time.monotonic()
    with pytest.raises(EngineError, match="cannot reach the Dask scheduler"):
        # TEST-NET-1 (RFC 5737): routed nowhere, the connection is never answered
        evaluate_many(frame, {"x": frame, "y": frame}, [KANON],
                      engine={"name": "dask", "address": "tcp://192.0.2.1:8786"})
    assert REACH_TIMEOUT < 5 and time.monotonic() - started < 5


def _large() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(0)
    n = 300_000  # 7 MB a frame: the variants together are well over Dask's 10 MB warning
    original = pd.DataFrame({"a": rng.integers(0, 50, n), "b": rng.integers(0, 20, n),
                             "x": rng.normal(size=n)})
    return original, {f"v{i}": original.assign(a=original["a"] // (i + 1)) for i in range(4)}


def _large_graph(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "large graph" in str(w.message)]


def test_variants_of_one_in_memory_original_send_no_large_graph(cluster) -> None:
    original, variants = _large()
    with warnings.catch_warnings(record=True) as control:
        warnings.simplefilter("always")
        cluster.submit(len, list(variants.values()), pure=False).result()
    assert _large_graph(control), "the check would not see Dask's warning"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = evaluate_many(original, variants, [KANON], engine=cluster)
    assert not _large_graph(caught)
    serial = evaluate_many(original, variants, [KANON])
    assert [v.measures[0].value for v in report.variants] == \
        [v.measures[0].value for v in serial.variants]


def test_a_variant_whose_data_was_lost_is_sent_again(cluster, monkeypatch) -> None:
    """The first copy of each variant is cancelled as soon as it is scattered (as when its
    worker dies): the variants are sent again and the report equals a serial run's."""
    original, variants = _large()
    small = {n: v.head(2000) for n, v in variants.items()}
    scatter = cluster.scatter
    lost: list[int] = []
    sent: list[int] = []

    def losing(data, **kwargs):
        futures = scatter(data, **kwargs)
        if not kwargs.get("broadcast"):
            sent.append(len(futures))
        if not kwargs.get("broadcast") and not lost:  # the variants' first round
            cluster.cancel(futures)
            lost.append(len(futures))
        return futures

    monkeypatch.setattr(cluster, "scatter", losing)
    report = evaluate_many(original.head(2000), small, [KANON], engine=cluster)
    assert lost == [len(small)] and sent == [len(small), len(small)]  # sent again, once
    serial = evaluate_many(original.head(2000), small, [KANON])
    assert [(v.variant, v.measures[0].value) for v in report.variants] == \
        [(v.variant, v.measures[0].value) for v in serial.variants]
