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

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    LossMeasure,
    MeasureResult,
    Microdata,
    ParamPath,
    dataset_classes,
)
from anoneval.plugins.generalization._tables import Table, _checked_table, _raw_rows, fallback_table
from anoneval.plugins.microdata._common import (
    NULL_TEXT,
    alignment,
    column,
    released_classes,
)
from anoneval.plugins.microdata._hierarchy import HierarchyPaths, listed

if TYPE_CHECKING:
    from anoneval.plugins.generalization._numbers import Numbers

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
    """The aligned codes, hierarchies and classes of a comparison (cached on the anonymized,
    with the warnings of making them, which every caller gets)."""
    original, anonymized, same_original = compared(original, anonymized, p,
                                                   "ARX's quality models need")
    key = ("anoneval.generalization.inputs", same_original, tuple(p.quasi_identifiers),
           p.suppression_token, p.missing, p.id, tuple(sorted(p.hierarchies.items())),
           ctx.base_dir)

    def build() -> tuple[Inputs, list[str]]:
        # the warnings of building them, given again to every model that reads them
        own = replace(ctx, warnings=[])
        return _build(original, anonymized, p, dict(p.hierarchies), own), own.warnings

    inputs, warnings = anonymized.cached(key, build)
    for warning in warnings:
        ctx.warn(warning)
    return inputs  # type: ignore[no-any-return]


def compared(original: Dataset | None, anonymized: Dataset | None, p: QualityParams,
             who: str) -> tuple[Microdata, Microdata, object]:
    """Both sides as microdata with the quasi-identifiers, the original not empty, and an
    object that identifies the original across measures (the evaluator hands each measure a
    fresh view of a dataset sharing its cache: a sentinel kept in that cache), for keys of
    what a comparison caches on the anonymized side."""
    if not isinstance(original, Microdata) or not isinstance(anonymized, Microdata):
        raise DataError(f"{who} the original and the anonymized microdata")
    qi = list(p.quasi_identifiers)
    original.require(qi, "quasi-identifier")
    anonymized.require(qi, "quasi-identifier")
    if not len(original):
        raise DataError("the original data has no records")
    return original, anonymized, original.cached(("anoneval.generalization.identity",), object)


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


def group_area(inputs: Inputs) -> np.ndarray:
    """Π_j share_j·D_j of each released group: ARX's area of a class (raw tuples under it)."""

    def compute() -> np.ndarray:
        rep = inputs.representatives()
        area = np.ones(len(rep))
        for s in inputs.columns:
            area *= (s.share() * s.table.domain)[s.rel[rep]]
        return area

    return inputs.cached("area", compute)
