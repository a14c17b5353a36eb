"""The local engine's worker processes kept across the runs of one process (issue 30): reused,
renewed when the config or a dead worker calls for it, unharmed by a failing block or plugin,
ended when idle or closed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _bars import CountingBar

import anoneval
from anoneval.core import evaluate_many
from anoneval.core.api import Table
from anoneval.core.report.atomic import pid_alive
from anoneval.core.run import engine as engine_module
from anoneval.core.run import evaluator as evaluator_module
from anoneval.core.run.engine import EngineError, close_pool, open_engine
from anoneval.plugins.tabular import _audit

LOCAL2 = {"name": "local", "workers": 2}
MEASURES = [{"name": "KAnonymity", "params": {"quasi_identifiers": ["age", "zip"], "k": 2}},
            {"name": "DM", "params": {"quasi_identifiers": ["age", "zip"]}}]


def pid_of(shared: Any, block: int) -> int:
    """A block: the process that ran it (after a moment, so that both processes take some)."""
    time.sleep(0.05)
    return os.getpid()


def fails_on_three(shared: Any, block: int) -> int:
    if block == 3:
        raise ValueError("block 3 is bad")
    return os.getpid()


def dies(shared: Any, block: int) -> int:
    os._exit(3)


def sleeps(shared: Any, block: int) -> int:
    time.sleep(600)
    return os.getpid()


def block_pids(engine: Any = LOCAL2, fn: Any = pid_of, n: int = 8) -> set[int]:
    """The processes that ran ``n`` blocks of ``fn`` on an engine opened as a run opens it, once
    its processes are up (no block runs here while they start)."""
    with open_engine(engine) as local:
        local.pool()
        return set(local.blocks().map(fn, list(range(n)), None))


def gone(pids: set[int], within: float = 30.0) -> bool:
    """Whether the processes ``pids`` end within ``within`` seconds."""
    deadline = time.monotonic() + within
    while any(pid_alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture(autouse=True)
def fresh_pool():
    close_pool()
    yield
    close_pool()


def test_two_runs_use_the_same_processes_and_closing_ends_them():
    first = block_pids()
    second = block_pids()
    assert first and os.getpid() not in first
    assert second <= first  # no new process
    assert all(pid_alive(p) for p in first)  # kept between the runs
    close_pool()
    assert gone(first)
    third = block_pids()
    assert not third & first  # new processes after closing


def test_another_worker_count_ends_the_kept_processes_and_starts_others():
    two = block_pids()
    three = block_pids({"name": "local", "workers": 3}, n=12)
    assert three and not two & three
    assert gone(two)


def test_idle_processes_end_by_themselves(monkeypatch):
    monkeypatch.setattr(engine_module, "POOL_IDLE", 0.2)
    pids = block_pids()
    assert gone(pids)
    assert engine_module._KEPT is None


def test_a_failing_block_does_not_poison_the_next_run():
    before = block_pids()
    with pytest.raises(ValueError, match="block 3 is bad"), open_engine(LOCAL2) as local:
        local.pool()
        local.blocks().map(fails_on_three, list(range(40)), None)
    after = block_pids()
    assert after and after <= before  # the same processes, free for the next run


def test_a_dead_worker_is_a_clear_error_and_the_next_run_gets_new_processes():
    before = block_pids()
    with pytest.raises(EngineError, match="worker process of the local engine died"):
        block_pids(fn=dies)
    after = block_pids()
    assert after and not after & before


def test_an_interrupt_ends_the_processes_running_its_tasks_and_the_next_run_gets_new_ones():
    before = block_pids()
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))  # a Ctrl-C
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            block_pids(fn=sleeps)  # blocks of 10 minutes: only ending the processes stops them
    finally:
        timer.cancel()
    assert gone(before)
    after = block_pids()
    assert after and not after & before


def frames(n: int, seed: int) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(seed)
    original = pd.DataFrame({"age": rng.integers(20, 60, n).astype(str),
                             "zip": rng.choice(["1000", "1001", "2000", "2001"], n)})
    variants = {f"v{w}": original.assign(zip=original["zip"].str[:4 - w] + "*" * w)
                for w in (1, 2, 3)}
    return original, variants


def test_variant_runs_on_kept_processes_match_serial_and_report_their_own_progress(
        monkeypatch):
    monkeypatch.setattr(evaluator_module, "progress_bar", CountingBar)
    block_pids()  # processes up and kept: the runs below hand every variant to them
    for seed in (0, 1):  # the second run reuses the processes the first used
        CountingBar.instances = []
        original, variants = frames(200 + seed, seed)
        serial = evaluate_many(original, variants, MEASURES).to_dict()
        parallel = evaluate_many(original, variants, MEASURES, engine=LOCAL2,
                                 show_progress=True)
        assert parallel.ok
        [bar] = CountingBar.instances
        assert bar.updates == [1] * 6  # 3 variants x 2 measures, none from the other run
        got = parallel.to_dict()
        for report in (serial, got):
            report.pop("engine")
            for variant in report["variants"]:
                for m in variant["measures"]:
                    m["seconds"] = 0.0
        assert got == serial


def vanished() -> pd.DataFrame:
    raise OSError("variant file vanished")


def test_a_failing_variant_run_leaves_the_kept_processes_usable():
    before = block_pids()
    original, variants = frames(150, 2)
    with pytest.raises(OSError, match="vanished"):
        evaluate_many(original, {**variants, "gone": vanished}, MEASURES, engine=LOCAL2)
    after = block_pids()
    assert after and after <= before


def audit_table() -> tuple[pd.DataFrame, dict[str, list[list[str]]]]:
    """A 2-D table (6 x 6 leaves under Tot) with two suppressed 2 x 2 boxes and one lone cell:
    three components of the audit LP."""
    rng = np.random.default_rng(4)
    rows, cols = [f"r{i}" for i in range(6)], [f"c{j}" for j in range(6)]
    inner = pd.DataFrame(rng.integers(1, 50, (6, 6)).astype(float), index=rows, columns=cols)
    full = inner.copy()
    full.loc["Tot"] = inner.sum()
    full["Tot"] = full.sum(axis=1)
    frame = full.stack().rename("value").rename_axis(["a", "b"]).reset_index()
    frame["status"] = "s"
    boxes = [("r0", "c0"), ("r0", "c1"), ("r1", "c0"), ("r1", "c1"),
             ("r3", "c3"), ("r3", "c4"), ("r4", "c3"), ("r4", "c4"), ("r5", "c5")]
    for a, b in boxes:
        frame.loc[(frame["a"] == a) & (frame["b"] == b), "status"] = "u"
    dims = {"a": [["Tot", r] for r in rows], "b": [["Tot", c] for c in cols]}
    return frame, dims


def test_suppression_audit_on_kept_processes_matches_serial(monkeypatch):
    monkeypatch.setattr(_audit, "CHUNK", 1)  # one task per suppressed cell: 9 blocks
    frame, dims = audit_table()
    spec = {"name": "SuppressionAudit", "params": {"dimensions": dims, "magnitude": "value"}}
    inner = frame[(frame["a"] != "Tot") & (frame["b"] != "Tot")].reset_index(drop=True)

    def details(engine: Any) -> dict[str, Any]:
        report = anoneval.Evaluator(inner[["a", "b", "value"]], [spec]).evaluate_release(
            Table(frame), engine=engine)
        [entry] = report.measures
        assert entry.error is None
        return entry.details

    serial = details(None)
    assert serial["n_components"] == 3 and serial["n_suppressed"] == 9
    block_pids()  # kept processes up: the blocks below run on them
    assert details(LOCAL2) == serial
    assert details(LOCAL2) == serial


EXIT_WHILE_STARTING = """
import atexit
import multiprocessing
import time

from anoneval.core.run.engine import LocalEngine
from anoneval.core.run.forkserver import context

if __name__ == "__main__":
    context()  # the fork server, ready before the run, as the command starts it
    time.sleep(1.0)
    engine = LocalEngine(3)
    starting = engine.starting()
    engine.close()  # the run ends while its processes start; then this process exits
    # registered last, this runs first of atexit's handlers: after threading's exit hooks
    # (the engine's), before multiprocessing joins the children left
    atexit.register(lambda: print("started", starting.done(),
                                  "children", len(multiprocessing.active_children())))
"""


def test_a_process_ending_while_its_processes_start_exits_cleanly(tmp_path: Path) -> None:
    """A short run ends before its worker processes have started: the exit waits for them and
    shuts them down. Left starting, they had been joined at exit without being told to stop
    (the exit hung, 1 in 50 short runs under load), or printed a traceback after the run
    (their semaphores removed, a third of them)."""
    script = tmp_path / "exit_while_starting.py"
    script.write_text(EXIT_WHILE_STARTING)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.split() == ["started", "True", "children", "0"]
