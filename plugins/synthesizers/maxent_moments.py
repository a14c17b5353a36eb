"""MaxEntMoments: the ME density for any information moments, on a grid, and its replica."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import Context, DataError, Microdata, SynthesisResult, Synthesizer
from anoneval.plugins._shared.continuous import (
    FittedTransform,
    forward,
    select_columns,
)
from anoneval.plugins.synthesizers import _dual
from anoneval.plugins.synthesizers._synth import (
    SynthParams,
    back_transform,
    frame_from,
    information_details,
    log_jacobian,
    replica_size,
)

Support = Literal["auto", "real", "positive", "unit"]
SUPPORTS: dict[str, tuple[float, float]] = {
    "real": (-math.inf, math.inf), "positive": (0.0, math.inf), "unit": (0.0, 1.0)}


@dataclass
class MomentsFit:
    """A fitted MaxEntMoments model: columns, transforms, sample moments and the grid density."""

    columns: list[str]
    transforms: list[FittedTransform]
    sample_moments: np.ndarray
    support: list[tuple[float, float]]
    model: _dual.MEGridFit


class MaxEntMoments(Synthesizer):
    """Replica from the ME density f ∝ exp(−Σ λ_j T_j) for chosen information moments T_j.

    The general case of Pflughoeft, Soofi & Soyer (2022, eqs. 1 and 7–9, Tables A1–A3): T_j are
    expressions in ``x`` (one column) or ``x1``, ``x2`` (two columns) on the transformed scale,
    e.g. ``["x", "x**2"]`` (normal), ``["x", "log(x)"]`` (gamma, support positive),
    ``["x", "softplus(-x)"]`` (logistic), ``["log(x)", "log(1 - x)"]`` (beta),
    ``["x1", "x2", "log(1 + exp(-x1) + exp(-x2))"]`` (bivariate logistic) or
    ``["x1", "log(x2)", "log(x1 - x2)"]`` (McKay). θ_j are the sample means of T_j (eq. 2)
    unless ``targets`` gives them (e.g. published moments). λ solves the convex dual on a
    midpoint grid (see ``_dual``); the box is widened while the density has mass at an open
    edge, and a moment set with no ME solution is a :class:`DataError`. Sampling draws grid
    cells by probability and jitters uniformly within the cell. details list each moment's
    target, achieved value and whether it is matched within ``tolerance`` (relative to
    max(1, |θ_j|)). Entropies are grid approximations (nats).
    """

    name = "MaxEntMoments"
    description = "Maximum-entropy replica for any information moments (grid dual, 1-D/2-D)."

    class Params(SynthParams):
        moments: list[str] = Field(
            min_length=1, description="Information moments T_j as expressions in x (1 column) "
                                      "or x1, x2 (2 columns); mu, mu1, mu2 = sample means.")
        targets: list[float] | None = Field(
            None, description="θ_j to match instead of the sample moments (same order).")
        support: Support | list[Support] = Field(
            "auto", description="Support per column: real, positive (x > 0), unit (0 < x < 1) "
                                "or auto (0/1 bounds when a moment is undefined beyond them).")
        grid: int | None = Field(
            None, ge=16, le=8192, description="Cells per axis; null = 2048 (1-D) or 256 (2-D).")
        padding: float = Field(
            1.0, gt=0, le=100, description="Starting box: data range ± padding × range "
                                           "(grown while mass sits at an open edge).")
        tolerance: float = Field(
            1e-6, gt=0, description="A moment is matched when |achieved − θ| ≤ tolerance × "
                                    "max(1, |θ|).")

    def fit(self, original: Microdata) -> MomentsFit:
        """Fit the ME density to ``original`` (transformed scale); no sampling."""
        p = self.params
        cols = select_columns(original, p.columns, "synthesizer (MaxEntMoments)")
        if len(cols) not in (1, 2):
            raise DataError(f"MaxEntMoments models 1 or 2 columns (grid), got {len(cols)}: "
                            f"{cols}; choose them with `columns`")
        x, fitted = forward(original.frame, cols, p.transform)
        dim = len(cols)
        means = x.mean(axis=0)
        fns = [_dual.compile_moment(e, dim) for e in p.moments]
        t_data = _dual.moment_matrix(fns, x, means)
        undefined = (~np.isfinite(t_data)).sum(axis=0)
        if undefined.any():
            which = "; ".join(f"moment {m!r} is undefined on {int(c)} of {len(x)} rows"
                              for m, c in zip(p.moments, undefined, strict=True) if c)
            raise DataError(f"{which} (columns {cols}, transformed scale); check the transform "
                            "or the moment's domain")
        theta_data = t_data.mean(axis=0)
        if p.targets is not None:
            if len(p.targets) != len(p.moments):
                raise DataError(f"targets has {len(p.targets)} values but moments has "
                                f"{len(p.moments)}: {p.moments}")
            theta = np.asarray(p.targets, dtype=float)
        else:
            theta = theta_data
        support = self._support(fns, x, means, cols)
        window = []
        for k, c in enumerate(cols):
            lo, hi = float(x[:, k].min()), float(x[:, k].max())
            if hi <= lo:
                raise DataError(f"column {c!r} is constant; an ME density needs spread")
            pad = p.padding * (hi - lo)
            window.append((max(lo - pad, support[k][0]), min(hi + pad, support[k][1])))
        cells = p.grid or (2048 if dim == 1 else 256)
        model = _dual.fit_grid(p.moments, theta, window, support, means, cells)
        return MomentsFit(cols, fitted, theta_data, support, model)

    def generate(self, original: Microdata, ctx: Context) -> SynthesisResult:
        p = self.params
        made = self.fit(original)
        cols, fitted, fit, support = made.columns, made.transforms, made.model, made.support
        theta, theta_data = fit.targets, made.sample_moments
        n = replica_size(p, original)
        draws = fit.sample(ctx.rng(), n)
        values, warnings = back_transform(draws, fitted)
        report = []
        for j, m in enumerate(p.moments):
            err = float(abs(fit.achieved[j] - theta[j]))
            report.append({"moment": m, "target": float(theta[j]),
                           "sample": float(theta_data[j]), "achieved": float(fit.achieved[j]),
                           "abs_error": err,
                           "matched": err <= p.tolerance * max(1.0, abs(float(theta[j])))})
        unmatched = [r["moment"] for r in report if not r["matched"]]
        if unmatched:
            warnings.append(f"moments not matched within tolerance {p.tolerance}: {unmatched}")
        shift = self._shift(fit, fitted)
        marginal = fit.marginal_entropies()
        details: dict[str, Any] = {
            "model": "maximum entropy on a grid, f ∝ exp(−Σ λ_j T_j)",
            "columns": cols,
            "transforms": [f.to_dict() for f in fitted],
            "parameters": {"lambda": dict(zip(p.moments, fit.lambda_.tolist(), strict=True)),
                           "log_normalizer": fit.log_norm},
            "moments": report,
            "all_matched": not unmatched,
            "grid": {"box": [[float(e[0]), float(e[-1])] for e in fit.edges],
                     "cells_per_axis": int(fit.prob.shape[0]), "expansions": fit.expansions,
                     "newton_iterations": fit.iterations,
                     "support": [list(s) for s in support]},
            **information_details(cols, marginal, fit.entropy(), shift, "grid"),
            "n": n,
        }
        return SynthesisResult(data=Microdata(frame_from(values, cols)), details=details,
                               warnings=warnings)

    def _support(self, fns: list[Any], x: np.ndarray, means: np.ndarray,
                 cols: list[str]) -> list[tuple[float, float]]:
        given = self.params.support
        kinds = [given] * len(cols) if isinstance(given, str) else list(given)
        if len(kinds) != len(cols):
            raise DataError(f"support lists {len(kinds)} values for {len(cols)} columns {cols}")
        inferred = _dual.infer_support(fns, x, means)
        out = []
        for k, (kind, c) in enumerate(zip(kinds, cols, strict=True)):
            bounds = inferred[k] if kind == "auto" else SUPPORTS[kind]
            lo, hi = float(x[:, k].min()), float(x[:, k].max())
            if lo < bounds[0] or hi > bounds[1]:
                raise DataError(f"column {c!r} has values in [{lo}, {hi}] outside its support "
                                f"{kind} {bounds} (on the transformed scale)")
            out.append(bounds)
        return out

    @staticmethod
    def _shift(fit: _dual.MEGridFit, fitted: list[Any]) -> np.ndarray:
        """E[log |dy_k/dx_k|] under the grid model, from its marginals at the cell centres."""
        out = np.zeros(fit.dim)
        for k, e in enumerate(fit.edges):
            axes = tuple(j for j in range(fit.dim) if j != k)
            m = fit.prob.sum(axis=axes) if axes else fit.prob
            centres = (e[:-1] + e[1:]) / 2
            lj = log_jacobian(centres, fitted[k])
            keep = m > 0
            out[k] = float(np.sum(m[keep] * lj[keep]))
        return out
