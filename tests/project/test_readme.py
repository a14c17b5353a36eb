"""The README: its opening commands are what CI runs, and its plugin list matches the registry."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

#: The generated lists hold the built-ins only, whatever anoneval plugins are installed.
BUILTINS_ONLY = {"ANONEVAL_REGISTRY": "", "ANONEVAL_LOAD_PLUGINS": ""}


def opening_commands(root: Path) -> list[str]:
    text = (root / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_install_demo_and_test_commands(root: Path) -> None:
    text = (root / "README.md").read_text()
    assert text.index("```bash") < 40  # right under the title
    install, tests = opening_commands(root)
    assert "pip install" in install and "anoneval run examples/" in install
    assert tests == "python -m pytest -n auto --dist worksteal"  # pytest-xdist: the test extra
    config = install.split("anoneval run ")[1].split()[0]
    assert (root / config).is_file()


def test_ci_runs_the_readme_commands(root: Path) -> None:
    ci = (root / ".ci" / "run").read_text()
    assert "README.md" in ci and "ruff check" in ci
    for check in ("lint-imports", "vermin --target=3.10-", "3.10", "3.13",
                  "export ANONEVAL_REQUIRE_BROWSER=1",
                  # the runs on 3.10 and 3.13 use the README's test command too
                  'test_cmd=$(grep -m 1 pytest', '"$test_cmd -q -p no:cacheprovider"'):
        assert check in ci
    proc = subprocess.run([sys.executable, str(root / ".ci" / "readme_commands.py")],
                          capture_output=True, text=True, check=True, cwd=root)
    assert proc.stdout.splitlines() == opening_commands(root)


def generated(args: list[str], monkeypatch: pytest.MonkeyPatch,
              capsys: pytest.CaptureFixture[str]) -> str:
    """What ``anoneval ARGS`` prints with the built-ins only (run in this process)."""
    from anoneval.core.cli.main import main

    for name, value in BUILTINS_ONLY.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    assert main(args) == 0
    return capsys.readouterr().out


def test_plugin_list_is_in_sync_with_the_registry(root: Path, monkeypatch, capsys) -> None:
    text = (root / "README.md").read_text()
    listed = text.split("<!-- plugins:start -->\n")[1].split("<!-- plugins:end -->")[0]
    shown = generated(["plugins", "--markdown"], monkeypatch, capsys)
    assert listed.strip() == shown.strip(), (
        "README plugin list is stale: regenerate it with "
        "`ANONEVAL_LOAD_PLUGINS= anoneval plugins --markdown`")


def test_plugin_reference_is_in_sync(root: Path, monkeypatch, capsys) -> None:
    shown = generated(["describe", "--all", "--markdown"], monkeypatch, capsys)
    assert (root / "docs" / "plugins.md").read_text() == shown, (
        "docs/plugins.md is stale: regenerate it with "
        "`ANONEVAL_LOAD_PLUGINS= anoneval describe --all --markdown > docs/plugins.md`")
