"""The layout shows the architecture: core/ in folders by job, each saying what belongs there;
plugins/README.md lists exactly the plugin families; the tests mirror the code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

CORE_FOLDERS = {"data", "run", "report", "cli"}
CONTRACT = {"api.py", "hookspecs.py", "errors.py"}


def test_core_is_folders_by_job_and_the_contract(root: Path) -> None:
    core = root / "core"
    folders = {p.name for p in core.iterdir() if (p / "__init__.py").is_file()}
    assert folders == CORE_FOLDERS | {"_root", "testing"}
    modules = {p.name for p in core.glob("*.py")}
    assert modules == CONTRACT | {"__init__.py", "__main__.py"}
    for name in CORE_FOLDERS:
        doc = ast.get_docstring(ast.parse((core / name / "__init__.py").read_text("utf-8")))
        assert doc and "\n" not in doc.strip(), name  # one line: what belongs there


def test_plugins_readme_lists_exactly_the_families(root: Path) -> None:
    plugins = root / "plugins"
    families = {p.name for p in plugins.iterdir()
                if (p / "__init__.py").is_file() and not p.name.startswith("_")}
    text = (plugins / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([a-z_]+)/` \|", text, flags=re.M))
    assert listed == families
    for shared in (p.name for p in plugins.iterdir()
                   if (p / "__init__.py").is_file() and p.name.startswith("_")):
        assert f"`{shared}/`" in text, shared


def test_the_tests_mirror_the_code(root: Path) -> None:
    tests = root / "tests"
    assert {p.name for p in (tests / "core").iterdir() if p.is_dir()
            and p.name != "__pycache__"} == CORE_FOLDERS
    families = {p.name for p in (root / "plugins").iterdir() if (p / "__init__.py").is_file()}
    tested = {p.name for p in (tests / "plugins").iterdir() if p.is_dir()
              and p.name != "__pycache__"}
    assert tested <= families, tested - families
    # every test module lives in a folder of the tree (none left flat in tests/)
    assert not list(tests.glob("test_*.py"))
