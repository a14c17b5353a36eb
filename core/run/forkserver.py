"""The local engine's fork server: one process per caller that imports anoneval once and forks
the worker processes from itself.

A worker forked from it starts in milliseconds with anoneval, pandas and the built-in measures
imported (:mod:`anoneval.core.run.preload`), and with none of the caller's threads or state.
The ``anoneval`` command starts it before importing its own commands when the run will use
worker processes (:func:`anoneval.core.cli.entry`), so that the server's imports overlap the
command's; this module therefore imports nothing but the standard library and
:mod:`anoneval.core.run.lifecycle`.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from multiprocessing.context import BaseContext
from pathlib import Path

from anoneval.core.run.lifecycle import children_die_with_me

#: Native thread pools (OpenMP, MKL, OpenBLAS) capped at one thread per task process, so that
#: ``workers`` processes on as many cores do not oversubscribe them.
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
#: The module the fork server imports for all the local engine's processes, besides the main
#: module (when guarded) and the first run's measures' modules.
PRELOAD = "anoneval.core.run.preload"
#: The main script's path, handed to the fork server when the script has no
#: ``if __name__ == "__main__":`` guard (:func:`_adopt_main`).
MAIN_ENV = "ANONEVAL_FORKSERVER_MAIN"
GUARD = 'if __name__ == "__main__":'
_SERVER_STARTED = False


def import_all(modules: Sequence[str]) -> None:
    """Import ``modules``, those that fail left to the tasks that need them."""
    for name in modules:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


@contextlib.contextmanager
def one_thread_env() -> Iterator[None]:
    """:data:`ONE_THREAD` in the environment of processes started in this block (values the
    user set are kept)."""
    added = {k: v for k, v in ONE_THREAD.items() if k not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


def unguarded_main() -> str | None:
    """The main script's path (as multiprocessing sends it to new processes) when the script
    has no top-level ``if __name__ == "__main__":`` guard, which multiprocessing's fork server
    and spawn need: they run the main script again in every new process."""
    import ast

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None or getattr(main.__spec__, "name", None) is not None:
        return None
    if not os.path.isabs(path) and multiprocessing.process.ORIGINAL_DIR is not None:
        path = os.path.join(multiprocessing.process.ORIGINAL_DIR, path)
    path = os.path.normpath(path)
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and any(
                isinstance(n, ast.Constant) and n.value == "__main__"
                for n in node.test.comparators) and isinstance(node.test.left, ast.Name) \
                and node.test.left.id == "__name__":
            return None
    return path


def _adopt_main() -> None:
    """In the fork server (which imports this module): take the unguarded main script's path
    as its own, so that the processes it forks do not run the script again (multiprocessing
    skips a main whose ``__file__`` is already that path); the script's own classes and
    functions are then not available in them
    (:func:`anoneval.core.run.engine.refuse_main_objects`)."""
    path = os.environ.pop(MAIN_ENV, None)
    main = sys.modules.get("__main__")
    if path and main is not None and getattr(main, "__file__", None) is None:
        main.__file__ = path


_adopt_main()


@contextlib.contextmanager
def _main_env(main: str | None) -> Iterator[None]:
    """:data:`MAIN_ENV` = ``main`` in the environment of the fork server started here."""
    if main is None:
        yield
        return
    os.environ[MAIN_ENV] = main
    try:
        yield
    finally:
        os.environ.pop(MAIN_ENV, None)


def context(modules: Iterable[str] = ()) -> BaseContext:
    """The start method of the local engine's processes: the fork server where there is one,
    started (not waited for) at the first call with one native thread, importing
    :data:`PRELOAD` and ``modules``; else spawn."""
    global _SERVER_STARTED
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    if not _SERVER_STARTED:  # a server started by other code keeps its own imports
        from multiprocessing import forkserver

        main = unguarded_main()
        ctx.set_forkserver_preload(list(dict.fromkeys(
            [*([] if main else ["__main__"]), PRELOAD, *modules])))
        with one_thread_env(), _main_env(main), children_die_with_me():
            forkserver.ensure_running()
        _SERVER_STARTED = True
    return ctx


__all__ = ["GUARD", "MAIN_ENV", "ONE_THREAD", "PRELOAD", "context", "import_all",
           "one_thread_env", "unguarded_main"]
