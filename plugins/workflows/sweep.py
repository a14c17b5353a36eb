"""The ``anoneval sweep`` command: a built-in command plugin over its run (``_sweep.py``).

    anoneval sweep CONFIG --param measures[0].params.gamma --values 0:1:0.05
"""

from __future__ import annotations

from pathlib import Path

import click

from anoneval.core.hookspecs import hookimpl
from anoneval.core.run.commands import (
    EXIT_MEASURE_FAILED,
    EXIT_OK,
    command_registry,
    quiet_option,
    registry_option,
    remote_cluster_option,
)


@click.command("sweep")
@click.argument("config")
@click.option("--param", required=True,
              help="JSON path of the param: measures[<i>].params.<name>, "
                   "measures[*].params.<name> (every measure), "
                   "synthesizer.params.<name> or seed")
@click.option("--values", required=True,
              help="start:stop:step (stop included), a,b,c or a JSON array")
@click.option("-o", "--output", metavar="PREFIX",
              help="output prefix (default: the config's name + _sweep, in its folder)")
@click.option("--plot", type=click.Choice(["both", "png", "html", "none"]), default="both",
              help="which curve files to write (default both)")
@click.option("--overlay", is_flag=True,
              help="draw every measure's curve in one panel (same units)")
@click.option("--all-measures", is_flag=True,
              help="for a measure's param, evaluate every measure of the config, not only the "
                   "swept one")
@quiet_option
@registry_option
@remote_cluster_option
def sweep_command(config: str, param: str, values: str, output: str | None, plot: str,
                  overlay: bool, all_measures: bool, quiet: bool, registry: str | None) -> int:
    """Evaluate a config over a grid of one param and plot the curves."""
    from anoneval.core.data.progress import progress_wanted
    from anoneval.core.report.outputs import check_outputs
    from anoneval.core.run.config import load_config
    from anoneval.core.run.runner import plan_inputs
    from anoneval.plugins.workflows._sweep import (
        parse_param,
        parse_values,
        sweep,
        sweep_outputs,
        write_sweep,
    )

    reg = command_registry(registry)
    grid = parse_values(values)
    parse_param(param)
    config_path = Path(config)
    prefix = Path(output) if output else config_path.with_name(config_path.stem + "_sweep")
    plan = load_config(config_path, reg)
    check_outputs([("config", config_path), *plan_inputs(plan)],
                  [(f"sweep output (-o {prefix})", p) for p in sweep_outputs(prefix, plot)])
    if plot != "none":
        from anoneval.core.report.plots import require_matplotlib

        require_matplotlib()
    result = sweep(config, param, grid, registry=reg, show_progress=progress_wanted(quiet),
                   all_measures=all_measures)
    written = write_sweep(result, prefix, plot, overlay)
    if not quiet:
        print(result.summary(reg))
        print("written: " + ", ".join(map(str, written)))
    return EXIT_OK if result.ok else EXIT_MEASURE_FAILED


class SweepPlugin:
    """The built-in hook plugin of the sweep: its command."""

    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        cli.add_command(sweep_command)
