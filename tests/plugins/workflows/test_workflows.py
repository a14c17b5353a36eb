"""Workflows as plugins: the architecture's config is validated, described and path-checked;
a third-party package adds a workflow and a command through its entry point."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shutil
import types
from pathlib import Path
from typing import Literal

import click
import pytest
from pydantic import BaseModel, ConfigDict

from anoneval.core import hookimpl
from anoneval.core.cli.main import main
from anoneval.core.errors import ConfigError
from anoneval.core.run.workflows import workflows
from anoneval.plugins.workflows.architecture.run import run_architecture
from anoneval.registry import build_registry

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of examples/architecture.json and its data, outputs in the copy."""
    (tmp_path / "data").mkdir()
    shutil.copy(ROOT / "examples" / "data" / "mortgage_like.csv", tmp_path / "data")
    shutil.copy(ROOT / "examples" / "architecture.json", tmp_path / "architecture.json")
    return tmp_path / "architecture.json"


def edit(path: Path, **output: str) -> Path:
    cfg = json.loads(path.read_text())
    cfg["output"].update(output)
    path.write_text(json.dumps(cfg))
    return path


def digest(folder: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in folder.rglob("*") if p.is_file()}


def test_validate_accepts_the_example_architecture_config(capsys) -> None:
    assert main(["validate", str(ROOT / "examples" / "architecture.json")]) == 0
    assert "valid architecture workflow config" in capsys.readouterr().out


def test_validate_reports_every_architecture_problem(example: Path, capsys) -> None:
    cfg = json.loads(example.read_text())
    cfg.update(max_attempts=0, synthesizer={"name": "MaxEntNormall"})
    cfg["thresholds"]["model_kl"] = -1
    example.write_text(json.dumps(cfg))
    assert main(["validate", str(example)]) == 2
    err = capsys.readouterr().err
    assert "max_attempts" in err and "thresholds.model_kl" in err
    cfg = json.loads(example.read_text())
    cfg.update(max_attempts=1, thresholds={})
    example.write_text(json.dumps(cfg))
    assert main(["validate", str(example)]) == 2
    assert "synthesizer.name" in capsys.readouterr().err


def test_run_points_a_workflow_config_to_its_command(capsys) -> None:
    assert main(["run", str(ROOT / "examples" / "architecture.json")]) == 2
    assert "run it with 'anoneval architecture" in capsys.readouterr().err


def test_schema_lists_the_workflow_configs(capsys) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    arch = schema["workflows"]["architecture"]
    assert {"workflow", "data", "synthesizer", "thresholds", "output"} <= set(arch["properties"])


@pytest.mark.parametrize(("key", "value", "names"), [
    ("released", "data/mortgage_like.csv", ["output.released", "data"]),
    ("report", "architecture.json", ["output.report", "config"]),
    ("report", "out/architecture/released.csv", ["output.report", "output.released"]),
])
def test_architecture_outputs_never_overwrite_inputs(example: Path, capsys, key: str,
                                                     value: str, names: list[str]) -> None:
    edit(example, **{key: value})
    before = digest(example.parent)
    for command in (["validate", str(example)], ["architecture", str(example), "-q"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert all(n in err for n in names), err
        assert digest(example.parent) == before
    with pytest.raises(ConfigError, match=re.escape(names[0])):
        run_architecture(example)
    assert digest(example.parent) == before


def test_a_plot_on_the_data_is_refused(example: Path, capsys) -> None:
    (example.parent / "data" / "figure2_exploration.png").write_bytes(b"not a plot")
    shutil.copy(example.parent / "data" / "figure2_exploration.png", example.parent / "x.png")
    cfg = json.loads(edit(example, plots="data").read_text())
    cfg["data"] = "data/figure2_exploration.png"
    cfg["columns"] = None
    example.write_text(json.dumps(cfg))
    assert main(["validate", str(example)]) == 2
    assert "output.plots" in capsys.readouterr().err
    assert (example.parent / "data" / "figure2_exploration.png").read_bytes() == b"not a plot"


class _HelloConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    workflow: Literal["hello"] = "hello"
    greeting: str


@click.command("hello")
@click.argument("name")
def _hello(name: str) -> int:
    """Say hello."""
    print(f"hello {name}")
    return 0


def _third_party() -> types.ModuleType:
    plugin = types.ModuleType("anoneval_hello")

    @hookimpl
    def workflow(register):  # type: ignore[no-untyped-def]
        register("hello", _HelloConfig)

    @hookimpl
    def register_commands(cli):  # type: ignore[no-untyped-def]
        cli.add_command(_hello)

    plugin.workflow = workflow  # type: ignore[attr-defined]
    plugin.register_commands = register_commands  # type: ignore[attr-defined]
    return plugin


class _EntryPoint:
    name, value = "hello", "anoneval_hello"
    dist = types.SimpleNamespace(name="anoneval-hello", version="1.0")

    def load(self) -> types.ModuleType:
        return _third_party()


@pytest.mark.entry_points
def test_an_entry_point_adds_a_command_and_a_workflow(monkeypatch, tmp_path: Path,
                                                      capsys) -> None:
    from anoneval import registry as registry_module

    real = registry_module.metadata.entry_points
    monkeypatch.setattr(registry_module.metadata, "entry_points",
                        lambda group=None, **kw: [_EntryPoint()] if group == "anoneval"
                        else real(group=group, **kw))
    assert main(["hello", "world"]) == 0
    assert capsys.readouterr().out == "hello world\n"
    assert set(workflows(build_registry())) == {"architecture", "hello"}
    (tmp_path / "h.json").write_text(json.dumps({"workflow": "hello", "greeting": "hi"}))
    assert main(["validate", str(tmp_path / "h.json")]) == 0
    assert "valid hello workflow config" in capsys.readouterr().out
    (tmp_path / "h.json").write_text(json.dumps({"workflow": "hello", "greting": "hi"}))
    assert main(["validate", str(tmp_path / "h.json")]) == 2
    assert "greting" in capsys.readouterr().err
    monkeypatch.undo()
    assert main(["hello", "world"]) == 2  # gone without the package
    assert "No such command 'hello'" in capsys.readouterr().err


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_imports_flow_one_way_from_the_cli(root: Path) -> None:
    # nothing imports the CLI; the CLI knows no workflow or plugin module by name
    for path in [*root.glob("core/**/*.py"), *root.glob("plugins/**/*.py"),
                 *root.glob("registry/**/*.py")]:
        if path.name == "__main__.py" or path.parts[-2] == "cli":
            continue
        assert "anoneval.core.cli.main" not in imports_of(path), path
    cli_imports = imports_of(root / "core" / "cli" / "main.py")
    assert not {m for m in cli_imports if m.startswith("anoneval.plugins")}
    assert "anoneval.plugins.workflows._sweep" not in cli_imports
    assert "_load_subcommands" not in (root / "core" / "cli" / "main.py").read_text()


def test_the_readme_architecture_example_runs(root: Path, tmp_path: Path, monkeypatch,
                                              capsys) -> None:
    text = (root / "README.md").read_text()
    section = text.split("### Workflows")[1].split("\n## ")[0]
    shown = json.loads(re.search(r"```json\n(.*?)```", section, re.S).group(1))
    assert shown == json.loads((root / "examples" / "architecture.json").read_text())
    commands = re.search(r"```sh\n(.*?)```", section, re.S).group(1).splitlines()
    (tmp_path / "examples" / "data").mkdir(parents=True)
    shutil.copy(root / "examples" / "data" / "mortgage_like.csv",
                tmp_path / "examples" / "data")
    (tmp_path / "examples" / "architecture.json").write_text(json.dumps(shown))
    monkeypatch.chdir(tmp_path)  # the commands as typed in the README, run by main() here
    for line in commands:
        args = line.split("#")[0].split()
        assert args[0] == "anoneval"
        assert main(args[1:]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["validate", "examples/architecture.json"]) == 0
    assert "valid architecture workflow config" in capsys.readouterr().out
    released = tmp_path / shown["output"]["released"].replace("out/", "examples/out/", 1)
    assert released.is_file()
    report = json.loads((released.parent / "report.json").read_text())
    assert report["status"] == "released" and all(n["passed"] for n in report["nodes"])


def test_validate_needs_an_me_synthesizer(example: Path, capsys) -> None:
    cfg = json.loads(example.read_text())
    cfg["synthesizer"] = {"name": "RandomizedResponse"}
    example.write_text(json.dumps(cfg))
    assert main(["validate", str(example)]) == 2
    assert "does not take 'columns' and 'transform'" in capsys.readouterr().err
