"""Atomic file writes: a named temporary beside the target, moved over it in one rename.

Readers never see a half-written file, and on failure the old file (if any) survives. A
target that exists and is not a regular file (a folder, device node, FIFO, socket) is
refused: the rename would replace it. A temporary is named
``.<start of the target name>.anoneval-<pid>-<random>.tmp`` (at most 40 characters of the
name, so a target name up to the file system's limit still has a temporary): when a
process is killed in a way it cannot clean up after (``kill -9``, power loss), the next write
into the same folder removes the temporaries of processes that no longer exist. Temporaries
of running processes (another anoneval writing there now) are left alone. An interrupted
write (Ctrl-C, SIGTERM turned into an exception by the CLI) removes its own temporary.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from anoneval.core.errors import AnonevalError
from anoneval.core.report.outputs import not_writable

if TYPE_CHECKING:
    import pandas as pd

#: Our temporaries: ``.<name>.anoneval-<pid>-<random>.tmp``.
TEMP_PATTERN = re.compile(r"^\..+\.anoneval-(\d+)-[0-9a-f]{8}\.tmp$")

#: Temporaries this process has open now (removed on interruption by :func:`remove_live`).
_LIVE: set[Path] = set()


#: How much of the target's name a temporary keeps (names are limited to 255 bytes).
_NAME_KEPT = 40


def temp_name(target: Path) -> Path:
    """A fresh temporary path for ``target``, in its folder, recognisable by its name and
    short whatever the target's name."""
    return target.with_name(f".{target.name[:_NAME_KEPT]}.anoneval-{os.getpid()}-"
                            f"{secrets.token_hex(4)}.tmp")


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one we may not signal counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:  # pragma: no cover - e.g. platforms without signal 0
        return True
    return True


def remove_stale(folder: str | Path) -> list[Path]:
    """Remove our temporaries in ``folder`` whose process is gone; return what was removed."""
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        m = TEMP_PATTERN.match(name)
        if m is None:
            continue
        pid = int(m.group(1))
        if pid == os.getpid() or pid_alive(pid):
            continue
        path = Path(folder) / name
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)
    return removed


def remove_live() -> None:
    """Remove every temporary this process is writing now (on an interrupting signal)."""
    for tmp in list(_LIVE):
        with contextlib.suppress(OSError):
            tmp.unlink()
        _LIVE.discard(tmp)


def _umask_mode() -> int:
    """The mode a plainly created file gets (a fresh temporary is made 0600 first)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` in one rename.

    On any failure or interruption the temporary is removed and ``path`` is untouched. The
    new file gets the usual permissions (umask). Stale temporaries of dead processes in the
    same folder are removed first.
    """
    path = Path(path)
    why = not_writable(path)
    if why is not None:
        raise AnonevalError(why)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(path.parent)
    tmp = temp_name(path)
    _LIVE.add(tmp)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        yield tmp
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    finally:
        _LIVE.discard(tmp)


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_path`)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_path`)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_frame_atomic(frame: pd.DataFrame, path: str | Path) -> None:
    """Save a frame (CSV, Parquet or JSON lines by extension) atomically."""
    from anoneval.core.data.kinds import infer_format

    path = Path(path)
    fmt = infer_format(path)
    with atomic_path(path) as tmp:
        if fmt == "parquet":
            frame.to_parquet(tmp, index=False)
        elif fmt == "jsonl":
            frame.to_json(tmp, orient="records", lines=True)
        else:
            frame.to_csv(tmp, index=False, sep="\t" if path.suffix.lower() == ".tsv" else ",")


__all__ = ["TEMP_PATTERN", "atomic_path", "remove_live", "remove_stale", "write_atomic",
           "write_bytes_atomic", "write_frame_atomic"]
