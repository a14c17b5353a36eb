"""l-diversity as a risk: the share of records in classes that violate it."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from anoneval.core.api import Context, Dataset, MeasureResult, SummarySpec
from anoneval.plugins.microdata._common import (
    ClassRiskMeasure,
    class_sums,
    pair_counts,
    released_classes,
    sampling_weights,
    summary_classes,
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
    count, weight sum and sensitive-value histograms), so it runs on data an engine never
    gathers, except with ``per_record`` (a row table) or ``id`` (deleted records are found by
    comparing both sides' rows), which read the records.
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
        n_classes = 0
        violates = np.zeros(0, dtype=bool)
        per_attribute = {}
        weighted: dict[str, Any] = {}
        if self.summaries() is not None:
            summary, cl = summary_classes(original, anonymized, p, ctx, p.weights, p.sensitive)
            n_classes = len(cl.sizes)
            violates = np.zeros(n_classes, dtype=bool)
            row_class = cl.row_class()
            for sa in p.sensitive:
                hist = summary.histograms[sa]
                codes, uniques = pd.factorize(hist["value"], use_na_sentinel=False)
                _warn_missing(ctx, sa, uniques)
                hist_class = row_class[hist["class"].to_numpy()]
                kept = hist_class >= 0
                pair_class, _, counts = pair_counts(hist_class[kept], n_classes, codes[kept],
                                                    len(uniques), hist["count"].to_numpy()[kept])
                bad, per_attribute[sa] = _check(pair_class, counts, n_classes, p)
                violates |= bad
            if p.weights is not None:
                assert summary.weights is not None
                w_class = class_sums(cl, summary.weights)
                weighted = {"weighted_records": float(summary.weights.sum()),
                            "weighted_records_in_violating_classes": float(
                                w_class[violates].sum())}
        else:
            data, cl = released_classes(original, anonymized, p, ctx)
            data.require(p.sensitive, "sensitive attribute")
            row_class = cl.row_class()
            released_rows = row_class >= 0
            n_classes = len(cl.sizes)
            violates = np.zeros(n_classes, dtype=bool)
            for sa in p.sensitive:
                codes, uniques = data.codes(sa)
                _warn_missing(ctx, sa, uniques)
                pair_class, _, counts = pair_counts(row_class[released_rows],
                                                    n_classes, codes[released_rows], len(uniques))
                bad, per_attribute[sa] = _check(pair_class, counts, n_classes, p)
                violates |= bad
            in_bad = np.zeros(len(row_class), dtype=bool)
            in_bad[released_rows] = violates[row_class[released_rows]]
            if p.weights is not None:
                w = sampling_weights(data, p.weights)
                weighted = {"weighted_records": float(w.sum()),
                            "weighted_records_in_violating_classes": float(w[in_bad].sum())}
            if p.per_record:
                size = np.full(len(row_class), np.nan)
                size[released_rows] = cl.sizes[row_class[released_rows]]
                table = pd.DataFrame({"fk": size, "violates": in_bad})
                if p.id is not None:
                    table.insert(0, p.id, data.frame[p.id].to_numpy())
                weighted["per_record"] = table
        in_violating = int(cl.sizes[violates].sum())
        n = cl.records
        value = in_violating / n if n else 0.0
        if p.weights is not None:
            value = weighted["weighted_records_in_violating_classes"] / weighted[
                "weighted_records"]
        return MeasureResult(value=value, details={**weighted,
            "variant": p.variant,
            "l": p.l,
            "c": p.c,
            "records": n,
            "suppressed_records": cl.suppressed_total,
            "classes": n_classes,
            "violating_classes": int(violates.sum()),
            "records_in_violating_classes": in_violating,
            "per_attribute": per_attribute,
        })


def _warn_missing(ctx: Context, sa: str, uniques: object) -> None:
    if len(uniques) and pd.isna(uniques).any():  # type: ignore[arg-type]
        ctx.warn(f"sensitive attribute {sa!r} has missing values; they count as a value of "
                 "their own")


def _check(pair_class: np.ndarray, counts: np.ndarray, n_classes: int,
           p: LDiversity.Params) -> tuple[np.ndarray, dict[str, float | int | None]]:
    """Violation flag per class and summary figures for one sensitive attribute, from the
    class × value counts (pairs sorted by class)."""
    if n_classes == 0:
        return np.zeros(0, dtype=bool), {"achieved_l": None, "achieved_entropy_l": None}
    distinct = np.bincount(pair_class, minlength=n_classes)
    f = np.bincount(pair_class, weights=counts, minlength=n_classes)
    share = counts / f[pair_class]
    entropy = -np.bincount(pair_class, weights=share * np.log(share), minlength=n_classes)
    stats: dict[str, float | int | None] = {
        "achieved_l": int(distinct.min()),
        "achieved_entropy_l": float(np.exp(entropy.min())),
    }
    if p.variant == "distinct":
        bad = distinct < p.l
    elif p.variant == "entropy":
        bad = entropy < math.log(p.l) - ENTROPY_TOLERANCE
    else:
        bad, required_c = _recursive(pair_class, counts, n_classes, int(p.l), float(p.c or 0))
        stats["required_c"] = required_c
    return bad, stats


def _recursive(pair_class: np.ndarray, counts: np.ndarray, n_classes: int, l_: int,
               c: float) -> tuple[np.ndarray, float | None]:
    """Recursive (c,l): r_1 < c·Σ_{i≥l} r_i per class, counts sorted descending in a class."""
    order = np.lexsort((-counts, pair_class))
    pc, r = pair_class[order], counts[order]
    start = np.searchsorted(pc, np.arange(n_classes))
    rank = np.arange(len(pc)) - start[pc]
    r1 = r[start]
    tail = np.bincount(pc, weights=np.where(rank >= l_ - 1, r, 0), minlength=n_classes)
    bad = ~(r1 < c * tail)
    with np.errstate(divide="ignore"):
        ratio = np.where(tail > 0, r1 / np.maximum(tail, 1), np.inf)
    worst = float(ratio.max())
    return bad, (None if math.isinf(worst) else worst)
