"""Where a dask run's file inputs go: whole into worker tasks, or partition-wise on the cluster.

A variant that fits in a worker's memory is fastest as one task that reads its file on the
worker and runs every measure in memory, as a serial run does (a Dask graph per measure and
variant costs a quarter of a second of scheduling, more than the measures of a small
variant). Partition-wise reductions (:mod:`anoneval.core.run.scaled`) are for inputs that do
not fit. :func:`fits_in_tasks` is the one rule that decides; :func:`estimated_bytes` is the
estimate it uses, from the files' sizes and Parquet footers (no data is read).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from anoneval.core.data.kinds import load
from anoneval.core.data.partitioned import Partitioned
from anoneval.core.errors import DataError

#: The share of the smallest worker's memory limit that the inputs of one task (the original,
#: the control set and the largest variant, as estimated in memory) may take: the rest is the
#: measures' working memory (group-by codes, class tables, pairwise blocks), which is a few
#: times the data for the group-by measures.
TASK_SHARE = 0.25
#: Bytes in memory per cell (pandas object strings take 50-60 bytes each, numbers 8): file
#: sizes say little of it (dictionary-encoded Parquet text is tiny on disk, "1" is 2 bytes of
#: CSV), so the estimate counts cells: Parquet footers say how many, a text file's first
#: :data:`SAMPLE` bytes how many there are per byte.
CELL_BYTES = 64
SAMPLE = 1 << 16
#: Memory per byte of a compressed text file, whose cells cannot be counted from its bytes.
COMPRESSED_EXPANSION = 40
SEPARATORS = (",", ";", "\t", "|")


class FileInput(Partitioned):
    """An input of a config kept on disk for the dask engine, which the run may read whole
    when it fits (:func:`fits_in_tasks`); a :class:`Partitioned` given by a caller stays
    partitioned.

    Its files are located from this process's working folder (a relative path in a config
    given by a relative path), so that a Dask worker, whose working folder is its own, reads
    the same files; the report names the path as the config does."""

    #: Work before the cluster is attached (the survey of the files' heads) runs in the
    #: calling thread: Dask's default thread pool would outlive the run and hold the command's
    #: exit.
    local_scheduler = "synchronous"

    def __init__(self, path: str | Path, kind: str = "microdata", fmt: str | None = None,
                 options: Any = None) -> None:
        super().__init__(os.path.abspath(path), kind, fmt, options)
        self.source = str(path)

    def load(self) -> Any:
        """The whole input in memory, read from its absolute path, named as given."""
        data = load(self.located.given, self.kind, self.fmt, self.opts)
        data.source = self.source
        return data


def _text_cells(file: Path, sep: str | None) -> float:
    """Cells of a text file (CSV, JSON lines), extrapolated from its first bytes."""
    size = file.stat().st_size
    with open(file, "rb") as f:
        raw = f.read(SAMPLE)
    if not raw:
        return 0.0
    sample = raw.decode("utf-8", "replace")
    first = sample.split("\n", 1)[0]
    seps = [sep] if sep else list(SEPARATORS)
    per_line = 1 + max(first.count(c) for c in seps)
    lines = sample.count("\n") or 1
    return per_line * lines * size / len(raw)


def _file_bytes(file: Path, fmt: str | None, sep: str | None) -> int:
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            with pq.ParquetFile(file) as opened:
                meta = opened.metadata
            return int(meta.num_rows) * int(meta.num_columns) * CELL_BYTES
        if file.suffix.lower() in (".gz", ".bz2", ".xz", ".zip", ".zst"):
            return file.stat().st_size * COMPRESSED_EXPANSION
        return int(_text_cells(file, sep) * CELL_BYTES)
    except Exception:  # unreadable: its task or partition reports the file's error
        try:
            return file.stat().st_size * COMPRESSED_EXPANSION
        except OSError:
            return 0


def estimated_bytes(data: Partitioned) -> int:
    """An upper estimate of the memory ``data`` takes once read into pandas."""
    sep = getattr(data.opts, "sep", None)
    return sum(_file_bytes(Path(f), data.fmt, sep) for f in data.located.files)


def load_variant(data: Partitioned, name: str) -> Any:
    """The variant ``name`` kept on disk as ``data``, read into memory (a task's loader)."""
    try:
        return data.load()
    except DataError as exc:
        side = f"anonymized variant {name!r}" if name else "anonymized"
        raise DataError(f"{side}: {exc}") from exc


def fits_in_tasks(shared: Iterable[Any], variants: Iterable[Any], memory: int | None) -> bool:
    """Whether a run whose original and control set are ``shared`` and whose anonymized data
    are ``variants`` runs as one in-memory task per variant on workers of ``memory`` bytes:
    yes when the shared inputs and the largest variant, estimated in memory
    (:func:`estimated_bytes`; data already in memory counts as fitting, being here), take at
    most :data:`TASK_SHARE` of ``memory``. Workers without a memory limit get the tasks
    (nothing says they are short of memory; this process reads the original either way).
    Inputs a caller gave as :class:`Partitioned` (not a config's :class:`FileInput`) keep the
    run partition-wise."""
    shared, variants = list(shared), list(variants)
    if any(isinstance(d, Partitioned) and not isinstance(d, FileInput)
           for d in [*shared, *variants]):
        return False  # partitions the caller asked for
    if memory is None:
        return True

    def size(data: Any) -> int:
        return estimated_bytes(data) if isinstance(data, Partitioned) else 0

    largest = max((size(v) for v in variants), default=0)
    return sum(size(d) for d in shared) + largest <= TASK_SHARE * memory


__all__ = ["TASK_SHARE", "FileInput", "estimated_bytes", "fits_in_tasks", "load_variant"]
