"""Import layering: the import-linter contracts of pyproject.toml hold, and catch a violation."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LINT = [sys.executable, "-c",
        "import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())"]
TREE = ("core", "plugins", "registry")


def lint(cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = None
    if pythonpath is not None:
        import os

        env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run([*LINT, "--no-cache", "--config", str(cwd / "pyproject.toml")],
                          cwd=cwd, capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def copy(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The source tree as the ``anoneval`` namespace package in a temporary folder (first on
    PYTHONPATH, so it shadows the installed one)."""
    pytest.importorskip("importlinter")
    tmp = tmp_path_factory.mktemp("layering")
    pkg = tmp / "anoneval"
    pkg.mkdir()
    for top in TREE:
        shutil.copytree(root / top, pkg / top, ignore=shutil.ignore_patterns("__pycache__"))
    # core/testing installs as anoneval.testing
    shutil.move(str(pkg / "core" / "testing"), str(pkg / "testing"))
    shutil.copy(root / "pyproject.toml", tmp / "pyproject.toml")
    return tmp


def test_the_contracts_hold(root: Path) -> None:
    pytest.importorskip("importlinter")
    proc = lint(root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


@pytest.mark.parametrize(("module", "bad_import", "contract"), [
    ("plugins/microdata/kanonymity.py", "import anoneval.core.evaluator",
     "Plugins use the public contract"),
    ("registry/__init__.py", "import anoneval.core.plots", "The registry depends on"),
    ("core/api.py", "import anoneval.plugins.microdata.kanonymity", "The core knows no plugin"),
    ("core/data.py", "import anoneval.core.evaluator", "Layers"),
])
def test_a_violating_import_fails_the_check(copy: Path, module: str, bad_import: str,
                                            contract: str) -> None:
    path = copy / "anoneval" / module
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(original + f"\n{bad_import}  # a violation\n", encoding="utf-8")
        proc = lint(copy, pythonpath=copy)
    finally:
        path.write_text(original, encoding="utf-8")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{contract}" in proc.stdout and "BROKEN" in proc.stdout
    assert bad_import.split()[-1] in proc.stdout
