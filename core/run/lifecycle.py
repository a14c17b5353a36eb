"""Process lifecycle: a private temporary folder per process, and helpers that die with us.

Temporary data (a pickled copy of the data shipped to worker processes) goes into
:func:`private_dir`: a folder ``anoneval-<pid>-<random>`` made with mode 0700 in the system's
temporary folder, removed at a normal exit; one left by a process killed outright
(``kill -9``) is removed by :func:`remove_stale_dirs` at the next start of anoneval (or by the
OS's cleaning of its temporary folder). Worker processes and the fork server die with the
process that started them (:func:`die_with`): on Linux through ``prctl(PR_SET_PDEATHSIG)``
(the kernel signals the child when its parent ends), and everywhere through a watchdog thread
that polls the parent's pid once a second.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from anoneval.core.report.atomic import pid_alive

#: Names of our private folders: ``anoneval-<pid>-<random>``.
DIR_PATTERN = re.compile(r"^anoneval-(\d+)-[A-Za-z0-9_]+$")
#: The environment variable that tells a child (the fork server, a worker) whom to die with.
ENV_PARENT = "ANONEVAL_PARENT_PID"
#: How often the watchdog checks its parent, in seconds.
POLL = 1.0

_PRIVATE: Path | None = None
_WATCHED: set[int] = set()


def _owned(path: Path) -> bool:
    getuid = getattr(os, "getuid", None)
    try:
        return getuid is None or path.stat().st_uid == getuid()
    except OSError:
        return False


def remove_stale_dirs(folder: str | Path | None = None) -> list[Path]:
    """Remove our private folders (in ``folder``, default the system's temporary folder)
    whose process is gone and that belong to this user; return what was removed."""
    root = Path(folder if folder is not None else tempfile.gettempdir())
    removed = []
    try:
        names = os.listdir(root)
    except OSError:
        return removed
    for name in names:
        m = DIR_PATTERN.match(name)
        if m is None or int(m.group(1)) == os.getpid() or pid_alive(int(m.group(1))):
            continue
        path = root / name
        if path.is_dir() and not path.is_symlink() and _owned(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def private_dir() -> Path:
    """This process's private temporary folder (mode 0700), made at the first call after
    removing the stale folders of dead processes; removed at exit."""
    global _PRIVATE
    if _PRIVATE is None or not _PRIVATE.is_dir():
        remove_stale_dirs()
        _PRIVATE = Path(tempfile.mkdtemp(prefix=f"anoneval-{os.getpid()}-"))  # mode 0700
        atexit.register(shutil.rmtree, _PRIVATE, True)
    return _PRIVATE


def _pdeathsig() -> bool:
    """Ask Linux to kill this process when its parent ends; whether it could."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(1, signal.SIGKILL, 0, 0, 0) == 0  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False


def _watch(pid: int, ppid: int) -> None:
    while True:
        time.sleep(POLL)
        if not pid_alive(pid) or (ppid == pid and os.getppid() != ppid):
            os._exit(1)


def die_with(pid: int, thread: bool = True) -> None:
    """End this process when process ``pid`` ends: ``prctl(PR_SET_PDEATHSIG)`` when ``pid`` is
    the parent (Linux), and with ``thread`` (or without prctl) a daemon thread polling
    ``pid`` every :data:`POLL` seconds."""
    if pid <= 0 or pid == os.getpid():
        return
    ppid = os.getppid()
    if ppid != pid and not pid_alive(pid):  # already gone
        os._exit(1)
    armed = ppid == pid and _pdeathsig()
    if ppid == pid and os.getppid() != pid:  # the parent died before prctl took effect
        os._exit(1)
    if (thread or not armed) and pid not in _WATCHED:
        _WATCHED.add(pid)
        threading.Thread(target=_watch, args=(pid, ppid), name="anoneval-die-with-parent",
                         daemon=True).start()


def watch_from(environ: Mapping[str, str]) -> None:
    """In a worker process: die with the process named by :data:`ENV_PARENT` in
    ``environ`` (the process that started the pool)."""
    with contextlib.suppress(KeyError, ValueError):
        die_with(int(environ[ENV_PARENT]))


@contextlib.contextmanager
def children_die_with_me() -> Iterator[None]:
    """Processes started in this block (the fork server) get :data:`ENV_PARENT`: on import
    of this module they die with this process."""
    old = os.environ.get(ENV_PARENT)
    os.environ[ENV_PARENT] = str(os.getpid())
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV_PARENT, None)
        else:
            os.environ[ENV_PARENT] = old


def parent_environ() -> dict[str, str]:
    """What to add to a worker's environment so that :func:`watch_from` finds us."""
    return {ENV_PARENT: str(os.getpid())}


def _on_import() -> None:
    """A child started under :func:`children_die_with_me` (the fork server, which imports
    this module as it starts): die with the parent. Only prctl where it works, as the fork
    server forks workers and should have no thread of its own."""
    value = os.environ.get(ENV_PARENT, "")
    if value.isdigit() and int(value) == os.getppid():
        os.environ.pop(ENV_PARENT, None)  # its own children are told explicitly
        die_with(int(value), thread=False)


_on_import()

__all__ = ["DIR_PATTERN", "ENV_PARENT", "children_die_with_me", "die_with", "parent_environ",
           "private_dir", "remove_stale_dirs", "watch_from"]
