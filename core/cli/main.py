"""The ``anoneval`` command line (click): the built-in commands and the plugins' commands.

Exit codes: 0 success; 1 some measures failed (the report is still written); 2 a config,
input, plugin or usage error (nothing was evaluated); 3 ``run --strict`` and a threshold
FAILed; 130 interrupted (Ctrl-C); 143 terminated (SIGTERM). Plugins add commands through the
``register_commands(cli)`` hook (the built-in ``sweep`` and ``architecture`` do).
"""

from __future__ import annotations

import copy
import gc
import json
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click

from anoneval.core.cli.early import engine_overridden
from anoneval.core.cli.plugin_docs import (
    KIND_TITLES,
    describe_params,
    plugin_reference,
    plugins_markdown,
)
from anoneval.core.data.memory import MEMORY_HINT
from anoneval.core.data.progress import progress_wanted
from anoneval.core.errors import AnonevalError, ConfigError
from anoneval.core.report.atomic import remove_live
from anoneval.core.report.model import MultiReport, Report, report_format
from anoneval.core.report.outputs import check_outputs
from anoneval.core.run.commands import (
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_MEASURE_FAILED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_THRESHOLD_FAILED,
    command_registry,
    quiet_option,
    registry_option,
    remote_cluster_option,
)
from anoneval.core.run.workflows import load_workflow_config, workflow_name, workflows
from anoneval.registry import Registry, build_registry, own_version, plugin_info

KIND_CHOICE = click.Choice(list(KIND_TITLES))


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so every write in progress is undone the same way."""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(own_version(), prog_name="anoneval", message="%(prog)s %(version)s")
def cli() -> None:
    """Disclosure risk and information loss of anonymized data."""


def _emit_report(report: Report | MultiReport, out: Path | None, quiet: bool) -> None:
    if out is not None:
        report.write(out)
    if not quiet:
        print(report.summary())
        if out is not None:
            print(f"report written to {out}")


def _measures(report: Report | MultiReport) -> Iterator[tuple[str | None, Any]]:
    for r in report.variants if isinstance(report, MultiReport) else [report]:
        for m in r.measures:
            yield r.variant, m


def _refuse_workflow_config(config: str) -> None:
    name = workflow_name(config)
    if name is not None:
        raise ConfigError([("workflow", f"{config} is a {name!r} workflow config, not an "
                                        f"evaluation config; run it with "
                                        f"'anoneval {name} {config}'")])


@cli.command("run")
@click.argument("config")
@click.option("-o", "--output", metavar="REPORT",
              help="report path (overrides the config): .json, or .csv/.parquet for the "
                   "summary as a table")
@click.option("--html", metavar="FILE", help="also write a self-contained HTML report")
@click.option("--strict", is_flag=True,
              help=f"exit {EXIT_THRESHOLD_FAILED} when a measure's threshold FAILs")
@click.option("--engine", type=click.Choice(["local", "dask"]),
              help="where the variants run (overrides the config's engine.name)")
@click.option("--scheduler", metavar="ADDRESS",
              help="dask: a running scheduler, e.g. tcp://127.0.0.1:8786")
@click.option("--workers", type=int, metavar="N",
              help="processes evaluating the variants, this one included (local), or "
                   "LocalCluster workers (dask)")
@quiet_option
@registry_option
@remote_cluster_option
def cmd_run(config: str, output: str | None, html: str | None, strict: bool,
            engine: str | None, scheduler: str | None, workers: int | None, quiet: bool,
            registry: str | None) -> int:
    """Evaluate a config and write the report."""
    from anoneval.core.run.config import load_config
    from anoneval.core.run.runner import plan_inputs, plan_outputs, run_plan

    _refuse_workflow_config(config)
    plan = load_config(config, command_registry(registry))
    out = Path(output) if output else plan.output
    outputs = plan_outputs(plan)
    if out is not None:
        outputs.insert(0, ("report (-o)" if output else "output", out))
    if html:
        outputs.append(("HTML report (--html)", Path(html)))
    check_outputs([("config", Path(config)), *plan_inputs(plan)], outputs)
    if out is not None:
        report_format(out)  # -o x.csv writes a table, x.txt is refused before the run
    if html:
        from anoneval.core.report.plots import require_matplotlib

        require_matplotlib()  # fail before evaluating, not after
    configured = plan.config.engine
    engine_config = engine_overridden(
        configured.model_dump(exclude_defaults=True) if configured else {}, engine, scheduler,
        workers)
    # the HTML report plots the inputs, so it keeps them; otherwise each task loads its own
    datasets: dict[str, Any] | None = {} if html else None
    report = run_plan(plan, show_progress=progress_wanted(quiet), datasets=datasets,
                      engine=engine_config)
    _emit_report(report, out, quiet)
    if isinstance(report, MultiReport) and not quiet:
        from anoneval.core.run.engine import scale_hint

        rows = (report.inputs.get("original") or {}).get("rows") or 0
        spec = engine_config or (configured.model_dump() if configured else None)
        if spec is not None and spec.get("name") == "local" and not spec.get("workers"):
            spec = {**spec, "workers": (report.engine or {}).get("workers")}  # all cores
        hint = scale_hint(spec, len(report.variants), int(rows), len(plan.measures))
        if hint is not None:
            print(hint, file=sys.stderr)
    if html:
        from anoneval.core.report.html import write_html

        write_html(report, html, plan, datasets=datasets)
        if not quiet:
            print(f"HTML report written to {html}")
    errors = [(v, m) for v, m in _measures(report) if m.error is not None]
    failed = [(v, m) for v, m in _measures(report) if m.passed is False]
    if quiet:  # the summary (on stdout) is off: errors still go to stderr
        for v, m in errors:
            where = f"[{v}] " if v is not None else ""
            print(f"error in {where}{m.label}: {m.error}", file=sys.stderr)
    if strict and failed:
        for v, m in failed:
            where = f"[{v}] " if v is not None else ""
            ci = f" ci {m.ci}" if m.ci is not None else ""
            print(f"threshold FAIL: {where}{m.label} = {m.value}{ci} (threshold "
                  f"{json.dumps(m.threshold)})", file=sys.stderr)
    if errors:
        return EXIT_MEASURE_FAILED
    return EXIT_THRESHOLD_FAILED if strict and failed else EXIT_OK


@cli.command("validate")
@click.argument("config")
@registry_option
@remote_cluster_option
def cmd_validate(config: str, registry: str | None) -> int:
    """Validate a config (evaluation or workflow) without running it."""
    from anoneval.core.run.config import load_config
    from anoneval.core.run.runner import plan_inputs, plan_outputs

    reg = command_registry(registry)
    if workflow_name(config) is not None:
        flow, _ = load_workflow_config(config, reg)
        print(f"{config}: valid {flow.name} workflow config")
        return EXIT_OK
    plan = load_config(config, reg)
    outputs = plan_outputs(plan)
    if plan.output is not None:
        outputs.insert(0, ("output", plan.output))
    check_outputs([("config", Path(config)), *plan_inputs(plan)], outputs)
    if plan.config.engine is not None:
        from anoneval.core.run.engine import check_engine

        check_engine(plan.config.engine)
    n_variants = max(len(plan.anonymized), 1)
    print(f"{config}: valid ({len(plan.measures)} measures, {n_variants} anonymized "
          f"input{'s' if n_variants > 1 else ''})")
    return EXIT_OK


@cli.command("plugins")
@click.option("--kind", type=KIND_CHOICE)
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
@click.option("--markdown", is_flag=True, help="a Markdown table (for docs)")
@registry_option
def cmd_plugins(kind: str | None, as_json: bool, markdown: bool, registry: str | None) -> int:
    """List the registered plugins."""
    reg = command_registry(registry)
    infos = [plugin_info(e) for e in reg.entries(kind)]
    if as_json:
        print(json.dumps(infos, indent=2))
        return EXIT_OK
    if markdown:
        print(plugins_markdown(infos))
        return EXIT_OK
    for k in ([kind] if kind else sorted({i["kind"] for i in infos})):
        print(f"{k}:")
        for info in (i for i in infos if i["kind"] == k):
            origin = "" if info["distribution"] == "anoneval" else f"  [{info['source']}]"
            desc = info["description"] or f"(cannot load: {info.get('error')})"
            print(f"  {info['name']:<28} {desc}{origin}")
    return EXIT_OK


@cli.command("describe")
@click.argument("name", required=False)
@click.option("--all", "all_", is_flag=True, help="every built-in plugin (with --markdown)")
@click.option("--markdown", is_flag=True, help="Markdown output (for docs)")
@click.option("--kind", type=KIND_CHOICE)
@registry_option
def cmd_describe(name: str | None, all_: bool, markdown: bool, kind: str | None,
                 registry: str | None) -> int:
    """Show a plugin's params."""
    import inspect

    reg = command_registry(registry)
    if all_:
        if not markdown:
            print("error: --all needs --markdown", file=sys.stderr)
            return EXIT_INPUT
        sys.stdout.write(plugin_reference(reg))
        return EXIT_OK
    if not name:
        print("error: give a plugin NAME (or --all --markdown)", file=sys.stderr)
        return EXIT_INPUT
    kinds = [kind] if kind else reg.kinds_of(name)
    if not kinds:
        print(reg.unknown_message(list(KIND_TITLES), name), file=sys.stderr)
        return EXIT_INPUT
    for k in kinds:
        entry = reg.entry(k, name)
        cls = entry.load()
        print(f"{cls.name} ({k}, from {entry.source})")
        print(f"  {cls.description}")
        print(f"  accepts: {', '.join(cls.accepts)}")
        if cls.__doc__:
            print("\n  " + "\n  ".join(inspect.cleandoc(cls.__doc__).splitlines()))
        print("\n  params:")
        for p in describe_params(cls):
            req = "required" if p["required"] else f"default {json.dumps(p['default'])}"
            print(f"    {p['name']} ({p['type']}; {req})\n        {p['description']}")
    return EXIT_OK


@cli.command("schema")
@registry_option
def cmd_schema(registry: str | None) -> int:
    """JSON Schema of the config, of every plugin's params and of every workflow config."""
    from anoneval.core.run.config import config_schema

    reg = command_registry(registry)
    plugins: dict[str, dict[str, Any]] = {}
    for entry in reg.entries():
        cls = entry.load()
        plugins.setdefault(entry.kind, {})[entry.name] = cls.Params.model_json_schema()
    flows = {name: flow.model.model_json_schema() for name, flow in workflows(reg).items()}
    print(json.dumps({"config": config_schema(), "plugins": plugins, "workflows": flows},
                     indent=2))
    return EXIT_OK


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While the CLI runs, SIGTERM interrupts like Ctrl-C (main thread only)."""
    try:
        old = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def build_cli(registry: Registry) -> click.Group:
    """The built-in commands plus those the registry's plugins add (a fresh group, so the
    commands of one registry never leak into another)."""
    group = copy.copy(cli)
    group.commands = dict(cli.commands)
    registry.pm.hook.register_commands(cli=group)
    return group


def _warning_line(message: Warning | str, category: type[Warning], *args: object,
                  **kwargs: object) -> str:
    """A warning on the command line as one line (e.g. which separator was sniffed), without
    the source line Python shows by default."""
    kind = "" if category is UserWarning else f" ({category.__name__})"
    return f"warning{kind}: {message}\n"


@contextmanager
def _warnings_as_lines() -> Iterator[None]:
    """Show warnings as :func:`_warning_line` while the CLI runs (restored afterwards: tests
    and scripts call :func:`main` in their own process)."""
    before = warnings.formatwarning
    warnings.formatwarning = _warning_line
    try:
        yield
    finally:
        warnings.formatwarning = before


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    from anoneval.core.run.lifecycle import remove_stale_dirs

    remove_stale_dirs()  # temporary data of anoneval processes killed outright
    with _sigterm_as_interrupt(), _warnings_as_lines():
        try:
            registry = build_registry()
            group = build_cli(registry)
            with group.make_context("anoneval", args, obj=registry) as ctx:
                return int(group.invoke(ctx) or EXIT_OK)
        except click.exceptions.Exit as exc:  # --help, --version
            return int(exc.exit_code)
        except click.ClickException as exc:  # usage errors
            exc.show()
            return EXIT_INPUT if isinstance(exc, click.UsageError) else exc.exit_code
        except AnonevalError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_INPUT
        except OSError as exc:  # e.g. the report folder is not writable
            if isinstance(exc, BrokenPipeError):  # `anoneval plugins | head`: stop quietly
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return EXIT_OK
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_INPUT
        except MemoryError as exc:  # the last resort: inputs and measures catch their own
            remove_live()
            print(f"error: out of memory{f' ({exc})' if str(exc) else ''}; {MEMORY_HINT}",
                  file=sys.stderr)
            return EXIT_INPUT
        except click.Abort:
            print("interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except KeyboardInterrupt as exc:
            remove_live()
            terminated = isinstance(exc, Terminated)
            print("terminated (SIGTERM)" if terminated else "interrupted", file=sys.stderr)
            return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED


#: Seconds the ``anoneval`` command waits for threads still running after the run.
THREAD_GRACE = 2.0


def entry() -> NoReturn:
    """The ``anoneval`` command: :func:`main`, then exit even when a plugin left a non-daemon
    thread running (Python would wait for it forever after the report was written). The
    objects of the modules imported so far live until the process ends, so the garbage
    collector is told to skip them (``gc.freeze``): its full passes over them took 40-50 ms of
    a 100-variant run."""
    gc.freeze()
    exit_despite_threads(main())


def exit_despite_threads(code: int) -> NoReturn:
    """Exit with ``code``; threads that are not daemons and still run after
    :data:`THREAD_GRACE` seconds are named in a warning, and the process ends without them
    (output flushed, exit handlers run)."""
    deadline = time.monotonic() + THREAD_GRACE
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join(max(deadline - time.monotonic(), 0.0))
    stray = [t.name for t in threading.enumerate()
             if t is not threading.current_thread() and not t.daemon and t.is_alive()]
    # what is left is freed as the process ends, without the collector's last passes over it
    # (0.1-0.2 s with pandas and Dask imported); objects in unreachable cycles are then not
    # finalized, which Python does not promise at exit anyway
    gc.freeze()
    if not stray:
        sys.exit(code)
    print(f"warning: a plugin left {len(stray)} thread(s) running after the run "
          f"({', '.join(stray)}); exiting without them", file=sys.stderr)
    import atexit

    atexit._run_exitfuncs()  # what Python runs at exit, minus waiting for the threads
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


__all__ = ["build_cli", "cli", "entry", "exit_despite_threads", "main"]

if __name__ == "__main__":  # pragma: no cover
    entry()
