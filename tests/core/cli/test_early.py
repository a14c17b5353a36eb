"""The ``anoneval`` command starts the local engine's fork server before its own imports when
the run will use worker processes (issue 30: the workers' start was a third of a 100-variant
run's lead over serial)."""

from __future__ import annotations

import ast
import importlib
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from anoneval.core.cli.early import CONFIG_BYTES, engine_overridden, local_workers
from anoneval.core.run.config import EngineSpec

SECTIONS = [None, {}, {"name": "local"}, {"name": "local", "workers": 3}, {"workers": 1},
            {"name": "dask"}, {"name": "dask", "workers": 2},
            {"name": "dask", "address": "tcp://127.0.0.1:8786"}]
#: (flags as ``anoneval run`` receives them, as click parses them: the last one given wins)
FLAGS = [([], {}), (["--workers", "2"], {"workers": 2}), (["--workers=4"], {"workers": 4}),
         (["--engine", "local"], {"engine": "local"}), (["--engine=dask"], {"engine": "dask"}),
         (["--scheduler", "tcp://127.0.0.1:8786"], {"scheduler": "tcp://127.0.0.1:8786"}),
         (["--engine", "local", "--workers", "1"], {"engine": "local", "workers": 1}),
         (["--engine", "dask", "--workers", "2"], {"engine": "dask", "workers": 2}),
         (["--workers", "2", "-q", "--workers", "5"], {"workers": 5})]


def resolved(section: dict | None, flags: dict) -> int:
    """The local processes ``anoneval run`` uses, by its own code (0: not the local engine, or
    serial by default)."""
    configured = EngineSpec(**section) if section is not None else None
    spec = engine_overridden(configured.model_dump(exclude_defaults=True) if configured else {},
                             flags.get("engine"), flags.get("scheduler"), flags.get("workers"))
    if spec is None:
        spec = configured.model_dump() if configured is not None else None
    if spec is None or spec.get("name", "local") != "local":
        return 0
    return int(spec.get("workers") or os.cpu_count() or 1)


@pytest.mark.parametrize(("section", "flags"), list(itertools.product(SECTIONS, FLAGS)))
def test_the_guess_is_what_the_run_resolves(tmp_path: Path, section: dict | None,
                                            flags: tuple[list[str], dict]) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"measures": ["KAnonymity"],
                                  **({"engine": section} if section is not None else {})}))
    argv, values = flags
    assert local_workers(["run", str(config), *argv]) == resolved(section, values)


def test_anything_unclear_is_no_start(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"engine": {"name": "local", "workers": 4}}))
    assert local_workers(["run", str(config)]) == 4
    assert local_workers(["validate", str(config)]) == 0
    assert local_workers([]) == 0
    assert local_workers(["run", str(tmp_path / "missing.json"), "--workers", "2"]) == 0
    config.write_text("{not json")
    assert local_workers(["run", str(config), "--workers", "2"]) == 0
    config.write_text(json.dumps([1, 2]))
    assert local_workers(["run", str(config), "--workers", "2"]) == 0
    config.write_text(json.dumps({"engine": "local"}))
    assert local_workers(["run", str(config)]) == 0
    config.write_text(json.dumps({"engine": {"workers": "two"}}))
    assert local_workers(["run", str(config)]) == 0
    config.write_text(json.dumps({"engine": {"workers": 2}, "pad": "x" * CONFIG_BYTES}))
    assert local_workers(["run", str(config)]) == 0  # too large to read ahead
    assert local_workers(["run", "/dev/zero", "--workers", "2"]) == 0  # never read
    os.mkfifo(tmp_path / "fifo.json")
    assert local_workers(["run", str(tmp_path / "fifo.json"), "--workers", "2"]) == 0
    # options before the config: the flags alone
    assert local_workers(["run", "-q", str(config), "--workers", "2"]) == 2


def server_started(argv: list[str], cwd: Path) -> list[str]:
    code = ("import sys\n"
            "from multiprocessing import forkserver\n"
            "from anoneval.core.cli.early import start_fork_server\n"
            f"start_fork_server({argv!r})\n"
            "print(forkserver._forkserver._forkserver_pid is not None, 'pandas' in sys.modules)")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=cwd, timeout=120).stdout.split()


def test_the_server_starts_before_anything_heavy_is_imported(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"engine": {"name": "local", "workers": 2}}))
    assert server_started(["run", str(config)], tmp_path) == ["True", "False"]
    assert server_started(["run", str(config), "--workers", "1"], tmp_path) == ["False", "False"]
    assert server_started(["run", str(config), "--engine", "dask"], tmp_path) == [
        "False", "False"]


def test_a_run_on_worker_processes_through_the_command(tmp_path: Path) -> None:
    import pandas as pd

    for name, column in (("orig", [1, 1, 2, 2, 3, 3]), ("v1", [1, 2, 3, 4, 5, 6]),
                         ("v2", [1, 1, 2, 2, 3, 3]), ("v3", [1, 1, 2, 2, 3, 4])):
        pd.DataFrame({"a": column}).to_csv(tmp_path / f"{name}.csv", index=False)
    (tmp_path / "c.json").write_text(json.dumps({
        "original": {"path": "orig.csv"}, "anonymized": {"glob": "v*.csv"},
        "defaults": {"quasi_identifiers": ["a"]}, "measures": ["KAnonymity"],
        "engine": {"name": "local", "workers": 2}}))
    proc = subprocess.run([sys.executable, "-m", "anoneval", "run", "c.json", "-q", "-o",
                           "r.json"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["engine"] == {"name": "local", "address": None, "workers": 2}
    # KAnonymity: the share of records in classes smaller than 2
    assert [v["measures"][0]["value"] for v in report["variants"]] == pytest.approx(
        [1.0, 0.0, 2 / 6])


def test_the_packages_import_their_names_at_first_use(root: Path) -> None:
    code = ("import sys\n"
            "import anoneval, anoneval.core, anoneval.core.cli\n"
            "print('pandas' in sys.modules)\n"
            "from anoneval.core import *\n"
            "print(all(globals()[n] is getattr(anoneval.core, n) for n in anoneval.core.__all__))\n"
            "print(set(anoneval.__all__) <= set(dir(anoneval)), anoneval.load is load)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out == ["False", "True", "True", "True"]
    # each name is the one the type checkers' imports name (core/__init__.py)
    import anoneval.core

    tree = ast.parse((root / "core" / "__init__.py").read_text(encoding="utf-8"))
    declared = {alias.name: node.module for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module.startswith("anoneval.")
                for alias in node.names}
    assert sorted(declared) == sorted(anoneval.core.__all__)
    for name, module in declared.items():
        assert getattr(anoneval.core, name) is getattr(importlib.import_module(module), name)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        anoneval.core.nothing  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        __import__("anoneval").nothing  # noqa: B018
