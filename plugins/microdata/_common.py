"""Shared machinery of the microdata measures: params, equivalence classes, hierarchies.

Conventions every measure of this family follows (ARX's output-analysis semantics, as in
its ``MetricSDNMDiscernability``/``MetricMDNUEntropyPrecomputed`` and risk models):

* A record is **suppressed** when all its quasi-identifiers equal ``suppression_token``
  (default ``"*"``, ARX's ``DataType.ANY_VALUE``; ARX PR #263), compared as text. Classes
  compare values as they are (``39`` and ``"39"`` differ); hierarchies compare text.
* **Equivalence classes** are the groups of identical quasi-identifier tuples among the records
  that are not suppressed. Suppressed records belong to no class.
* When both sides are given they must be row-aligned (equal row counts; otherwise an error),
  or aligned by the ``id`` key column: original records whose id is absent from the
  anonymized data count as suppressed ("deleted", pyCANON's and ANJANA's convention).
* **Missing values** (NaN/None) in a quasi-identifier are a value of their own, with a warning;
  ``missing="suppressed"`` treats a missing cell as the suppression token instead.

The classes come from the records (:func:`released_classes`, for measures that also read rows)
or from the released side's class summary (:func:`reduce_classes`, for measures that declare
:func:`summary_specs`). Both group the records once per run with the same function
(:func:`~anoneval.core.data.summary.class_codes`) and apply the token and missing-value rules to the
groups with :func:`key_classes`. Measures that need only figures over the classes (class sizes,
sums, extremes) get them from :func:`reduce_classes`, which reduces a summary sharded on a
cluster part by part where the parts lie, with the same code as in memory (:class:`ClassSizes`:
the classes by size).
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, TypeVar

import numpy as np
import pandas as pd
from pydantic import AfterValidator, Field, model_validator

from anoneval.core.api import (
    ClassSummary,
    Context,
    DataError,
    Dataset,
    Measure,
    Microdata,
    Params,
    RiskMeasure,
    Side,
    SummarySpec,
    align_ids,
    data_row,
    dataset_classes,
    distinct,
    read_text,
    regrouped,
    regular_file,
    released,
    row_count_error,
    separators_fitting,
)

#: How ARX writes a missing value (``DataType.NULL_VALUE``); hierarchies list it under that text.
NULL_TEXT = "NULL"

T = TypeVar("T")


class QIParams(Params):
    """Params every measure of the family shares."""

    quasi_identifiers: Annotated[list[str], AfterValidator(
        distinct("quasi-identifiers listed twice:"))] = Field(
        min_length=1, description="Columns an intruder may know (the key variables).")
    suppression_token: str = Field(
        "*", min_length=1,
        description="Value of a suppressed cell; a record is suppressed when all its "
                    "quasi-identifiers equal it.")
    missing: Literal["value", "suppressed"] = Field(
        "value",
        description="Missing values in quasi-identifiers: a value of their own (with a "
                    "warning), or treated as the suppression token.")
    id: str | None = Field(
        None, description="Key column aligning the records of both sides (row order when "
                          "null); original records absent from the anonymized data count as "
                          "suppressed.")

    @model_validator(mode="after")
    def _id_not_a_qi(self) -> QIParams:
        if self.id is not None and self.id in self.quasi_identifiers:
            raise ValueError(f"id column {self.id!r} is also a quasi-identifier")
        return self


def as_text(values: pd.Index | np.ndarray | Sequence[object]) -> np.ndarray:
    """Values as the text a CSV (and an ARX hierarchy) holds them in.

    Integral floats lose their ``.0`` (``39.0`` → ``"39"``, a column read with missing values
    becomes float); missing values become ARX's ``"NULL"``.
    """
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or v is pd.NaT:
            out.append(NULL_TEXT)
        elif isinstance(v, (float, np.floating)) and float(v).is_integer():
            out.append(str(int(v)))
        else:
            out.append(str(v))
    return np.array(out, dtype=object)


@dataclass(frozen=True)
class Column:
    """A column's integer codes with the token and missing cells identified.

    ``codes`` index ``texts``; ``token`` is the code every suppressed cell has (missing cells
    included when ``missing="suppressed"``), or -1 when no cell is suppressed.
    """

    codes: np.ndarray
    texts: np.ndarray
    token: int
    n_missing: int


def column(data: Microdata, col: str, token: str, missing: str) -> Column:
    """The codes of ``col`` with token cells (and missing ones, if asked) sharing one code."""

    def compute() -> Column:
        codes, uniques = data.codes(col)
        return token_column(codes, uniques, np.bincount(codes, minlength=len(uniques)),
                            token, missing)

    return data.cached(("anoneval.microdata.column", col, token, missing), compute)


def token_column(codes: np.ndarray, uniques: pd.Index, counts: np.ndarray, token: str,
                 missing: str) -> Column:
    """A :class:`Column` from codes into ``uniques``; ``counts`` holds the records per value."""
    texts = as_text(uniques)
    isna = np.asarray(pd.isna(uniques), dtype=bool)
    n_missing = int(counts[isna].sum())
    is_tok = texts == token
    is_tok &= ~isna
    if missing == "suppressed":
        is_tok |= isna
    tok = np.flatnonzero(is_tok)
    if len(tok) > 1:  # merge the token and missing codes into the first of them
        remap = np.arange(len(texts))
        remap[tok] = tok[0]
        codes = remap[codes]
    texts = texts.copy()
    if len(tok):
        texts[tok[0]] = token
    return Column(codes, texts, int(tok[0]) if len(tok) else -1, n_missing)


def _combine(codes: Sequence[np.ndarray], cards: Sequence[int], n: int) -> tuple[np.ndarray, int]:
    """Dense ids of the code tuples (as :meth:`Microdata.group_ids` computes them)."""
    key = np.zeros(n, dtype=np.int64)
    size = 1
    for c, card in zip(codes, cards, strict=True):
        card = max(card, 1)
        if size * card >= 2**62:
            _, key = np.unique(key, return_inverse=True)
            size = int(key.max()) + 1 if n else 1
        key = key * card + c
        size *= card
    uniq, inverse = np.unique(key, return_inverse=True)
    return inverse.astype(np.int64, copy=False).reshape(-1), len(uniq)


@dataclass
class Classes:
    """The equivalence classes of the released records and the suppression counts.

    ``records`` counts every record (suppressed and deleted ones included): the *n* of the
    formulas. ``sizes`` are the sizes of the classes of non-suppressed records. Row ``i`` of the
    released data (or of the class summary's rows) belongs to class
    ``class_of_group[group_ids[i]]`` (-1 when suppressed).
    """

    records: int
    sizes: np.ndarray
    group_ids: np.ndarray
    class_of_group: np.ndarray
    suppressed: int
    deleted: int

    @property
    def suppressed_total(self) -> int:
        """Records that are not in any class: suppressed in the data plus deleted."""
        return self.suppressed + self.deleted

    def row_class(self) -> np.ndarray:
        """Class index of each released row, -1 for suppressed rows."""
        return self.class_of_group[self.group_ids]


def class_sums(cl: Classes, values: np.ndarray) -> np.ndarray:
    """Per class, the sum of ``values`` (one per row, or per summary row) over its rows."""
    row_class = cl.row_class()
    kept = row_class >= 0
    return np.bincount(row_class[kept], weights=values[kept], minlength=len(cl.sizes))


def released_classes(original: Dataset | None, anonymized: Dataset | None, p: QIParams,
                     ctx: Context) -> tuple[Microdata, Classes]:
    """The released dataset and its equivalence classes over ``p.quasi_identifiers``, one per
    record (``group_ids`` index the rows): the classes of the run's shared grouping
    (:func:`~anoneval.core.api.dataset_classes`) under the rules of :func:`key_classes`."""
    data = released(original, anonymized)
    if not isinstance(data, Microdata):
        raise DataError(f"expected microdata, got {data.data_kind}")
    qi = list(p.quasi_identifiers)
    data.require(qi, "quasi-identifier")
    deleted = 0
    if isinstance(original, Microdata) and anonymized is not None:  # fail early if misaligned
        deleted = 0 if alignment(original, data, p.id, ctx) is None else len(original) - len(data)

    def compute() -> tuple[tuple[Column, ...], np.ndarray, np.ndarray, np.ndarray]:
        rows = dataset_classes(data, qi)
        cols, gids, class_of_group, sizes = key_classes(
            [rows.key_values(j) for j in range(len(qi))], rows.counts, p.suppression_token,
            p.missing)
        same = np.array_equal(gids, np.arange(len(gids)))  # no key rows merged
        row_gids = rows.ids if same else gids[rows.ids]
        return tuple(cols), row_gids, class_of_group, sizes

    cols, gids, class_of_group, group_sizes = data.cached(
        ("anoneval.microdata.classes", tuple(qi), p.suppression_token, p.missing), compute)
    warn_missing(ctx, qi, cols, p.missing, "anonymized" if anonymized is not None else "original")
    sup_groups = class_of_group < 0
    classes = Classes(
        records=len(data) + deleted, sizes=group_sizes[~sup_groups], group_ids=gids,
        class_of_group=class_of_group, suppressed=int(group_sizes[sup_groups].sum()),
        deleted=deleted)
    return data, classes


def key_classes(keys: Sequence[tuple[np.ndarray, pd.Index]], counts: np.ndarray, token: str,
                missing: str) -> tuple[list[Column], np.ndarray, np.ndarray, np.ndarray]:
    """The suppression and missing-value rules applied to groups of identical key tuples.

    Each group (a class of a summary, or of :func:`~anoneval.core.api.dataset_classes`) has
    ``counts`` records; ``keys`` holds, per quasi-identifier, each group's code into the
    column's distinct values (see :func:`key_codes`). Returns each column's :class:`Column`
    over the groups, the merged group of each group (groups that differ only by missing vs
    token cells merge under ``missing="suppressed"``), each merged group's class
    (:func:`group_classes`) and its record count.
    """
    cols = [token_column(codes, values,
                         np.bincount(codes, weights=counts, minlength=len(values)),
                         token, missing) for codes, values in keys]
    if missing == "value" or not any(c.n_missing for c in cols):
        gids, ng, sizes = np.arange(len(counts)), len(counts), counts
    else:
        gids, ng = _combine([c.codes for c in cols], [len(c.texts) for c in cols], len(counts))
        # merged groups in the order of their first group: classes in key order, each by its
        # first key (as a summary regrouped on a cluster orders them, see suppressed_merged)
        first = np.empty(ng, dtype=np.int64)
        first[gids[::-1]] = np.arange(len(gids) - 1, -1, -1)
        rank = np.empty(ng, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(ng)
        gids = rank[gids]
        sizes = np.bincount(gids, weights=counts, minlength=ng).astype(np.int64)
    return cols, gids, group_classes(cols, gids, ng), sizes


def raw_class_sizes(data: Microdata, qi: Sequence[str]) -> np.ndarray:
    """Records per distinct tuple of ``qi`` values in ``data`` (no suppression rule: the
    original's classes), from the run's shared grouping."""
    return dataset_classes(data, qi).counts


def group_classes(cols: Sequence[Column], gids: np.ndarray, n_groups: int) -> np.ndarray:
    """Class of each group, -1 for the groups of suppressed records (all cells the token).

    ``cols`` hold the codes of the rows (or summary rows) that ``gids`` assigns to groups.
    """
    sup = np.zeros(n_groups, dtype=bool)
    if all(c.token >= 0 for c in cols):  # else no record can be all tokens
        row_sup = cols[0].codes == cols[0].token
        for c in cols[1:]:
            row_sup &= c.codes == c.token
        sup[gids[row_sup]] = True
    class_of_group = np.cumsum(~sup) - 1
    class_of_group[sup] = -1
    return class_of_group


class ClassRiskMeasure(RiskMeasure):
    """Base of the risk measures of the released side's equivalence classes: a share of the
    records, either side accepted (the anonymized one when given)."""

    unit = "share"
    inputs = "either"

    def release_columns(self) -> Mapping[Side, Collection[str]] | None:
        return release_only_columns(self)


def summary_specs(p: QIParams, weights: str | None = None,
                  sensitive: Sequence[str] = ()) -> list[SummarySpec] | None:
    """The summaries :func:`reduce_classes` reads, or None when ``p.id`` aligns the sides
    (deleted records are found only by comparing both sides' rows)."""
    if p.id is not None:
        return None
    keys = tuple(p.quasi_identifiers)
    specs = [SummarySpec(side, keys, weights, tuple(sensitive))
             for side in ("anonymized", "original")]
    specs.append(SummarySpec("original", ()))  # the original's record count
    return specs


def release_only_columns(measure: Measure) -> Mapping[Side, Collection[str]] | None:
    """:meth:`~anoneval.core.api.Measure.release_columns` of a measure whose summaries are
    :func:`summary_specs`: given a release it reads that release's summaries and, of the
    original, only the record count (:func:`released_summary`), no column; from the records
    (``summaries()`` None: ``id``, ``per_record``, ...) it keeps :meth:`columns`."""
    columns = measure.columns()
    if measure.summaries() is None or columns is None:
        return columns
    return {"original": [], "anonymized": list(columns.get("anonymized", ()))}


def released_summary(original: Dataset | None, anonymized: Dataset | None, p: QIParams,
                     ctx: Context, weights: str | None = None, sensitive: Sequence[str] = (),
                     check_rows: bool = True) -> tuple[ClassSummary, str]:
    """The released side's class summary over the quasi-identifiers (and the side's name),
    checked as the record path checks the data: columns, weights > 0 and, with
    ``check_rows``, both sides of equal length."""
    if anonymized is None and original is None:
        raise DataError("no data given")
    side = "anonymized" if anonymized is not None else "original"
    qi = list(p.quasi_identifiers)
    given = anonymized if anonymized is not None else original
    if isinstance(given, Microdata):
        given.require(qi, "quasi-identifier")
        if weights is not None:
            given.require([weights], "weight column")
        given.require(sensitive, "sensitive attribute")
    ctx = ctx.with_summaries(original, anonymized)
    try:
        summary = ctx.class_summary(SummarySpec(side, tuple(qi), weights, tuple(sensitive)))
        if weights is not None:
            positive_weights(summary, weights)
    except DataError:
        if weights is not None and isinstance(given, Microdata):  # in memory: name the row
            sampling_weights(given, weights)
        raise
    if check_rows and anonymized is not None and original is not None:
        rows = ctx.class_summary(SummarySpec("original", ())).n_records
        if rows != summary.n_records:
            raise row_count_error(rows, summary.n_records)
    return summary, side


def _groups_classes(records: int, class_of_group: np.ndarray, sizes: np.ndarray,
                    gids: np.ndarray) -> Classes:
    sup = class_of_group < 0
    return Classes(records=records, sizes=sizes[~sup], group_ids=gids,
                   class_of_group=class_of_group, suppressed=int(sizes[sup].sum()), deleted=0)


@dataclass(frozen=True)
class ClassSizes:
    """The equivalence classes by size: what every class-size formula reads.

    ``sizes`` are the distinct sizes of the classes of non-suppressed records, ascending;
    ``classes[i]`` is the number of classes of size ``sizes[i]``. ``records`` counts every
    record (the *n* of the formulas), ``suppressed`` the records suppressed in the data,
    ``deleted`` those absent from the release (by ``id``). Its size grows with the number of
    distinct sizes (at most √(2n)), never with the number of classes, so the tables of a
    sharded summary's parts travel and add up (:meth:`combine`) instead of its classes.
    """

    records: int
    suppressed: int
    deleted: int
    sizes: np.ndarray
    classes: np.ndarray

    @classmethod
    def of(cls, cl: Classes) -> ClassSizes:
        """The table of ``cl``'s class sizes (counted with ``bincount`` unless a class is far
        larger than the number of classes: then sorted)."""
        f = cl.sizes.astype(np.int64, copy=False)
        if len(f) and int(f.max()) <= 4 * len(f) + 1_000_000:
            counts = np.bincount(f)
            sizes = np.flatnonzero(counts)
            classes = counts[sizes]
        else:
            sizes, classes = np.unique(f, return_counts=True)
        return cls(cl.records, cl.suppressed, cl.deleted, sizes.astype(np.int64),
                   classes.astype(np.int64))

    @classmethod
    def combine(cls, parts: Sequence[ClassSizes]) -> ClassSizes:
        """The table of the union of disjoint sets of classes (the parts' records add up)."""
        sizes, inverse = np.unique(np.concatenate([t.sizes for t in parts]),
                                   return_inverse=True)
        classes = np.bincount(inverse.reshape(-1), minlength=len(sizes),
                              weights=np.concatenate([t.classes for t in parts]))
        return cls(sum(t.records for t in parts), sum(t.suppressed for t in parts),
                   sum(t.deleted for t in parts), sizes.astype(np.int64),
                   classes.astype(np.int64))

    @property
    def suppressed_total(self) -> int:
        """Records that are not in any class: suppressed in the data plus deleted."""
        return self.suppressed + self.deleted

    @property
    def n_classes(self) -> int:
        """The number of classes."""
        return int(self.classes.sum())

    @property
    def released(self) -> int:
        """Records in classes (Σ f)."""
        return int((self.sizes * self.classes).sum())

    @property
    def smallest(self) -> int | None:
        """The smallest class size, None without classes."""
        return int(self.sizes[0]) if len(self.sizes) else None

    def squares(self) -> int:
        """Σ f² over the classes, exact (int64: n < 3·10⁹)."""
        return int((self.sizes * self.sizes * self.classes).sum())

    def where(self, mask: np.ndarray) -> ClassSizes:
        """The classes whose size ``mask`` (over :attr:`sizes`) selects; same record counts."""
        return ClassSizes(self.records, self.suppressed, self.deleted, self.sizes[mask],
                          self.classes[mask])

    def as_dict(self) -> dict[int, int]:
        """``{class size: number of classes}`` with int keys, sizes ascending."""
        return {int(s): int(c) for s, c in zip(self.sizes, self.classes, strict=True)}


def reduce_classes(original: Dataset | None, anonymized: Dataset | None, p: QIParams,
                   ctx: Context, partial: Callable[[ClassSummary, Classes], T],
                   combine: Callable[[list[T]], T], weights: str | None = None,
                   sensitive: Sequence[str] = ()) -> tuple[ClassSizes, T]:
    """The released side's :class:`ClassSizes` and ``combine`` of ``partial`` over its class
    summary, reduced where the summary lies. Needs ``p.id`` unset (see :func:`summary_specs`).

    ``partial`` gets a summary of disjoint classes and their :class:`Classes` (one group per
    summary row, or merged ones under ``missing="suppressed"``, as :func:`released_classes`
    finds them from the records) and returns figures whose size does not grow with the
    number of classes (sums, maxima, counts); ``combine`` merges the figures of disjoint sets of
    classes. In memory it runs once, on the whole summary; on a sharded summary it runs on each
    part on the worker holding it (:meth:`~anoneval.core.api.ClassSummary.reduce`), so the same
    code gives both engines' results and nothing per class comes to this process. Under
    ``missing="suppressed"`` with missing quasi-identifier values, groups that differ by a
    missing vs a token cell merge, across parts: the parts are first regrouped on the merged
    keys on the workers (:func:`suppressed_merged`). ``partial`` (and what it holds) must
    pickle: it travels to the workers.
    """
    summary, side = released_summary(original, anonymized, p, ctx, weights, sensitive)
    qi = tuple(p.quasi_identifiers)
    summary, counted = suppressed_merged(summary, qi, p.suppression_token, p.missing)
    part = functools.partial(_reduce_part, qi=qi, token=p.suppression_token, missing=p.missing,
                             partial=partial)
    found = summary.reduce(part, list)
    n_missing = counted or [sum(f[0][j] for f in found) for j in range(len(qi))]
    empty = np.zeros(0, dtype=np.int64)
    warn_missing(ctx, qi, [Column(empty, np.zeros(0, dtype=object), -1, m) for m in n_missing],
                 p.missing, side)
    return (ClassSizes.combine([f[1] for f in found]), combine([f[2] for f in found]))


def token_keys(keys: pd.DataFrame, qi: Sequence[str], token: str) -> pd.DataFrame:
    """``keys`` with every missing cell of ``qi``, and every cell reading as ``token``, the
    token: the classes' keys as ``missing="suppressed"`` groups them (:func:`token_column`)."""
    out = {}
    for c in qi:
        codes, uniques = pd.factorize(keys[c], use_na_sentinel=False)
        texts = as_text(uniques)
        merge = (texts == token) | np.asarray(pd.isna(uniques), dtype=bool)
        values = np.asarray(uniques, dtype=object).copy()
        values[merge] = token
        out[c] = values[codes] if len(codes) else values[:0]
    return keys.assign(**out)


def missing_cells(part: ClassSummary, qi: Sequence[str]) -> tuple[int, ...]:
    """The records of ``part`` with a missing value, per column of ``qi``."""
    return tuple(int(part.counts[part.keys[c].isna().to_numpy()].sum()) for c in qi)


def _added(parts: list[tuple[int, ...]]) -> tuple[int, ...]:
    return tuple(int(sum(col)) for col in zip(*parts, strict=True))


def suppressed_merged(summary: ClassSummary, qi: Sequence[str], token: str,
                      missing: str) -> tuple[ClassSummary, tuple[int, ...] | None]:
    """``summary`` with its classes merged as ``missing="suppressed"`` merges them, and the
    missing cells per quasi-identifier (None when not counted here).

    Under ``missing="suppressed"`` a missing cell is the token, so keys that differ only by a
    missing vs a token cell are one group; a summary sharded on a cluster hashed them to
    different parts. When it has missing values, its classes are regrouped on the merged keys
    (:func:`token_keys`) with a second hash partitioning on the workers
    (:func:`~anoneval.core.api.regrouped`: Dask's shuffle), so every part reduction that
    follows sees whole groups and nothing per class comes here. An in-memory summary (one
    part) is returned as it is."""
    if missing != "suppressed" or not summary.sharded:
        return summary, None
    qi = tuple(qi)
    counted = summary.reduce(functools.partial(missing_cells, qi=qi), _added)
    if any(counted):
        summary = regrouped(summary, functools.partial(token_keys, qi=qi, token=token))
    return summary, counted


def _reduce_part(part: ClassSummary, qi: Sequence[str], token: str, missing: str,
                 partial: Callable[[ClassSummary, Classes], T]
                 ) -> tuple[tuple[int, ...], ClassSizes, T]:
    """One part's missing cells per quasi-identifier, class sizes and ``partial`` figures."""
    cols, gids, class_of_group, sizes = key_classes(key_codes(part.keys, qi), part.counts,
                                                    token, missing)
    cl = _groups_classes(part.n_records, class_of_group, sizes, gids)
    return tuple(c.n_missing for c in cols), ClassSizes.of(cl), partial(part, cl)


def no_figures(part: ClassSummary, cl: Classes) -> None:
    """A ``partial`` for :func:`reduce_classes` when the class sizes are all a measure needs."""
    return None


def key_codes(keys: pd.DataFrame, qi: Sequence[str]) -> list[tuple[np.ndarray, pd.Index]]:
    """Per column of ``qi``, the code of each row of ``keys`` and the distinct values."""
    out = []
    for c in qi:
        codes, uniques = pd.factorize(keys[c], use_na_sentinel=False)
        out.append((codes.astype(np.int64, copy=False), pd.Index(uniques)))
    return out


def sampling_weights(data: Microdata, col: str) -> np.ndarray:
    """The weight column as float64; a clear error for a missing column, text, NaN or w <= 0."""
    data.require([col], "weight column")
    raw = data.frame[col]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero(~np.isfinite(values) | (values <= 0))
    if len(bad):
        row = int(bad[0])
        shown = raw.iloc[row]
        why = ("is missing" if pd.isna(shown) else
               "is not a number" if not np.isfinite(values[row]) and
               not isinstance(shown, (int, float, np.number)) else
               "is not finite" if not np.isfinite(values[row]) else
               "is zero" if values[row] == 0 else "is negative")
        raise DataError(
            f"weight column {col!r}: {data_row(row)} {why} ({shown!r}); sampling weights must be "
            f"finite numbers > 0 ({len(bad)} row(s) fail)")
    return values


def positive_weights(summary: ClassSummary, col: str) -> None:
    """Raise unless every weight summed in ``summary`` (whose weights are ``col``) is > 0."""
    smallest, bad = summary.low_weights or (np.inf, 0)
    if bad:
        raise DataError(f"weight column {col!r}: {bad} value(s) are not numbers > 0 (the "
                        f"smallest is {smallest!r}); sampling weights must be finite numbers > 0")


def warn_missing(ctx: Context, qi: Sequence[str], cols: Sequence[Column], policy: str,
                 side: str) -> None:
    """Warn about missing quasi-identifier values and say how they were treated.

    ``policy`` is the ``missing`` param, or ``"raw"`` for the original side of a comparison.
    """
    found = {c: col.n_missing for c, col in zip(qi, cols, strict=True) if col.n_missing}
    if not found:
        return
    listing = ", ".join(f"{c!r} ({k})" for c, k in found.items())
    how = {"value": "treated as a value of their own (missing='suppressed' treats them as "
                    "suppressed)",
           "raw": "treated as a value of their own (text NULL in a hierarchy)",
           "suppressed": "treated as suppressed cells"}[policy]
    ctx.warn(f"missing values in quasi-identifiers of the {side} data: {listing}; {how}")


def pair_counts(a: np.ndarray, a_card: int, b: np.ndarray, b_card: int,
                weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (a, b) code pairs sorted by a then b, and how many rows have each pair (the
    sum of the rows' integer ``weights``, when given: counts of rows already counted).

    Counts with ``bincount`` when the pair space is small (no sort), ``unique`` otherwise.
    """
    a_card, b_card = max(a_card, 1), max(b_card, 1)
    key = a.astype(np.int64, copy=False) * b_card + b
    if a_card * b_card <= 4 * len(key) + 1_000_000:
        counts = np.bincount(key, weights=weights, minlength=a_card * b_card)
        uniq = np.flatnonzero(counts)
        counts = counts[uniq]
    elif weights is None:
        uniq, counts = np.unique(key, return_counts=True)
    else:
        uniq, inverse = np.unique(key, return_inverse=True)
        counts = np.bincount(inverse.reshape(-1), weights=weights, minlength=len(uniq))
    return uniq // b_card, uniq % b_card, counts.astype(np.int64, copy=False)


# -- row alignment ---------------------------------------------------------------------------


def alignment(original: Microdata, anonymized: Microdata, id_col: str | None,
              ctx: Context) -> np.ndarray | None:
    """Row of the anonymized data for each original row (-1: deleted); None if row-aligned.

    Without ``id_col`` the row counts must be equal. With it, ids must be unique on both sides
    and every anonymized id must occur in the original; original ids absent from the
    anonymized data are deleted records (with a warning; the caller treats them as
    suppressed).
    """
    if id_col is None:
        if len(original) != len(anonymized):
            raise row_count_error(len(original), len(anonymized))
        return None
    original.require([id_col], "id column")
    anonymized.require([id_col], "id column")
    take = align_ids(original.frame[id_col], anonymized.frame[id_col], id_col)
    deleted = len(original) - len(anonymized)
    if deleted:
        ctx.warn(f"{deleted} records of the original (by {id_col!r}) are not in the anonymized "
                 "data; they count as suppressed")
    return take


# -- hierarchies -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Hierarchy:
    """A generalization hierarchy in ARX's CSV format.

    One row per raw value: column 0 the raw value, column ``i`` its generalization at level
    ``i``. ``codes[r, i]`` is the code (into ``values``) of row ``r``'s value at level ``i``;
    ``rows`` maps a raw value's text to its row. A hierarchy whose last column is not a single
    root gets one more level, the suppression token (as ARX adds ``*``).
    """

    path: str
    values: pd.Index
    codes: np.ndarray
    rows: pd.Index

    @property
    def height(self) -> int:
        """The top level (number of columns − 1)."""
        return self.codes.shape[1] - 1


def load_hierarchy(path: Path, token: str) -> Hierarchy:
    """Load (cached on path, modification time and size) an ARX hierarchy CSV.

    The separator is ``;`` (ARX's) when the first line has one, else sniffed (``,`` as in
    ANJANA's examples, tab, ``|``, ``/``). Values are read as text, nothing counts as
    missing; the file must be UTF-8 (a byte order mark is dropped) and a regular file (a FIFO
    would block the run).
    """
    st = regular_file(path, "hierarchy")
    return _load_hierarchy(str(path), st.st_mtime_ns, st.st_size, token)


@functools.lru_cache(maxsize=64)
def _load_hierarchy(path: str, mtime: int, size: int, token: str) -> Hierarchy:
    # lines end at \n, \r or \r\n only, as csv reads them (str.splitlines also splits at
    # \x0b, \x1c, \u2028 and others, which a value may hold)
    lines = list(io.StringIO(read_text(path, "hierarchy"), newline=""))
    first = lines[0] if lines else ""
    sep = ";" if ";" in first else next(iter(separators_fitting(lines[:50])), ",")  # ARX: ';'
    rows = [r for r in csv.reader(lines, delimiter=sep) if r]
    if not rows:
        raise DataError(f"hierarchy {path} is empty")
    width = len(rows[0])
    for i, r in enumerate(rows):
        if len(r) != width:
            raise DataError(f"hierarchy {path}: row {i + 1} has {len(r)} columns, the first "
                            f"row {width}; every row must list all levels")
    matrix = np.array(rows, dtype=object)
    raw = pd.Index(matrix[:, 0])
    if raw.has_duplicates:
        dup = raw[raw.duplicated()][0]
        raise DataError(f"hierarchy {path}: raw value {dup!r} is listed twice in column 0")
    if len(set(matrix[:, -1])) > 1:
        matrix = np.column_stack([matrix, np.full(len(rows), token, dtype=object)])
    codes, values = pd.factorize(matrix.ravel())
    return Hierarchy(path, pd.Index(values), codes.reshape(matrix.shape).astype(np.int64), raw)


def hierarchy_rows(h: Hierarchy, texts: np.ndarray, col: str) -> np.ndarray:
    """Row of ``h`` of each raw value; an error names the values the hierarchy lacks."""
    rows = h.rows.get_indexer(texts)
    if (rows < 0).any():
        bad = [str(t) for t in texts[rows < 0]]
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise DataError(
            f"hierarchy {h.path} of column {col!r} lacks the raw value(s) "
            f"{', '.join(map(repr, bad[:5]))}{more}; every value of the original data must be "
            "in its first column")
    return rows
