"""Output paths of a run: refuse, before anything runs, one that would overwrite an input.

An output (report, HTML page, released data, synthesized data, plots) must not be an input
file, the config file, or another output of the same run. Paths are compared after resolving
symlinks and ``..`` (``os.path.realpath``) with the platform's case rule
(``os.path.normcase``); when both files exist they are also compared by identity
(``os.path.samefile``), which catches hard links and case-insensitive file systems.
"""

from __future__ import annotations

import os
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


def collisions(inputs: Iterable[Named], outputs: Iterable[Named]) -> list[tuple[str, str]]:
    """Problems (where, message) for every output that is an input or another output."""
    ins = [(what, Path(p)) for what, p in inputs]
    outs = [(what, Path(p)) for what, p in outputs]
    problems: list[tuple[str, str]] = []
    for i, (what, out) in enumerate(outs):
        for in_what, inp in ins:
            if _same(out, inp):
                problems.append((what, f"the output {out} is the {in_what} {inp}; writing it "
                                       "would destroy an input: choose another path"))
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


__all__ = ["check_outputs", "collisions"]
