"""The ``anoneval architecture`` command and the workflow hook that registers its config."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from anoneval.core.api import (
    ConfigError,
    hookimpl,
)
from anoneval.core.run.commands import (
    EXIT_MEASURE_FAILED,
    EXIT_OK,
    command_registry,
    quiet_option,
    registry_option,
    remote_cluster_option,
)
from anoneval.plugins.workflows.architecture.config import (
    ArchitectureConfig,
    check_paths,
    synthesizer_class,
)
from anoneval.plugins.workflows.architecture.run import run_architecture

# ---------------------------------------------------------------------------------------------
# the workflow and its command
# ---------------------------------------------------------------------------------------------


def _check(cfg: ArchitectureConfig, base: Path, registry: Any,
           config_path: Path | None) -> None:
    """``anoneval validate``: the paths and the synthesizer."""
    problems = []
    for check in (lambda: check_paths(cfg, base, config_path, registry),
                  lambda: synthesizer_class(cfg.synthesizer, registry)):
        try:
            check()
        except ConfigError as exc:
            problems += exc.problems
    if problems:
        raise ConfigError(problems)


@click.command("architecture")
@click.argument("config")
@click.option("--no-plots", is_flag=True, help="skip the Figure 2-5 PNGs")
@quiet_option
@registry_option
@remote_cluster_option
def architecture_command(config: str, no_plots: bool, quiet: bool, registry: str | None) -> int:
    """Run the information architecture (tasks 1-16): fit an ME model, draw a replica,
    release it only when all six inspections pass."""
    from anoneval.core.data.progress import progress_wanted

    report = run_architecture(config, registry=command_registry(registry),
                              show_progress=progress_wanted(quiet),
                              plots=False if no_plots else None)
    if not quiet:
        for n in report["nodes"]:
            print(f"node {n['node']} (task {n['task']:>2}): "
                  f"{'pass' if n['passed'] else 'FAIL'}  {n['reason']}")
        print(report["message"])
        for w in report["warnings"]:
            print(f"warning: {w}")
    return EXIT_OK if report["status"] == "released" else EXIT_MEASURE_FAILED


class ArchitecturePlugin:
    """The built-in hook plugin of the workflow: its config model and its command."""

    @hookimpl
    def workflow(self, register: Callable[..., None]) -> None:
        register("architecture", ArchitectureConfig, _check)

    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        cli.add_command(architecture_command)


__all__ = ["ArchitecturePlugin", "architecture_command"]
