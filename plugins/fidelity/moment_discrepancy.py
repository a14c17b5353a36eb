"""Information-moment discrepancies between actual and replica (Pflughoeft et al.'s Tasks 13-14)."""

from __future__ import annotations

import itertools
import math
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import Context, DataError, LossMeasure, MeasureResult
from anoneval.plugins._shared.continuous import ColumnsParams, ReplicaComparison

Moment = Literal["mean", "raw2", "variance", "covariance", "correlation", "abs_dev",
                 "log", "log1m", "softplus", "skewness", "kurtosis"]
_DOMAIN = {"log": (lambda x: x > 0, "positive values"), "log1m": (lambda x: x < 1, "values < 1")}
PAIR_MOMENTS = ("covariance", "correlation")


def moment_terms(moment: str, data: np.ndarray, cols: tuple[int, ...], names: list[str],
                 where: str, weights: np.ndarray | None = None) -> np.ndarray:
    """Per-point terms T_j(x_i) whose (weighted) mean is the information moment θ_j (eq. 2).

    ``weights`` (summing to one) turn the equal-weight sample moment into a grid moment
    θ̃_j = Σ T_j(ξ)·P(ξ) (eq. 24); central moments then use the weighted mean and sd.
    """
    def avg(v: np.ndarray) -> float:
        return float(v.mean() if weights is None else weights @ v)

    def std(v: np.ndarray) -> float:
        return float(np.sqrt(avg((v - avg(v)) ** 2)))

    if len(cols) == 1:
        x = data[:, cols[0]]
        if moment in _DOMAIN:
            ok, rule = _DOMAIN[moment]
            live = x if weights is None else x[weights > 0]
            bad = int(np.count_nonzero(~ok(live)))
            if bad:
                raise DataError(f"moment {moment!r} of column {names[cols[0]]!r} needs {rule} "
                                f"on the transformed scale; {bad} {where} values are not")
        if moment in ("skewness", "kurtosis") and not std(x) > 0:
            raise DataError(f"moment {moment!r}: column {names[cols[0]]!r} is constant")
        with np.errstate(divide="ignore", invalid="ignore"):
            if moment == "mean":
                return x
            if moment == "raw2":
                return x**2
            if moment == "variance":
                return (x - avg(x)) ** 2
            if moment == "abs_dev":
                return np.abs(x - avg(x))
            if moment == "log":
                return np.where(x > 0, np.log(np.where(x > 0, x, 1.0)), 0.0)
            if moment == "log1m":
                return np.where(x < 1, np.log1p(-np.where(x < 1, x, 0.0)), 0.0)
            if moment == "softplus":
                return np.logaddexp(0.0, x)
            power = 3 if moment == "skewness" else 4
            return ((x - avg(x)) / std(x)) ** power
    a, b = data[:, cols[0]], data[:, cols[1]]
    t = (a - avg(a)) * (b - avg(b))
    if moment == "correlation":
        s = std(a) * std(b)
        if not s > 0:
            raise DataError(f"correlation of {names[cols[0]]!r} and {names[cols[1]]!r}: a "
                            f"column is constant")
        t = t / s
    return t


def scaled_discrepancy(a: float, b: float, kind: str, se: float | None = None,
                       sd: float | None = None) -> float:
    """|a − b| as ``kind`` judges it: absolute; relative to |a| (0 counts as 1e-12); over the
    standard error ``se``; or standardized, over the terms' standard deviation ``sd``
    (0/0 = 0, x/0 = inf for the last two)."""
    diff = abs(a - b)
    if kind == "absolute":
        return diff
    if kind == "relative":
        return diff / max(abs(a), 1e-12)
    scale = se if kind == "standard_error" else sd
    if scale is None:
        raise ValueError(f"{kind} needs its scale")
    return diff / scale if scale > 0 else (0.0 if diff == 0 else float("inf"))


def moment_targets(moments: list[str], d: int, columns: list[str]
                   ) -> list[tuple[str, tuple[int, ...]]]:
    """(moment, column indices) for every moment: per column, or per pair for pair moments."""
    out: list[tuple[str, tuple[int, ...]]] = []
    for moment in dict.fromkeys(moments):
        if moment in PAIR_MOMENTS:
            if d < 2:
                raise DataError(f"moment {moment!r} needs at least two columns, got {columns}")
            out += [(moment, c) for c in itertools.combinations(range(d), 2)]
        else:
            out += [(moment, (j,)) for j in range(d)]
    return out


def compare_moments(X: np.ndarray, Y: np.ndarray, columns: list[str], moments: list[str],
                    kind: str, tolerance: float,
                    where: tuple[str, str] = ("original", "anonymized")) -> list[dict]:
    """One row per (moment, column or pair): θ_j of ``X`` and θ*_j of ``Y`` (eq. 2), their
    absolute difference, the discrepancy ``kind`` judges (see :func:`scaled_discrepancy`; the
    standard error is √(var T(x)/n + var T(x*)/m), divisor n) and whether it is ≤
    ``tolerance``. ``where`` names the two samples in domain errors."""
    rows = []
    for moment, cols in moment_targets(moments, len(columns), columns):
        tx = moment_terms(moment, X, cols, columns, where[0])
        ty = moment_terms(moment, Y, cols, columns, where[1])
        a, b = float(tx.mean()), float(ty.mean())
        se = float(np.sqrt(tx.var() / len(tx) + ty.var() / len(ty)))
        scaled = scaled_discrepancy(a, b, kind, se, float(tx.std()))
        rows.append({"moment": moment, "columns": " × ".join(columns[j] for j in cols),
                     "actual": a, "replica": b, "abs_diff": abs(a - b), "discrepancy": scaled,
                     "passed": scaled <= tolerance})
    return rows


class MomentDiscrepancy(ReplicaComparison, LossMeasure):
    """|θ_j − θ*_j| for each information moment, with a tolerance and a pass/fail flag.

    θ_j = (1/n)·Σ_i T_j(x_i) (Pflughoeft et al.'s eq. 2; Task 14 compares the replica's θ*_j with
    it),
    on the transformed scale. Moments: ``mean`` x, ``raw2`` x², ``variance`` (x − x̄)²,
    ``abs_dev`` |x − x̄|, ``log`` log x, ``log1m`` log(1 − x), ``softplus`` log(1 + eˣ),
    ``skewness``/``kurtosis`` ((x − x̄)/s)³ and ⁴, per column; ``covariance`` (x − x̄)(y − ȳ)
    and ``correlation`` (the same over s_x·s_y), per pair (Tables A1-A3). Central moments use
    each sample's own mean, divisor n (not n − 1).
    The discrepancy a moment is judged by (``tolerance_kind``): ``absolute`` |θ − θ*|;
    ``relative`` |θ − θ*|/|θ| (|θ| = 0 counts as 1e-12); ``standard_error`` |θ − θ*| divided by
    √(var T(x)/n + var T(x*)/m), the two-sample standard error of the difference of means of
    the terms (treating the sample means in central moments as known); ``standardized``
    |θ − θ*| over the standard deviation of T_j(x) in the actual data (divisor n, free of the
    sample sizes). A moment passes when
    its discrepancy is ≤ ``tolerance``. The value is the largest discrepancy.
    """

    name = "MomentDiscrepancy"
    description = "Largest difference between the information moments of actual and replica."

    class Params(ColumnsParams):
        moments: list[Moment] = Field(
            default_factory=lambda: ["mean", "variance", "covariance"], min_length=1,
            description="Information moments T_j to compare (the normal ME model's by default).",
        )
        tolerance: float = Field(default=0.05, ge=0,
                                 description="Largest discrepancy a moment may have to pass.")
        tolerance_kind: Literal["absolute", "relative", "standard_error", "standardized"] = Field(
            default="absolute",
            description="absolute |θ − θ*|, relative |θ − θ*|/|θ|, standard_error (over the "
                        "two-sample standard error) or standardized (over the sd of T_j(x)).",
        )

    def from_columns(self, X: np.ndarray, Y: np.ndarray, columns: list[str],
                     ctx: Context) -> MeasureResult:
        p = self.params
        rows = compare_moments(X, Y, columns, list(p.moments), p.tolerance_kind, p.tolerance)
        table = pd.DataFrame(rows)
        failed = [f"{r['moment']} of {r['columns']}" for r in rows if not r["passed"]]
        infinite = [f"{r['moment']} of {r['columns']}" for r in rows
                    if math.isinf(r["discrepancy"])]
        warnings = [f"discrepancy infinite for {', '.join(infinite)}: the original's terms have "
                    f"zero {'standard error' if p.tolerance_kind == 'standard_error' else 'sd'}"
                    " while the replica's moment differs"] if infinite else []
        return MeasureResult(
            value=float(table["discrepancy"].max()),
            details={"passed": bool(table["passed"].all()), "failed": failed,
                     "tolerance": p.tolerance, "tolerance_kind": p.tolerance_kind,
                     "moments": table},
            warnings=warnings,
        )
