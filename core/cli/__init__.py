"""The ``anoneval`` command line (click commands) and the plugins' Markdown documentation."""

from __future__ import annotations

import sys
from typing import NoReturn


def entry() -> NoReturn:
    """The ``anoneval`` command (the console script): :func:`anoneval.core.cli.main.entry`,
    after starting the local engine's fork server when the run will use worker processes
    (:func:`anoneval.core.cli.early.start_fork_server`), so that their imports overlap this
    process's own."""
    from anoneval.core.cli.early import start_fork_server

    start_fork_server(sys.argv[1:])
    from anoneval.core.cli.main import entry as command

    command()


__all__ = ["entry"]
