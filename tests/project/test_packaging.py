"""Packaging: every sub-package ships in the wheel, nothing imports bare core/plugins/registry."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

SOURCE_DIRS = ("core", "plugins", "registry")
BARE = {"core", "plugins", "registry"}
#: Folders of a checkout that hold no code of ours (a virtual environment made inside it).
NOT_OURS = {".git", ".venv", "venv", "site-packages", "build", "__pycache__", ".tox"}


def package_dirs(root: Path) -> dict[str, str]:
    """setup.py's ``PACKAGE_DIR`` (import name → source folder), read without running it."""
    tree = ast.parse((root / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PACKAGE_DIR":
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no PACKAGE_DIR")


def package_of(directory: Path, root: Path, package_dir: dict[str, str]) -> str:
    """The import name setuptools' package-dir mapping gives a source folder."""
    rel = directory.relative_to(root).as_posix()
    best = max((d for d in package_dir.values() if rel == d or rel.startswith(d + "/")),
               key=len)
    name = next(p for p, d in package_dir.items() if d == best)
    rest = rel[len(best):].strip("/")
    return name + ("." + rest.replace("/", ".") if rest else "")


def test_no_bare_imports_of_the_source_folders(root: Path) -> None:
    offenders = []
    for path in root.rglob("*.py"):
        if any(part in NOT_OURS for part in path.relative_to(root).parts):
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


@pytest.fixture(scope="module")
def wheel(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the source tree (no examples, benchmarks or tests) that has
    one more plugin family than the tree; built once for the tests below."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(root, src, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", "examples", "benchmarks",
        "tests"))
    (src / "tests").mkdir()
    # a new family needs no edit of the build configuration to ship
    (src / "plugins" / "newfamily").mkdir()
    (src / "plugins" / "newfamily" / "__init__.py").write_text('"""A new family."""\n')
    (src / "plugins" / "newfamily" / "measure.py").write_text('"""A new measure."""\n')
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp / "dist"), str(src)], check=True,
                   capture_output=True)
    return next((tmp / "dist").glob("anoneval-*.whl"))


def test_wheel_contains_every_module_and_the_registry(root: Path, wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    package_dir = package_dirs(root)
    expected = {"anoneval/plugins/newfamily/__init__.py", "anoneval/plugins/newfamily/measure.py"}
    for top in SOURCE_DIRS:
        for py in (root / top).rglob("*.py"):
            if "__pycache__" in py.parts:
                continue
            pkg = package_of(py.parent, root, package_dir)
            expected.add(pkg.replace(".", "/") + "/" + py.name)
    assert expected <= names, sorted(expected - names)
    assert "anoneval/registry/config.json" in names
    assert {"anoneval/__init__.py", "anoneval/__main__.py", "anoneval/py.typed"} <= names
    templates = {f"anoneval/core/report/templates/{p.name}"
                 for p in (root / "core" / "report" / "templates").iterdir()}
    assert templates and templates <= names, sorted(templates - names)
    with zipfile.ZipFile(wheel) as zf:
        shipped = zf.read("anoneval/registry/config.json")
    assert shipped == (root / "config.json").read_bytes()
    assert not any(n.startswith("anoneval/core/testing/") for n in names)


@pytest.mark.parametrize("module", ["anoneval", "anoneval.core", "anoneval.registry",
                                    "anoneval.plugins", "anoneval.testing"])
def test_import_names(module: str) -> None:
    __import__(module)


@pytest.mark.parametrize("module", ["anoneval.registry", "anoneval.core.run.config",
                                    "anoneval.core.run.evaluator", "anoneval.testing",
                                    "anoneval.plugins.microdata.kanonymity"])
def test_each_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    # no import cycle between anoneval.core and anoneval.registry, whichever comes first
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


def test_a_non_editable_install_has_the_top_level_package(wheel: Path, tmp_path: Path) -> None:
    # the wheel (what `pip install .` builds) installed into a private target, then imported
    # from there (not from the worktree)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                    "-q", "--target", str(site), str(wheel)], check=True, capture_output=True)
    assert (site / "anoneval" / "py.typed").is_file()
    assert not (site / "anoneval" / "core" / "_root").exists()
    code = ("import anoneval, anoneval.core, anoneval.registry, anoneval.plugins.workflows; "
            "print(anoneval.__file__); print(anoneval.core.__file__); "
            "print(anoneval.evaluate is anoneval.core.evaluate)")
    env = {**__import__("os").environ, "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env, cwd=tmp_path).stdout.split()
    assert out[0] == str(site / "anoneval" / "__init__.py")
    assert out[1] == str(site / "anoneval" / "core" / "__init__.py") and out[2] == "True"
    proc = subprocess.run([sys.executable, "-m", "anoneval", "--help"], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0 and "architecture" in proc.stdout and "sweep" in proc.stdout


def test_the_editable_install_maps_the_top_level_package(root: Path) -> None:
    import anoneval
    import anoneval.core

    assert Path(anoneval.__file__) == root / "core" / "_root" / "__init__.py"
    assert Path(anoneval.core.__file__) == root / "core" / "__init__.py"
    assert (root / "core" / "_root" / "py.typed").is_file()
