"""Disclosure protection: the CAP score relative to a guess that knows only the sensitive
columns' categories (SDMetrics' DisclosureProtection), exact by default."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from anoneval.core.api import (
    Context,
    Dataset,
    MeasureResult,
    bootstrap_indices,
    percentile_interval,
)
from anoneval.plugins.attacks.categorical_cap import (
    CAPMeasure,
    CAPParams,
    cap_result,
    cap_scores,
)


def discretize(real: pd.Series, released: pd.Series, bins: int) -> tuple[pd.Series, pd.Series]:
    """SDMetrics' discretisation: ``bins`` equal-width bins over the real column's range
    (``pandas.cut``, which widens the range by 0.1 % at the ends), the outer edges opened to
    ±inf for the released column; missing values stay missing."""
    labels = [str(i) for i in range(bins)]
    r_binned, edges = pd.cut(pd.to_numeric(real.to_numpy()), bins, labels=labels, retbins=True)
    edges[0], edges[-1] = -np.inf, np.inf
    s_binned = pd.cut(pd.to_numeric(released.to_numpy()), edges, labels=labels)
    return (pd.Series(np.asarray(r_binned, dtype=object), index=real.index),
            pd.Series(np.asarray(s_binned, dtype=object), index=released.index))


class DisclosureProtection(CAPMeasure):
    """SDMetrics' DisclosureProtection: the CAP protection divided by the protection of a
    guess that knows only the sensitive columns' categories.

    SDMetrics 0.32 (``DisclosureProtection``): ``continuous_columns`` are cut into
    ``num_discrete_bins`` equal-width bins of the original's range (the released values
    outside it fall into the outer bins); missing values become one category per column. The
    baseline protection is 1 − 1/∏ₛ|Vₛ|, |Vₛ| the number of distinct values (missing one of
    them) of sensitive column s in the original: the protection of a uniform random guess.
    The value is min(CAP protection / baseline, 1) (higher = safer), the CAP protection being
    :class:`~anoneval.plugins.attacks.categorical_cap.CategoricalCAP` of the chosen
    ``variant`` on the discretised data; no value when the baseline is 0 (one sensitive
    category: nothing to disclose).

    SDMetrics' ``DisclosureProtectionEstimate`` averages the CAP over ``num_iterations``
    random subsamples of ``num_rows_subsample`` rows of *both* sides. Subsampling the release
    hides most of the keys an attacker would find: with ``zero_cap`` (or ``generalized_cap``)
    a copy of the original, which discloses everything, then looks protected, and with
    ``cap`` only the few originals whose released twin was drawn count. Its ``compute`` also
    ignores the two arguments (only ``compute_breakdown`` uses them). Here the CAP is computed
    exactly over every record (vectorised, so it needs no subsample); ``compat: true`` runs
    SDMetrics' estimate as its ``compute_breakdown`` does (the given subsample size and
    iterations, seeded; an iteration without a counted record is left out, where SDMetrics'
    average turns NaN).
    ``ci``: exact mode, the bootstrap over the original records (the release held fixed);
    ``compat``, the bootstrap over the iterations' CAP values.
    details: ``cap_protection``, ``baseline_protection``, ``mean_cap``, ``n_counted``.
    """

    name = "DisclosureProtection"
    description = "SDMetrics' DisclosureProtection: CAP protection over the random-guess "\
                  "baseline, exact (compat: SDMetrics' subsampled estimate)."
    class Params(CAPParams):
        continuous_columns: list[str] = Field(
            default_factory=list, description="Key or sensitive columns cut into "
                                              "num_discrete_bins equal-width bins first.")
        num_discrete_bins: int = Field(10, ge=1, description="Bins of a continuous column.")
        compat: bool = Field(False, description="SDMetrics' DisclosureProtectionEstimate: the "
                                                "CAP averaged over subsamples of both sides.")
        num_rows_subsample: int = Field(1000, ge=1, description="compat: rows drawn from each "
                                                                "side per iteration.")
        num_iterations: int = Field(10, ge=1, description="compat: subsamples averaged.")

        @model_validator(mode="after")
        def _continuous(self) -> DisclosureProtection.Params:
            used = {*self.key_fields, *self.sensitive_fields}
            stray = [c for c in self.continuous_columns if c not in used]
            if stray:
                raise ValueError(f"continuous_columns {stray} are neither key nor sensitive "
                                 "fields")
            return self

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        real, syn = self.frames(original, anonymized)
        if p.continuous_columns:
            real, syn = real.copy(), syn.copy()
            for c in p.continuous_columns:
                real[c], syn[c] = discretize(real[c], syn[c], p.num_discrete_bins)
        sizes = [real[c].nunique(dropna=False) for c in p.sensitive_fields]
        baseline = 1 - 1 / float(np.prod(sizes, dtype=float))
        details = {"baseline_protection": baseline, "compat": p.compat}
        if baseline == 0:
            return MeasureResult(value=None, details=details, warnings=[
                "the sensitive fields take one value in the original: the baseline protection "
                "is 0 and the ratio undefined (SDMetrics: NaN)"])

        def ratio(protection: np.ndarray) -> np.ndarray:
            return np.minimum(protection / baseline, 1.0)

        if not p.compat:
            scores = cap_scores(real, syn, p.key_fields, p.sensitive_fields, p.variant)
            res = cap_result(scores, p, ctx, ratio, details)
            if res.value is not None:
                res.details["cap_protection"] = 1 - res.details["mean_cap"]
            return res
        return self._estimate(real, syn, ratio, details, ctx)

    def _estimate(self, real: pd.DataFrame, syn: pd.DataFrame,
                  ratio: Callable[[np.ndarray], np.ndarray], details: dict[str, Any],
                  ctx: Context) -> MeasureResult:
        p = self.params
        rng = ctx.rng(29)
        protections = []
        for _ in range(p.num_iterations):
            r = real.iloc[rng.choice(len(real), min(p.num_rows_subsample, len(real)),
                                     replace=False)]
            s = syn.iloc[rng.choice(len(syn), min(p.num_rows_subsample, len(syn)),
                                    replace=False)]
            scores = cap_scores(r, s, p.key_fields, p.sensitive_fields, p.variant)
            if (~np.isnan(scores)).any():
                protections.append(1 - float(np.nanmean(scores)))
        warnings = []
        if len(protections) < p.num_iterations:
            warnings.append(f"{p.num_iterations - len(protections)} of {p.num_iterations} "
                            "subsamples had no original key in the released subsample and "
                            "were left out")
        if not protections:
            return MeasureResult(value=None, details=details, warnings=warnings)
        values = np.array(protections)
        mean = float(values.mean())
        reps = ratio(values[bootstrap_indices(rng, len(values), p.n_boot)].mean(axis=1))
        ci = percentile_interval(reps, p.confidence_level)
        details.update(cap_protection=mean, iterations=values.tolist())
        return MeasureResult(value=float(ratio(np.array(mean))),
                             ci=None if ci is None else list(ci), details=details,
                             warnings=warnings)
