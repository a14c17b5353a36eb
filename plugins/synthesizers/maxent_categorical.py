"""MaxEntCategorical: the ME joint table of categorical columns given marginals, sampled."""

from __future__ import annotations

from itertools import combinations
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import Context, DataError, Microdata, SynthesisResult, Synthesizer
from anoneval.plugins._shared.continuous import check_unique, information_summary
from anoneval.plugins.synthesizers._ipf import ipf, marginal
from anoneval.plugins.synthesizers._synth import MixedSynthParams, pair_key, replica_size


def _entropy(p: np.ndarray) -> float:
    q = p[p > 0]
    return float(-(q * np.log(q)).sum())


def largest_remainder(p: np.ndarray, n: int) -> np.ndarray:
    """Integer counts summing to n, closest to n·p (Hamilton's method; ties by cell order)."""
    raw = p * n
    counts = np.floor(raw).astype(np.int64)
    short = n - int(counts.sum())
    if short > 0:
        counts[np.argsort(-(raw - counts), kind="stable")[:short]] += 1
    return counts


class MaxEntCategorical(Synthesizer):
    """Records drawn from the ME joint distribution of categorical columns given marginals.

    The ME distribution with the chosen marginal tables of the original (relative frequencies)
    is found by iterative proportional fitting from the uniform table (Polettini 2003; Deming &
    Stephan 1940); it is the log-linear model whose sufficient statistics are those marginals
    (Pflughoeft et al., Task 5: "T_j represent univariate and multivariate marginal frequencies").
    Missing
    values form a category of their own. ``sampling: multinomial`` draws n records i.i.d.;
    ``rounded`` uses the integer cell counts nearest n·p (largest remainder), shuffled.
    Entropies and mutual information (total correlation Σ H_k − H) of the fitted table are in
    nats. Not a continuous model: no ``transform``. Default columns: every non-numeric one;
    numeric columns listed in ``columns`` count as codes.
    """

    name = "MaxEntCategorical"
    description = "Maximum-entropy categorical replica given marginal tables (IPF)."

    class Params(MixedSynthParams):
        margins: Literal["one-way", "two-way"] | list[list[str]] = Field(
            "two-way", description="Marginal tables to preserve: one-way (independence), "
                                   "two-way (all pairs) or explicit lists of column names.")
        sampling: Literal["multinomial", "rounded"] = Field(
            "multinomial", description="multinomial: i.i.d. draws; rounded: integer counts "
                                       "nearest n·p.")
        max_cells: int = Field(10_000_000, ge=1, description="Largest joint table allowed.")
        tolerance: float = Field(1e-12, gt=0, description="IPF stops when every margin is "
                                                          "within this (max abs difference).")
        max_sweeps: int = Field(1000, ge=1, description="IPF sweep limit.")

    def _columns(self, original: Microdata) -> list[str]:
        frame = original.frame
        if self.params.columns is None:
            cols = [str(c) for c in frame.columns
                    if not pd.api.types.is_numeric_dtype(frame[c])
                    or pd.api.types.is_bool_dtype(frame[c])]
            if not cols:
                raise DataError("no categorical columns found; list them in `columns` (numeric "
                                f"codes are allowed); the columns are: {list(frame.columns)}")
            return cols
        cols = list(self.params.columns)
        check_unique(cols)
        original.require(cols, "column")
        return cols

    def _margins(self, cols: list[str]) -> list[tuple[int, ...]]:
        spec = self.params.margins
        if spec == "one-way" or len(cols) == 1:
            return [(i,) for i in range(len(cols))]
        if spec == "two-way":
            return list(combinations(range(len(cols)), 2))
        out = []
        for k, m in enumerate(spec):
            unknown = [c for c in m if c not in cols]
            if unknown or not m or len(set(m)) != len(m):
                raise DataError(f"margins[{k}] = {m}: each margin lists distinct selected "
                                f"columns ({cols}); unknown: {unknown}")
            out.append(tuple(sorted(cols.index(c) for c in m)))
        covered = {i for m in out for i in m}
        missing = [cols[i] for i in range(len(cols)) if i not in covered]
        if missing:
            raise DataError(f"columns {missing} are in no margin; add them to `margins`")
        return out

    def generate(self, original: Microdata, ctx: Context) -> SynthesisResult:
        p = self.params
        cols = self._columns(original)
        if len(original) == 0:
            raise DataError("the original has no rows")
        codes, uniques = zip(*(original.codes(c) for c in cols), strict=True)
        shape = tuple(len(u) for u in uniques)
        cells = int(np.prod(shape, dtype=np.float64))
        if cells > p.max_cells:
            raise DataError(f"the joint table of {cols} has {cells:,} cells (categories "
                            f"{dict(zip(cols, shape, strict=True))}), above max_cells="
                            f"{p.max_cells:,}; select fewer columns or raise max_cells")
        flat = np.ravel_multi_index(codes, shape)
        empirical = np.bincount(flat, minlength=cells).reshape(shape) / len(original)
        margins = self._margins(cols)
        targets = [(m, marginal(empirical, m)) for m in margins]
        fit = ipf(shape, targets, tol=p.tolerance, max_sweeps=p.max_sweeps)
        warnings = []
        if not fit.converged:
            warnings.append(f"IPF stopped after {fit.sweeps} sweeps with margin error "
                            f"{fit.max_error:.3g} > tolerance {p.tolerance}")
        prob = fit.table.ravel() / fit.table.sum()
        n = replica_size(p, original)
        rng = ctx.rng()
        if p.sampling == "multinomial":
            drawn = rng.choice(cells, size=n, p=prob)
        else:
            drawn = rng.permutation(np.repeat(np.arange(cells), largest_remainder(prob, n)))
        idx = np.unravel_index(drawn, shape)
        frame = original.frame
        out = {}
        for k, c in enumerate(cols):
            values = pd.Series(uniques[k].take(idx[k]), name=c)
            if isinstance(frame[c].dtype, pd.CategoricalDtype):
                values = values.astype(frame[c].dtype)
            out[c] = values
        details = self._details(cols, fit, margins, shape, n)
        return SynthesisResult(data=Microdata(pd.DataFrame(out, columns=cols)), details=details,
                               warnings=warnings)

    @staticmethod
    def _details(cols: list[str], fit: Any, margins: list[tuple[int, ...]],
                 shape: tuple[int, ...], n: int) -> dict[str, Any]:
        table = fit.table / fit.table.sum()
        marg = [_entropy(marginal(table, (k,))) for k in range(len(cols))]
        joint = _entropy(table)
        out: dict[str, Any] = {
            "model": "maximum entropy log-linear table given marginals (IPF)",
            "columns": cols,
            "categories": dict(zip(cols, shape, strict=True)),
            "margins": [[cols[i] for i in m] for m in margins],
            "ipf": {"sweeps": fit.sweeps, "max_margin_error": fit.max_error,
                    "converged": fit.converged},
            "cells": int(table.size), "nonzero_cells": int(np.count_nonzero(table)),
            "entropy": {"marginal": dict(zip(cols, marg, strict=True)), "joint": joint},
            "n": n,
        }
        if len(cols) >= 2:
            out.update(information_summary(max(sum(marg) - joint, 0.0)))
            out["pairwise_mutual_information"] = {
                pair_key(cols[a], cols[b]): max(marg[a] + marg[b] - _entropy(
                    marginal(table, (a, b))), 0.0)
                for a, b in combinations(range(len(cols)), 2)}
        return out
