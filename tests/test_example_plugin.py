"""The example third-party package in tests/example_plugin/, installed for real with pip.

It is installed into a private folder (``pip install --target``) and put on PYTHONPATH, so the
entry-point path is exercised end to end without touching the test environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.entry_points
#: This interpreter's anoneval command (not whichever ``anoneval`` is first on PATH).
ANONEVAL = [sys.executable, "-m", "anoneval.core"]


@pytest.fixture(scope="module")
def plugin_site(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("example_plugin")
    src = tmp / "src"
    shutil.copytree(root / "tests" / "example_plugin", src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--target", str(site), str(src)],
                   check=True, capture_output=True)
    return site


def run(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([*ANONEVAL, *args], capture_output=True, text=True, env=env,
                          cwd=cwd)


def test_plugin_is_listed_with_its_distribution(plugin_site: Path) -> None:
    proc = run(plugin_site, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    entry = next(p for p in json.loads(proc.stdout) if p["name"] == "SampleUniques")
    assert entry["kind"] == "risk_measure"
    assert entry["distribution"] == "anoneval-sample-uniques" and entry["version"] == "0.2.0"
    text = run(plugin_site, "plugins", "--kind", "risk_measure").stdout
    assert "SampleUniques" in text and "anoneval-sample-uniques 0.2.0" in text


def test_plugin_runs_from_a_config(plugin_site: Path, tmp_path: Path) -> None:
    # classes of (a, b): (1, x) x2, (2, y) x1, (3, z) x1 -> 2 uniques of 4 records
    pd.DataFrame({"a": [1, 1, 2, 3], "b": ["x", "x", "y", "z"]}).to_csv(
        tmp_path / "released.csv", index=False)
    (tmp_path / "cfg.json").write_text(json.dumps({
        "anonymized": {"path": "released.csv"},
        "measures": [{"name": "SampleUniques", "params": {"quasi_identifiers": ["a", "b"]}}],
        "output": "out.json"}))
    proc = run(plugin_site, "run", "cfg.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "out.json").read_text())
    assert report["measures"][0]["value"] == 0.5
    assert report["measures"][0]["details"] == {"uniques": 2, "records": 4}


def test_plugin_is_absent_without_the_package() -> None:
    proc = subprocess.run([*ANONEVAL, "describe", "SampleUniques"], capture_output=True,
                          text=True)
    assert proc.returncode == 2 and "may not be installed" in proc.stderr


def test_an_installed_plugin_does_not_break_anonevals_own_tests(plugin_site: Path,
                                                                root: Path) -> None:
    # the suite's registries, the README plugin list and docs/plugins.md hold the built-ins
    # only, so they pass with a third-party plugin installed (on PYTHONPATH here)
    env = {k: v for k, v in os.environ.items() if k != "ANONEVAL_LOAD_PLUGINS"}
    env["PYTHONPATH"] = str(plugin_site)
    assert "SampleUniques" in subprocess.run(
        [*ANONEVAL, "plugins", "--json"], capture_output=True, text=True, env=env).stdout
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/test_readme.py::test_plugin_list_is_in_sync_with_the_registry",
         "tests/test_readme.py::test_plugin_reference_is_in_sync",
         "tests/test_core_registry.py::test_builtins_come_from_config_json",
         "tests/test_core_misc.py"],
        cwd=root, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
