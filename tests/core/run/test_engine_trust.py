"""Engines under hostile or careless use: registry-file plugins on workers, scripts without a
main guard, Dask missing, remote or credential-bearing addresses, the dashboard's address,
worker counts, and a plugin's stray thread (issue 23, "Engines")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from _dask_processes import dask_processes

from anoneval.core.errors import ConfigError
from anoneval.core.run.engine import (
    ALLOW_REMOTE_ENV,
    WORKER_ENV,
    EngineError,
    check_engine,
    is_loopback,
    masked,
    open_engine,
    public_address,
    remote_clusters_allowed,
)

#: A measure in a plugin file (not importable by name) saying which process ran it. In the
#: main process it first waits PAUSE seconds, long enough for the worker processes to start
#: and take the other variants.
PLUGIN = '''
import multiprocessing
import time

from anoneval.core.api import MeasureResult, RiskMeasure, released


class RowShare(RiskMeasure):
    name = "RowShare"
    description = "Rows of the release over 100."
    inputs = "either"

    def compute(self, original, anonymized, ctx):
        process = multiprocessing.current_process().name
        if process == "MainProcess":
            time.sleep(PAUSE)
        return MeasureResult(value=len(released(original, anonymized).frame) / 100,
                             details={"in_worker": process != "MainProcess"})
'''

#: A measure that starts a thread that is not a daemon and never ends.
LEAKY = '''
import threading
import time

from anoneval.core.api import MeasureResult, RiskMeasure


class Leaky(RiskMeasure):
    name = "Leaky"
    description = "Leaves a thread running."
    inputs = "none"

    def compute(self, original, anonymized, ctx):
        threading.Thread(target=time.sleep, args=(3600,), name="leaky-thread").start()
        return MeasureResult(value=0.5)
'''

KANON = {"name": "KAnonymity", "params": {"quasi_identifiers": ["a"], "k": 2}}
#: Bound of every subprocess here: a hang fails the test instead of blocking the suite.
BOUND = 240


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anoneval", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=BOUND,
                          env={**os.environ, **(env or {})})


def _inputs(folder: Path, variants: int = 4) -> Path:
    """An original, ``variants`` anonymized files of 40 rows and a config over them."""
    frame = pd.DataFrame({"a": [1, 2, 3, 1] * 10, "b": [1, 1, 2, 2] * 10})
    frame.to_csv(folder / "o.csv", index=False)
    config = {"original": {"path": "o.csv"},
              "anonymized": [{"name": f"v{i}", "path": "o.csv"} for i in range(variants)],
              "measures": [{"name": "RowShare"}, KANON], "report": {"timings": False}}
    (folder / "c.json").write_text(json.dumps(config))
    return folder / "c.json"


def _plugin_file(folder: Path, pause: float) -> Path:
    (folder / "mine.py").write_text(PLUGIN.replace("PAUSE", repr(pause)))
    (folder / "reg.json").write_text(json.dumps(
        {"risk_measure": {"RowShare": {"class": "mine.py:RowShare"}}}))
    return folder / "reg.json"


# -- item 1: a registry file's plugin runs on the workers ---------------------------------


def _api_script(folder: Path, registry: Path, engine: str) -> Path:
    """A script evaluating 4 in-memory variants with the registry file's plugin on
    ``engine`` (Python source of a dict), printing the values and how many ran in workers."""
    (folder / "api.py").write_text(textwrap.dedent(f"""
        import pandas as pd
        import anoneval
        from anoneval.registry import build_registry

        if __name__ == "__main__":
            registry = build_registry(user_file={str(registry)!r})
            frame = pd.DataFrame({{"a": [1, 2, 3, 1] * 10}})
            report = anoneval.evaluate_many(frame, {{f"v{{i}}": frame for i in range(4)}},
                                            ["RowShare"], registry=registry, engine={engine})
            print([v["RowShare"].value for v in report.variants])
            print(sum(v["RowShare"].details["in_worker"] for v in report.variants))
    """))
    return folder / "api.py"


def test_registry_file_plugin_runs_on_local_workers_from_the_cli(tmp_path: Path) -> None:
    config = _inputs(tmp_path)
    registry = _plugin_file(tmp_path, pause=10.0)
    done = _cli("run", str(config), "--registry", str(registry), "--workers", "2", "-o",
                "r.json", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    shares = [next(m for m in v["measures"] if m["name"] == "RowShare")
              for v in report["variants"]]
    assert [m["value"] for m in shares] == [0.4] * 4
    # the plugin's code ran in worker processes, not only in the CLI's own process
    assert sum(m["details"]["in_worker"] for m in shares) >= 1, shares


@pytest.mark.parametrize("engine", ['{"name": "local", "workers": 2}',
                                    '{"name": "dask", "workers": 2}'], ids=["local", "dask"])
def test_registry_file_plugin_runs_on_workers(tmp_path: Path, engine: str) -> None:
    if "dask" in engine:
        pytest.importorskip("distributed", reason="the dask extra is not installed")
    script = _api_script(tmp_path, _plugin_file(tmp_path, pause=10.0), engine)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=BOUND)
    assert done.returncode == 0, done.stderr
    values, in_workers = done.stdout.strip().splitlines()[-2:]
    assert values == "[0.4, 0.4, 0.4, 0.4]"
    # both engines evaluate variants here while their workers start: some ran on workers
    assert int(in_workers) >= 1, done.stdout


def test_registry_file_plugin_runs_on_a_scheduler_and_its_workers(real_cluster_address,
                                                                  tmp_path: Path) -> None:
    """A running ``dask scheduler`` and ``dask worker`` process, which never imported the
    plugin file: the plugin module reaches them by value."""
    engine = f'{{"name": "dask", "address": {real_cluster_address!r}}}'
    script = _api_script(tmp_path, _plugin_file(tmp_path, pause=0.0), engine)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=BOUND)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-2:] == ["[0.4, 0.4, 0.4, 0.4]", "4"]


@pytest.fixture
def real_cluster_address(tmp_path: Path):
    """A ``dask scheduler`` and one ``dask worker`` process on 127.0.0.1, stopped after."""
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    with dask_processes(1, cwd=tmp_path) as (address, _):
        yield address


def test_a_scheduler_without_workers_is_an_error_within_the_bound(monkeypatch) -> None:
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    import anoneval.core.run.engine as engine_mod

    monkeypatch.setattr(engine_mod, "WORKERS_TIMEOUT", 3.0)
    with distributed.LocalCluster(n_workers=0, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        spec = {"name": "dask", "address": cluster.scheduler_address, "connect_timeout": 3}
        with pytest.raises(EngineError, match=r"0 worker\(s\) after 3 s, 1 needed"), \
                open_engine(spec):
            pass


# -- item 2: a script without a main guard -------------------------------------------------


def test_script_without_main_guard_runs_once_with_local_workers(tmp_path: Path) -> None:
    registry = _plugin_file(tmp_path, pause=10.0)
    (tmp_path / "script.py").write_text(textwrap.dedent(f"""
        import pandas as pd
        import anoneval
        from anoneval.registry import build_registry

        print("script body ran", flush=True)
        registry = build_registry(user_file={str(registry)!r})
        frame = pd.DataFrame({{"a": [1, 2, 3, 1] * 10}})
        report = anoneval.evaluate_many(frame, {{f"v{{i}}": frame for i in range(4)}},
                                        ["RowShare"], registry=registry,
                                        engine={{"name": "local", "workers": 2}})
        print("in workers:", sum(v["RowShare"].details["in_worker"] for v in report.variants))
    """))
    done = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=BOUND)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("script body ran") == 1, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    in_workers = int(done.stdout.rsplit("in workers:", 1)[1])
    assert in_workers >= 1, done.stdout


def test_script_without_guard_whose_own_measure_needs_workers_says_what_to_add(
        tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text(textwrap.dedent("""
        import pandas as pd
        import anoneval
        from anoneval.core.api import MeasureResult, RiskMeasure

        class Mine(RiskMeasure):
            name = "Mine"
            description = "A constant."
            inputs = "none"

            def compute(self, original, anonymized, ctx):
                return MeasureResult(value=0.5)

        frame = pd.DataFrame({"a": [1, 2, 3, 1]})
        anoneval.evaluate_many(frame, {"x": frame, "y": frame}, [Mine()],
                               engine={"name": "local", "workers": 2})
    """))
    done = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=BOUND)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "EngineError" in last and "Mine" in last, done.stderr
    assert 'if __name__ == "__main__":' in last and "script.py" in last, last


def test_script_with_main_guard_keeps_its_own_measure_on_workers(tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text(textwrap.dedent("""
        import pandas as pd
        import anoneval
        from anoneval.core.api import MeasureResult, RiskMeasure

        class Mine(RiskMeasure):
            name = "Mine"
            description = "A constant."
            inputs = "none"

            def compute(self, original, anonymized, ctx):
                return MeasureResult(value=0.5)

        if __name__ == "__main__":
            frame = pd.DataFrame({"a": [1, 2, 3, 1]})
            report = anoneval.evaluate_many(frame, {"x": frame, "y": frame, "z": frame},
                                            [Mine()], engine={"name": "local", "workers": 2})
            print([v["Mine"].value for v in report.variants])
    """))
    done = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=BOUND)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0.5, 0.5, 0.5]"


# -- item 3: Dask not installed ------------------------------------------------------------

#: Runs the CLI with dask and distributed hidden (an import of either fails).
HIDDEN = ("import sys\n"
          "sys.modules['dask'] = None\n"
          "sys.modules['distributed'] = None\n"
          "from anoneval.core.cli import entry\n"
          "entry()\n")


@pytest.mark.parametrize("command", [["run", "c.json", "--engine", "dask", "-o", "r.json"],
                                     ["validate", "d.json"], ["run", "d.json"]])
def test_dask_missing_names_the_extra(tmp_path: Path, command: list[str]) -> None:
    config = json.loads(_inputs(tmp_path).read_text())
    config["measures"] = [KANON]
    (tmp_path / "c.json").write_text(json.dumps(config))
    (tmp_path / "d.json").write_text(json.dumps({**config, "engine": {"name": "dask"}}))
    done = subprocess.run([sys.executable, "-c", HIDDEN, *command], cwd=tmp_path,
                          capture_output=True, text=True, timeout=BOUND)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == ("error: the dask engine needs dask and distributed, which "
                                   'are not installed: pip install "anoneval[dask]"')
    assert not (tmp_path / "r.json").exists()


# -- item 4: remote schedulers and credentials ---------------------------------------------


@pytest.mark.parametrize(("address", "local"), [
    ("tcp://127.0.0.1:8786", True), ("tcp://127.3.4.5:1", True), ("tcp://localhost:8786", True),
    ("tcp://[::1]:8786", True), ("inproc://host/1/2", True), ("tcp://10.0.0.5:8786", False),
    ("tls://scheduler.example.org:8786", False), ("tcp://[::ffff:10.0.0.1]:1", False),
    ("tcp://localhost.evil.org:1", False), ("tcp://0.0.0.0:8786", False)])
def test_loopback(address: str, local: bool) -> None:
    assert is_loopback(address) is local


def test_remote_scheduler_is_refused_unless_allowed_outside_the_config(monkeypatch) -> None:
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    monkeypatch.delenv(ALLOW_REMOTE_ENV, raising=False)
    spec = {"name": "dask", "address": "tcp://10.0.0.5:8786"}
    with pytest.raises(EngineError, match=r"not on this machine.*--allow-remote-cluster"):
        check_engine(spec)
    with remote_clusters_allowed():
        assert check_engine(spec).address == "tcp://10.0.0.5:8786"
    monkeypatch.setenv(ALLOW_REMOTE_ENV, "1")
    assert check_engine(spec).address == "tcp://10.0.0.5:8786"
    monkeypatch.setenv(ALLOW_REMOTE_ENV, "yes")  # only "1" allows
    with pytest.raises(EngineError, match="not on this machine"):
        check_engine(spec)


def test_remote_scheduler_refused_by_run_and_validate_before_reading(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    config = json.loads(_inputs(tmp_path).read_text())
    config["measures"] = [KANON]
    config["engine"] = {"name": "dask", "address": "tcp://192.0.2.1:8786",
                        "connect_timeout": 1}
    (tmp_path / "c.json").write_text(json.dumps(config))
    env = {ALLOW_REMOTE_ENV: ""}
    for command in (["validate", "c.json"], ["run", "c.json", "-o", "r.json"],
                    ["sweep", "c.json", "--param", "measures[0].params.k", "--values", "2,3",
                     "--plot", "none", "-o", "sw"]):
        done = _cli(*command, cwd=tmp_path, env=env)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "tcp://192.0.2.1:8786 is not on this machine" in done.stderr
        assert "Traceback" not in done.stderr
    # allowed on the command line: then the (unreachable) scheduler is tried, within the bound
    done = _cli("run", "c.json", "-o", "r.json", "--allow-remote-cluster", cwd=tmp_path,
                env=env)
    assert done.returncode == 2
    assert "cannot reach the Dask scheduler at tcp://192.0.2.1:8786 within 1 s" in done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert not (tmp_path / "r.json").exists()
    assert not list(tmp_path.glob("sw*"))


@pytest.mark.parametrize("address", ["tcp://alice:s3cret@127.0.0.1:8786",
                                     "tcp://alice:s3cret@[::1:x"])
def test_credentials_in_an_address_are_refused_and_never_shown(tmp_path: Path,
                                                               address: str) -> None:
    config = json.loads(_inputs(tmp_path).read_text())
    config["measures"] = [KANON]
    (tmp_path / "c.json").write_text(json.dumps({**config,
                                                 "engine": {"name": "dask", "address": address}}))
    (tmp_path / "plain.json").write_text(json.dumps(config))
    for command in (["validate", "c.json"], ["run", "c.json"],
                    ["run", "plain.json", "--scheduler", address, "-o", "r.json"]):
        done = _cli(*command, cwd=tmp_path)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "s3cret" not in done.stdout + done.stderr and "alice" not in done.stderr
        assert "engine.address" in done.stderr and "credentials" in done.stderr
    with pytest.raises(ConfigError) as err:
        check_engine({"name": "dask", "address": address})
    assert "s3cret" not in str(err.value)


def test_masked_hides_userinfo_everywhere() -> None:
    address = "ws://bob:pw@10.0.0.1:8786"
    text = f"connect {address} failed: invalid address 'bob:pw@10.0.0.1:8786' (ws://x:y@h)"
    shown = masked(text, address)
    assert "pw" not in shown and "bob" not in shown and "x:y" not in shown
    assert "ws://10.0.0.1:8786" in shown
    assert public_address("tcp://u:p@[::1:x") == "tcp://***"


# -- item 5: the dashboard and the number of workers ---------------------------------------


def test_local_cluster_dashboard_on_loopback_and_workers_capped_by_variants() -> None:
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    psutil = pytest.importorskip("psutil")
    with open_engine({"name": "dask", "workers": 13}, tasks=2) as eng:
        info = eng.client.scheduler_info(n_workers=-1)
        assert len(info["workers"]) == 2
        port = info["services"]["dashboard"]
        listening = [c.laddr for c in psutil.Process().net_connections(kind="tcp")
                     if c.status == psutil.CONN_LISTEN and c.laddr.port == port]
        assert listening, "the dashboard does not listen"
        assert {a.ip for a in listening} <= {"127.0.0.1"}, listening
        # the workers started for the run: anoneval's environment, no statistical profiler,
        # and what a task needs imported as they started, before any task
        seen = eng.client.run(_worker_settings)
        assert len(seen) == 2
        for env, profiler, imported in seen.values():
            assert env == {k: str(v) for k, v in WORKER_ENV.items()}
            assert profiler == []
            assert imported == ["anoneval.core.run.engine", "pyarrow.parquet"]


def _worker_settings(dask_worker) -> tuple[dict[str, str | None], list[str], list[str]]:
    import os
    import sys

    return ({k: os.environ.get(k) for k in WORKER_ENV},
            [name for name in dask_worker.periodic_callbacks if name.startswith("profile")],
            [m for m in ("anoneval.core.run.engine", "pyarrow.parquet") if m in sys.modules])


def test_run_with_five_variants_never_starts_more_workers(tmp_path: Path, monkeypatch) -> None:
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    started: list[int] = []
    real = distributed.LocalCluster

    def spy(*args, **kwargs):
        started.append(kwargs["n_workers"])
        return real(*args, **kwargs)

    monkeypatch.setattr(distributed, "LocalCluster", spy)
    from anoneval.core import evaluate_many

    frame = pd.DataFrame({"a": [1, 2, 3, 1] * 5})
    variants = {f"v{i}": frame for i in range(5)}
    report = evaluate_many(frame, variants, [KANON], engine={"name": "dask", "workers": 13})
    assert started == [5]
    assert report.engine["workers"] == 5
    local = evaluate_many(frame, variants, [KANON], engine={"name": "local", "workers": 13})
    assert [v[KANON["name"]].value for v in local.variants] == \
        [v[KANON["name"]].value for v in report.variants]


# -- item 6: a plugin's stray thread -------------------------------------------------------


def test_cli_exits_after_the_report_despite_a_plugin_thread(tmp_path: Path) -> None:
    (tmp_path / "leak.py").write_text(LEAKY)
    (tmp_path / "reg.json").write_text(json.dumps(
        {"risk_measure": {"Leaky": {"class": "leak.py:Leaky"}}}))
    (tmp_path / "c.json").write_text(json.dumps({"measures": [{"name": "Leaky"}]}))
    done = subprocess.run([sys.executable, "-m", "anoneval", "run", "c.json", "--registry",
                           "reg.json", "-o", "r.json"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["measures"][0]["value"] == 0.5
    assert "report written to r.json" in done.stdout  # flushed before the exit
    assert "left 1 thread(s) running after the run (leaky-thread)" in done.stderr


def test_cli_without_stray_threads_exits_quietly(tmp_path: Path) -> None:
    config = json.loads(_inputs(tmp_path).read_text())
    config["measures"] = [KANON]
    (tmp_path / "c.json").write_text(json.dumps(config))
    done = _cli("run", "c.json", "--workers", "2", "-o", "r.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "thread" not in done.stderr


def _pid(_: object) -> int:
    return os.getpid()


def test_local_engine_starts_no_more_processes_than_tasks() -> None:
    from anoneval.core.run.engine import LocalEngine

    engine = LocalEngine(13)
    try:
        pids = engine.map(_pid, [0, 1, 2])
        assert engine.pool()._max_workers == 3
        assert len(pids) == 3 and os.getpid() not in pids
    finally:
        engine.close()


def test_a_worker_process_that_dies_is_a_clear_error(tmp_path: Path) -> None:
    """A plugin that ends its worker process (``os._exit``, as an out-of-memory kill would):
    an error naming what happened, not a BrokenProcessPool traceback."""
    (tmp_path / "dies.py").write_text(PLUGIN.replace("PAUSE", "10.0").replace(
        "        return MeasureResult(",
        "        if process != 'MainProcess':\n            os._exit(3)\n"
        "        return MeasureResult(")
        .replace("import time", "import os\nimport time"))
    (tmp_path / "reg.json").write_text(json.dumps(
        {"risk_measure": {"RowShare": {"class": "dies.py:RowShare"}}}))
    config = _inputs(tmp_path)
    done = _cli("run", str(config), "--registry", "reg.json", "--workers", "2", "-o", "r.json",
                cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "error: a worker process of the local engine died" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "r.json").exists()


def test_a_registry_file_the_workers_cannot_load_does_not_break_other_runs(
        real_cluster_address, tmp_path: Path, monkeypatch) -> None:
    """A plugin file loaded earlier in this process imports a module only this process can
    import: the workers skip it (the module belongs to another run) and this run works."""
    (tmp_path / "here").mkdir()  # not the workers' folder
    (tmp_path / "here" / "only_here.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "here"))
    (tmp_path / "needs.py").write_text("import only_here\n")
    from anoneval.registry import load_user_module

    load_user_module(tmp_path / "needs.py")
    from anoneval.core import evaluate_many

    frame = pd.DataFrame({"a": [1, 2, 3, 1] * 5})
    report = evaluate_many(frame, {"x": frame, "y": frame}, [KANON],
                           engine={"name": "dask", "address": real_cluster_address})
    serial = evaluate_many(frame, {"x": frame, "y": frame}, [KANON])
    assert [v["KAnonymity"].value for v in report.variants] == \
        [v["KAnonymity"].value for v in serial.variants]
    assert all(v["KAnonymity"].error is None for v in report.variants)
