"""Sensitive-value distributions per equivalence class, shared by the attribute-disclosure models.

t-closeness, δ-disclosure, β-likeness and (α,k)-anonymity compare the distribution q_E of a
sensitive attribute in each class E with its distribution p over the whole table. As in ARX
(``DataManager.getDistribution``), p is taken over **all** records of the released data,
suppressed ones included (their sensitive values are released); q_E over the class's records.
Missing sensitive values are a value of their own (with a warning). Every model reports
value = records in violating classes / n, n counting suppressed records too (they are in no
class), like ``KAnonymity`` and ``LDiversity``.

The models read the released side's class summary (quasi-identifiers → record count and
sensitive-value histograms, the spec ``LDiversity`` shares) on every engine, in two reductions
over its parts of disjoint classes (:meth:`~anoneval.core.api.ClassSummary.reduce`; one part in
memory, the hash-partitioned parts where they lie on a cluster): first each sensitive
attribute's value counts (p; as small as its domain), then, with p sent to every part, each
part's classes judged and tallied into counts, maxima and minima (:class:`Tally`). Nothing per
class leaves a part. Only ``per_record`` (a table of the rows) and ``id`` (deleted records are
found by comparing both sides' rows) read the records.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from pydantic import Field, field_validator, model_validator

from anoneval.core.api import (
    ClassSummary,
    Context,
    DataError,
    Dataset,
    MeasureResult,
    Microdata,
    PluginError,
    SummarySpec,
    regrouped,
    row_count_error,
)
from anoneval.plugins.microdata._common import (
    Classes,
    ClassRiskMeasure,
    Column,
    QIParams,
    key_classes,
    key_codes,
    pair_counts,
    released_classes,
    summary_specs,
    token_keys,
    warn_missing,
)
from anoneval.plugins.microdata._records import RecordTable

T = TypeVar("T")


class SensitiveParams(QIParams):
    """Params of the models on a sensitive attribute."""

    sensitive: list[str] = Field(
        min_length=1, description="Sensitive attribute(s); a column name or a list (a class "
                                  "violates when it violates for any of them).")
    per_record: bool = Field(False, description="Add a per-record table (aligned with the "
                                                "released rows) to details.")

    @field_validator("sensitive", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _not_a_qi(self) -> SensitiveParams:
        both = sorted(set(self.sensitive) & set(self.quasi_identifiers))
        if both:
            raise ValueError(f"sensitive attribute(s) {both} are also quasi-identifiers; a "
                             "column is either one or the other")
        if self.id is not None and self.id in self.sensitive:
            raise ValueError(f"id column {self.id!r} is also a sensitive attribute")
        return self


class SensitiveRisk(ClassRiskMeasure):
    """Base of the attribute-disclosure models: the share of records in violating classes.

    A model says how it judges a block of classes (:meth:`judge`) and what it reports of the
    tally of all classes (:meth:`report`); the base class finds the classes and distributions,
    from the class summary or (``per_record``, ``id``) from the records.
    """

    #: Name of the per-class statistic in the ``per_record`` table.
    stat_name = "stat"

    def summaries(self) -> list[SummarySpec] | None:
        p = self.params
        return None if p.per_record else summary_specs(p, None, p.sensitive)

    def records_reason(self) -> str | None:
        """Why this instance reads the records (None when it reads the class summary)."""
        p = self.params
        if p.per_record:
            return ("per_record lists every released row, so it reads the records; drop "
                    "per_record (or raise engine.gather_limit) to compute from the class summary "
                    "on the workers")
        if p.id is not None:
            return ("id aligns the sides row by row to find deleted records, so it reads the "
                    "records; without id the sides are aligned by row count and the measure "
                    "computes from the class summary on the workers")
        return None

    def shared(self, values: Mapping[str, pd.Index], ctx: Context) -> Any:
        """What :meth:`judge` needs besides the distributions (read here, sent to the parts)."""
        return None

    def judge(self, dists: Mapping[str, Distribution], sizes: np.ndarray,
              shared: Any) -> Judged:
        """Per class of one block (``sizes`` its record counts), its statistic and violation."""
        raise NotImplementedError

    def report(self, tally: Tally, p_values: Mapping[str, np.ndarray]) -> dict[str, object]:
        """The model's details from the tally of all classes and each attribute's p."""
        raise NotImplementedError

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if self.summaries() is None:
            return self._from_records(original, anonymized, ctx)
        summary = sensitive_summary(original, anonymized, p, ctx)
        found = summary.reduce(functools.partial(_part_values, qi=tuple(p.quasi_identifiers),
                                                 sensitive=tuple(p.sensitive)), _add_values)
        missing_qi, counts = found
        side = "anonymized" if anonymized is not None else "original"
        warn_missing(ctx, p.quasi_identifiers,
                     [Column(_EMPTY, _EMPTY.astype(object), -1, m) for m in missing_qi],
                     p.missing, side)
        values = {sa: pd.Index(counts[sa].index) for sa in p.sensitive}
        probs = {}
        for sa in p.sensitive:
            warn_missing_values(ctx, sa, values[sa])
            total = counts[sa].to_numpy(np.float64)
            probs[sa] = total / total.sum() if total.sum() else total
        if summary.sharded and p.missing == "suppressed" and any(missing_qi):
            # groups differing by a missing vs a token cell merge, across parts: regrouped
            summary = regrouped(summary, functools.partial(
                token_keys, qi=tuple(p.quasi_identifiers), token=p.suppression_token))
        tally = summary.reduce(functools.partial(
            _part_tally, judge=self.judge, qi=tuple(p.quasi_identifiers),
            token=p.suppression_token, missing=p.missing, values=values, probs=probs,
            shared=self.shared(values, ctx)), Tally.combine)
        return _result(tally, self.report(tally, probs))

    def _from_records(self, original: Dataset | None, anonymized: Dataset | None,
                      ctx: Context) -> MeasureResult:
        p = self.params
        data, cl = released_classes(original, anonymized, p, ctx)
        data.require(p.sensitive, "sensitive attribute")
        dists = {sa: distribution(data, cl, sa, ctx, class_key(p)) for sa in p.sensitive}
        judged = self.judge(dists, cl.sizes,
                            self.shared({sa: d.values for sa, d in dists.items()}, ctx))
        tally = Tally.of(judged, cl.sizes, cl.records, cl.suppressed_total, ())
        out = _result(tally, self.report(tally, {sa: d.p for sa, d in dists.items()}))
        if p.per_record:
            table = RecordTable(data, cl, p.id)
            table.add_float(self.stat_name, judged.worst)
            table.add_bool("violates", judged.violates)
            out.details["per_record"] = table.frame()
        return out


@dataclass
class Distribution:
    """Sparse class × value counts of one sensitive attribute.

    Pairs are sorted by class: ``pair_class``, ``pair_value`` (codes into ``values``), ``count``.
    ``p`` is the table distribution per value code, ``q`` the in-class share of each pair,
    ``f`` the class sizes.
    """

    pair_class: np.ndarray
    pair_value: np.ndarray
    count: np.ndarray
    q: np.ndarray
    p: np.ndarray
    f: np.ndarray
    values: pd.Index


def _distribution(pair_class: np.ndarray, pair_value: np.ndarray, count: np.ndarray,
                  p: np.ndarray, sizes: np.ndarray, values: pd.Index) -> Distribution:
    f = sizes.astype(float)
    q = count / f[pair_class] if len(pair_class) else count.astype(float)
    return Distribution(pair_class, pair_value, count, q, p, f, values)


@dataclass
class Judged:
    """A model's verdict on a block of classes: per attribute and class its statistic
    (``stat``), per class the largest over the attributes (``worst``) and the violation, and
    flags (any class of the block raised them)."""

    stat: dict[str, np.ndarray]
    worst: np.ndarray
    violates: np.ndarray
    flags: dict[str, bool] = field(default_factory=dict)


def _largest(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


@dataclass
class Tally:
    """What the models report of a set of classes: counts, the largest statistics (None
    without classes), the smallest class and the flags. Tallies of disjoint classes add up
    (:meth:`combine`), so a sharded summary's parts are tallied where they lie."""

    records: int
    suppressed: int
    classes: int
    violating_classes: int
    records_in_violating: int
    smallest: int | None
    worst: float | None
    largest: dict[str, float | None]
    flags: dict[str, bool]
    missing: tuple[int, ...]

    @classmethod
    def of(cls, judged: Judged, sizes: np.ndarray, records: int, suppressed: int,
           missing: tuple[int, ...]) -> Tally:
        """The tally of a block of classes (``sizes``) judged ``judged``."""
        has = len(sizes) > 0
        return cls(records, suppressed, len(sizes), int(judged.violates.sum()),
                   int(sizes[judged.violates].sum()), int(sizes.min()) if has else None,
                   float(judged.worst.max()) if has else None,
                   {sa: float(s.max()) if has else None for sa, s in judged.stat.items()},
                   dict(judged.flags), missing)

    @classmethod
    def combine(cls, parts: list[Tally]) -> Tally:
        """The tally of the classes of all ``parts`` (disjoint)."""
        out = parts[0]
        for t in parts[1:]:
            out = cls(out.records + t.records, out.suppressed + t.suppressed,
                      out.classes + t.classes, out.violating_classes + t.violating_classes,
                      out.records_in_violating + t.records_in_violating,
                      t.smallest if out.smallest is None else
                      out.smallest if t.smallest is None else min(out.smallest, t.smallest),
                      _largest(out.worst, t.worst),
                      {sa: _largest(v, t.largest[sa]) for sa, v in out.largest.items()},
                      {k: out.flags.get(k, False) or t.flags.get(k, False)
                       for k in {*out.flags, *t.flags}},
                      tuple(a + b for a, b in zip(out.missing, t.missing, strict=True)))
        return out


_EMPTY = np.zeros(0, dtype=np.int64)


def sensitive_summary(original: Dataset | None, anonymized: Dataset | None,
                      p: SensitiveParams, ctx: Context) -> ClassSummary:
    """The released side's class summary over the quasi-identifiers with the sensitive
    histograms (checked: columns present, both sides of one row count)."""
    if anonymized is None and original is None:
        raise DataError("no data given")
    given = anonymized if anonymized is not None else original
    side = "anonymized" if anonymized is not None else "original"
    if isinstance(given, Microdata):
        given.require(p.quasi_identifiers, "quasi-identifier")
        given.require(p.sensitive, "sensitive attribute")
    ctx = ctx.with_summaries(original, anonymized)
    summary = ctx.class_summary(SummarySpec(side, tuple(p.quasi_identifiers), None,
                                            tuple(p.sensitive)))
    if anonymized is not None and original is not None:
        rows = ctx.class_summary(SummarySpec("original", ())).n_records
        if rows != summary.n_records:
            raise row_count_error(rows, summary.n_records)
    return summary


def _part_values(part: ClassSummary, qi: tuple[str, ...], sensitive: tuple[str, ...]
                 ) -> tuple[tuple[int, ...], dict[str, pd.Series]]:
    """Missing cells per quasi-identifier and each sensitive value's count, in one part."""
    counts = part.counts
    missing = tuple(int(counts[part.keys[c].isna().to_numpy()].sum()) for c in qi)
    values = {}
    for sa in sensitive:
        hist = part.histograms[sa]
        codes, uniques = _value_codes(hist)
        values[sa] = pd.Series(np.bincount(codes, weights=hist["count"].to_numpy(),
                                           minlength=len(uniques)).astype(np.int64),
                               index=uniques)
    return missing, values


def _add_values(parts: list[tuple[tuple[int, ...], dict[str, pd.Series]]]
                ) -> tuple[tuple[int, ...], dict[str, pd.Series]]:
    """The missing cells and value counts of all parts."""
    missing = tuple(int(sum(m)) for m in zip(*(m for m, _ in parts), strict=True))
    sensitive = parts[0][1].keys()
    return missing, {sa: pd.concat([c[sa] for _, c in parts]).groupby(
        level=0, dropna=False, sort=False).sum() for sa in sensitive}


#: Results computed from objects of this process (a summary's or a part's arrays), by the
#: object's identity and a key, dropped with the object: the models of a run that read one
#: summary (one part, on a worker) hash its values and find its classes once.
_DERIVED: dict[tuple[int, tuple[object, ...]], Any] = {}


def _derived(anchor: object, key: tuple[object, ...], compute: Callable[[], T]) -> T:
    """``compute()``, once per live ``anchor`` and ``key`` in this process."""
    slot = (id(anchor), key)
    if slot not in _DERIVED:
        _DERIVED[slot] = compute()
        weakref.finalize(anchor, _DERIVED.pop, slot, None)
    return _DERIVED[slot]  # type: ignore[no-any-return]


def _value_codes(hist: pd.DataFrame) -> tuple[np.ndarray, pd.Index]:
    """Codes of a histogram's values (a missing value is a value), once per histogram."""

    def compute() -> tuple[np.ndarray, pd.Index]:
        codes, uniques = pd.factorize(hist["value"], use_na_sentinel=False)
        return codes, pd.Index(uniques)

    return _derived(hist, ("value codes",), compute)


@dataclass(frozen=True)
class _PartClasses:
    """A part's classes under the token and missing-value rules: each group's class (-1:
    suppressed) by ``class_of_group[gids[group]]``, the class sizes, the records of suppressed
    groups and the missing cells per quasi-identifier."""

    gids: np.ndarray
    class_of_group: np.ndarray
    sizes: np.ndarray
    suppressed: int
    missing: tuple[int, ...]


def _part_classes(part: ClassSummary, qi: tuple[str, ...], token: str,
                  missing: str) -> _PartClasses:
    """:class:`_PartClasses` of ``part``, once per part and rules in this process."""

    def compute() -> _PartClasses:
        cols, gids, class_of_group, sizes = key_classes(key_codes(part.keys, qi), part.counts,
                                                        token, missing)
        kept = class_of_group >= 0
        return _PartClasses(gids, class_of_group, sizes[kept].astype(np.int64, copy=False),
                            int(sizes[~kept].sum()), tuple(c.n_missing for c in cols))

    return _derived(part.keys, ("classes", id(part.counts), qi, token, missing), compute)


def _part_pairs(part: ClassSummary, sa: str, found: _PartClasses, rules: tuple[object, ...]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.Index]:
    """The (class, value) pairs of ``sa`` in ``part``'s classes ``found`` (under ``rules``),
    values coded into the part's own values (returned last), once per histogram and rules."""
    hist = part.histograms[sa]

    def compute() -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.Index]:
        local, uniques = _value_codes(hist)
        cls = found.class_of_group[found.gids[hist["class"].to_numpy()]]
        rel = cls >= 0
        pc, pv, cnt = pair_counts(cls[rel], len(found.sizes), local[rel], len(uniques),
                                  hist["count"].to_numpy()[rel])
        return pc, pv, cnt, uniques

    return _derived(hist, ("pairs", id(part.keys), id(part.counts), *rules), compute)


def _part_tally(part: ClassSummary, judge: Callable[..., Judged], qi: tuple[str, ...],
                token: str, missing: str, values: Mapping[str, pd.Index],
                probs: Mapping[str, np.ndarray], shared: Any) -> Tally:
    """One part's classes judged with the whole table's p, and tallied."""
    found = _part_classes(part, qi, token, missing)
    dists = {}
    for sa, vals in values.items():
        pc, pv, cnt, uniques = _part_pairs(part, sa, found, (qi, token, missing))
        to_table = vals.get_indexer(uniques)  # the part's values among the table's
        if (to_table < 0).any():
            raise PluginError(f"sensitive attribute {sa!r}: a value of a part is not among the "
                              "table's values")
        dists[sa] = _distribution(pc, to_table[pv], cnt, probs[sa], found.sizes, vals)
    judged = judge(dists, found.sizes, shared)
    return Tally.of(judged, found.sizes, part.n_records, found.suppressed, found.missing)


def _result(tally: Tally, details: dict[str, object]) -> MeasureResult:
    """value = records in violating classes / n, with the family's common details."""
    n = tally.records
    return MeasureResult(value=tally.records_in_violating / n if n else 0.0, details={
        "records": n,
        "suppressed_records": tally.suppressed,
        "classes": tally.classes,
        "violating_classes": tally.violating_classes,
        "records_in_violating_classes": tally.records_in_violating,
        **details,
    })


def warn_missing_values(ctx: Context, sa: str, values: pd.Index) -> None:
    """Warn that ``sa`` has missing values (a value of their own)."""
    if len(values) and pd.isna(values).any():
        ctx.warn(f"sensitive attribute {sa!r} has missing values; they count as a value of "
                 "their own")


def distribution(data: Microdata, cl: Classes, sa: str, ctx: Context,
                 key: tuple[object, ...] = ()) -> Distribution:
    """The class distributions of ``sa`` over ``cl``'s classes (from the records) and the
    table distribution.

    Cached on ``data`` under ``key`` (the classes' identity: quasi-identifiers, token,
    missing policy), so that every model of a run shares one pass per sensitive attribute.
    """
    codes, uniques = data.codes(sa)
    warn_missing_values(ctx, sa, pd.Index(uniques))

    def compute() -> Distribution:
        row_class = cl.row_class()
        rel = row_class >= 0
        pc, pv, cnt = pair_counts(row_class[rel], len(cl.sizes), codes[rel], len(uniques))
        total = np.bincount(codes, minlength=len(uniques)).astype(float)
        p = total / total.sum() if total.sum() else total
        return _distribution(pc, pv, cnt, p, cl.sizes, pd.Index(uniques))

    if not key:
        return compute()
    return data.cached(("anoneval.microdata.sensitive", *key, sa), compute)


def class_max(pair_class: np.ndarray, values: np.ndarray, n_classes: int,
              empty: float = -np.inf) -> np.ndarray:
    """Largest of ``values`` per class (pairs sorted by class)."""
    out = np.full(n_classes, empty)
    np.maximum.at(out, pair_class, values)
    return out


def class_key(p: SensitiveParams) -> tuple[object, ...]:
    """Cache key of the classes the distributions are taken over."""
    return (tuple(p.quasi_identifiers), p.suppression_token, p.missing, p.id)


def worst_of(stat: dict[str, np.ndarray], n_classes: int) -> np.ndarray:
    """Per class, the largest statistic over the attributes (0 for none)."""
    worst = np.zeros(n_classes)
    for value in stat.values():
        worst = np.maximum(worst, value)
    return worst


#: Statistics within this (relative or absolute, as each model says) of their bound count as equal
#: to it, against rounding.
TOLERANCE = 1e-12


def result(data: Microdata, cl: Classes, violates: np.ndarray, stat: np.ndarray,
           stat_name: str, per_record: bool, id_col: str | None,
           details: dict[str, object]) -> MeasureResult:
    """value = records in violating classes / n of classes found from the records; common
    details; the per-record table (``DeltaPresence``)."""
    in_violating = int(cl.sizes[violates].sum())
    out = {"records": cl.records, "suppressed_records": cl.suppressed_total,
           "classes": len(cl.sizes), "violating_classes": int(violates.sum()),
           "records_in_violating_classes": in_violating, **details}
    if per_record:
        table = RecordTable(data, cl, id_col)
        table.add_float(stat_name, stat)
        table.add_bool("violates", violates)
        out["per_record"] = table.frame()
    n = cl.records
    return MeasureResult(value=in_violating / n if n else 0.0, details=out)
