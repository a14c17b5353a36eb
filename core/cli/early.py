"""What the ``anoneval`` command does before importing its commands: start the local engine's
fork server when the run will use worker processes.

The server imports anoneval, pandas and the built-in measures (about half a second) on another
core while this process imports the same, instead of after: the worker processes then join a
run as it reaches its variants. Only ``anoneval run CONFIG ...`` is read, by its flags and the
``engine`` section of its JSON config; this module imports only the standard library and
:mod:`anoneval.core.run.forkserver`.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: A config larger than this is not read ahead of the run (it would delay the run more than a
#: late fork server does).
CONFIG_BYTES = 2**20


def start_fork_server(argv: Sequence[str]) -> None:
    """Start the local engine's fork server (not waiting for it) when ``argv``, the command's
    arguments, run a config on the local engine with more than one worker process
    (:func:`local_workers`). A guess made ahead of validation: the run itself checks the
    config and starts the server when it needs one that is not running."""
    if local_workers(argv) > 1:
        from anoneval.core.run.forkserver import context

        context()


def engine_overridden(section: Mapping[str, Any], engine: str | None, scheduler: str | None,
                      workers: int | None) -> dict[str, Any] | None:
    """The engine of ``anoneval run``: the config's ``engine`` section with the flags
    ``--engine``, ``--scheduler`` (the dask engine unless ``--engine`` says otherwise) and
    ``--workers`` over it; None without flags (the config's section, if any, as it is)."""
    overrides = {k: v for k, v in (("name", engine), ("address", scheduler),
                                   ("workers", workers)) if v is not None}
    if scheduler is not None and engine is None:
        overrides["name"] = "dask"
    return {**section, **overrides} if overrides else None


def local_workers(argv: Sequence[str]) -> int:
    """The processes of the local engine that ``anoneval`` with arguments ``argv`` will run
    on, as ``anoneval run`` resolves them (:func:`engine_overridden`, the config being the
    argument after ``run``); a local engine without ``workers`` takes every core. 0 when the
    command is not a run on the local engine, or its config is not a regular file readable as
    JSON."""
    if not argv or argv[0] != "run":
        return 0
    flags = _flags(argv[1:])
    section: Any = None
    try:
        workers = int(flags["workers"]) if "workers" in flags else None
        if len(argv) > 1 and not argv[1].startswith("-"):
            path = Path(argv[1])
            info = path.stat()
            if not stat.S_ISREG(info.st_mode) or info.st_size > CONFIG_BYTES:
                return 0  # a device or a FIFO is refused by the run, never read here
            section = json.loads(path.read_bytes()).get("engine")
    except (OSError, ValueError, AttributeError):
        return 0
    if section is not None and not isinstance(section, dict):
        return 0
    spec = engine_overridden(section or {}, flags.get("engine"), flags.get("scheduler"),
                             workers)
    if spec is None:
        spec = section  # no flags: the config's section; none either: serial
    if spec is None or spec.get("name", "local") != "local":
        return 0
    try:
        return int(spec.get("workers") or os.cpu_count() or 1)
    except (TypeError, ValueError):
        return 0


def _flags(args: Sequence[str]) -> dict[str, str]:
    """The values of ``--engine``, ``--scheduler`` and ``--workers`` in ``args`` (as
    ``--flag value`` or ``--flag=value``; the last one given wins, as with click)."""
    found: dict[str, str] = {}
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        name = flag[2:]
        if flag.startswith("--") and name in ("engine", "scheduler", "workers"):
            if eq:
                found[name] = value
            elif i + 1 < len(args):
                found[name] = args[i + 1]
    return found


__all__ = ["CONFIG_BYTES", "engine_overridden", "local_workers", "start_fork_server"]
