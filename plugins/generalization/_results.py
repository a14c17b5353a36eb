"""Results of ARX's quality models: ARX's (min, raw, max) normalized and aggregated over columns.

Conventions: see :mod:`anoneval.plugins.generalization._quality`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from anoneval.core.api import (
    Context,
    MeasureResult,
)

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
