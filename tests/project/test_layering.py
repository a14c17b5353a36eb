"""Import layering: the import-linter contracts of pyproject.toml hold, and catch a violation;
no import circle (``.ci/import_cycles.py``), and one closed inside a function is caught."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

LINT = [sys.executable, "-c",
        "import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())"]


def lint(cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([*LINT, "--no-cache", "--config", str(cwd / "pyproject.toml")],
                          cwd=cwd, capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def copy(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sources laid out as installed (``anoneval/core``, ...), as ``.ci/lint_imports.py``
    checks them."""
    pytest.importorskip("importlinter")
    spec = importlib.util.spec_from_file_location("lint_imports", root / ".ci" /
                                                  "lint_imports.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.installed_layout(tmp_path_factory.mktemp("layering"), root)  # type: ignore


def test_the_contracts_hold(copy: Path) -> None:
    proc = lint(copy)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


@pytest.mark.parametrize(("module", "bad_import", "contract"), [
    ("plugins/microdata/kanonymity.py", "import anoneval.core.run.evaluator",
     "Plugins use the public contract"),
    ("registry/__init__.py", "import anoneval.core.report.plots", "The registry depends on"),
    ("core/api.py", "import anoneval.plugins.microdata.kanonymity", "The core knows no plugin"),
    ("core/data/kinds.py", "import anoneval.core.run.evaluator", "Layers"),
    ("core/report/html.py", "import anoneval.core.run.runner", "Layers"),
    ("core/run/engine.py", "import anoneval.core.cli.main", "Layers"),
])
def test_a_violating_import_fails_the_check(copy: Path, module: str, bad_import: str,
                                            contract: str) -> None:
    path = copy / "anoneval" / module
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(original + f"\n{bad_import}  # a violation\n", encoding="utf-8")
        proc = lint(copy)
    finally:
        path.write_text(original, encoding="utf-8")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{contract}" in proc.stdout and "BROKEN" in proc.stdout
    assert bad_import.split()[-1] in proc.stdout


def cycles(root: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(cwd), "ANONEVAL_CYCLES_INNER": "1"}
    return subprocess.run([sys.executable, str(root / ".ci" / "import_cycles.py")], cwd=cwd,
                          capture_output=True, text=True, env=env)


def test_the_package_has_no_import_circle(root: Path, copy: Path) -> None:
    proc = cycles(root, copy)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 import circle(s)" in proc.stdout


def test_a_circle_closed_inside_a_function_fails_the_check(root: Path, copy: Path) -> None:
    # kinds imports sources at the top; sources importing kinds inside a function closes a
    # circle within one layer, which the layers contract cannot see
    path = copy / "anoneval" / "core" / "data" / "sources.py"
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(original + "\n\ndef _late():\n    import anoneval.core.data.kinds\n",
                        encoding="utf-8")
        proc = cycles(root, copy)
        linted = lint(copy)
    finally:
        path.write_text(original, encoding="utf-8")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ("import circle: anoneval.core.data.kinds <-> anoneval.core.data.sources"
            in proc.stdout)
    assert "anoneval.core.data.sources -> anoneval.core.data.kinds (l." in proc.stdout
    assert linted.returncode == 0, linted.stdout  # the layers alone let it through
