"""Sensitive-value distributions per equivalence class, shared by the attribute-disclosure models.

t-closeness, δ-disclosure, β-likeness and (α,k)-anonymity compare the distribution q_E of a
sensitive attribute in each class E with its distribution p over the whole table. As in ARX
(``DataManager.getDistribution``), p is taken over **all** records of the released data,
suppressed ones included (their sensitive values are released); q_E over the class's records.
Missing sensitive values are a value of their own (with a warning). Every model reports
value = records in violating classes / n, n counting suppressed records too (they are in no
class), like ``KAnonymity`` and ``LDiversity``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pydantic import Field, field_validator, model_validator

from anoneval.core.api import Context, Dataset, MeasureResult, Microdata
from anoneval.plugins.microdata._common import (
    Classes,
    ClassRiskMeasure,
    QIParams,
    pair_counts,
    released_classes,
)
from anoneval.plugins.microdata._records import RecordTable


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
    """Base of the attribute-disclosure models: the share of records in violating classes."""


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
    codes: np.ndarray


def distribution(data: Microdata, cl: Classes, sa: str, ctx: Context,
                 key: tuple[object, ...] = ()) -> Distribution:
    """The class distributions of ``sa`` over ``cl``'s classes and the table distribution.

    Cached on ``data`` under ``key`` (the class summary's identity: quasi-identifiers, token,
    missing policy), so that every model of a run shares one pass per sensitive attribute.
    """
    codes, uniques = data.codes(sa)
    if len(uniques) and pd.isna(uniques).any():
        ctx.warn(f"sensitive attribute {sa!r} has missing values; they count as a value of "
                 "their own")

    def compute() -> Distribution:
        row_class = cl.row_class()
        rel = row_class >= 0
        n_classes = len(cl.sizes)
        pc, pv, cnt = pair_counts(row_class[rel], n_classes, codes[rel], len(uniques))
        total = np.bincount(codes, minlength=len(uniques)).astype(float)
        p = total / total.sum() if total.sum() else total
        f = cl.sizes.astype(float)
        return Distribution(pc, pv, cnt, cnt / f[pc] if len(pc) else cnt.astype(float), p, f,
                            pd.Index(uniques), codes)

    if not key:
        return compute()
    return data.cached(("anoneval.microdata.sensitive", *key, sa), compute)


def class_max(pair_class: np.ndarray, values: np.ndarray, n_classes: int,
              empty: float = -np.inf) -> np.ndarray:
    """Largest of ``values`` per class (pairs sorted by class)."""
    out = np.full(n_classes, empty)
    np.maximum.at(out, pair_class, values)
    return out


def prepare(original: Dataset | None, anonymized: Dataset | None, p: SensitiveParams,
            ctx: Context) -> tuple[Microdata, Classes]:
    """The released data and its classes, with the sensitive columns checked."""
    data, cl = released_classes(original, anonymized, p, ctx)
    data.require(p.sensitive, "sensitive attribute")
    return data, cl


def class_key(p: SensitiveParams) -> tuple[object, ...]:
    """Cache key of the class summary the distributions are taken over."""
    return (tuple(p.quasi_identifiers), p.suppression_token, p.missing, p.id)


#: Statistics within this (relative or absolute, as each model says) of their bound count as equal
#: to it, against rounding.
TOLERANCE = 1e-12


def worst_per_class(data: Microdata, cl: Classes, p: SensitiveParams, ctx: Context, name: str,
                    stat: Callable[[str, Distribution], np.ndarray]
                    ) -> tuple[np.ndarray, dict[str, dict[str, float | None]], float | None]:
    """The largest ``stat`` (one value per class) over the sensitive attributes.

    Returns it per class, each attribute's largest value as ``{attribute: {name: value}}``
    (``per_attribute`` of the details) and the largest of all (None without classes).
    """
    n_classes = len(cl.sizes)
    worst = np.zeros(n_classes)
    per_attribute: dict[str, dict[str, float | None]] = {}
    for sa in p.sensitive:
        value = stat(sa, distribution(data, cl, sa, ctx, class_key(p)))
        worst = np.maximum(worst, value)
        per_attribute[sa] = {name: float(value.max()) if n_classes else None}
    return worst, per_attribute, float(worst.max()) if n_classes else None


def result(data: Microdata, cl: Classes, violates: np.ndarray, stat: np.ndarray,
           stat_name: str, p: SensitiveParams, details: dict[str, object]) -> MeasureResult:
    """value = records in violating classes / n; common details; the per-record table."""
    n = cl.records
    in_violating = int(cl.sizes[violates].sum())
    out: dict[str, object] = {
        "records": n,
        "suppressed_records": cl.suppressed_total,
        "classes": len(cl.sizes),
        "violating_classes": int(violates.sum()),
        "records_in_violating_classes": in_violating,
    }
    out.update(details)
    if p.per_record:
        table = RecordTable(data, cl, p.id)
        table.add_float(stat_name, stat)
        table.add_bool("violates", violates)
        out["per_record"] = table.frame()
    return MeasureResult(value=in_violating / n if n else 0.0, details=out)
