"""kill -9 of anoneval leaves no process and no readable copy of the data behind (issue 23).

A real CLI runs a blockwise measure on the local engine's worker processes; it is killed with
SIGKILL while the blocks run. Its fork server and workers must end within a bounded time, and
its private temporary folder (the pickled data the workers read) must be removed by the next
start of anoneval.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from anoneval.core.run import lifecycle

linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="reads the process tree from /proc (Linux)")

SLOW = '''
import time
from anoneval.core.api import MeasureResult, Params, RiskMeasure


def _block(shared, block):
    time.sleep(120)
    return block


class SlowBlocks(RiskMeasure):
    """Blocks that take two minutes each."""

    name = "SlowBlocks"
    description = "Blocks that sleep."

    class Params(Params):
        pass

    def compute(self, original, anonymized, ctx):
        return MeasureResult(value=float(len(ctx.map_blocks(_block, range(8), list(range(9))))))
'''


def children(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = text.rpartition(")")[2].split()
            if fields[0] != "Z":
                parents[int(entry)] = int(fields[1])
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        for child, parent in parents.items():
            if parent == p and child not in out:
                out.add(child)
                todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@linux_only
def test_kill_9_ends_workers_and_fork_server_and_leaves_no_data(tmp_path: Path,
                                                                request) -> None:
    (tmp_path / "slowplug.py").write_text(textwrap.dedent(SLOW))
    (tmp_path / "reg.json").write_text(json.dumps(
        {"risk_measure": {"SlowBlocks": {"class": "slowplug.SlowBlocks"}}}))
    pd.DataFrame({"a": [1, 2, 3, 4]}).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "c.json").write_text(json.dumps(
        {"original": {"path": "d.csv"}, "anonymized": {"path": "d.csv"},
         "measures": ["SlowBlocks"]}))
    # a short temporary folder: the fork server's socket lives there (AF_UNIX paths are short)
    temp = Path(tempfile.mkdtemp(prefix="ae", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(temp, ignore_errors=True))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")]), "TMPDIR": str(temp)}
    cli = subprocess.Popen(
        [sys.executable, "-m", "anoneval", "run", "c.json", "--registry", "reg.json",
         "--engine", "local", "--workers", "2", "-q", "-o", "r.json"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        private: list[Path] = []
        while time.monotonic() < deadline:  # the blocks run: data shipped, workers started
            private = [p for p in temp.iterdir() if lifecycle.DIR_PATTERN.match(p.name)]
            if private and list(private[0].glob("*.pkl")) and len(children(cli.pid)) >= 3:
                break
            assert cli.poll() is None, cli.stderr.read().decode() if cli.stderr else ""
            time.sleep(0.2)
        else:
            pytest.fail("the blocks never started on the workers")
        assert stat.S_IMODE(private[0].stat().st_mode) == 0o700
        started = children(cli.pid)  # fork server, its workers (and the resource tracker)
        os.kill(cli.pid, signal.SIGKILL)
        cli.wait(10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(alive(p) for p in started):
            time.sleep(0.2)
        left = [p for p in started if alive(p)]
        for p in left:  # never leave them to the rest of the suite
            os.kill(p, signal.SIGKILL)
        assert not left, f"still running 20 s after kill -9: {left}"
        assert private[0].exists()  # kill -9: nothing could remove it ...
        out = subprocess.run([sys.executable, "-m", "anoneval", "plugins", "--kind",
                              "distance"], env=env, capture_output=True, timeout=120)
        assert out.returncode == 0, out.stderr.decode()
        assert not private[0].exists()  # ... the next start does
    finally:
        if cli.poll() is None:
            for p in children(cli.pid):
                os.kill(p, signal.SIGKILL)
            cli.kill()
            cli.wait()


def test_private_dir_is_private_and_stale_dirs_of_dead_processes_go(tmp_path: Path,
                                                                   monkeypatch) -> None:
    monkeypatch.setattr(lifecycle.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(lifecycle, "_PRIVATE", None)
    mine = lifecycle.private_dir()
    assert mine.parent == tmp_path and stat.S_IMODE(mine.stat().st_mode) == 0o700
    assert lifecycle.private_dir() == mine
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    stale = tmp_path / f"anoneval-{dead.stdout.strip()}-abc123"
    (stale / "x").mkdir(parents=True)
    running = tmp_path / f"anoneval-{os.getppid()}-abc123"  # a live process's: kept
    running.mkdir()
    other = tmp_path / "anoneval-notapid"
    other.mkdir()
    assert lifecycle.remove_stale_dirs(tmp_path) == [stale]
    assert not stale.exists() and running.exists() and other.exists() and mine.exists()


@linux_only
def test_a_child_told_to_die_with_its_parent_does(tmp_path: Path) -> None:
    # the parent (a shell-less python) starts a child that calls die_with(parent), then is
    # killed: the child must end (prctl on Linux, else the watchdog) within a few seconds
    code = textwrap.dedent('''
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c",
            "import os, time; from anoneval.core.run.lifecycle import die_with; "
            "die_with(os.getppid()); print('ready', flush=True); time.sleep(300)"],
            stdout=subprocess.PIPE)
        assert child.stdout.readline().strip() == b"ready"
        print(child.pid, flush=True)
        time.sleep(300)
    ''')
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert alive(child)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and alive(child):
            time.sleep(0.1)
        if alive(child):
            os.kill(child, signal.SIGKILL)
            pytest.fail("the child outlived its parent")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
