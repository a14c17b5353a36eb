"""pluggy hook specifications of anoneval.

Four *registration* hooks, one per plugin kind of the design card, hand implementation classes
to the registry; the registry, not pluggy, selects one by name. ``workflow`` registers the
config model of a workflow and ``register_commands`` adds commands to the ``anoneval`` CLI (as
in llm). A few *lifecycle* hooks are called with data where every plugin should run (the
built-in timing uses them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import click

    from anoneval.core.api import Context, Measure, MeasureResult

PROJECT = "anoneval"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

#: ``register(cls)`` adds one implementation class; ``cls.name`` is its config name.
Register = Callable[[type], None]


# -- registration hooks ------------------------------------------------------------------------


@hookspec
def risk_measure(register: Register) -> None:
    """Call ``register(cls)`` once for each :class:`~anoneval.core.api.RiskMeasure` subclass."""


@hookspec
def loss_measure(register: Register) -> None:
    """Call ``register(cls)`` once for each :class:`~anoneval.core.api.LossMeasure` subclass."""


@hookspec
def distance(register: Register) -> None:
    """Call ``register(cls)`` once for each :class:`~anoneval.core.api.Distance` subclass."""


@hookspec
def synthesizer(register: Register) -> None:
    """Call ``register(cls)`` once for each :class:`~anoneval.core.api.Synthesizer` subclass."""


@hookspec
def workflow(register: Callable[..., None]) -> None:
    """Call ``register(name, model, check=None)`` once for each workflow config.

    ``model`` is the pydantic model of the workflow's config; a config file whose top-level
    ``workflow`` key is ``name`` is validated with it by ``anoneval validate`` and described by
    ``anoneval schema``. ``check(config, base_dir, registry, config_path)``, when given, makes
    the checks the model cannot (files, plugins, output paths) and raises ``ConfigError``.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add commands to the ``anoneval`` command line: ``cli.add_command(command)``."""


# -- lifecycle hooks ---------------------------------------------------------------------------


@hookspec
def before_measure(measure: Measure, ctx: Context) -> None:
    """Called just before ``measure`` computes; ``ctx.extra`` is shared with ``after_measure``."""


@hookspec
def after_measure(measure: Measure, result: MeasureResult | None, ctx: Context) -> None:
    """Called after ``measure`` finished (``result`` is None when it raised)."""


@hookspec
def report_section(measure: dict[str, Any], report: dict[str, Any]) -> str | None:
    """Return an HTML fragment for this measure's section of the HTML report, or None.

    ``measure`` is the measure's entry of the JSON report and ``report`` the JSON report it
    belongs to (for a many-variant run, that variant's report, which names the ``variant``).
    Every non-None fragment is included, so a third-party measure can render its own section.
    An implementation may take only the arguments it needs. The fragment is inserted as
    written: escape every string it shows (``markupsafe.escape``; ``anoneval.core.report.plots``'
    ``figure_block`` and ``note`` escape for you). The page runs no script.
    """
