"""α-precision, β-recall and authenticity of the release (Alaa et al. 2022, as synthcity)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import (
    Context,
    Dataset,
    IntervalParams,
    LossMeasure,
    MeasureResult,
    bootstrap_indices,
    percentile_interval,
)
from anoneval.plugins.fidelity._common import FidelityParams
from anoneval.plugins.fidelity._embed import (
    blocks,
    distances,
    each_block,
    kth_neighbour,
    rows_field,
    sampled_embedding,
)


def nearest(a: np.ndarray, b: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """In one pass over the distances: each row of ``a``'s nearest row of ``b`` and each row
    of ``b``'s nearest row of ``a`` (distance and index; the first index on ties)."""
    def part(lo: int, hi: int) -> tuple[np.ndarray, ...]:
        d = distances(a[lo:hi], b)
        j, i = d.argmin(axis=1), d.argmin(axis=0)
        return d[np.arange(len(j)), j], j, d[i, np.arange(len(i))], i + lo

    parts = each_block(part, blocks(len(a), len(b)))
    col_d, col_i = parts[0][2], parts[0][3]
    for p in parts[1:]:  # blocks in order: an equal distance keeps the earlier index
        better = p[2] < col_d
        col_d, col_i = np.where(better, p[2], col_d), np.where(better, p[3], col_i)
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            col_d, col_i)


def delta(curve: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """1 − Σ_k |α_k − curve_k| / Σ_k α_k along the last axis (synthcity 0.2.12)."""
    return 1 - np.abs(alphas - curve).sum(axis=-1) / alphas.sum()


def parts(x: np.ndarray, y: np.ndarray, n_alphas: int, compat: str
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]:
    """α grid, per released record the α-precision indicators (m × α), per original record the
    β-recall indicators (n × α), the authenticity indicators and the side they average."""
    alphas = np.linspace(0, 1, n_alphas)
    centre = x.mean(axis=0)
    radii = np.quantile(np.sqrt(((x - centre) ** 2).sum(axis=1)), alphas)
    y_to_centre = np.sqrt(((y - centre) ** 2).sum(axis=1))
    precise = y_to_centre[:, None] <= radii[None, :]
    x_nn = kth_neighbour(x, 1)                           # real → nearest other real
    x_to_y, x_arg, y_to_x, y_arg = nearest(x, y)         # real ↔ nearest released
    y_centre = y.mean(axis=0)
    closest_d = np.sqrt(((y[x_arg] - y_centre) ** 2).sum(axis=1))
    beta_radii = np.quantile(closest_d, alphas)
    recalled = (x_to_y <= x_nn)[:, None] & (closest_d[:, None] <= beta_radii[None, :])
    if compat == "synthcity":
        authentic, side = x_nn[x_arg] < x_to_y, "x"
    else:
        authentic, side = y_to_x > x_nn[y_arg], "y"
    return alphas, precise.astype(float), recalled.astype(float), authentic.astype(float), side


class AlphaPrecision(LossMeasure):
    """α-precision, β-recall and authenticity of Alaa, van Breugel, Saveliev & van der Schaar
    (2022), "How faithful is your synthetic data? Sample-level metrics for evaluating and
    auditing generative models", ICML; computed as synthcity's AlphaPrecision ("naive"
    variant: no learnt one-class embedding) on the records embedded as numbers (standardised
    by the original; categories one-hot; missing values a 0 plus an indicator).

    With α_k = k/(K−1), k = 0..K−1 (K = ``n_alphas``, 30 as synthcity), c the original's mean
    and r_α the α-quantile (numpy's linear rule) of the originals' distances to c:
    α-precision curve P(α) = share of released records with ‖Y − c‖ <= r_α; β-recall curve
    R(α) = share of original records X_i whose nearest released record Ŷ_i is no farther than
    X_i's nearest other original record and lies within the α-quantile of ‖Ŷ_i − c_Y‖ (c_Y the
    release's mean); Δ = 1 − Σ_k |α_k − curve(α_k)| / Σ_k α_k (synthcity 0.2.12 on PyPI; its
    earlier source had 1 − 2 Σ_k |α_k − curve(α_k)| Δα, larger by a factor K/(K − 1) in the
    sum: the paper's 1 − 2∫|α − curve| dα on a grid either way).
    The value is Δ-precision; ``details`` has Δ-recall (``beta_recall``), ``authenticity``,
    the curves and intervals. Higher = closer to the original (authenticity: higher = fewer
    near-copies).

    Authenticity, by default as the paper defines it: the share of released records farther
    from their nearest original record X* than X* is from its own nearest other original
    record (``>``; a tie is not authentic). synthcity instead compares, per original record,
    the nearest-neighbour distance of the original record whose *index* is that of its
    nearest released record (an index from the other side; it also requires n = m):
    ``compat: "synthcity"`` reproduces it. synthcity also asserts equal sizes; this does not.

    Quadratic: sides larger than ``max_rows`` (default 5,000) are replaced by a seeded uniform
    sample (warning). ``ci``: seeded percentile bootstrap (``n_boot``) of the per-record
    indicators with the radii and neighbours held fixed (released records resampled for the
    α-precision curve, original records for β-recall).
    """

    name = "AlphaPrecision"
    description = "α-precision, β-recall and authenticity (Alaa et al. 2022; synthcity)."
    unit = "share"
    higher_is_worse = False

    class Params(FidelityParams, IntervalParams):
        n_alphas: int = Field(30, ge=2, le=1000, description="Points of the α grid on [0, 1].")
        compat: Literal["paper", "synthcity"] = Field(
            "paper", description="Authenticity as the paper defines it, or synthcity's "
                                 "index rule.")
        max_rows: int | None = rows_field(5000)

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        warnings: list[str] = []
        rng = ctx.rng(43)
        x, y = sampled_embedding(original, anonymized, p.columns, p.max_rows, rng, self.name,
                                 warnings)
        alphas, precise, recalled, authentic, side = parts(x, y, p.n_alphas, p.compat)
        p_curve, r_curve = precise.mean(axis=0), recalled.mean(axis=0)
        value, recall = float(delta(p_curve, alphas)), float(delta(r_curve, alphas))
        by = {"x": bootstrap_indices(rng, len(x), p.n_boot),
              "y": bootstrap_indices(rng, len(y), p.n_boot)}
        level = p.confidence_level
        ci = percentile_interval(delta(_boot_mean(precise, by["y"]), alphas), level)
        ci_recall = percentile_interval(delta(_boot_mean(recalled, by["x"]), alphas), level)
        ci_auth = percentile_interval(authentic[by[side]].mean(axis=1), level)
        return MeasureResult(value=value, ci=ci, warnings=warnings, details={
            "alpha_precision": value, "beta_recall": recall,
            "authenticity": float(authentic.mean()),
            "ci": {"alpha_precision": ci, "beta_recall": ci_recall, "authenticity": ci_auth},
            "alphas": alphas.tolist(), "alpha_precision_curve": p_curve.tolist(),
            "beta_recall_curve": r_curve.tolist(), "compat": p.compat,
            "rows": {"original": len(x), "anonymized": len(y)}})


def _boot_mean(ind: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Bootstrap means of each column of ``ind`` (rows × α) for each replicate of ``idx``:
    the replicate's row counts times the indicators (n_boot × α)."""
    b, n = idx.shape[0], len(ind)
    counts = np.bincount((idx + n * np.arange(b)[:, None]).ravel(), minlength=b * n)
    return counts.reshape(b, n) @ ind / idx.shape[1]
