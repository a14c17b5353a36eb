"""l-diversity as a risk: the share of records in classes that violate it."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from anoneval.core.api import ClassSummary, Context, Dataset, MeasureResult, SummarySpec
from anoneval.plugins.microdata._common import (
    Classes,
    ClassRiskMeasure,
    class_sums,
    pair_counts,
    reduce_classes,
    released_classes,
    sampling_weights,
    summary_specs,
)
from anoneval.plugins.microdata._sensitive import SensitiveParams

#: Entropies within this of log(l) count as equal (log(2) from two equal counts is not exact).
ENTROPY_TOLERANCE = 1e-9


class LDiversity(ClassRiskMeasure):
    """Share of records in equivalence classes that violate l-diversity.

    Source: Machanavajjhala et al. (2007), "l-diversity: privacy beyond k-anonymity", ACM TKDD
    1(1), definitions 4.1 (entropy), 4.2 (recursive (c,l)) and the distinct variant; ARX's
    ``DistinctLDiversity``, ``EntropyLDiversity`` and ``RecursiveCLDiversity``.
    For a class E with sensitive-value counts r_1 ≥ r_2 ≥ … ≥ r_m (f = Σ r_i):

    * ``distinct``: violated when m < l;
    * ``entropy``: violated when H(E) = −Σ (r_i/f)·ln(r_i/f) < ln(l) (natural log; the base
      cancels out; equality satisfies, within 1e-9);
    * ``recursive``: violated unless r_1 < c·(r_l + r_{l+1} + … + r_m) (strict; a class with
      fewer than l values violates).

    value = records in violating classes / n (n counts suppressed records, which are in no
    class). With several sensitive attributes a class violates when it violates for any of
    them. Missing sensitive values are a value of their own (with a warning), and so are
    missing quasi-identifier values (or suppressed cells with ``missing="suppressed"``). details:
    ``achieved_l`` (smallest number of distinct values in a class), ``achieved_entropy_l``
    (min exp H(E); pyCANON floors it), ``required_c`` for recursive (the largest r_1/(r_l+…);
    every class satisfies (c,l) exactly when c exceeds it), per attribute.

    With ``weights`` (sampling weights) value is the estimated population share in violating
    classes, Σ_{violating} w / Σ w (``weighted_records_in_violating_classes`` the sum); the
    classes themselves are those of the sample. Classes match keys exactly (a missing value
    equals only a missing value), as sdcMicro's ``ldiversity``, which defines no wildcard.
    ``per_record`` adds each record's class size and violation, aligned with the rows.

    The measure reads only the released side's class summary (quasi-identifiers → record
    count, weight sum and sensitive-value histograms), reduced where it lies to counts, sums
    and extremes (the same code in memory and on each part of a summary sharded on a
    cluster), so it runs on data an engine never gathers, except with ``per_record`` (a row
    table) or ``id`` (deleted records are found by comparing both sides' rows), which read the
    records.
    """

    name = "LDiversity"
    description = "Share of records in equivalence classes that are not l-diverse."

    class Params(SensitiveParams):
        l: float = Field(2, ge=1, description="Required diversity l (integer for distinct and "  # noqa: E741
                                              "recursive).")
        variant: Literal["distinct", "entropy", "recursive"] = Field(
            "distinct", description="Which l-diversity: distinct, entropy or recursive (c,l).")
        c: float | None = Field(None, gt=0, description="c of recursive (c,l)-diversity "
                                                         "(that variant only).")
        weights: str | None = Field(None, description="Sampling-weight column: value becomes "
                                                      "the weighted share in violating "
                                                      "classes.")
        per_record: bool = Field(False, description="Add each record's class size and "
                                                    "violation (details 'per_record').")

        @model_validator(mode="after")
        def _consistent(self) -> LDiversity.Params:
            if self.variant != "entropy" and not float(self.l).is_integer():
                raise ValueError(f"l must be an integer for the {self.variant} variant; "
                                 f"got {self.l}")
            if self.variant == "recursive" and self.c is None:
                raise ValueError("the recursive variant needs c")
            if self.weights is not None and self.weights in (
                    *self.quasi_identifiers, *self.sensitive):
                raise ValueError(f"weights column {self.weights!r} is also a quasi-identifier "
                                 "or sensitive attribute")
            if self.variant != "recursive" and self.c is not None:
                raise ValueError(f"c is used only by the recursive variant, not by "
                                 f"{self.variant!r}")
            return self

    def summaries(self) -> list[SummarySpec] | None:
        p = self.params
        return None if p.per_record else summary_specs(p, p.weights, p.sensitive)

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        rule = (p.variant, float(p.l), p.c)
        weighted: dict[str, Any] = {}
        if self.summaries() is not None:
            part = functools.partial(_part_diversity, sensitive=tuple(p.sensitive), rule=rule,
                                     weighted=p.weights is not None)
            sizes, found = reduce_classes(original, anonymized, p, ctx, part, _Diversity.combine,
                                          weights=p.weights, sensitive=p.sensitive)
            records, suppressed = sizes.records, sizes.suppressed_total
        else:
            data, cl = released_classes(original, anonymized, p, ctx)
            data.require(p.sensitive, "sensitive attribute")
            records, suppressed = cl.records, cl.suppressed_total
            row_class = cl.row_class()
            released_rows = row_class >= 0
            n_classes = len(cl.sizes)
            violates = np.zeros(n_classes, dtype=bool)
            attributes, missing = {}, []
            for sa in p.sensitive:
                codes, uniques = data.codes(sa)
                missing.append(bool(len(uniques) and pd.isna(uniques).any()))
                pair_class, _, counts = pair_counts(row_class[released_rows],
                                                    n_classes, codes[released_rows], len(uniques))
                bad, attributes[sa] = _check(pair_class, counts, n_classes, rule)
                violates |= bad
            in_bad = np.zeros(len(row_class), dtype=bool)
            in_bad[released_rows] = violates[row_class[released_rows]]
            w_total = w_bad = 0.0
            if p.weights is not None:
                w = sampling_weights(data, p.weights)
                w_total, w_bad = float(w.sum()), float(w[in_bad].sum())
            found = _Diversity(n_classes, int(violates.sum()), int(cl.sizes[violates].sum()),
                               w_total, w_bad, attributes, tuple(missing))
            if p.per_record:
                size = np.full(len(row_class), np.nan)
                size[released_rows] = cl.sizes[row_class[released_rows]]
                table = pd.DataFrame({"fk": size, "violates": in_bad})
                if p.id is not None:
                    table.insert(0, p.id, data.frame[p.id].to_numpy())
                weighted["per_record"] = table
        for sa, has_missing in zip(p.sensitive, found.missing, strict=True):
            if has_missing:
                ctx.warn(f"sensitive attribute {sa!r} has missing values; they count as a "
                         "value of their own")
        value = found.records / records if records else 0.0
        if p.weights is not None:
            weighted = {"weighted_records": found.weights,
                        "weighted_records_in_violating_classes": found.weights_violating,
                        **weighted}
            value = found.weights_violating / found.weights
        return MeasureResult(value=value, details={**weighted,
            "variant": p.variant,
            "l": p.l,
            "c": p.c,
            "records": records,
            "suppressed_records": suppressed,
            "classes": found.classes,
            "violating_classes": found.violating,
            "records_in_violating_classes": found.records,
            "per_attribute": {sa: _figures(a, p.variant) for sa, a in found.attributes.items()},
        })


#: The rule of a variant: its name, l and c (recursive only).
Rule = tuple[str, float, float | None]


@dataclass(frozen=True)
class _Attribute:
    """One sensitive attribute over some classes: the smallest number of distinct values and
    entropy in a class, and the largest r_1/(r_l+…) (inf for a class with fewer than l
    values; recursive variant only); None without classes."""

    distinct: int | None
    entropy: float | None
    ratio: float | None

    @staticmethod
    def combine(parts: list[_Attribute]) -> _Attribute:
        """The figures of the union of disjoint sets of classes."""
        had = [a for a in parts if a.distinct is not None]
        if not had:
            return parts[0]
        ratios = [a.ratio for a in had if a.ratio is not None]
        return _Attribute(min(a.distinct for a in had if a.distinct is not None),
                          min(a.entropy for a in had if a.entropy is not None),
                          max(ratios) if ratios else None)


@dataclass(frozen=True)
class _Diversity:
    """l-diversity figures over some classes: classes, violating ones and their records,
    the weight sums of all records and of those in violating classes, each attribute's
    :class:`_Attribute` and whether it has missing values. Its size does not grow with the
    number of classes, so a sharded summary's parts send these (:func:`_part_diversity`)."""

    classes: int
    violating: int
    records: int
    weights: float
    weights_violating: float
    attributes: dict[str, _Attribute]
    missing: tuple[bool, ...]

    @staticmethod
    def combine(parts: list[_Diversity]) -> _Diversity:
        """The figures of the union of disjoint sets of classes."""
        first = parts[0]
        return _Diversity(
            sum(d.classes for d in parts), sum(d.violating for d in parts),
            sum(d.records for d in parts), sum(d.weights for d in parts),
            sum(d.weights_violating for d in parts),
            {sa: _Attribute.combine([d.attributes[sa] for d in parts]) for sa in first.attributes},
            tuple(any(d.missing[i] for d in parts) for i in range(len(first.missing))))


def _part_diversity(summary: ClassSummary, cl: Classes, sensitive: tuple[str, ...], rule: Rule,
                    weighted: bool) -> _Diversity:
    """The figures of the classes of one summary (the whole one, or a part of a sharded one)
    from its per-class sensitive histograms and weight sums."""
    n_classes = len(cl.sizes)
    violates = np.zeros(n_classes, dtype=bool)
    row_class = cl.row_class()
    attributes, missing = {}, []
    for sa in sensitive:
        hist = summary.histograms[sa]
        codes, uniques = pd.factorize(hist["value"], use_na_sentinel=False)
        missing.append(bool(len(uniques) and pd.isna(uniques).any()))
        hist_class = row_class[hist["class"].to_numpy()]
        kept = hist_class >= 0
        pair_class, _, counts = pair_counts(hist_class[kept], n_classes, codes[kept],
                                            len(uniques), hist["count"].to_numpy()[kept])
        bad, attributes[sa] = _check(pair_class, counts, n_classes, rule)
        violates |= bad
    w_total = w_bad = 0.0
    if weighted:
        assert summary.weights is not None
        w_total = float(summary.weights.sum())
        w_bad = float(class_sums(cl, summary.weights)[violates].sum())
    return _Diversity(n_classes, int(violates.sum()), int(cl.sizes[violates].sum()), w_total,
                      w_bad, attributes, tuple(missing))


def _figures(a: _Attribute, variant: str) -> dict[str, float | int | None]:
    """The details of one attribute: ``achieved_l``, ``achieved_entropy_l`` = exp(min H) and,
    for the recursive variant, ``required_c`` (null when a class has fewer than l values)."""
    out: dict[str, float | int | None] = {
        "achieved_l": a.distinct,
        "achieved_entropy_l": None if a.entropy is None else float(np.exp(a.entropy))}
    if variant == "recursive" and a.distinct is not None:
        out["required_c"] = None if a.ratio is None or math.isinf(a.ratio) else a.ratio
    return out


def _check(pair_class: np.ndarray, counts: np.ndarray, n_classes: int,
           rule: Rule) -> tuple[np.ndarray, _Attribute]:
    """Violation flag per class and the figures of one sensitive attribute, from the
    class × value counts (pairs sorted by class)."""
    if n_classes == 0:
        return np.zeros(0, dtype=bool), _Attribute(None, None, None)
    variant, l_, c = rule
    distinct = np.bincount(pair_class, minlength=n_classes)
    f = np.bincount(pair_class, weights=counts, minlength=n_classes)
    share = counts / f[pair_class]
    entropy = -np.bincount(pair_class, weights=share * np.log(share), minlength=n_classes)
    ratio = None
    if variant == "distinct":
        bad = distinct < l_
    elif variant == "entropy":
        bad = entropy < math.log(l_) - ENTROPY_TOLERANCE
    else:
        bad, ratio = _recursive(pair_class, counts, n_classes, int(l_), float(c or 0))
    return bad, _Attribute(int(distinct.min()), float(entropy.min()), ratio)


def _recursive(pair_class: np.ndarray, counts: np.ndarray, n_classes: int, l_: int,
               c: float) -> tuple[np.ndarray, float]:
    """Recursive (c,l): r_1 < c·Σ_{i≥l} r_i per class, counts sorted descending in a class;
    and the largest r_1/Σ_{i≥l} r_i (inf when a class has fewer than l values)."""
    order = np.lexsort((-counts, pair_class))
    pc, r = pair_class[order], counts[order]
    start = np.searchsorted(pc, np.arange(n_classes))
    rank = np.arange(len(pc)) - start[pc]
    r1 = r[start]
    tail = np.bincount(pc, weights=np.where(rank >= l_ - 1, r, 0), minlength=n_classes)
    bad = ~(r1 < c * tail)
    with np.errstate(divide="ignore"):
        ratio = np.where(tail > 0, r1 / np.maximum(tail, 1), np.inf)
    return bad, float(ratio.max())
