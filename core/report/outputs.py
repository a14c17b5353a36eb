"""Output paths of a run: refuse, before anything runs, one that would overwrite an input.

An output (report, HTML page, released data, synthesized data, plots) must not be a file the
run reads (the data, the config, a param's file such as a hierarchy or a population, a
registry file or a plugin's source), a file inside an input folder (a Parquet dataset) or
matched by an input glob, another output of the same run, or anything but a regular file
(a folder, a device node, a FIFO, a socket: writing there would replace it). Paths are
compared after resolving symlinks and ``..`` (``os.path.realpath``) with the platform's case
rule (``os.path.normcase``); when both files exist they are also compared by identity
(``os.path.samefile``), which catches hard links and case-insensitive file systems.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from anoneval.core.errors import ConfigError

#: (what the path is, e.g. "report (-o)" or "original.path", the path)
Named = tuple[str, "str | Path"]


def _key(path: str | Path) -> str:
    return os.path.normcase(os.path.realpath(os.fspath(path)))


def _same(a: str | Path, b: str | Path) -> bool:
    if _key(a) == _key(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet
        return False


def _is_glob(path: Path) -> bool:
    return any(c in str(path) for c in "*?[")


def _inside(out: Path, inp: Path) -> bool:
    """Whether ``out`` is inside the input folder or matched by the input glob ``inp``."""
    if _is_glob(inp):
        return fnmatch.fnmatch(_key(out), _key(inp)) or any(
            _same(out, m) for m in inp.parent.glob(inp.name))
    if not os.path.isdir(inp):
        return False
    folder = _key(inp)
    return _key(out).startswith(folder.rstrip(os.sep) + os.sep)


def not_writable(out: str | Path) -> str | None:
    """Why ``out`` cannot be an output file (an existing folder, device, FIFO or socket), or
    None (a regular file, or nothing yet)."""
    try:
        mode = os.stat(out).st_mode
    except OSError:
        return None  # not there yet (a missing folder is made; a real error shows on write)
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return f"the output {out} is a folder: name a file inside it"
    what = ("a character device" if stat.S_ISCHR(mode) else "a block device"
            if stat.S_ISBLK(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a socket"
            if stat.S_ISSOCK(mode) else "not a regular file")
    return f"the output {out} is {what}; an output replaces its file, so it must be a " \
           "regular file or a new path"


def collisions(inputs: Iterable[Named], outputs: Iterable[Named]) -> list[tuple[str, str]]:
    """Problems (where, message) for every output that is not a regular file, is an input,
    lies inside an input folder or glob, or is another output."""
    ins = [(what, Path(p)) for what, p in inputs]
    outs = [(what, Path(p)) for what, p in outputs]
    problems: list[tuple[str, str]] = []
    for i, (what, out) in enumerate(outs):
        why = not_writable(out)
        if why is not None:
            problems.append((what, why))
        for in_what, inp in ins:
            if _same(out, inp):
                problems.append((what, f"the output {out} is the {in_what} {inp}; writing it "
                                       "would destroy an input: choose another path"))
            elif _inside(out, inp):
                problems.append((what, f"the output {out} is inside the {in_what} {inp}; "
                                       "writing it would change an input: choose another "
                                       "path"))
        for other_what, other in outs[:i]:
            if _same(out, other):
                problems.append((what, f"the output {out} is also the {other_what} {other}; "
                                       "one would overwrite the other: choose another path"))
    return problems


def check_outputs(inputs: Iterable[Named], outputs: Iterable[Named]) -> None:
    """Raise :class:`ConfigError` naming both paths when an output would overwrite an input,
    the config or another output."""
    problems = collisions(inputs, outputs)
    if problems:
        raise ConfigError(problems)


__all__ = ["check_outputs", "collisions", "not_writable"]
