"""Interval disclosure risk of perturbed numeric microdata (sdcMicro's dRisk and dRiskRMD)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pydantic import Field
from scipy.spatial import cKDTree

from anoneval.core.api import Context, DataError, MeasureResult, RiskMeasure
from anoneval.plugins.numeric._common import (
    NumericParams,
    PairedNumeric,
    Pairs,
    pair_details,
    standardize,
)
from anoneval.plugins.numeric._robust import mcd_covariance


class IntervalRisk(PairedNumeric, RiskMeasure):
    """Base of the interval-disclosure measures: the share of records at risk."""

    unit = "share"

    class Params(NumericParams):
        per_record: bool = Field(False, description="Add a per-record table to details.")


class IntervalDisclosure(IntervalRisk):
    """Share of records whose every original value lies in an interval around its perturbed one.

    Source: Mateo-Sanz, Domingo-Ferrer & Sebé (2004), interval disclosure in "Disclosure risk
    assessment in statistical microdata protection via advanced record linkage"; sdcMicro's
    ``dRisk(x, xm, k)``. A record is at risk when for every column j,
    x'_j − k·s'_j ≤ x_j ≤ x'_j + k·s'_j (closed interval), s'_j the perturbed column's sample
    standard deviation (n − 1, missing values ignored). A cell missing on either side does not
    take a record out of its intervals (sdcMicro's ``na.rm``). value = records at risk / n;
    ``per_record`` adds each record's ``at_risk``.
    """

    name = "IntervalDisclosure"
    description = "Share of records whose original values all lie within k·sd of the perturbed."

    class Params(IntervalRisk.Params):
        k: float = Field(0.05, gt=0, allow_inf_nan=False,
                         description="Half-width of the interval in perturbed SDs.")

    def from_pairs(self, pairs: Pairs, ctx: Context) -> MeasureResult:
        p = self.params
        with np.errstate(invalid="ignore"):
            sd = np.nanstd(pairs.xm, axis=0, ddof=1)
            outside = (pairs.x < pairs.xm - p.k * sd) | (pairs.x > pairs.xm + p.k * sd)
        at_risk = ~outside.any(axis=1)
        details = pair_details(pairs, records_at_risk=int(at_risk.sum()),
                               share_within_per_column=dict(zip(
                                   pairs.columns, (1.0 - outside.mean(axis=0)).tolist(),
                                   strict=True)))
        if p.per_record:
            details["per_record"] = pd.DataFrame({"at_risk": at_risk})
        return MeasureResult(value=float(at_risk.mean()), details=details)


class RobustIntervalDisclosure(IntervalRisk):
    """Interval disclosure with intervals scaled by each record's robust Mahalanobis distance.

    Source: Templ & Meindl (2008), "Robust statistics meets SDC: new disclosure risk measures
    for continuous microdata masking", PSD 2008, LNCS 5262; sdcMicro's ``dRiskRMD(x, xm, k,
    k2)``. Both sides are standardised (R's ``scale``); RMD_i = 0.05·√((z_i − z̄)ᵀ C⁻¹
    (z_i − z̄)) with z̄ the column means of the standardised original (zero) and C its MCD
    covariance (Rousseeuw & Van Driessen 1999; scikit-learn's ``MinCovDet`` seeded by the
    evaluation seed, where sdcMicro uses robustbase's ``covMcd``: the two differ by their
    consistency corrections, so RMD agrees to a few per cent). A record is at risk (risk1)
    when for at least one column z_j − k·RMD < z'_j < z_j + k·RMD (strict); it stays at risk
    (risk2) when its nearest other record of the standardised release is farther than k2
    (Euclidean). value = risk1 = at-risk records / n; details ``risk2`` likewise,
    ``wrisk1``/``wrisk2`` = |W|·Σ_{i∈W} RMD_i / n over the at-risk set W (sdcMicro's formula,
    count times sum). Missing values are an error (the MCD needs complete records).
    ``per_record`` adds each record's ``rmd``, ``risk1`` and ``risk2``.
    """

    name = "RobustIntervalDisclosure"
    description = "sdcMicro's dRiskRMD: intervals scaled by the robust Mahalanobis distance."

    class Params(IntervalRisk.Params):
        k: float = Field(0.01, gt=0, allow_inf_nan=False,
                         description="Interval half-width as a multiple of RMD.")
        k2: float = Field(0.05, ge=0, allow_inf_nan=False,
                          description="Distance (standardised release) beyond which the "
                                      "nearest other record leaves a record at risk.")

    def from_pairs(self, pairs: Pairs, ctx: Context) -> MeasureResult:
        p = self.params
        for side, v in (("original", pairs.x), ("anonymized", pairs.xm)):
            bad = np.argwhere(np.isnan(v))
            if len(bad):
                i, j = bad[0]
                raise DataError(f"column {pairs.columns[j]!r} of the {side} data has a missing "
                                f"value (matched record {i + 1}); the MCD needs complete "
                                "records")
        n = len(pairs.x)
        if n < 3:
            raise DataError("RobustIntervalDisclosure needs at least three records")
        z = standardize(pairs.x, pairs.columns, "original")
        zm = standardize(pairs.xm, pairs.columns, "anonymized")
        cov = mcd_covariance(z, ctx.seed)
        centred = z - z.mean(axis=0)
        md2 = np.einsum("ij,ij->i", centred, np.linalg.solve(cov, centred.T).T)
        rmd = 0.05 * np.sqrt(np.maximum(md2, 0.0))
        lo, hi = z - p.k * rmd[:, None], z + p.k * rmd[:, None]
        risk1 = ((zm > lo) & (zm < hi)).any(axis=1)
        nearest = cKDTree(zm).query(zm, k=2)[0][:, 1]
        risk2 = risk1 & (nearest > p.k2)
        details = pair_details(
            pairs, risk2=float(risk2.mean()),
            wrisk1=float(risk1.sum() * rmd[risk1].sum() / n),
            wrisk2=float(risk2.sum() * rmd[risk2].sum() / n),
            records_at_risk=int(risk1.sum()), records_at_risk2=int(risk2.sum()))
        if p.per_record:
            details["per_record"] = pd.DataFrame({"rmd": rmd, "risk1": risk1, "risk2": risk2})
        return MeasureResult(value=float(risk1.mean()), details=details)
