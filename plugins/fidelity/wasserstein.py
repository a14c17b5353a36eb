"""Wasserstein distances: per numeric column (standardised) and sliced for the joint records."""

from __future__ import annotations

import numpy as np
from pydantic import Field
from scipy.stats import norm

from anoneval.core.api import Context, Dataset, IntervalParams, LossMeasure, MeasureResult
from anoneval.plugins._shared.mixed import is_numeric
from anoneval.plugins.fidelity._common import (
    FidelityParams,
    as_number,
    choose,
    pair,
    require_finite,
)
from anoneval.plugins.fidelity._embed import each_block, embed

#: Projections whose sorted values are held at once (bounds memory: CHUNK × (n + m) floats).
CHUNK = 8


def w1(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Exact 1-Wasserstein distance between the empirical distributions of each row of ``u``
    (L × n) and the same row of ``v`` (L × m): ∫₀¹ |F⁻¹(t) − G⁻¹(t)| dt of the quantile
    functions (Vallender 1973), summed over the merged steps {i/n} ∪ {j/m}, which every row
    shares, so each row needs only its two sorts."""
    n, m = u.shape[1], v.shape[1]
    steps_u, steps_v = np.arange(1, n + 1) / n, np.arange(1, m + 1) / m
    p = np.union1d(steps_u, steps_v)  # equal fractions are equal doubles (exact rounding)
    widths = np.diff(p, prepend=0.0)
    iu = np.minimum(np.searchsorted(steps_u, p), n - 1)  # quantile of (p_prev, p]
    iv = np.minimum(np.searchsorted(steps_v, p), m - 1)
    us, vs = np.sort(u, axis=1), np.sort(v, axis=1)
    return (np.abs(us[:, iu] - vs[:, iv]) * widths).sum(axis=1)


def sliced(x: np.ndarray, y: np.ndarray, n_projections: int, rng: np.random.Generator
           ) -> np.ndarray:
    """W1 of the records projected on ``n_projections`` directions drawn uniformly on the unit
    sphere (normalised Gaussian vectors), one distance per direction."""
    theta = rng.standard_normal((x.shape[1], n_projections))
    theta /= np.linalg.norm(theta, axis=0, keepdims=True)
    spans = [(a, min(a + CHUNK, n_projections)) for a in range(0, n_projections, CHUNK)]
    return np.concatenate(each_block(
        lambda a, b: w1((x @ theta[:, a:b]).T, (y @ theta[:, a:b]).T), spans))


class WassersteinDistance(LossMeasure):
    """1-Wasserstein (earth mover's) distances between the original and the release: per
    numeric column, standardised, and sliced for the joint records (Rabin, Peyré, Delon &
    Bernot 2012, "Wasserstein barycenter and its application to texture mixing"; Bonneel et al.
    2015).

    Per numeric column: W1 = ∫ |F(t) − G(t)| dt of the two empirical distributions (exact, as
    scipy.stats.wasserstein_distance), divided by the original's standard deviation (ddof 0),
    so 1 means "one standard deviation of mass moved"; missing values are left out of both
    sides (a constant original column has no standardised score: warning). Joint: records
    embedded as numbers (numbers standardised by the original; categories one-hot, so moving
    a record to another category costs √2; missing values a 0 plus an indicator), projected
    on ``n_projections`` directions uniform on the sphere (seeded), W1 of each projection
    averaged: the sliced Wasserstein distance SW1. The value is SW1 (0 = identical; higher =
    more loss); ``details.columns`` the per-column distances and ``details.mean_column``
    their mean. synthcity's WassersteinDistance is an entropic (Sinkhorn) approximation on
    min–max-scaled data, not this.

    ``ci`` (of SW1): the normal interval of the mean over the independent random directions,
    SW1 ± z·s/√L (s the directions' standard deviation): the Monte Carlo error of slicing on
    these records, not their sampling error. The per-column distances are exact.
    """

    name = "WassersteinDistance"
    description = "Standardised per-column and sliced joint 1-Wasserstein distances."

    class Params(FidelityParams, IntervalParams):
        n_projections: int = Field(200, ge=2, le=100_000,
                                   description="Random directions of the sliced distance.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        ori, syn = pair(original, anonymized, self.name)
        columns = choose(ori, syn, p.columns, lambda s: True, self.name, "")
        require_finite({"original": ori, "anonymized": syn}, columns, self.name)
        rows, warnings = [], []
        for c in columns:
            if not (is_numeric(ori.frame[c]) and is_numeric(syn.frame[c])):
                continue
            r = as_number(ori.frame[c]).dropna().to_numpy()
            s = as_number(syn.frame[c]).dropna().to_numpy()
            if not len(r) or not len(s):
                rows.append({"column": c, "score": None})
                warnings.append(f"column {c!r}: no value on one side: no distance")
                continue
            raw = float(w1(r[None, :], s[None, :])[0])
            sd = float(r.std())
            if sd == 0:
                warnings.append(f"column {c!r}: constant in the original: not standardised")
            rows.append({"column": c, "w1": raw, "sd": sd,
                         "score": raw / sd if sd > 0 else None})
        x, y = embed(ori.frame[columns], syn.frame[columns], columns)
        per = sliced(x, y, p.n_projections, ctx.rng(53))
        value = float(per.mean())
        half = float(norm.ppf((1 + p.confidence_level) / 2)) * per.std(ddof=1) / np.sqrt(len(per))
        scores = [r["score"] for r in rows if r["score"] is not None]
        return MeasureResult(value=value, ci=(max(value - half, 0.0), value + half),
                             warnings=warnings, details={
                                 "sliced": value, "n_projections": p.n_projections,
                                 "dimensions": x.shape[1], "columns": rows,
                                 "mean_column": float(np.mean(scores)) if scores else None})
