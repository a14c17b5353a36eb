"""Interrupted writes: SIGTERM and Ctrl-C remove their temporaries; after ``kill -9`` the next
write removes the stale one. Real ``anoneval run`` processes, signalled mid-write."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from anoneval.core.report.atomic import TEMP_PATTERN, remove_stale, write_atomic

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

#: Runs ``anoneval run`` with os.fsync slowed down: the report's temporary file exists,
#: written but not yet renamed, while the process waits for a signal.
DRIVER = textwrap.dedent("""
    import os, sys, time
    ready = sys.argv[1]
    def slow_fsync(fd):
        open(ready, "w").close()
        time.sleep(60)
    os.fsync = slow_fsync
    from anoneval.core.cli.main import main
    sys.exit(main(sys.argv[2:]))
""")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    df = pd.DataFrame({"a": [1, 1, 2, 3, 3, 3]})
    df.to_csv(tmp_path / "orig.csv", index=False)
    (tmp_path / "cfg.json").write_text(json.dumps({
        "original": {"path": "orig.csv"}, "anonymized": {"path": "orig.csv"},
        "measures": [{"name": "KAnonymity", "params": {"quasi_identifiers": ["a"]}}],
        "output": "report.json"}))
    (tmp_path / "report.json").write_text("old report")
    return tmp_path


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if TEMP_PATTERN.match(p.name))


def start_and_wait(workdir: Path, *args: str) -> subprocess.Popen:
    ready = workdir / "ready"
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(ready), "run",
                             str(workdir / "cfg.json"), "-q", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            _, err = proc.communicate()
            pytest.fail(f"the driver never reached the write: {proc.returncode} {err}")
        time.sleep(0.05)
    return proc


@pytest.mark.parametrize(("sig", "code", "message"), [
    (signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_a_signal_mid_write_removes_the_temporary(workdir: Path, sig: int, code: int,
                                                  message: str) -> None:
    proc = start_and_wait(workdir)
    assert len(temporaries(workdir)) == 1  # mid-write: our temporary exists
    assert temporaries(workdir)[0].startswith(f".report.json.anoneval-{proc.pid}-")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code
    assert message in err
    assert temporaries(workdir) == []
    assert (workdir / "report.json").read_text() == "old report"


def test_after_kill_9_the_next_write_removes_the_stale_temporary(workdir: Path) -> None:
    proc = start_and_wait(workdir)
    proc.kill()  # SIGKILL: no chance to clean up
    proc.communicate(timeout=30)
    stale = temporaries(workdir)
    assert len(stale) == 1 and f"anoneval-{proc.pid}-" in stale[0]
    from anoneval.core.cli.main import main

    assert main(["run", str(workdir / "cfg.json"), "-q"]) == 0  # the next write, in this process
    assert temporaries(workdir) == []
    assert json.loads((workdir / "report.json").read_text())["measures"][0]["error"] is None


def test_sigterm_during_evaluation(workdir: Path) -> None:
    # a slow measure (a user plugin file) is running when SIGTERM arrives
    (workdir / "slow.py").write_text(textwrap.dedent("""
        import time
        from pathlib import Path
        from anoneval.core import LossMeasure, MeasureResult

        class Slow(LossMeasure):
            name = "Slow"
            description = "Sleeps."
            accepts = ("microdata",)

            def compute(self, original, anonymized, ctx):
                Path(__file__).with_name("ready").write_text("")
                time.sleep(60)
                return MeasureResult(value=0.0)
    """))
    (workdir / "reg.json").write_text(json.dumps({"loss_measure": {"Slow": {
        "class": "slow.py:Slow"}}}))
    cfg = json.loads((workdir / "cfg.json").read_text())
    cfg["measures"].append({"name": "Slow"})
    (workdir / "cfg.json").write_text(json.dumps(cfg))
    proc = subprocess.Popen([sys.executable, "-m", "anoneval.core", "run",
                             str(workdir / "cfg.json"), "-q", "--registry",
                             str(workdir / "reg.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (workdir / "ready").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143 and "terminated" in err
    assert (workdir / "report.json").read_text() == "old report"
    assert temporaries(workdir) == []


def test_temporaries_of_live_processes_are_kept(tmp_path: Path) -> None:
    parent = os.getppid()  # alive: our parent process
    live = tmp_path / f".r.json.anoneval-{parent}-0123abcd.tmp"
    live.write_text("in progress elsewhere")
    other = tmp_path / ".r.json.someone-else.tmp"  # not ours: never touched
    other.write_text("x")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stale = tmp_path / f".x.csv.anoneval-{dead}-89abcdef.tmp"
    stale.write_text("left by kill -9")
    write_atomic(tmp_path / "r.json", "{}")
    assert live.exists() and other.exists() and not stale.exists()
    assert remove_stale(tmp_path) == []
