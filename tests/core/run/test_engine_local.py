"""The local engine's worker processes: started while this process works, new for another
environment."""

from __future__ import annotations

import functools
import multiprocessing
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd
import pytest

from anoneval.core import evaluate_many
from anoneval.core.data.blocks import in_task
from anoneval.core.run.engine import (
    LocalEngine,
    _Ends,
    _from_both_ends,
    _largest_first,
    _start_pool,
    _while_starting,
    close_pool,
)
from anoneval.core.run.forkserver import context
from anoneval.plugins.workflows._sweep import sweep

QI = ["age", "zip"]
MEASURES = [{"name": "KAnonymity", "params": {"quasi_identifiers": QI, "k": 2}},
            {"name": "DM", "params": {"quasi_identifiers": QI}}]
_SEEN: list[int] = []  # set in a worker process by remember()


def remember(value: int) -> tuple[int, list[int], str | None]:
    """A task: this process, what earlier tasks in it left in a module global, an env var."""
    before = list(_SEEN)
    _SEEN.append(value)
    return os.getpid(), before, os.environ.get("ANONEVAL_TEST_ENGINE_VAR")


def env(name: str) -> str | None:
    return os.environ.get(name)


def untimed(report) -> dict:
    data = report.to_dict()
    data.pop("engine")
    for variant in data["variants"]:
        for m in variant["measures"]:
            m["seconds"] = 0.0
    return data


def frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(20, 60, n) // 5 * 5,
                         "zip": rng.choice(["1000", "1001", "2000"], n)})


def failing_loader() -> pd.DataFrame:
    raise OSError("variant file vanished")


def test_the_fork_server_starts_the_processes_where_there_is_one(monkeypatch):
    method = context().get_start_method()
    if "forkserver" in multiprocessing.get_all_start_methods():
        assert method == "forkserver"
    else:
        assert method == "spawn"
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    assert context().get_start_method() == "spawn"


def test_workers_are_new_when_the_environment_changes_and_get_it(monkeypatch):
    for value in ("first", "second"):  # the fork server started with the first engine
        monkeypatch.setenv("ANONEVAL_TEST_ENGINE_VAR", value)
        engine = LocalEngine(2)
        try:
            engine.pool()  # started: the tasks below all run in the workers
            out = engine.map(remember, list(range(6)))
        finally:
            engine.close()
        assert {pid for pid, _, _ in out} != {os.getpid()}
        assert {env for _, _, env in out} == {value}
        firsts = [seen for _, seen, _ in out if not seen]
        assert len(firsts) == len({pid for pid, _, _ in out})  # nothing from the last engine
    assert _SEEN == []  # nothing ran here


def test_this_process_takes_the_last_tasks_until_the_pool_has_started():
    starting: Future = Future()
    pool = ThreadPoolExecutor(max_workers=2)
    here_calls = []

    def here(x: int) -> tuple[str, int, bool]:
        here_calls.append(x)
        if len(here_calls) == 2:
            starting.set_result(pool)  # the pool comes up during the second task here
        return "here", x * x, in_task()

    def there(x: int) -> tuple[str, int, bool]:
        return "there", x * x, in_task()

    try:
        out = _while_starting(starting, [(x,) for x in range(6)], here, there)
    finally:
        pool.shutdown()
    assert here_calls == [5, 4]
    assert [value for _, value, _ in out] == [x * x for x in range(6)]
    assert [where for where, _, _ in out] == ["there"] * 4 + ["here"] * 2
    assert all(task for where, _, task in out if where == "here")


def test_a_failed_start_is_raised_after_the_task_running_here():
    starting: Future = Future()
    starting.set_exception(RuntimeError("no processes"))
    with pytest.raises(RuntimeError, match="no processes"):
        _while_starting(starting, [(1,), (2,)], abs, abs)


def _chunk_there(names: list[str]) -> list[tuple[str, str, bool]]:
    return [("there", n, in_task()) for n in names]


def _here(name: str) -> tuple[str, str, bool]:
    return "here", name, in_task()


NAMES = [f"n{i}" for i in range(10)]


def test_both_ends_this_process_from_the_back_the_pool_from_the_front():
    """A started pool of one task at a time takes chunks from the front while this process
    takes names from the back: each name once, either side's in its order."""
    starting: Future = Future()
    pool = ThreadPoolExecutor(max_workers=2)
    starting.set_result(pool)
    taken_here = threading.Event()

    def chunk(names: list[str]) -> list[tuple[str, str, bool]]:
        assert pool._work_queue.qsize() == 0  # no second task queued behind this one
        assert taken_here.wait(10)  # this process has a name too, however threads are scheduled
        return _chunk_there(names)

    def here(name: str) -> tuple[str, str, bool]:
        taken_here.set()
        time.sleep(0.01)  # the pool's thread gets its turn
        return _here(name)

    try:
        out = _from_both_ends(starting, 1, NAMES, 2, here, lambda c: (chunk, c))
    finally:
        pool.shutdown()
    assert sorted(out) == sorted(NAMES) and all(out[n][1] == n for n in NAMES)
    there = [n for n in NAMES if out[n][0] == "there"]
    here = [n for n in NAMES if out[n][0] == "here"]
    assert here and there and there + here == NAMES  # the pool a prefix, this process the rest
    assert all(task for where, _, task in out.values() if where == "here")


def test_the_pool_takes_smaller_tasks_as_the_names_run_out():
    """Chunks of the full size while there is a share of it for each taker, then the share of
    what is left, down to one name, so that the two ends finish together."""
    ends = _Ends(NAMES)
    assert ends.front(4, 2) == NAMES[:4]  # 10 left: 4
    assert ends.front(4, 2) == NAMES[4:7]  # 6 left: 3
    assert ends.back() == NAMES[-1]
    assert ends.front(4, 2) == [NAMES[7]]  # 2 left: 1
    assert ends.front(4, 2) == [NAMES[8]] and ends.front(4, 2) == [] and ends.back() is None


def test_both_ends_do_not_wait_for_a_pool_that_never_starts():
    out = _from_both_ends(Future(), 1, NAMES, 3, _here, lambda c: (_chunk_there, c))
    assert {where for where, _, _ in out.values()} == {"here"} and sorted(out) == sorted(NAMES)


def test_both_ends_raise_a_failed_start_after_the_name_being_evaluated_here():
    starting: Future = Future()
    calls: list[str] = []

    def here(name: str) -> tuple[str, str, bool]:
        calls.append(name)
        if len(calls) == 2:
            starting.set_exception(RuntimeError("no processes"))
        time.sleep(0.05)
        return _here(name)

    with pytest.raises(RuntimeError, match="no processes"):
        _from_both_ends(starting, 1, NAMES, 3, here, lambda c: (_chunk_there, c))
    assert len(calls) <= 3  # it stops: the rest is not evaluated here


def test_both_ends_raise_a_task_error_and_stop():
    starting: Future = Future()
    pool = ThreadPoolExecutor(max_workers=1)
    starting.set_result(pool)
    calls: list[str] = []

    def failing(names: list[str]) -> list[Any]:
        raise ValueError(f"task of {names} failed")

    def here(name: str) -> tuple[str, str, bool]:
        calls.append(name)
        time.sleep(0.05)
        return _here(name)

    try:
        with pytest.raises(ValueError, match=r"task of \['n0', 'n1'\] failed"):
            _from_both_ends(starting, 1, NAMES, 2, here, lambda c: (failing, c))
    finally:
        pool.shutdown()
    assert len(calls) <= 2


def test_variants_go_largest_first_and_loaders_keep_their_order():
    sized = {"a": frame(10, 0), "b": frame(30, 1), "c": frame(20, 2)}
    assert _largest_first(sized) == ["b", "c", "a"]
    mixed = {**sized, "d": functools.partial(frame, 5, 3)}
    assert _largest_first(mixed) == ["a", "b", "c", "d"]


def test_variants_of_different_sizes_give_the_serial_report_in_order():
    original = frame(300, 9)
    variants = {f"v{n}": frame(n, n) for n in (40, 200, 90, 150, 60)}
    variants["loaded"] = functools.partial(frame, 120, 7)
    serial = evaluate_many(original, variants, MEASURES)
    parallel = evaluate_many(original, variants, MEASURES, engine={"name": "local", "workers": 2})
    assert [v.variant for v in parallel.variants] == list(variants)
    assert parallel.engine["workers"] == 2
    assert untimed(parallel) == untimed(serial)


def test_a_failing_loader_fails_the_run_and_leaves_no_process_once_the_pool_is_closed():
    close_pool()
    before = set(multiprocessing.active_children())
    variants = {"ok": frame(50, 1), "gone": failing_loader, "fine": frame(60, 2)}
    with pytest.raises(OSError, match="variant file vanished"):
        evaluate_many(frame(80, 0), variants, MEASURES, engine={"name": "local", "workers": 2})
    close_pool()
    assert set(multiprocessing.active_children()) <= before


def test_sweep_points_on_local_workers_give_the_serial_report(tmp_path):
    original = frame(80, 5)
    original.to_csv(tmp_path / "orig.csv", index=False)
    original.assign(age=original["age"] // 10 * 10).to_csv(tmp_path / "anon.csv", index=False)
    cfg = {"original": {"path": "orig.csv"}, "anonymized": {"path": "anon.csv"},
           "measures": MEASURES}
    args = (cfg, "measures[0].params.k", "2:6:1")

    def runs(engine) -> list[dict]:
        out = sweep(*args, base_dir=tmp_path, engine=engine).to_dict()["runs"]
        for run in out:
            for m in run["report"]["measures"]:
                m["seconds"] = 0.0
        return out

    serial = runs(None)
    assert [r["report"]["measures"][0]["params"]["k"] for r in serial] == [2, 3, 4, 5, 6]
    assert runs({"name": "local", "workers": 2}) == serial


def test_spawned_processes_where_there_is_no_fork_server():
    pool = _start_pool(1, multiprocessing.get_context("spawn"))
    try:
        pid, _, _ = pool.submit(remember, 1).result()
        threads = pool.submit(env, "OMP_NUM_THREADS").result()
    finally:
        pool.shutdown()
    assert pid != os.getpid() and threads == os.environ.get("OMP_NUM_THREADS", "1")
