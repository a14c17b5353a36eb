"""Reading the files a run is given safely: regular files only, text and JSON read strictly.

A FIFO, a device (``/dev/zero``) or a socket given where a file is expected would block the
run or fill the memory; it is refused, named, before anything reads it. Text is UTF-8 by
default, a byte order mark is dropped, and a decoding error names the file, line and byte.
JSON (RFC 8259) is read strictly: a key repeated in one object is refused with its JSON path
(a parser would otherwise keep the last value silently), as are ``NaN``/``Infinity`` (not
JSON), numbers beyond the float range and integers longer than :data:`MAX_INT_DIGITS` digits.
"""

from __future__ import annotations

import codecs
import json
import os
import stat
from pathlib import Path
from typing import Any

from anoneval.core.errors import DataError

#: Integers with more digits are refused (Python's default limit on int ↔ text conversion).
MAX_INT_DIGITS = 4300
#: JSON files (configs, registry files) larger than this are refused before they are read.
MAX_JSON_BYTES = 64 * 2**20

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a folder"))


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words, from its ``st_mode``."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def regular_file(path: str | Path, what: str = "file") -> os.stat_result:
    """``path``'s status (links followed); a :class:`DataError` naming ``what`` and ``path``
    when it is missing or not a regular file (a FIFO, a device, a socket, a folder)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise DataError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise DataError(f"{what} {path} is {file_kind(st.st_mode)}, not a regular file; "
                        "give a file")
    return st


def decode(data: bytes, where: str, encoding: str = "utf-8") -> str:
    """``data`` as text (a UTF-8 byte order mark dropped); an error names ``where``, the line
    and the byte."""
    utf8 = codecs_name(encoding) == "utf-8"
    try:
        return data.decode("utf-8-sig" if utf8 else encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(f"{where}: not {'UTF-8' if utf8 else encoding} text ({exc.reason} at "
                        f"byte {exc.start}, line {line}); save it as UTF-8") from None


def codecs_name(encoding: str) -> str:
    """The codec's canonical name (``UTF8`` → ``utf-8``); unknown names as given."""
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        return encoding


def read_text(path: str | Path, what: str = "file", encoding: str = "utf-8",
              max_bytes: int | None = None) -> str:
    """A regular file's text; errors name ``what`` and ``path`` (see :func:`decode`).

    The file is opened without blocking and checked on the open descriptor, so a path
    swapped for a FIFO after a check cannot block the read; at most ``max_bytes`` are read.
    """
    regular_file(path, what)  # names a missing file or a device before opening it
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise DataError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise DataError(f"{what} {path} is {file_kind(st.st_mode)}, not a regular file; "
                            "give a file")
        if max_bytes is not None and st.st_size > max_bytes:
            raise DataError(f"{what} {path} is {st.st_size:,} bytes; at most {max_bytes:,} "
                            "are read")
        try:
            data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
        except OSError as exc:
            raise DataError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if max_bytes is not None and len(data) > max_bytes:  # it grew since fstat
        raise DataError(f"{what} {path} is over {max_bytes:,} bytes; at most that is read")
    return decode(data, f"{what} {path}", encoding)


class _Refused(Exception):
    """A value the strict decoder refuses, raised from inside the parser."""


class _Repeated(dict):  # type: ignore[type-arg]
    """An object that repeated ``key`` (found after parsing, to name its JSON path)."""

    key: str


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    marked = _Repeated(pairs)
    marked.key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
    return marked


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(text, f"an integer of {len(text.lstrip('-')):,} digits; at most "
                             f"{MAX_INT_DIGITS:,}")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(text, f"the number {text[:40]}{'…' if len(text) > 40 else ''} is "
                             "beyond the range of a float")
    return value


def _constant(text: str) -> Any:
    raise _Refused(text, f"{text} is not JSON (write a number or null)")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_int=_int, parse_float=_float,
                            parse_constant=_constant)


def _repeated_at(value: Any, path: str = "") -> tuple[str, str] | None:
    """The JSON path and key of the first object that repeats a key, depth first."""
    stack = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, _Repeated):
            return where, node.key
        if isinstance(node, dict):
            stack.extend((v, f"{where}.{k}" if where else str(k))
                         for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((v, f"{where}[{i}]") for i, v in reversed(list(enumerate(node))))
    return None


def _line_col(text: str, at: int) -> str:
    return f"line {text.count(chr(10), 0, at) + 1}, column {at - text.rfind(chr(10), 0, at)}"


def loads(text: str, where: str) -> Any:
    """Parse JSON strictly (see the module); a :class:`DataError` names ``where`` and the
    line and column, or the JSON path of a repeated key."""
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: invalid JSON at line {exc.lineno}, column {exc.colno}: "
                        f"{exc.msg}") from None
    except _Refused as exc:
        token, why = exc.args
        at = text.find(token)
        raise DataError(f"{where}: {_line_col(text, at) + ': ' if at >= 0 else ''}{why}"
                        ) from None
    except RecursionError:
        raise DataError(f"{where}: the JSON is nested too deeply") from None
    found = _repeated_at(value)
    if found is not None:
        path, key = found
        raise DataError(f"{where}: key {key!r} appears more than once in "
                        f"{f'the object at {path}' if path else 'the top-level object'}; a "
                        "JSON parser would keep only the last value: keep one")
    return value


def read_json(path: str | Path, what: str = "JSON file", max_bytes: int = MAX_JSON_BYTES
              ) -> Any:
    """A regular file's JSON, read strictly (see :func:`loads`); errors name the file."""
    return loads(read_text(path, what, max_bytes=max_bytes), f"{what} {path}")


__all__ = ["MAX_INT_DIGITS", "MAX_JSON_BYTES", "decode", "file_kind", "loads", "read_json",
           "read_text", "regular_file"]
