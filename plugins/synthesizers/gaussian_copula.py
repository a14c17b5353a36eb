"""GaussianCopula: mixed numeric and categorical marginals joined by a Gaussian copula."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field
from scipy import special, stats

from anoneval.core.api import Context, DataError, Microdata, SynthesisResult, Synthesizer
from anoneval.plugins._shared.continuous import (
    Transform,
    backward,
    check_unique,
    forward,
    information_summary,
    is_continuous,
    normal_entropy,
)
from anoneval.plugins.synthesizers._logistic import marginal_entropy as logistic_entropy
from anoneval.plugins.synthesizers._synth import MixedSynthParams, pair_key, replica_size


def rank_scores(x: np.ndarray) -> np.ndarray:
    """Van der Waerden normal scores Φ⁻¹(r/(n+1)), r = average ranks (ties share a score)."""
    return special.ndtri(stats.rankdata(x, method="average") / (len(x) + 1))


def category_scores(codes: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """E[Z | Z in the category's slice (Φ⁻¹(a), Φ⁻¹(b)]], a and b its cumulative bounds.

    The conditional mean of the latent normal, (φ(α) − φ(β))/(b − a), for every row.
    """
    upper = np.cumsum(probs)
    lower = upper - probs
    alpha, beta = special.ndtri(np.clip(lower, 0, 1)), special.ndtri(np.clip(upper, 0, 1))
    mean = (stats.norm.pdf(alpha) - stats.norm.pdf(beta)) / probs
    return mean[codes]


def nearest_correlation(r: np.ndarray) -> tuple[np.ndarray, bool]:
    """``r`` with eigenvalues clipped at 1e-10 and rescaled to unit diagonal; True if changed."""
    w, v = np.linalg.eigh(r)
    if w.min() > 1e-10:
        return r, False
    fixed = (v * np.clip(w, 1e-10, None)) @ v.T
    d = np.sqrt(np.diag(fixed))
    return fixed / np.outer(d, d), True


class GaussianCopula(Synthesizer):
    """Replica whose marginals are the original's and whose dependence is a Gaussian copula.

    Section 3 and the closing remarks of Pflughoeft, Soofi & Soyer (2022) join marginals of
    different families by a copula, C(u₁, u₂) = F(F₁⁻¹(u₁), F₂⁻¹(u₂)); the Gaussian copula is
    the normal ME model's (Table A3) after each coordinate is mapped to a standard normal.
    Fitting: numeric columns (after ``transform``) get van der Waerden scores Φ⁻¹(rank/(n+1))
    (average ranks for ties); categorical columns get the conditional mean of the latent
    normal over their probability slice (categories in the order of a pandas Categorical,
    otherwise by descending frequency, ties by first appearance). R is the Pearson correlation
    of the scores (projected to the nearest positive-definite matrix when needed). Sampling:
    Z ~ N(0, R), U = Φ(Z), then each marginal's inverse: ``empirical`` (linear interpolation
    of the order statistics at i/(n+1), clamped to the observed range), ``normal`` or
    ``logistic`` (moment fits with divisor n, s = √3·σ/π), and categories by their cumulative
    slices; integer columns are rounded back to integers (``round_integers``). The empirical
    inverse never leaves the observed range, so the extremes can be reproduced: check them with
    the disclosure-risk inspections. Default columns: all (numeric and categorical).
    Mutual information is the copula's −½ log|R| (nats), exact for continuous marginals and
    the latent normal's when categorical columns are present.
    """

    name = "GaussianCopula"
    description = "Gaussian-copula replica with empirical/parametric and categorical marginals."

    class Params(MixedSynthParams):
        transform: Transform | dict[str, Transform] = Field(
            "identity", description="Transform of numeric columns before fitting (identity, "
                                    "log, log1p, boxcox); a mapping names columns.")
        categorical: list[str] = Field(
            default_factory=list, description="Numeric columns to treat as categorical codes.")
        marginal: Literal["empirical", "normal", "logistic"] = Field(
            "empirical", description="Marginal of numeric columns on the transformed scale.")
        round_integers: bool = Field(
            True, description="Round generated values of integer columns (e.g. age) to whole "
                              "numbers and keep the integer type.")

    def generate(self, original: Microdata, ctx: Context) -> SynthesisResult:
        p = self.params
        frame = original.frame
        cols = list(p.columns) if p.columns is not None else [str(c) for c in frame.columns]
        original.require(cols + list(p.categorical), "column")
        check_unique(cols)
        if len(original) < 3:
            raise DataError(f"GaussianCopula needs at least 3 rows, got {len(original)}")
        numeric = [c for c in cols if is_continuous(frame[c]) and c not in p.categorical]
        categorical = [c for c in cols if c not in numeric]
        if isinstance(p.transform, dict):
            bad = [c for c in p.transform if c not in numeric]
            if bad:
                raise DataError(f"transform given for {bad}, which are not numeric selected "
                                f"columns; numeric columns: {numeric}")
        x, fitted = forward(frame, numeric, p.transform) if numeric else (
            np.empty((len(frame), 0)), [])
        n_rows = len(frame)
        scores = np.empty((n_rows, len(cols)))
        cat_info: dict[str, tuple[pd.Index, np.ndarray]] = {}
        for k, c in enumerate(cols):
            if c in numeric:
                col = x[:, numeric.index(c)]
                if np.all(col == col[0]):
                    raise DataError(f"column {c!r} is constant; drop it from `columns`")
                scores[:, k] = rank_scores(col)
            else:
                codes, uniques = self._ordered_codes(frame[c])
                probs = np.bincount(codes, minlength=len(uniques)) / n_rows
                cat_info[c] = (uniques, probs)
                scores[:, k] = category_scores(codes, probs)
        r = np.atleast_2d(np.corrcoef(scores, rowvar=False))
        r = np.nan_to_num(r)  # a single-category column has no variance: independent
        np.fill_diagonal(r, 1.0)
        r, projected = nearest_correlation(r)
        warnings = ["the score correlation was not positive definite and was projected"] \
            if projected else []
        n = replica_size(p, original)
        rng = ctx.rng()
        w, v = np.linalg.eigh(r)
        z = rng.standard_normal((n, len(cols))) @ (v * np.sqrt(np.clip(w, 0, None))).T
        u = special.ndtr(z)
        out: dict[str, Any] = {}
        params: dict[str, Any] = {}
        xs = np.empty((n, len(numeric)))
        for k, c in enumerate(cols):
            if c in numeric:
                j = numeric.index(c)
                xs[:, j], params[c] = self._inverse(x[:, j], u[:, k])
            else:
                uniques, probs = cat_info[c]
                idx = np.minimum(np.searchsorted(np.cumsum(probs), u[:, k], side="right"),
                                 len(probs) - 1)
                values = pd.Series(uniques.take(idx), name=c)
                if isinstance(frame[c].dtype, pd.CategoricalDtype):
                    values = values.astype(frame[c].dtype)
                out[c] = values
                params[c] = {"marginal": "categorical",
                             "probabilities": {str(a): float(b) for a, b in zip(uniques, probs,
                                                                                 strict=True)}}
        if numeric:
            back = backward(xs, fitted)
            for j, c in enumerate(numeric):
                out[c] = back[:, j]
                if p.round_integers and pd.api.types.is_integer_dtype(frame[c]) \
                        and np.all(np.isfinite(back[:, j])):
                    out[c] = np.rint(back[:, j]).astype(frame[c].dtype)
        replica = pd.DataFrame({c: out[c] for c in cols}, columns=cols)
        details = self._details(cols, numeric, categorical, r, params, fitted, n)
        return SynthesisResult(data=Microdata(replica), details=details, warnings=warnings)

    @staticmethod
    def _ordered_codes(series: pd.Series) -> tuple[np.ndarray, pd.Index]:
        if isinstance(series.dtype, pd.CategoricalDtype):
            cats = series.cat.categories
            codes = series.cat.codes.to_numpy().astype(np.int64)
            if (codes < 0).any():  # missing values: a last category of their own
                codes = np.where(codes < 0, len(cats), codes)
                cats = cats.append(pd.Index([np.nan]))
            return codes, pd.Index(cats)
        codes, uniques = pd.factorize(series, use_na_sentinel=False)
        counts = np.bincount(codes, minlength=len(uniques))
        order = np.argsort(-counts, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        return rank[codes].astype(np.int64), pd.Index(uniques).take(order)

    def _inverse(self, col: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        kind = self.params.marginal
        if kind == "empirical":
            srt = np.sort(col)
            grid = np.arange(1, len(srt) + 1) / (len(srt) + 1)
            return np.interp(u, grid, srt), {"marginal": "empirical"}
        mu, sd = float(col.mean()), float(col.std())
        if kind == "normal":
            return mu + sd * special.ndtri(u), {"marginal": "normal", "mean": mu, "sd": sd}
        s = sd * math.sqrt(3.0) / math.pi
        return mu + s * special.logit(u), {"marginal": "logistic", "location": mu, "scale": s}

    @staticmethod
    def _details(cols: list[str], numeric: list[str], categorical: list[str], r: np.ndarray,
                 params: dict[str, Any], fitted: list[Any], n: int) -> dict[str, Any]:
        _, logdet = np.linalg.slogdet(r)
        mi = max(-0.5 * float(logdet), 0.0) if len(cols) >= 2 else None
        entropies: dict[str, float | None] = {}
        for c in cols:
            info = params[c]
            if info["marginal"] == "normal":
                entropies[c] = normal_entropy(np.array([[info["sd"] ** 2]]), [c])
            elif info["marginal"] == "logistic":
                entropies[c] = logistic_entropy(info["scale"])
            elif info["marginal"] == "categorical":
                q = np.array(list(info["probabilities"].values()))
                q = q[q > 0]
                entropies[c] = float(-(q * np.log(q)).sum())
            else:
                entropies[c] = None
        out: dict[str, Any] = {
            "model": "Gaussian copula",
            "columns": cols, "numeric": numeric, "categorical": categorical,
            "transforms": [f.to_dict() for f in fitted],
            "parameters": {"copula_correlation": r.tolist(), "marginals": params},
            "entropy": {"scale": "transformed (numeric); discrete (categorical)",
                        "marginal": entropies,
                        "joint": (sum(entropies.values()) - (mi or 0.0))  # type: ignore[arg-type]
                        if not categorical and all(v is not None for v in entropies.values())
                        else None},
            **information_summary(mi),
            "mutual_information_kind": "exact (continuous marginals)" if not categorical
            else "latent Gaussian copula",
            "n": n,
        }
        if len(cols) > 2:
            out["pairwise_mutual_information"] = {
                pair_key(cols[a], cols[b]): float(-0.5 * np.log1p(-min(r[a, b] ** 2, 1 - 1e-15)))
                for a in range(len(cols)) for b in range(a + 1, len(cols))}
        return out
