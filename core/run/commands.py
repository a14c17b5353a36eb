"""What a command plugin needs: exit codes, the shared options and the run's registry.

Commands are click commands added through the ``register_commands(cli)`` hook. They raise
:class:`~anoneval.core.errors.AnonevalError` for bad input (the CLI prints it and exits 2)
and return an exit code.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from anoneval.registry import Registry

#: Exit codes of every command (documented in the README).
EXIT_OK = 0
EXIT_MEASURE_FAILED = 1  # some measures failed; the report is still written
EXIT_INPUT = 2  # a config, input or plugin error, or a usage error: nothing was evaluated
EXIT_THRESHOLD_FAILED = 3  # ``run --strict``: a threshold FAILed
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT)
EXIT_TERMINATED = 143  # SIGTERM

F = TypeVar("F", bound=Callable[..., Any])


def registry_option(f: F) -> F:
    """The ``--registry FILE`` option: an extra registry file."""
    return click.option("--registry", metavar="FILE",
                        help="extra registry file (format of config.json); "
                             "default $ANONEVAL_REGISTRY")(f)


def remote_cluster_option(f: F) -> F:
    """The ``--allow-remote-cluster`` option: while the command runs, a Dask scheduler not on
    this machine may be used (refused by default: docs/security.md)."""

    @functools.wraps(f)
    def wrapped(*args: Any, allow_remote_cluster: bool = False, **kwargs: Any) -> Any:
        from anoneval.core.run.engine import remote_clusters_allowed

        with remote_clusters_allowed(allow_remote_cluster):
            return f(*args, **kwargs)

    return click.option("--allow-remote-cluster", "allow_remote_cluster", is_flag=True,
                        help="allow a Dask scheduler that is not on this machine (it receives "
                             "the data and runs code here; see docs/security.md)")(
        wrapped)  # type: ignore[return-value]


def quiet_option(f: F) -> F:
    """The ``-q/--quiet`` option: no summary, no progress bar."""
    return click.option("-q", "--quiet", is_flag=True,
                        help="no summary, no progress bar")(f)


def command_registry(user_file: str | None = None) -> Registry:
    """The registry of this invocation plus ``user_file`` (or ``$ANONEVAL_REGISTRY``).

    Inside the CLI it is the registry the commands were found with; load errors of
    third-party plugins are printed as warnings.
    """
    from anoneval.registry import ENV_REGISTRY, Registry, build_registry

    ctx = click.get_current_context(silent=True)
    registry = ctx.find_object(Registry) if ctx is not None else None
    if registry is None:
        registry = build_registry()
    user = user_file or os.environ.get(ENV_REGISTRY) or None
    if user:
        registry.load_file(user)
    for err in registry.load_errors:
        print(f"warning: {err}", file=sys.stderr)
    return registry


__all__ = ["EXIT_INPUT", "EXIT_INTERRUPTED", "EXIT_MEASURE_FAILED", "EXIT_OK",
           "EXIT_TERMINATED", "EXIT_THRESHOLD_FAILED", "command_registry", "quiet_option",
           "registry_option", "remote_cluster_option"]
