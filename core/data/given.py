"""The dataset of each input object, kept once per process while the object lives unchanged.

``evaluate(original, anonymized)`` called thousands of times on the same DataFrame must not
re-read, re-validate or re-hash it: :func:`remembered` gives the same :class:`Dataset` (with
its cache of derived arrays, validations and content hash) for the same object, keyed by the
object's identity and checked by a cheap :func:`fingerprint`.

What invalidates an entry (a new dataset, computed afresh): the object is garbage-collected;
its shape, column names or dtypes change; one of its column arrays is replaced (a new buffer
address: ``df[c] = ...``, ``astype``, pandas consolidating blocks, and, under pandas'
copy-on-write (pandas 3, or ``mode.copy_on_write``), any in-place write, which copies a
buffer this module still shares); or one of 64 sampled rows changes value. Not detected: an
in-place write (pandas 2 without copy-on-write) that leaves the buffers, the shape and the
sampled rows as they were; call :func:`forget` after such a write (or pass a copy).

The report's input hash is an :class:`InputHash`: computed when first read (the JSON report,
the HTML page, ``report.inputs[...]["hash"]``), once per input; an input dropped while a
report still needs its hash is hashed then, so a report never keeps its inputs in memory.
"""

from __future__ import annotations

import contextlib
import copy
import sys
import threading
import weakref
from collections import UserString
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from anoneval.core.data.kinds import Dataset

#: Rows sampled (evenly spaced, first and last included) to notice values written in place.
SAMPLED_ROWS = 64


class InputHash(UserString):
    """An input's content hash (a string) computed when first read: ``str()``, comparisons,
    string methods, JSON. Pickled and copied as the plain string."""

    def __init__(self, seq: Any) -> None:  # UserString's methods build these from strings
        self._text: str | None = seq if isinstance(seq, str) else str(seq)
        self._dataset: Dataset | None = None

    @classmethod
    def of(cls, dataset: Dataset) -> InputHash:
        """The (not yet computed) hash of ``dataset``'s content."""
        out = cls("")
        out._text, out._dataset = None, dataset
        return out

    @property  # type: ignore[override]
    def data(self) -> str:
        if self._text is None:
            assert self._dataset is not None
            self._text = self._dataset.content_hash()
            self._dataset = None
        return self._text

    @property
    def pending(self) -> bool:
        """Not computed yet."""
        return self._text is None

    def __reduce__(self) -> tuple[type[str], tuple[str]]:
        return str, (self.data,)

    def __repr__(self) -> str:
        return repr(self.data)


def _array_key(array: Any, rows: np.ndarray, keep: list[Any]) -> tuple[Any, ...]:
    """Where one of a frame's column arrays lives and what it holds at ``rows``: the values'
    bytes, or for objects their identities (the objects go to ``keep``, so that a new object
    cannot take the address of one that was replaced)."""
    if isinstance(array, np.ndarray):
        where: Any = (array.__array_interface__["data"][0], array.strides)
        taken = array[..., rows]
    else:  # an extension array: the array object, its codes' buffer for a categorical
        codes = getattr(array, "codes", None)
        where = (id(array), codes.__array_interface__["data"][0]
                 if isinstance(codes, np.ndarray) else None)
        taken = np.asarray(array.take(rows), dtype=object)
    if taken.dtype == object:
        keep.append(taken)
        return where, tuple(map(id, taken.ravel().tolist()))
    return where, taken.tobytes()


def _fingerprint(frame: pd.DataFrame) -> tuple[tuple[Any, ...], list[Any]]:
    n = len(frame)
    k = min(n, SAMPLED_ROWS)  # evenly spaced, the first and the last included
    rows = (np.arange(k, dtype=np.intp) * (n - 1)) // max(k - 1, 1)
    try:  # pandas' blocks and dtypes: no copy, no Series per column
        arrays, dtypes = frame._mgr.arrays, frame._mgr.get_dtypes()
    except AttributeError:  # pragma: no cover - a pandas without the block manager
        arrays = [frame.iloc[:, i].array for i in range(frame.shape[1])]
        dtypes = frame.dtypes
    keep: list[Any] = []
    key = (frame.shape, tuple(frame.columns),
           tuple(d if isinstance(d, np.dtype) else str(d) for d in dtypes),  # no str per dtype
           tuple(_array_key(a, rows, keep) for a in arrays))
    return key, keep


def fingerprint(frame: pd.DataFrame) -> tuple[Any, ...]:
    """What must stay the same for a frame's cached dataset to stay valid: shape, column
    names, dtypes, each column array's buffer, and the values of :data:`SAMPLED_ROWS` rows.
    Costs microseconds per block of columns, whatever the rows."""
    return _fingerprint(frame)[0]


def _fingerprint_of(obj: Any) -> tuple[Hashable, list[Any]]:
    frame = obj if isinstance(obj, pd.DataFrame) else getattr(obj, "_frame", None)
    return _fingerprint(frame) if isinstance(frame, pd.DataFrame) else (None, [])


@dataclass
class _Entry:
    ref: weakref.ReferenceType[Any]
    fingerprint: Hashable
    dataset: Dataset
    #: The sampled objects whose identities the fingerprint holds.
    keep: list[Any]
    #: Hashes handed to reports, not read yet (computed before the data goes); weak
    #: references, as a dropped report needs none (not a WeakSet: that would hash them).
    pending: list[weakref.ReferenceType[InputHash]] = field(default_factory=list)

    def wait(self, h: InputHash) -> None:
        self.pending = [r for r in self.pending if r() is not None]
        self.pending.append(weakref.ref(h))

    def settle(self) -> None:
        """Compute the hashes reports still wait for, while the data is still here. A hash
        that fails (e.g. out of memory, in a garbage collector's callback) keeps its data and
        fails again where it is read, where the error can be reported."""
        for r in self.pending:
            h = r()
            if h is not None and h.pending:
                with contextlib.suppress(Exception):  # raised again where it is read
                    h.data  # noqa: B018 - computed now
        self.pending = []


#: By the input object's id (and the kind a frame is read as; None for a Dataset).
_ENTRIES: dict[tuple[int, str | None], _Entry] = {}
#: The entry of each dataset made from a frame, by the dataset's id.
_MADE: dict[int, tuple[int, str | None]] = {}
_LOCK = threading.RLock()


def _remove(key: tuple[int, str | None]) -> _Entry | None:
    entry = _ENTRIES.pop(key, None)
    if entry is not None:
        _MADE.pop(id(entry.dataset), None)
    return entry


def _dropped(key: tuple[int, str | None], ref: weakref.ReferenceType[Any]) -> None:
    """The object died: hash it for the reports still waiting, then let the dataset go (not
    when the interpreter exits: no report is read then)."""
    if sys.is_finalizing():
        return
    with _LOCK:
        entry = _ENTRIES.get(key)
        if entry is None or entry.ref is not ref:
            return
        _remove(key)
    entry.settle()


def remembered(obj: Any, kind: str | None, build: Callable[[Any], Dataset]) -> Dataset:
    """The dataset of an input object, made once while ``obj`` lives with the same
    :func:`fingerprint`: ``build`` reads a DataFrame ``obj`` (as ``kind``); a :class:`Dataset`
    ``obj`` is its own dataset (its cache cleared when its frame changed)."""
    frame = isinstance(obj, pd.DataFrame)
    key = (id(obj), kind if frame else None)
    mark, keep = _fingerprint_of(obj)
    with _LOCK:
        entry = _ENTRIES.get(key)
        if entry is not None and entry.ref() is obj:
            if entry.fingerprint == mark:
                return entry.dataset if frame else obj  # type: ignore[no-any-return]
            _remove(key)
        else:
            entry = None
    if entry is not None:  # changed: what was derived from it is stale
        entry.settle()
        if not frame:
            obj._cache.clear()
    # a frame is read from a view of it (the same buffers), so that the entry does not keep
    # ``obj`` alive (and under copy-on-write a write to ``obj`` copies, which is noticed); a
    # dataset's shallow copy shares its cache and outlives it, to hash it late
    dataset = build(obj.copy(deep=False)) if frame else copy.copy(obj)
    try:
        ref = weakref.ref(obj, lambda r, key=key: _dropped(key, r))
    except TypeError:  # pragma: no cover - an object without weak references
        return dataset if frame else obj  # type: ignore[no-any-return]
    with _LOCK:
        _ENTRIES[key] = _Entry(ref, mark, dataset, keep)
        if frame:
            _MADE[id(dataset)] = key
    return dataset if frame else obj  # type: ignore[no-any-return]


def input_hash(dataset: Dataset) -> InputHash:
    """The content hash of ``dataset`` for a report: computed when first read (see the
    module's docstring); a dataset this module does not know is hashed now."""
    done = dataset._cache.get(("content_hash",))
    if done is not None:
        return InputHash(done)
    with _LOCK:
        entry = _ENTRIES.get(_MADE.get(id(dataset), (id(dataset), None)))
        if entry is not None and dataset is not entry.dataset and entry.ref() is not dataset:
            entry = None
    if entry is None:  # e.g. a converted copy, or an object without weak references
        return InputHash(dataset.content_hash())
    h = InputHash.of(entry.dataset)
    entry.wait(h)
    return h


def hash_now(inputs: Mapping[str, Mapping[str, Any] | None]) -> None:
    """Compute the hashes of a report's ``inputs`` now, e.g. while the inputs are in memory
    and an error can name them (a run from a config writes them anyway)."""
    for info in inputs.values():
        h = (info or {}).get("hash")
        if isinstance(h, InputHash):
            h.data  # noqa: B018 - computed now


def forget(obj: Any = None) -> None:
    """Drop what is remembered about ``obj`` (every input object when None), e.g. after
    writing to a frame in place in a way the fingerprint cannot see; reports already made
    get their input hashes first."""
    with _LOCK:
        keys = [k for k, e in _ENTRIES.items() if obj is None or e.ref() is obj]
        entries = [_remove(k) for k in keys]
    for entry in entries:
        assert entry is not None
        entry.settle()
        entry.dataset._cache.clear()


__all__ = ["InputHash", "fingerprint", "forget", "hash_now", "input_hash", "remembered"]
