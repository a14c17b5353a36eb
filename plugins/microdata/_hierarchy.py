"""ARX generalization hierarchies: read them, detect a release's levels, generalize raw values.

A hierarchy is ARX's CSV (``value;level1;level2;…``, one row per raw value, column 0 the raw
value, column ``i`` its generalization at level ``i``; see :class:`Hierarchy` and
:func:`load_hierarchy` in ``_common``). This module adds what the measures need on top:

* :func:`read_hierarchy` / :func:`read_hierarchies` load and check hierarchies (equal row
  lengths, no raw value twice, every value at level ``i`` generalizing to one value at level
  ``i + 1``);
* :func:`detect_level` / :func:`release_levels` find the level a released column was
  generalized to (the lowest level containing all its non-suppressed values, as a global
  recoding produces), or check the ``levels`` a user gives;
* :func:`generalize` maps raw values to a level; :func:`generalize_column` does it for a whole
  column through its codes (one hierarchy lookup per distinct value, not per row), and
  :func:`release_codes` expresses the result in a released column's codes, so that a population
  can be grouped by the release's equivalence classes.

Values are compared as text (:func:`as_text`: ``39.0`` → ``"39"``, missing → ``"NULL"``). The
suppression token (default ``"*"``) is never looked up: a suppressed cell stays suppressed.
Every error names the column and the offending value (and the hierarchy file).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from anoneval.core.api import Context, DataError, Microdata, ParamPath
from anoneval.plugins.microdata._common import (
    Column,
    Hierarchy,
    QIParams,
    column,
    hierarchy_rows,
    load_hierarchy,
)

__all__ = [
    "Hierarchy",
    "HierarchyParams",
    "HierarchyPaths",
    "detect_level",
    "generalize",
    "generalize_column",
    "level_matrix",
    "listed",
    "read_hierarchies",
    "read_hierarchy",
    "release_codes",
    "release_levels",
    "text_levels",
]


def listed(values: np.ndarray) -> str:
    """The first five of ``values`` quoted, and how many more (for error messages)."""
    texts = [str(v) for v in values]
    more = f" and {len(texts) - 5} more" if len(texts) > 5 else ""
    return ", ".join(map(repr, texts[:5])) + more


class HierarchyPaths(QIParams):
    """Params naming an ARX hierarchy per quasi-identifier; every param keyed by column
    (:attr:`per_column`) names quasi-identifiers only."""

    #: The params keyed by column.
    per_column: ClassVar[tuple[str, ...]] = ("hierarchies",)

    hierarchies: dict[str, ParamPath] = Field(
        default_factory=dict,
        description="ARX hierarchy CSV path per quasi-identifier (relative to the config file).")

    @model_validator(mode="after")
    def _keyed_by_quasi_identifiers(self) -> HierarchyPaths:
        for what in self.per_column:
            unknown = sorted(set(getattr(self, what, None) or {}) - set(self.quasi_identifiers))
            if unknown:
                raise ValueError(f"{what} given for {unknown}, which are not "
                                 f"quasi-identifiers {self.quasi_identifiers}")
        return self


class HierarchyParams(HierarchyPaths):
    """Params of measures that read ARX hierarchies: ``hierarchies`` and ``levels``."""

    levels: dict[str, int] = Field(
        default_factory=dict,
        description="Generalization level of a column in the release (detected from its "
                    "values when not given); needs a hierarchy for that column.")

    @model_validator(mode="after")
    def _levels_have_hierarchies(self) -> HierarchyParams:
        lacking = sorted(set(self.levels) - set(self.hierarchies))
        if lacking:
            raise ValueError(f"levels given for {lacking}, which have no hierarchy")
        negative = {c: v for c, v in self.levels.items() if v < 0}
        if negative:
            raise ValueError(f"levels must be >= 0; got {negative}")
        return self


def _check_tree(h: Hierarchy) -> None:
    """Each value at level i must generalize to a single value at level i + 1."""
    for lev in range(h.height):
        child, parent = h.codes[:, lev], h.codes[:, lev + 1]
        pairs = np.unique(child * len(h.values) + parent)
        kids = pairs // len(h.values)
        dup = kids[1:] == kids[:-1]
        if dup.any():
            value = h.values[int(kids[1:][dup][0])]
            parents = sorted({str(h.values[int(p)]) for c, p in zip(child, parent, strict=True)
                              if c == kids[1:][dup][0]})
            raise DataError(
                f"hierarchy {h.path}: value {value!r} at level {lev} generalizes to several "
                f"values at level {lev + 1} ({', '.join(map(repr, parents))}); a hierarchy "
                "must be a tree")


def _check_levels_agree(h: Hierarchy) -> None:
    """A value used at two levels must name one group that only grows: every row holding v at
    level i holds v at every higher level j where v appears. Otherwise (``Male;Female;*`` and
    ``Female;Male;*``) a released value could be raw or generalized, and the release's level
    cannot be told."""
    codes = h.codes
    for i in range(h.height):
        for j in range(i + 1, h.height + 1):
            at_j = np.zeros(len(h.values), dtype=bool)
            at_j[codes[:, j]] = True
            bad = np.flatnonzero(at_j[codes[:, i]] & (codes[:, j] != codes[:, i]))
            if not len(bad):
                continue
            r = int(bad[0])
            v = int(codes[r, i])
            s_ = int(np.flatnonzero(codes[:, j] == v)[0])
            raise DataError(
                f"hierarchy {h.path}: rows {r + 1} and {s_ + 1} contradict each other: "
                f"{str(h.values[v])!r} is a level-{i} value of row {r + 1} (which generalizes "
                f"to {str(h.values[int(codes[r, j])])!r} at level {j}) and the level-{j} value "
                f"of row {s_ + 1}; a value may appear at a higher level only as the same group "
                f"(1-based rows; {len(bad)} such row(s))")


def read_hierarchy(path: str | Path, token: str = "*") -> Hierarchy:
    """Load an ARX hierarchy CSV and check it is a consistent tree.

    Errors (:class:`DataError`, naming the file): unreadable or empty file, rows of different
    lengths (inconsistent depth), a raw value listed twice, a value generalizing to two
    different values at the next level, rows that use one value at two levels for different
    groups (:func:`_check_levels_agree`). A hierarchy whose last column is not one root gets
    an extra top level ``token`` (as ARX adds ``*``).
    """
    h = load_hierarchy(Path(path), token)
    _check_tree(h)
    _check_levels_agree(h)
    return h


def read_hierarchies(paths: Mapping[str, str | Path], ctx: Context | None = None,
                     token: str = "*") -> dict[str, Hierarchy]:
    """:func:`read_hierarchy` for each ``{column: path}``; paths relative to the config file."""
    out = {}
    for col, path in paths.items():
        try:
            out[col] = read_hierarchy(ctx.path(path) if ctx is not None else Path(path), token)
        except DataError as exc:
            raise DataError(f"hierarchy of column {col!r}: {exc}") from exc
    return out


def level_matrix(h: Hierarchy) -> np.ndarray:
    """Boolean matrix (values × levels): ``[v, i]`` is True when value ``v`` is at level i."""
    occ = np.zeros((len(h.values), h.height + 1), dtype=bool)
    occ[h.codes, np.arange(h.height + 1)[None, :]] = True
    return occ


def detect_level(h: Hierarchy, texts: np.ndarray, col: str, token: str = "*") -> int:
    """The lowest level of ``h`` that contains every value of ``texts`` (distinct values).

    Values equal to ``token`` (suppressed cells) are ignored; when nothing else is left the
    level is the top. Errors name the column and value: a value found in no level of the
    hierarchy, or values found at no common level (the column was not generalized to one
    level, e.g. by local recoding).
    """
    texts = np.asarray(texts, dtype=object)
    texts = texts[texts != token]
    if not len(texts):
        return h.height
    vid = h.values.get_indexer(texts)
    if (vid < 0).any():
        raise DataError(
            f"column {col!r}: released value(s) {listed(texts[vid < 0])} found in "
            f"no level of hierarchy {h.path}")
    occ = level_matrix(h)[vid]
    common = occ.all(axis=0)
    if common.any():
        return int(np.argmax(common))
    first = occ.argmax(axis=1)
    a = int(np.argmin(first))
    b = int(np.flatnonzero(~occ[:, int(first[a])])[0])
    raise DataError(
        f"column {col!r}: the released values lie at no common level of hierarchy {h.path} "
        f"(e.g. {texts[a]!r} is at level(s) {np.flatnonzero(occ[a]).tolist()}, {texts[b]!r} at "
        f"{np.flatnonzero(occ[b]).tolist()}); give 'levels' or release one level per column")


def release_levels(data: Microdata, columns: list[str], hierarchies: Mapping[str, Hierarchy],
                   levels: Mapping[str, int] | None = None, token: str = "*",
                   missing: str = "value") -> dict[str, int]:
    """The level of each of ``columns`` in the released ``data`` (see :func:`text_levels`)."""
    texts = {}
    for col in columns:
        if col in hierarchies:
            c = column(data, col, token, missing)
            used = np.flatnonzero(np.bincount(c.codes, minlength=len(c.texts)))  # no sort
            texts[col] = c.texts[used]
    return text_levels(texts, columns, hierarchies, levels, token)


def text_levels(texts: Mapping[str, np.ndarray], columns: list[str],
                hierarchies: Mapping[str, Hierarchy], levels: Mapping[str, int] | None = None,
                token: str = "*") -> dict[str, int]:
    """The level of each of ``columns`` of a release whose hierarchy columns hold the distinct
    ``texts`` (suppressed cells as ``token``).

    A column without a hierarchy is at level 0 (compared as is). A level given in ``levels``
    must lie in ``0..height`` and every non-suppressed value of the column must be at that
    level; otherwise the level is detected (:func:`detect_level`).
    """
    levels = dict(levels or {})
    out = {}
    for col in columns:
        h = hierarchies.get(col)
        if h is None:
            out[col] = 0
            continue
        used = np.asarray(texts[col], dtype=object)
        if col not in levels:
            out[col] = detect_level(h, used, col, token)
            continue
        lev = levels[col]
        if not 0 <= lev <= h.height:
            raise DataError(f"column {col!r}: level {lev} outside 0..{h.height} of hierarchy "
                            f"{h.path}")
        used = used[used != token]
        at = pd.Index(h.values[np.unique(h.codes[:, lev])])
        bad = used[at.get_indexer(used) < 0]
        if len(bad):
            raise DataError(f"column {col!r}: released value {bad[0]!r} is not at level {lev} "
                            f"of hierarchy {h.path}")
        out[col] = lev
    return out


def generalize(h: Hierarchy, texts: np.ndarray, level: int, col: str) -> np.ndarray:
    """The level-``level`` generalization (text) of each raw value in ``texts``.

    An error names the column and the raw values missing from the hierarchy's first column.
    """
    if not 0 <= level <= h.height:
        raise DataError(f"column {col!r}: level {level} outside 0..{h.height} of hierarchy "
                        f"{h.path}")
    rows = hierarchy_rows(h, np.asarray(texts, dtype=object), col)
    return np.asarray(h.values[h.codes[rows, level]], dtype=object)


def generalize_column(data: Microdata, col: str, h: Hierarchy | None, level: int,
                      token: str = "*", missing: str = "value") -> Column:
    """Column ``col`` of raw ``data`` generalized to ``level`` (cached on ``data``).

    Works on the column's distinct values: codes are remapped, no per-row lookups. Cells equal
    to ``token`` stay suppressed. Without a hierarchy (``h`` None) the column is returned as
    is (level 0). Missing values are looked up as ``"NULL"`` (ARX's text for them).
    """
    raw = column(data, col, token, missing)
    if h is None:
        return raw

    def compute() -> Column:
        used = np.zeros(len(raw.texts), dtype=bool)
        used[raw.codes] = True
        if raw.token >= 0:
            used[raw.token] = False
        gen = np.full(len(raw.texts), token, dtype=object)
        idx = np.flatnonzero(used)
        gen[idx] = generalize(h, raw.texts[idx], level, col)
        codes, uniques = pd.factorize(gen)
        texts = np.asarray(uniques, dtype=object)
        tok = np.flatnonzero(texts == token)
        is_tok = (codes == tok[0]) if len(tok) else np.zeros(len(codes), dtype=bool)
        return Column(codes[raw.codes].astype(np.int64), texts,
                      int(tok[0]) if len(tok) and is_tok[raw.codes].any() else -1,
                      raw.n_missing)

    return data.cached(("anoneval.microdata.generalized", col, h.path, id(h), level, token,
                        missing), compute)


def release_codes(gen: Column, rel: Column) -> np.ndarray:
    """``gen``'s cells as codes of the released column ``rel`` (-1: value absent there).

    Matches by text, so a population generalized with :func:`generalize_column` can be grouped
    by the release's classes. The suppression token maps to ``rel``'s token code.
    """
    first = pd.Series(np.arange(len(rel.texts)), index=pd.Index(rel.texts, dtype=object))
    first = first[~first.index.duplicated()]
    if rel.token >= 0:
        first[rel.texts[rel.token]] = rel.token
    lookup = first.index.get_indexer(pd.Index(gen.texts, dtype=object))
    lookup = np.where(lookup >= 0, first.to_numpy()[np.maximum(lookup, 0)], -1)
    return lookup[gen.codes] if len(gen.codes) else np.zeros(0, dtype=np.int64)
