"""The ``anoneval`` command line.

Exit codes: 0 success; 1 some measures failed (the report is still written); 2 a config, input
or plugin error (nothing was evaluated).
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from anoneval.core.config import config_schema, load_config
from anoneval.core.errors import AnonevalError
from anoneval.core.jsonable import to_jsonable
from anoneval.core.progress import progress_wanted
from anoneval.core.report import MultiReport, Report
from anoneval.registry import Registry, build_registry, own_version, plugin_info

EXIT_OK, EXIT_MEASURE_FAILED, EXIT_INPUT = 0, 1, 2
#: Extra subcommands contributed by other modules: name → (add_arguments, run).
SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None],
                             Callable[[argparse.Namespace], int]]] = {}


def _registry(args: argparse.Namespace) -> Registry:
    import os

    user = getattr(args, "registry", None) or os.environ.get("ANONEVAL_REGISTRY") or None
    registry = build_registry(user_file=user)
    for err in registry.load_errors:
        print(f"warning: {err}", file=sys.stderr)
    return registry


def _emit_report(report: Report | MultiReport, out: Path | None, quiet: bool) -> None:
    if out is not None:
        report.write(out)
    if not quiet:
        print(report.summary())
        if out is not None:
            print(f"report written to {out}")


def cmd_run(args: argparse.Namespace) -> int:
    from anoneval.core.runner import run_plan

    plan = load_config(args.config, _registry(args))
    html = getattr(args, "html", None)
    if html:
        from anoneval.core.plots import require_matplotlib

        require_matplotlib()  # fail before evaluating, not after
    datasets: dict[str, Any] = {}
    report = run_plan(plan, show_progress=progress_wanted(args.quiet), datasets=datasets)
    out = Path(args.output) if args.output else plan.output
    _emit_report(report, out, args.quiet)
    if html:
        from anoneval.core.html import write_html

        write_html(report, html, plan, datasets=datasets)
        if not args.quiet:
            print(f"HTML report written to {args.html}")
    return EXIT_OK if report.ok else EXIT_MEASURE_FAILED


def cmd_validate(args: argparse.Namespace) -> int:
    plan = load_config(args.config, _registry(args))
    n_variants = max(len(plan.anonymized), 1)
    print(f"{args.config}: valid ({len(plan.measures)} measures, {n_variants} anonymized "
          f"input{'s' if n_variants > 1 else ''})")
    return EXIT_OK


def cmd_plugins(args: argparse.Namespace) -> int:
    registry = _registry(args)
    infos = [plugin_info(e) for e in registry.entries(args.kind)]
    if args.json:
        print(json.dumps(infos, indent=2))
        return EXIT_OK
    if args.markdown:
        print(plugins_markdown(infos))
        return EXIT_OK
    for kind in ([args.kind] if args.kind else sorted({i["kind"] for i in infos})):
        print(f"{kind}:")
        for info in (i for i in infos if i["kind"] == kind):
            origin = "" if info["distribution"] == "anoneval" else f"  [{info['source']}]"
            desc = info["description"] or f"(cannot load: {info.get('error')})"
            print(f"  {info['name']:<28} {desc}{origin}")
    return EXIT_OK


def plugins_markdown(infos: list[dict[str, Any]]) -> str:
    """The README's table of plugins (kept in sync by a test)."""
    lines = ["| kind | name | accepts | description |", "|---|---|---|---|"]
    for i in infos:
        lines.append(f"| {i['kind']} | `{i['name']}` | {', '.join(i.get('accepts', []))} | "
                     f"{i['description']} |")
    return "\n".join(lines)


def type_name(ann: Any) -> str:
    """A readable type: ``int``, ``list[str]``, ``'a' | 'b'``, ``float | null``."""
    origin = get_origin(ann)
    if origin is Annotated:
        return type_name(get_args(ann)[0])
    if origin is Literal:
        return " | ".join(repr(a) for a in get_args(ann))
    if origin in (Union, types.UnionType):
        return " | ".join(type_name(a) for a in get_args(ann))
    if origin is not None:
        args = ", ".join(type_name(a) for a in get_args(ann))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if ann is type(None):
        return "null"
    return getattr(ann, "__name__", str(ann))


def describe_params(cls: type) -> list[dict[str, Any]]:
    """Name, type, default and description of each param of a plugin class."""
    out = []
    for name, f in cls.Params.model_fields.items():  # type: ignore[attr-defined]
        default: Any = f.default
        if f.default_factory is not None:
            default = f.default_factory()  # type: ignore[call-arg]
        default = to_jsonable(default)
        out.append({"name": name, "type": type_name(f.annotation),
                    "default": None if f.is_required() else default,
                    "required": f.is_required(), "description": f.description or ""})
    return out


KIND_TITLES = {"risk_measure": "Risk measures", "loss_measure": "Loss measures",
               "distance": "Distances", "synthesizer": "Synthesizers"}


def _md_cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def plugin_reference(registry: Registry) -> str:
    """Markdown reference of the built-in plugins: docstring and params of each."""
    out = ["# Built-in plugins", "",
           "Generated by `anoneval describe --all --markdown` from the plugins' docstrings and "
           "params (a test keeps it in sync).", ""]
    for kind, title in KIND_TITLES.items():
        out += [f"## {title}", ""]
        for entry in registry.entries(kind):
            if entry.distribution != "anoneval":
                continue
            cls = entry.load()
            out += [f"### {cls.name}", "", f"{cls.description} Accepts: "
                    f"{', '.join(cls.accepts)}.", ""]
            if cls.__doc__:
                out += ["```text", inspect.cleandoc(cls.__doc__), "```", ""]
            out += ["| param | type | default | description |", "|---|---|---|---|"]
            for p in describe_params(cls):
                default = "required" if p["required"] else f"`{json.dumps(p['default'])}`"
                out.append(f"| `{p['name']}` | {_md_cell(p['type'])} | {_md_cell(default)} | "
                           f"{_md_cell(p['description'])} |")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def cmd_describe(args: argparse.Namespace) -> int:
    registry = _registry(args)
    if args.all:
        if not args.markdown:
            print("error: --all needs --markdown", file=sys.stderr)
            return EXIT_INPUT
        sys.stdout.write(plugin_reference(registry))
        return EXIT_OK
    if not args.name:
        print("error: give a plugin NAME (or --all --markdown)", file=sys.stderr)
        return EXIT_INPUT
    kinds = [args.kind] if args.kind else registry.kinds_of(args.name)
    if not kinds:
        print(registry.unknown_message(list(KIND_TITLES), args.name), file=sys.stderr)
        return EXIT_INPUT
    for kind in kinds:
        entry = registry.entry(kind, args.name)
        cls = entry.load()
        print(f"{cls.name} ({kind}, from {entry.source})")
        print(f"  {cls.description}")
        print(f"  accepts: {', '.join(cls.accepts)}")
        if cls.__doc__:
            print("\n  " + "\n  ".join(inspect.cleandoc(cls.__doc__).splitlines()))
        print("\n  params:")
        for p in describe_params(cls):
            req = "required" if p["required"] else f"default {json.dumps(p['default'])}"
            print(f"    {p['name']} ({p['type']}; {req})\n        {p['description']}")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    registry = _registry(args)
    plugins: dict[str, dict[str, Any]] = {}
    for entry in registry.entries():
        cls = entry.load()
        plugins.setdefault(entry.kind, {})[entry.name] = cls.Params.model_json_schema()
    print(json.dumps({"config": config_schema(), "plugins": plugins}, indent=2))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--registry", metavar="FILE",
                        help="extra registry file (format of config.json); "
                             "default $ANONEVAL_REGISTRY")
    parser = argparse.ArgumentParser(
        prog="anoneval", description="Disclosure risk and information loss of anonymized data.")
    parser.add_argument("--version", action="version", version=f"anoneval {own_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", parents=[common], help="evaluate a config and write the report")
    p.add_argument("config")
    p.add_argument("-o", "--output", metavar="REPORT", help="report path (overrides the config)")
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary, no progress bar")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("validate", parents=[common], help="validate a config without running it")
    p.add_argument("config")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("plugins", parents=[common], help="list the registered plugins")
    p.add_argument("--kind", choices=["risk_measure", "loss_measure", "distance", "synthesizer"])
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--markdown", action="store_true", help="a Markdown table (for docs)")
    p.set_defaults(func=cmd_plugins)

    p = sub.add_parser("describe", parents=[common], help="show a plugin's params")
    p.add_argument("name", nargs="?")
    p.add_argument("--all", action="store_true", help="every built-in plugin (with --markdown)")
    p.add_argument("--markdown", action="store_true", help="Markdown output (for docs)")
    p.add_argument("--kind", choices=["risk_measure", "loss_measure", "distance", "synthesizer"])
    p.set_defaults(func=cmd_describe)

    p = sub.add_parser("schema", parents=[common],
                       help="JSON Schema of the config and of every plugin's params")
    p.set_defaults(func=cmd_schema)

    for name, (help_text, add_args, run) in SUBCOMMANDS.items():
        p = sub.add_parser(name, parents=[common], help=help_text)
        add_args(p)
        p.set_defaults(func=run)
    return parser


def _load_subcommands() -> None:
    """Import the modules that contribute subcommands (they fill :data:`SUBCOMMANDS`)."""
    import importlib

    for module in ("anoneval.core.sweep", "anoneval.plugins.maxent.architecture"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


def main(argv: Sequence[str] | None = None) -> int:
    _load_subcommands()
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except AnonevalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as exc:  # e.g. the report folder is not writable
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `anoneval plugins | head`: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


__all__ = ["SUBCOMMANDS", "build_parser", "main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
