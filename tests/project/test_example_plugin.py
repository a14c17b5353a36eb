"""The example third-party package in tests/example_plugin/, built as a wheel and installed.

The wheel is built with pip and installed into a private folder (``pip install --target``) put
on PYTHONPATH, so the entry-point path is exercised end to end without touching the test
environment. The package adds a measure, a section of the HTML report and a command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

pytestmark = pytest.mark.entry_points
@pytest.fixture(scope="module")
def plugin_site(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("example_plugin")
    src = tmp / "src"
    shutil.copytree(root / "tests" / "example_plugin", src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp / "site"
    # one pip run: it builds the wheel and installs it (entry points, metadata) into site
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--no-cache-dir", "--target", str(site), str(src)],
                   check=True, capture_output=True)
    assert len(list(site.glob("anoneval_sample_uniques-0.3.0.dist-info"))) == 1
    return site


#: The console script of the interpreter running the tests.
ANONEVAL = str(Path(sys.executable).with_name("anoneval"))

#: Runs ``anoneval`` command lines in one fresh interpreter, each in its folder, and prints
#: their exit codes and output as JSON: one process start for many commands.
DRIVER = """
import contextlib, io, json, os, sys
from anoneval.core.cli.main import main
out = []
for cwd, args in json.loads(sys.argv[1]):
    os.chdir(cwd)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(args)
    out.append({"code": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()})
print(json.dumps(out))
"""


def cli_runs(commands: list[tuple[Path, list[str]]],
             env: dict[str, str]) -> list[dict[str, Any]]:
    """Exit code, stdout and stderr of each ``anoneval`` command line, run in order."""
    todo = json.dumps([(str(cwd), args) for cwd, args in commands])
    proc = subprocess.run([sys.executable, "-c", DRIVER, todo], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def with_plugin(plugin_site: Path, tmp_path_factory: pytest.TempPathFactory
                ) -> dict[str, dict[str, Any]]:
    """The commands of the tests below, run with the package installed (on PYTHONPATH)."""
    work = tmp_path_factory.mktemp("commands")
    released = pd.DataFrame({"a": [1, 1, 2, 3], "b": ["x", "x", "y", "z"]})
    spec = {"anonymized": {"path": "released.csv"},
            "measures": [{"name": "SampleUniques", "params": {"quasi_identifiers": ["a", "b"]}}]}
    for name, extra in (("json", {"output": "out.json"}), ("html", {})):
        (work / name).mkdir()
        released.to_csv(work / name / "released.csv", index=False)
        (work / name / "cfg.json").write_text(json.dumps({**spec, **extra}))
    commands = {
        "list": (work, ["plugins", "--json"]),
        "list-kind": (work, ["plugins", "--kind", "risk_measure"]),
        "run": (work / "json", ["run", "cfg.json"]),
        "html": (work / "html", ["run", "cfg.json", "-q", "--html", "r.html"]),
        "help": (work, ["--help"]),
        "command": (work / "json", ["sample-uniques", "released.csv", "--qi", "a", "--qi", "b"]),
        "command-error": (work / "json", ["sample-uniques", "released.csv", "--qi", "zip"]),
    }
    env = {k: v for k, v in os.environ.items() if k != "ANONEVAL_LOAD_PLUGINS"}
    results = cli_runs(list(commands.values()), {**env, "PYTHONPATH": str(plugin_site)})
    return {name: {**r, "cwd": cwd} for (name, (cwd, _)), r in zip(commands.items(), results,
                                                                  strict=True)}


def test_plugin_is_listed_with_its_distribution(with_plugin: dict[str, Any]) -> None:
    listed = with_plugin["list"]
    assert listed["code"] == 0, listed["stderr"]
    entry = next(p for p in json.loads(listed["stdout"]) if p["name"] == "SampleUniques")
    assert entry["kind"] == "risk_measure"
    assert entry["distribution"] == "anoneval-sample-uniques" and entry["version"] == "0.3.0"
    text = with_plugin["list-kind"]["stdout"]
    assert "SampleUniques" in text and "anoneval-sample-uniques 0.3.0" in text


def test_plugin_runs_from_a_config(with_plugin: dict[str, Any]) -> None:
    # classes of (a, b): (1, x) x2, (2, y) x1, (3, z) x1 -> 2 uniques of 4 records
    run = with_plugin["run"]
    assert run["code"] == 0, run["stderr"]
    report = json.loads((run["cwd"] / "out.json").read_text())
    assert report["measures"][0]["value"] == 0.5
    assert report["measures"][0]["details"] == {"uniques": 2, "records": 4}


def test_plugin_report_section_is_in_the_html_report(with_plugin: dict[str, Any]) -> None:
    run = with_plugin["html"]
    assert run["code"] == 0, run["stderr"]
    page = (run["cwd"] / "r.html").read_text()
    assert ('<p class="sample-uniques">2 of 4 records are unique on the quasi-identifiers.</p>'
            in page)


def test_plugin_command_runs_from_the_cli(with_plugin: dict[str, Any]) -> None:
    assert with_plugin["help"]["code"] == 0 and "sample-uniques" in with_plugin["help"]["stdout"]
    run = with_plugin["command"]
    assert run["code"] == 0, run["stderr"]
    assert run["stdout"] == "2 of 4 records are sample uniques (50.0%)\n"
    failed = with_plugin["command-error"]
    assert failed["code"] == 1 and "zip" in failed["stderr"]


def test_plugin_is_absent_without_the_package(tmp_path: Path) -> None:
    # the example may be installed in this environment too: load every other plugin package
    from importlib import metadata

    others = {ep.dist.name for ep in metadata.entry_points(group="anoneval")
              if ep.dist is not None} - {"anoneval-sample-uniques"}
    env = {**os.environ, "ANONEVAL_LOAD_PLUGINS": ",".join(sorted(others))}
    described, command = cli_runs([(tmp_path, ["describe", "SampleUniques"]),
                                   (tmp_path, ["sample-uniques", "x.csv"])], env)
    assert described["code"] == 2 and "may not be installed" in described["stderr"]
    assert command["code"] == 2 and "No such command 'sample-uniques'" in command["stderr"]


def test_an_installed_plugin_does_not_break_anonevals_own_tests(plugin_site: Path,
                                                                root: Path) -> None:
    # the suite's registries, the README plugin list and docs/plugins.md hold the built-ins
    # only, so they pass with a third-party plugin installed (on PYTHONPATH here)
    env = {k: v for k, v in os.environ.items() if k != "ANONEVAL_LOAD_PLUGINS"}
    env["PYTHONPATH"] = str(plugin_site)
    assert "SampleUniques" in subprocess.run(
        [ANONEVAL, "plugins", "--json"], capture_output=True, text=True, env=env).stdout
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/project/test_readme.py::test_plugin_list_is_in_sync_with_the_registry",
         "tests/project/test_readme.py::test_plugin_reference_is_in_sync",
         "tests/core/test_core_registry.py::test_builtins_come_from_config_json",
         "tests/core/test_core_misc.py"],
        cwd=root, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
