"""Where a dataset's records are: one file, a folder (a Parquet dataset) or a glob of files.

A folder or a glob is read as its data files in sorted path order (hidden files and those whose
name starts with ``_``, such as Spark's ``_SUCCESS``, are skipped); its format comes from the
files' extensions and must be one. Folders named ``key=value`` on the way from the folder given
to a file are hive partitions: ``key`` becomes a column holding ``value`` (integers when every
value of the key is an integer's canonical text, else text: ``007`` stays ``"007"``, unlike
pyarrow, which reads it as 7); a key that is also a column of a file is an error.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from anoneval.core.data.files import regular_file
from anoneval.core.errors import DataError

_GLOB = re.compile(r"[*?\[]")
_PARTITION = re.compile(r"^([^=]+)=(.*)$")
EXTENSIONS = {"csv": "csv", "tsv": "csv", "txt": "csv", "parquet": "parquet", "pq": "parquet",
              "jsonl": "jsonl", "ndjson": "jsonl"}


def file_format(path: Path) -> str | None:
    """The format of one file from its extension (csv, tsv, txt, parquet, pq, jsonl, ndjson)."""
    return EXTENSIONS.get(path.suffix.lower().lstrip("."))


@dataclass(frozen=True)
class Source:
    """The files of a dataset in reading order, and the folder its hive partitions start at."""

    given: Path
    files: tuple[Path, ...]
    root: Path | None

    def format(self) -> str | None:
        """The files' format, or None when it cannot be told from their extensions."""
        found = {file_format(f) for f in self.files}
        if len(found) > 1:
            raise DataError(f"{self.given}: its files are of several formats "
                            f"({', '.join(sorted(str(f) for f in found))}); use one")
        return found.pop() if found else None

    def partitions(self, file: Path) -> dict[str, str]:
        """The hive partition values of ``file`` (folders ``key=value`` below the root)."""
        if self.root is None:
            return {}
        parts = file.relative_to(self.root).parts[:-1]
        return {m.group(1): m.group(2) for m in map(_PARTITION.match, parts) if m}


def _data_files(paths: list[Path]) -> list[Path]:
    """The data files among ``paths`` (hidden ones and folders left out); a FIFO, a device or
    a socket among them is refused, naming it (reading one would block or never end)."""
    files = sorted(p for p in paths if not p.name.startswith((".", "_")) and not p.is_dir())
    for p in files:
        regular_file(p, "data file")
    return files


def locate(path: str | Path) -> Source:
    """The files behind ``path``; an error when there are none."""
    path = Path(path)
    if _GLOB.search(str(path)):
        files = _data_files([Path(p) for p in glob.glob(str(path), recursive=True)])
        if not files:
            raise DataError(f"no data file matches {path}")
        return Source(path, tuple(files), Path(_glob_root(str(path))))
    if path.is_dir():
        files = _data_files(list(path.rglob("*")))
        if not files:
            raise DataError(f"folder {path} holds no data file")
        return Source(path, tuple(files), path)
    if not path.exists():
        raise DataError(f"file not found: {path}")
    regular_file(path, "data file")  # a FIFO or a device (/dev/zero) would block or fill memory
    return Source(path, (path,), None)


def _glob_root(pattern: str) -> str:
    """The folder part of a glob before its first wildcard."""
    head = _GLOB.split(pattern, maxsplit=1)[0]
    return head[: head.rfind("/") + 1] or "."


def with_partitions(frame: pd.DataFrame, source: Source, file: Path) -> pd.DataFrame:
    """``frame`` with a column per hive partition key of ``file`` (text for now)."""
    keys = source.partitions(file)
    clash = sorted(set(keys) & {str(c) for c in frame.columns})
    if clash:
        raise DataError(f"{file}: partition key(s) {clash} are also columns of the file")
    return frame.assign(**keys) if keys else frame


#: The text of an integer as it reads back unchanged (no sign +, no leading zero, no space).
_CANONICAL_INT = re.compile(r"0|-?[1-9][0-9]{0,17}")


def integer_partition(values: Iterable[object]) -> bool:
    """Whether a hive key's values are read as integers: every value is the canonical text of
    an int64 (``7``, ``-12``). Otherwise they stay text, so ``zip=007`` and ``zip=7`` are two
    values (pyarrow would read both as 7 and merge them)."""
    return all(isinstance(v, str) and _CANONICAL_INT.fullmatch(v) for v in values)


def type_partitions(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Partition columns as integers when every value is the canonical text of one
    (:func:`integer_partition`), else text."""
    out = {key: frame[key].astype("int64") for key in keys
           if integer_partition(frame[key].unique())}
    return frame.assign(**out) if out else frame
