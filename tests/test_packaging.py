"""Packaging: every sub-package ships in the wheel, nothing imports bare core/plugins/registry."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SOURCE_DIRS = ("core", "plugins", "registry")
BARE = {"core", "plugins", "registry"}


def setuptools_config(root: Path) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]


def package_of(directory: Path, root: Path, package_dir: dict[str, str]) -> str:
    """The import name setuptools' package-dir mapping gives a source folder."""
    rel = directory.relative_to(root).as_posix()
    best = max((d for d in package_dir.values() if rel == d or rel.startswith(d + "/")),
               key=len)
    name = next(p for p, d in package_dir.items() if d == best)
    rest = rel[len(best):].strip("/")
    return name + ("." + rest.replace("/", ".") if rest else "")


def test_every_subpackage_on_disk_is_listed(root: Path) -> None:
    cfg = setuptools_config(root)
    on_disk = {package_of(init.parent, root, cfg["package-dir"])
               for top in SOURCE_DIRS for init in (root / top).rglob("__init__.py")
               if "__pycache__" not in init.parts}
    assert on_disk == set(cfg["packages"])


def test_no_bare_imports_of_the_source_folders(root: Path) -> None:
    offenders = []
    for path in root.rglob("*.py"):
        if any(part in {".git", "build", "__pycache__"} for part in path.parts):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [f"{path}:{node.lineno} {n}" for n in names
                          if n.split(".")[0] in BARE]
    assert offenders == []
    assert not (BARE & set(sys.modules))


def test_registry_config_is_the_root_config(root: Path) -> None:
    assert (root / "registry" / "config.json").resolve() == (root / "config.json").resolve()


def test_wheel_contains_every_module_and_the_registry(root: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(root, src, ignore=shutil.ignore_patterns(
        ".git", "build", "*.egg-info", "__pycache__", "examples", "benchmarks", "tests"))
    (src / "tests").mkdir()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path / "dist"), str(src)], check=True,
                   capture_output=True)
    wheel = next((tmp_path / "dist").glob("anoneval-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    cfg = setuptools_config(root)
    expected = set()
    for top in SOURCE_DIRS:
        for py in (root / top).rglob("*.py"):
            if "__pycache__" in py.parts:
                continue
            pkg = package_of(py.parent, root, cfg["package-dir"])
            expected.add(pkg.replace(".", "/") + "/" + py.name)
    assert expected <= names, sorted(expected - names)
    assert "anoneval/registry/config.json" in names
    templates = {f"anoneval/core/templates/{p.name}"
                 for p in (root / "core" / "templates").iterdir()}
    assert templates and templates <= names, sorted(templates - names)
    with zipfile.ZipFile(wheel) as zf:
        shipped = zf.read("anoneval/registry/config.json")
    assert shipped == (root / "config.json").read_bytes()


@pytest.mark.parametrize("module", ["anoneval.core", "anoneval.registry", "anoneval.plugins",
                                    "anoneval.testing"])
def test_import_names(module: str) -> None:
    __import__(module)


@pytest.mark.parametrize("module", ["anoneval.registry", "anoneval.core.config",
                                    "anoneval.core.evaluator", "anoneval.testing",
                                    "anoneval.plugins.microdata.kanonymity"])
def test_each_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    # no import cycle between anoneval.core and anoneval.registry, whichever comes first
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
