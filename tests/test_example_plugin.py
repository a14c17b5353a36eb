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


def run(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([ANONEVAL, *args], capture_output=True, text=True, env=env,
                          cwd=cwd)


def test_plugin_is_listed_with_its_distribution(plugin_site: Path) -> None:
    proc = run(plugin_site, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    entry = next(p for p in json.loads(proc.stdout) if p["name"] == "SampleUniques")
    assert entry["kind"] == "risk_measure"
    assert entry["distribution"] == "anoneval-sample-uniques" and entry["version"] == "0.3.0"
    text = run(plugin_site, "plugins", "--kind", "risk_measure").stdout
    assert "SampleUniques" in text and "anoneval-sample-uniques 0.3.0" in text


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


def test_plugin_report_section_is_in_the_html_report(plugin_site: Path, tmp_path: Path) -> None:
    pd.DataFrame({"a": [1, 1, 2, 3], "b": ["x", "x", "y", "z"]}).to_csv(
        tmp_path / "released.csv", index=False)
    (tmp_path / "cfg.json").write_text(json.dumps({
        "anonymized": {"path": "released.csv"},
        "measures": [{"name": "SampleUniques", "params": {"quasi_identifiers": ["a", "b"]}}]}))
    proc = run(plugin_site, "run", "cfg.json", "-q", "--html", "r.html", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "r.html").read_text()
    assert ('<p class="sample-uniques">2 of 4 records are unique on the quasi-identifiers.</p>'
            in page)


def test_plugin_command_runs_from_the_cli(plugin_site: Path, tmp_path: Path) -> None:
    pd.DataFrame({"a": [1, 1, 2, 3], "b": ["x", "x", "y", "z"]}).to_csv(
        tmp_path / "released.csv", index=False)
    help_text = run(plugin_site, "--help").stdout
    assert "sample-uniques" in help_text
    proc = run(plugin_site, "sample-uniques", "released.csv", "--qi", "a", "--qi", "b",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "2 of 4 records are sample uniques (50.0%)\n"
    proc = run(plugin_site, "sample-uniques", "released.csv", "--qi", "zip", cwd=tmp_path)
    assert proc.returncode == 1 and "zip" in proc.stderr


def test_plugin_is_absent_without_the_package() -> None:
    # the example may be installed in this environment too: load every other plugin package
    from importlib import metadata

    others = {ep.dist.name for ep in metadata.entry_points(group="anoneval")
              if ep.dist is not None} - {"anoneval-sample-uniques"}
    env = {**os.environ, "ANONEVAL_LOAD_PLUGINS": ",".join(sorted(others))}
    proc = subprocess.run([ANONEVAL, "describe", "SampleUniques"], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 2 and "may not be installed" in proc.stderr
    proc = subprocess.run([ANONEVAL, "sample-uniques", "x.csv"], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 2 and "No such command 'sample-uniques'" in proc.stderr


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
         "tests/test_readme.py::test_plugin_list_is_in_sync_with_the_registry",
         "tests/test_readme.py::test_plugin_reference_is_in_sync",
         "tests/test_core_registry.py::test_builtins_come_from_config_json",
         "tests/test_core_misc.py"],
        cwd=root, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
