"""Shared machinery of ARX's quality models: hierarchy lookups, aligned codes, aggregates.

Conventions of every quality model (ARX's ``aggregates/quality`` output analysis, Prasser et
al. 2014, 2016), stated once here and referenced by each model's docstring:

* **Hierarchies** are ARX CSVs (``hierarchies: {column: path}``; column 0 the raw value,
  column *i* its generalization at level *i*), read and checked by
  ``anoneval.plugins.microdata._hierarchy`` (equal depths, a tree). A hierarchy whose last
  column is not a single root gets one more level, the suppression token. The **domain
  size** D of a column is the number of rows of its hierarchy, as ARX. Without a hierarchy
  ARX's fallback is used: the distinct values of the original plus the token as root (D =
  number of distinct values).
* Every released value must be in its column's hierarchy (any level) or be the suppression
  token, for every model that reads a hierarchy (the squared-error models of numeric columns
  without one do not); every original value must be in column 0. Anything else is an error
  naming the column (ARX silently scores unknown values as raw values).
* A record is **suppressed** when all its quasi-identifiers equal ``suppression_token``
  (ARX's outliers are released that way; PR #263). ``compat="arx"`` adds ARX's
  ``QualityModel.isSuppressed`` quirk for granularity and generalization intensity: a row
  whose quasi-identifier values are all equal to each other counts as suppressed too (with a
  single quasi-identifier that is every row). A cell is **suppressed** when it equals the
  token or its hierarchy's root, or is missing (NaN/None, unless the hierarchy lists ARX's
  ``NULL``): it then counts as the root in every model (ARX scores a missing value as a raw
  value except in its missings).
* Original and anonymized records are row-aligned, or aligned by the ``id`` column (original
  records absent from the anonymized data count as suppressed records).
* Each model yields ARX's (min, raw, max); ARX's quality is 1 − clamp((raw − min)/(max − min),
  0, 1) and the value anoneval reports is the normalized loss clamp((raw − min)/(max − min)).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    LossMeasure,
    MeasureResult,
    Microdata,
    ParamPath,
    data_row,
    dataset_classes,
)
from anoneval.plugins.microdata._common import (
    NULL_TEXT,
    Hierarchy,
    alignment,
    column,
    load_hierarchy,
    pair_counts,
    released_classes,
)
from anoneval.plugins.microdata._hierarchy import HierarchyPaths, listed, read_hierarchies

Aggregate = Literal["arithmetic", "geometric", "max"]
AttributeType = Literal["string", "integer", "decimal"]


class QualityParams(HierarchyPaths):
    """Params every ARX quality model shares."""

    per_column = ("hierarchies", "types")

    hierarchies: dict[str, ParamPath] = Field(
        default_factory=dict,
        description="Hierarchy CSV path per quasi-identifier (ARX format), relative to the "
                    "config file; without one, the original's distinct values and the token.")


class ColumnParams(QualityParams):
    """Params of the column-oriented models (one value per quasi-identifier)."""

    aggregate: Aggregate = Field(
        "arithmetic",
        description="How the headline combines the attributes: 'arithmetic' (ARX's "
                    "StatisticsQuality arithmetic mean), 'geometric' or 'max' (ARX's "
                    "optimisation-metric aggregates of the per-attribute losses).")


class ArxCompatParams(ColumnParams):
    """Params of the cell models with ARX's suppression quirk behind ``compat``."""

    compat: Literal["none", "arx"] = Field(
        "none", description="'arx': rows whose quasi-identifier values are all equal count "
                            "as suppressed too (ARX's isSuppressed quirk).")


class TypedParams(QualityParams):
    """Params of the squared-error models: how each quasi-identifier becomes numbers."""

    types: dict[str, AttributeType] = Field(
        default_factory=dict,
        description="Attribute type per quasi-identifier: 'string' (positions in the "
                    "hierarchy), 'integer' or 'decimal' (values and ranges); default from the "
                    "original's pandas dtype.")


# -- hierarchy tables --------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """ARX's per-value lookups of one hierarchy (``QualityDomainShareRaw`` and friends).

    ``positions`` numbers every distinct text of the matrix. Per text: ``share`` = (#rows with that
    text at its highest level) / D (level 0: 1/D), as ``QualityDomainShareRaw``;
    ``first_level`` = the lowest level it occurs at (``QualityModelColumnOrientedPrecision``);
    ``lo``/``hi`` = the smallest and largest row it occurs in (``getNumbersFromHierarchy``).
    ``coded`` is the matrix as those positions.
    """

    path: str
    matrix: np.ndarray
    coded: np.ndarray
    share: np.ndarray
    first_level: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    raw: pd.Index
    root: str | None
    positions: dict[str, int]

    @property
    def domain(self) -> int:
        """D: the number of rows (raw values)."""
        return self.matrix.shape[0]

    @property
    def height(self) -> int:
        """The top level (number of columns − 1)."""
        return self.matrix.shape[1] - 1

    def lookup(self, texts: np.ndarray) -> np.ndarray:
        """Position of each text (-1 if absent); ``texts`` are a column's distinct values."""
        get = self.positions.get
        return np.fromiter((get(t, -1) for t in texts), dtype=np.int64, count=len(texts))

    def raw_rows(self, texts: np.ndarray, col: str) -> np.ndarray:
        """Row of each raw value; an error names the values column 0 lacks."""
        rows = self.raw.get_indexer(texts)
        if (rows < 0).any():
            raise DataError(
                f"hierarchy {self.path} of column {col!r} lacks the original value(s) "
                f"{listed(texts[rows < 0])}; every value of the original data must be in its "
                "first column")
        return rows


def _table(path: str, matrix: np.ndarray) -> Table:
    rows, levels = matrix.shape
    codes, uniques = pd.factorize(matrix.ravel(order="F"))  # level by level
    codes = codes.reshape((levels, rows))
    k = len(uniques)
    share = np.zeros(k)
    first = np.full(k, levels, dtype=np.int64)
    lo = np.full(k, rows, dtype=np.int64)
    hi = np.full(k, -1, dtype=np.int64)
    ids = np.arange(rows)
    for level in range(levels):
        c = codes[level]
        if level == 0:
            share[c] = 1.0 / rows
        else:
            share[np.unique(c)] = np.bincount(c, minlength=k)[np.unique(c)] / rows
        first[c] = np.minimum(first[c], level)
        np.minimum.at(lo, c, ids)
        np.maximum.at(hi, c, ids)
    tops = set(matrix[:, -1])
    return Table(path, matrix, codes.T.copy(), share, first, lo, hi,
                 pd.Index(matrix[:, 0]), tops.pop() if len(tops) == 1 else None,
                 {str(v): i for i, v in enumerate(uniques)})


_TABLES: dict[int, tuple[Hierarchy, Table]] = {}


def hierarchy_table(h: Hierarchy) -> Table:
    """The lookups of a loaded hierarchy, computed once per hierarchy object."""
    hit = _TABLES.get(id(h))
    if hit is None or hit[0] is not h:
        matrix = np.asarray(h.values)[h.codes]
        hit = _TABLES[id(h)] = (h, _table(h.path, matrix))
        if len(_TABLES) > 128:
            _TABLES.pop(next(iter(_TABLES)))
    return hit[1]


def _checked_table(col: str, path: str, ctx: Context, token: str) -> Table:
    """The table of a hierarchy file, checked (depth, tree) the first time it is read."""
    try:
        h = load_hierarchy(ctx.path(path), token)  # cached on path, mtime and size
    except DataError:
        h = None
    hit = _TABLES.get(id(h)) if h is not None else None
    if hit is None or hit[0] is not h:
        h = read_hierarchies({col: path}, ctx, token)[col]  # errors name the column
    return hierarchy_table(h)


def _raw_rows(original: Microdata, table: Table, texts: np.ndarray, col: str) -> np.ndarray:
    """:meth:`Table.raw_rows` of the original's values, cached on the original per table."""
    key = ("anoneval.generalization.rows", col, id(table))
    hit = original.cached(key, lambda: (table, table.raw_rows(texts, col)))
    return hit[1] if hit[0] is table else table.raw_rows(texts, col)


def fallback_table(col: str, texts: np.ndarray, token: str) -> Table:
    """ARX's trivial hierarchy without a user one: each distinct original value, then token."""
    values = pd.unique(texts)
    matrix = np.column_stack([values, np.full(len(values), token, dtype=object)])
    return _table(f"(distinct values of {col!r})", matrix)


# -- aligned inputs ----------------------------------------------------------------------------


@dataclass
class Side:
    """One quasi-identifier of a comparison, rows in the original's order.

    ``orig``/``rel`` are codes into ``orig_texts``/``rel_texts``; ``rel_pos`` maps each released
    text to its position in the table (-1 for the token when the hierarchy lacks it);
    ``rel_suppressed_value`` marks released texts that are the token or the root;
    ``unknown`` those in neither the hierarchy nor the token (an error for the models that
    need the hierarchy, see :meth:`require_known`).
    """

    name: str
    table: Table
    orig: np.ndarray
    orig_texts: np.ndarray
    orig_rows: np.ndarray
    rel: np.ndarray
    rel_texts: np.ndarray
    rel_pos: np.ndarray
    rel_suppressed_value: np.ndarray
    unknown: np.ndarray
    token: str
    given: bool
    numbers: dict[str, Numbers] = field(default_factory=dict)

    def require_known(self) -> None:
        """Raise if a released value is neither in the hierarchy nor the token (or missing)."""
        if not self.unknown.any():
            return
        hint = ("" if self.given else
                "; give its hierarchy (hierarchies: {column: path}) for generalized values")
        raise DataError(
            f"column {self.name!r}: released value(s) {listed(self.rel_texts[self.unknown])} "
            f"are not in hierarchy {self.table.path} (nor the suppression token "
            f"{self.token!r}){hint}")

    def share(self) -> np.ndarray:
        """ARX's domain share of each released text (token: 1)."""
        self.require_known()
        return np.where(self.rel_pos >= 0, self.table.share[np.maximum(self.rel_pos, 0)], 1.0)


@dataclass
class Inputs:
    """What every quality model of one comparison needs, computed once and cached.

    ``n`` counts all records (deleted ones included); ``row_sup`` marks suppressed records;
    ``group`` is each row's released tuple (groups of suppressed rows included, marked in
    ``group_sup``), ``group_sizes`` their sizes; ``orig_group``/``orig_sizes`` the same for
    the original's tuples.
    """

    columns: list[Side]
    n: int
    row_sup: np.ndarray
    group: np.ndarray
    group_sizes: np.ndarray
    group_sup: np.ndarray
    orig_group: np.ndarray
    orig_sizes: np.ndarray
    cache: dict[Any, Any] = field(default_factory=dict)

    @property
    def suppressed(self) -> int:
        """The number of suppressed records."""
        return int(self.row_sup.sum())

    def representatives(self) -> np.ndarray:
        """One row of each released group (the last)."""

        def compute() -> np.ndarray:
            rep = np.zeros(len(self.group_sizes), dtype=np.int64)
            rep[self.group] = np.arange(len(self.group))
            return rep

        return self.cached("representatives", compute)

    def cached(self, key: Any, compute: Callable[[], Any]) -> Any:
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]


def quality_inputs(original: Dataset | None, anonymized: Dataset | None, p: QualityParams,
                   ctx: Context) -> Inputs:
    """The aligned codes, hierarchies and classes of a comparison (cached on the anonymized)."""
    if not isinstance(original, Microdata) or not isinstance(anonymized, Microdata):
        raise DataError("ARX's quality models need the original and the anonymized microdata")
    qi = list(p.quasi_identifiers)
    original.require(qi, "quasi-identifier")
    anonymized.require(qi, "quasi-identifier")
    if not len(original):
        raise DataError("the original data has no records")
    # the evaluator hands each measure a fresh view of a dataset sharing its cache: a sentinel
    # kept in the original's cache identifies the original across measures
    same_original = original.cached(("anoneval.generalization.identity",), object)
    key = ("anoneval.generalization.inputs", same_original, tuple(qi), p.suppression_token,
           p.missing, p.id, tuple(sorted(p.hierarchies.items())), ctx.base_dir)
    return anonymized.cached(key, lambda: _build(
        original, anonymized, p, dict(p.hierarchies), ctx))


def _build(original: Microdata, anonymized: Microdata, p: QualityParams, paths: dict[str, str],
           ctx: Context) -> Inputs:
    qi = list(p.quasi_identifiers)
    token = p.suppression_token
    _, cl = released_classes(original, anonymized, p, ctx)
    take = alignment(original, anonymized, p.id, Context())  # warned by released_classes
    deleted = take is not None and bool((take < 0).any())
    gids, cog = cl.group_ids, cl.class_of_group
    group_sizes = np.bincount(gids, minlength=len(cog))
    if take is not None:
        ng = len(cog)
        gids = np.where(take < 0, ng, gids[np.maximum(take, 0)]) if len(gids) else np.full(
            len(take), ng)
        cog = np.append(cog, -1)
        group_sizes = np.bincount(gids, minlength=ng + 1)
    group_sup = cog < 0
    row_sup = group_sup[gids]
    orig_classes = dataset_classes(original, qi)
    orig_group, orig_sizes = orig_classes.ids, orig_classes.counts
    sides = []
    for c in qi:
        raw = column(original, c, token, "value")
        rel = column(anonymized, c, token, p.missing)
        rel_codes, rel_texts = rel.codes, rel.texts
        if take is not None:
            tok = rel.token
            if deleted and tok < 0:
                rel_texts, tok = np.append(rel_texts, token), len(rel_texts)
            rel_codes = (np.where(take < 0, tok, rel_codes[np.maximum(take, 0)])
                         if len(rel_codes) else np.full(len(take), tok))
        if c in paths:
            table = _checked_table(c, paths[c], ctx, token)
        else:
            table = original.cached(("anoneval.generalization.fallback", c, token),
                                    lambda c=c, r=raw: fallback_table(c, r.texts, token))
        orig_rows = _raw_rows(original, table, raw.texts, c)
        pos = table.lookup(rel_texts)
        used = np.bincount(rel_codes, minlength=len(rel_texts)) > 0
        missing = (rel_texts == NULL_TEXT) & (pos < 0)  # a missing value, not in the hierarchy
        unknown = used & (pos < 0) & (rel_texts != token) & ~missing
        sup_value = (rel_texts == token) | (rel_texts == table.root) | missing
        sides.append(Side(c, table, raw.codes, raw.texts, orig_rows, rel_codes, rel_texts, pos,
                          sup_value, unknown, token, c in paths))
    return Inputs(sides, len(original), row_sup, gids, group_sizes, group_sup, orig_group,
                  orig_sizes)


class QualityModel(LossMeasure):
    """Base of ARX's quality models: both sides as microdata, one set of inputs for all."""


    class Params(QualityParams):
        pass

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        inputs = quality_inputs(original, anonymized, self.params, ctx)
        assert isinstance(original, Microdata)  # quality_inputs checked it
        return self.loss(inputs, original, ctx)

    def loss(self, inputs: Inputs, original: Microdata, ctx: Context) -> MeasureResult:
        """The model's result from the shared inputs of the comparison."""
        raise NotImplementedError


class CellModel(QualityModel):
    """Base of the cell models that offer ARX's suppression quirk behind ``compat``."""

    class Params(ArxCompatParams):
        pass

    def suppressed_count(self, inputs: Inputs) -> int:
        """Suppressed records, with ARX's equal-values quirk under ``compat="arx"``."""
        return int(suppressed_rows(inputs, self.params.compat).sum())


def arx_equal_values(inputs: Inputs) -> np.ndarray:
    """Rows whose quasi-identifier texts are all equal (ARX's ``isSuppressed`` quirk)."""

    def compute() -> np.ndarray:
        cols = inputs.columns
        same = np.ones(inputs.n, dtype=bool)
        first = cols[0].rel_texts[cols[0].rel]
        for s in cols[1:]:
            same &= s.rel_texts[s.rel] == first
        return same

    return inputs.cached("equal_values", compute)


def group_area(inputs: Inputs) -> np.ndarray:
    """Π_j share_j·D_j of each released group: ARX's area of a class (raw tuples under it)."""

    def compute() -> np.ndarray:
        rep = inputs.representatives()
        area = np.ones(len(rep))
        for s in inputs.columns:
            area *= (s.share() * s.table.domain)[s.rel[rep]]
        return area

    return inputs.cached("area", compute)


def suppressed_rows(inputs: Inputs, compat: str) -> np.ndarray:
    """The suppressed rows; with ``compat="arx"`` also those of ARX's equal-values quirk."""
    return inputs.row_sup | arx_equal_values(inputs) if compat == "arx" else inputs.row_sup


def nonsuppressed_counts(inputs: Inputs, s: Side, compat: str) -> np.ndarray:
    """How many non-suppressed rows hold each released text of ``s`` (cached)."""

    def compute() -> np.ndarray:
        if compat == "arx":
            sup = suppressed_rows(inputs, compat)
            return np.bincount(s.rel[~sup], minlength=len(s.rel_texts))
        rep = inputs.representatives()
        kept = np.where(inputs.group_sup, 0, inputs.group_sizes)
        return np.bincount(s.rel[rep], weights=kept, minlength=len(s.rel_texts))

    return inputs.cached(("counts", s.name, compat), compute)


# -- numbers for the squared-error models --------------------------------------------------------


def attribute_type(original: Microdata, col: str, types: dict[str, str]) -> str:
    """The declared type of ``col``, else the type of the original's values: its pandas dtype,
    or, for a text column whose every value is a number (as when the release's generalized
    text made both sides read the column as text), integer or decimal (decided on the
    column's distinct values, once per dataset)."""
    if col in types:
        return types[col]
    dtype = original.frame[col].dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "string"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_numeric_dtype(dtype):
        return "decimal"

    def compute() -> str:
        _, uniques = original.codes(col)
        values = pd.Series(np.asarray(uniques, dtype=object)).dropna()
        numbers = pd.to_numeric(values, errors="coerce")
        if len(values) == 0 or numbers.isna().any():
            return "string"
        return "integer" if bool((numbers == numbers.round()).all()) else "decimal"

    return original.cached(("anoneval.generalization.type", col), compute)


def _parse(texts: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Texts as numbers; the mask says which parsed."""
    out = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(out)
    if kind == "integer":
        ok &= np.mod(np.where(ok, out, 0), 1) == 0
    return out, ok


@dataclass(frozen=True)
class Numbers:
    """A column as numbers, ARX's ``getColumnsAsNumbers``, per value and per value pair.

    ``x_lo``/``x_hi`` per original value, ``y_lo``/``y_hi`` per released value; ``a``, ``b``,
    ``w``: the (original, released) value pairs of the rows and how many rows have each.
    """

    x_lo: np.ndarray
    x_hi: np.ndarray
    y_lo: np.ndarray
    y_hi: np.ndarray
    a: np.ndarray
    b: np.ndarray
    w: np.ndarray


def value_pairs(inputs: Inputs, s: Side) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (original code, released code) pairs of the rows and their counts (cached)."""
    return inputs.cached(("pairs", s.name), lambda: pair_counts(
        s.orig, len(s.orig_texts), s.rel, len(s.rel_texts)))


def typed_columns(inputs: Inputs, original: Microdata, types: dict[str, str]
                  ) -> tuple[list[tuple[Side, Numbers]], dict[str, str]]:
    """Each quasi-identifier as :func:`numbers` of its type (declared in ``types``, else
    :func:`attribute_type`), and the types used (for details)."""
    kinds = {s.name: attribute_type(original, s.name, types) for s in inputs.columns}
    return [(s, numbers(inputs, s, kinds[s.name])) for s in inputs.columns], kinds


def numbers(inputs: Inputs, s: Side, kind: str) -> Numbers:
    """The column as numbers, as ARX's ``getColumnsAsNumbers`` (cached per type).

    ``string``: the smallest and largest hierarchy row of each value (ARX's ordinals; the
    token, if not in the hierarchy, spans all rows). ``integer``/``decimal``: the original's
    values; released cells of suppressed records, the token and the root span the original's
    [min, max]; the others are numbers if all parse, else each released value spans the
    [min, max] of the original values released as it. ARX does the same on its own outputs: a
    generalized column is typed STRING there, so its range parsers are never reached and the
    "hierarchy" mode (those empirical bounds) applies.
    """
    if kind in s.numbers:
        return s.numbers[kind]
    a, b, w = value_pairs(inputs, s)
    if kind == "string":
        s.require_known()
        t = s.table
        x = t.lookup(s.orig_texts)
        pos = s.rel_pos
        y_lo = np.where(pos >= 0, t.lo[np.maximum(pos, 0)], 0).astype(float)
        y_hi = np.where(pos >= 0, t.hi[np.maximum(pos, 0)], t.domain - 1).astype(float)
        s.numbers[kind] = Numbers(t.lo[x].astype(float), t.hi[x].astype(float), y_lo, y_hi,
                                  a, b, w)
        return s.numbers[kind]
    if s.given:
        s.require_known()
    values, ok = _parse(s.orig_texts, kind)
    used = np.bincount(a, weights=w, minlength=len(s.orig_texts)) > 0
    if (used & ~ok).any():
        bad = s.orig_texts[used & ~ok][0]
        row = int(np.flatnonzero(~ok[s.orig])[0])
        raise DataError(f"column {s.name!r} is declared {kind} (types), but the original has "
                        f"the non-numeric value {bad!r} ({data_row(row)}); declare it 'string' or "
                        "fix the value")
    lo_all, hi_all = float(values[used].min()), float(values[used].max())
    span = s.rel_suppressed_value
    parsed, parses = _parse(s.rel_texts, kind)
    rel_used = np.bincount(b, weights=w, minlength=len(s.rel_texts)) > 0
    if (rel_used & ~span & ~parses).any():  # generalized: the empirical ranges
        y_lo = np.full(len(s.rel_texts), np.inf)
        y_hi = np.full(len(s.rel_texts), -np.inf)
        np.minimum.at(y_lo, b, values[a])
        np.maximum.at(y_hi, b, values[a])
    else:
        y_lo, y_hi = parsed.copy(), parsed.copy()
    y_lo[span] = lo_all
    y_hi[span] = hi_all
    s.numbers[kind] = Numbers(values, values, y_lo, y_hi, a, b, w)
    return s.numbers[kind]


# -- results -----------------------------------------------------------------------------------


def normalized(raw: float, lo: float, hi: float) -> float | None:
    """clamp((raw − lo)/(hi − lo), 0, 1); None when hi = lo (ARX: NaN)."""
    if not hi > lo and not hi < lo:
        return None
    v = (raw - lo) / (hi - lo)
    return min(max(v, 0.0), 1.0)


def _geo(values: np.ndarray) -> float:
    return float(np.prod(values + 1.0) ** (1.0 / len(values)) - 1.0)


def column_result(qi: Sequence[str], raw: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                  aggregate: str, ctx: Context,
                  details: dict[str, Any] | None = None) -> MeasureResult:
    """A column model's result: value, ARX's aggregates (as losses), per-attribute values.

    ``aggregates`` are 1 − StatisticsQuality's getters (aggregate raw, min and max first, then
    normalize); ``metric_aggregates`` those of ARX's optimisation metrics (normalize each
    attribute, then aggregate: mean, Π(v+1)^(1/d) − 1, max). ``aggregate`` picks the value:
    'arithmetic' is StatisticsQuality's, 'geometric' and 'max' the metric ones.
    """
    per = {c: normalized(float(r), float(a), float(b))
           for c, r, a, b in zip(qi, raw, lo, hi, strict=True)}
    agg = {
        "arithmetic": normalized(float(raw.mean()), float(lo.mean()), float(hi.mean())),
        "geometric": normalized(_geo(raw), _geo(lo), _geo(hi)),
        "max": normalized(float(raw.max()), float(lo.max()), float(hi.max())),
    }
    known = np.array([v for v in per.values() if v is not None], dtype=float)
    metric = ({"arithmetic": float(known.mean()), "geometric": _geo(known),
               "max": float(known.max())} if len(known) else
              {"arithmetic": None, "geometric": None, "max": None})
    value = agg["arithmetic"] if aggregate == "arithmetic" else metric[aggregate]
    undefined = [c for c, v in per.items() if v is None]
    if undefined:
        ctx.warn(f"no range (min = max) for {undefined}: their normalized loss is undefined "
                 "(ARX: NaN) and left out of the metric aggregates")
    if value is None:
        ctx.warn("the loss is undefined: the minimum equals the maximum")
    out = {
        "raw": {c: float(r) for c, r in zip(qi, raw, strict=True)},
        "min": {c: float(a) for c, a in zip(qi, lo, strict=True)},
        "max": {c: float(b) for c, b in zip(qi, hi, strict=True)},
        "per_attribute": per,
        "quality": None if agg["arithmetic"] is None else 1.0 - agg["arithmetic"],
        "aggregates": agg,
        "metric_aggregates": metric,
        "aggregate": aggregate,
        **(details or {}),
    }
    return MeasureResult(value=value, details=out)


def row_result(raw: float, lo: float, hi: float, ctx: Context,
               details: dict[str, Any] | None = None) -> MeasureResult:
    """A row model's result: value = clamp((raw − min)/(max − min)), ARX's quality = 1 − value."""
    value = normalized(raw, lo, hi)
    if value is None:
        ctx.warn("the loss is undefined: the minimum equals the maximum (ARX: NaN)")
    return MeasureResult(value=value, details={
        "raw": float(raw), "min": float(lo), "max": float(hi),
        "quality": None if value is None else 1.0 - value, **(details or {})})

