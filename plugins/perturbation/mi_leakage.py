"""MILeakage: privacy leakage of randomized response as the mutual information I(C;C′)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator
from scipy.stats import norm

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    Inputs,
    MeasureResult,
    Microdata,
    RiskMeasure,
)
from anoneval.plugins.perturbation import _channels as ch

_UNARY = ("unary", "unary_asymmetric", "rappor")
_ANALYTIC_ONLY = ("method", "samples", "curve_points")
_EMPIRICAL_ONLY = ("bootstrap", "confidence", "ci_method")
#: Largest m·(curve points) for which the leakage curve is computed.
_CURVE_BUDGET = 2_000_000
#: Salt of the Monte-Carlo and bootstrap streams (distinct from default_rng(seed) itself).
_SALT = 0x4D49


class MILeakage(RiskMeasure):
    """Leakage I(C;C′) between a categorical attribute C and its randomized version C′.

    Aditya & Škorić (2019), Sec. 3.2: the leakage of a randomized-response mechanism is the
    mutual information between the true category and the report, in bits by default (``base``).

    Analytic mode (default, needs no data) computes I exactly from the mechanism and a prior:
    direct (k-RR) by the paper's closed form eqs. 7–8 for any prior; the unary family (symmetric
    flips, Wang et al.'s asymmetric unary, google/rappor on a one-hot encoding, h = 1 hash, no
    Bloom collisions) with a uniform prior in O(m) by grouping outputs by Hamming weight; any
    other prior by enumerating the 2^m outputs up to m = 20 and above that by Monte Carlo
    (``estimate: true`` with its ``standard_error``); ``matrix`` by I = Σ π_c D(W_c ‖ πW).
    ``prior: "data"`` estimates the prior from the value frequencies of ``original_column``
    (the categories are its sorted distinct values, missing values counting as one; with
    ``categories`` larger than the number seen, the unseen categories get prior 0).

    Empirical mode measures the leakage in data: ``original_column`` of the original and
    ``randomized_column`` (one column, or several read together as one output symbol, e.g. one
    column per unary bit) of the anonymized data, row-aligned. The value is the plug-in MI with
    the Miller–Madow correction, with a bootstrap confidence interval (``ci``, at
    ``confidence``, floored at 0); when a mechanism is given, its analytic value for the data
    prior is reported beside it. A Monte-Carlo analytic value has ``ci`` = I ± z·se at
    ``confidence``; an exact one has none.

    Details: H(C), H(C′), H(C′|C); the normalized leakage I/H(C), Theil's uncertainty
    coefficient, the share of the attribute's entropy the report reveals. It is 0 iff C and C′
    are independent and 1 iff C is a function of C′; it uses the actual prior (I/log m would
    stay below 1 for a fully disclosed non-uniform attribute) and equals I/log m in the
    paper's uniform case, which puts the curves of different m on one [0, 1] scale. It is
    defined as 0 when H(C) = 0 (nothing to leak). The capacity (worst-case I over all priors)
    by Blahut–Arimoto on the explicit channel when it has at most 2^20 entries; the built-in
    mechanisms commute with every permutation of the categories, so above that size the
    uniform-prior I is reported, which is their capacity (I is concave in the prior and
    permutation-invariant, so averaging an optimal prior over all permutations gives the
    uniform one). The LDP ε is in natural log, as in Wang et al. 2017.
    """

    name = "MILeakage"
    description = "Mutual information between a category and its randomized report (bits)."
    unit = "bits"

    @classmethod
    def unit_for(cls, params: Mapping[str, Any]) -> str | None:
        """Bits for base 2 (the default), nats for base e, else the base."""
        base = params.get("base", 2.0)
        if base == 2:
            return "bits"
        return "nats" if isinstance(base, float) and abs(base - math.e) < 1e-12 else (
            f"log base {base:g}")
    inputs = "none"

    class Params(ch.MechanismParams):
        mode: Literal["analytic", "empirical"] = Field(
            default="analytic",
            description="analytic: from the mechanism alone; empirical: plug-in MI between "
                        "original_column and randomized_column.")
        categories: int | None = Field(
            default=None, ge=2, le=10_000_000,
            description="Number of categories m (>= 2). Defaults to the prior's length, the "
                        "matrix's rows, or the distinct values of original_column.")
        prior: Literal["uniform", "data"] | list[float] | None = Field(
            default=None,
            description="'uniform', a list of m probabilities summing to 1, or 'data' (value "
                        "frequencies of original_column). Default: uniform in analytic mode, "
                        "data in empirical mode.")
        original_column: str | None = Field(
            default=None, description="Column of the original holding C (prior 'data', "
                                      "empirical mode).")
        randomized_column: str | list[str] | None = Field(
            default=None, description="Column(s) of the anonymized data holding C′ (empirical "
                                      "mode); several columns form one output symbol.")
        method: Literal["auto", "exact", "monte_carlo"] = Field(
            default="auto",
            description="unary family: 'exact' (Hamming weight for a uniform prior, else "
                        f"enumeration, categories <= {ch.ENUMERATION_LIMIT}), 'monte_carlo', or "
                        "'auto' (exact when possible).")
        samples: int = Field(default=20_000, ge=100, le=100_000_000,
                             description="Monte-Carlo sample size (cost: samples × m bits).")
        base: float = Field(default=2.0, gt=1.0, description="Logarithm base (2 = bits).")
        bootstrap: int = Field(default=200, ge=0, le=100_000,
                               description="Bootstrap replicates for the empirical CI (0: none).")
        confidence: float = Field(default=0.95, gt=0.0, lt=1.0,
                                  description="Confidence level of the bootstrap interval.")
        ci_method: Literal["basic", "percentile"] = Field(
            default="basic",
            description="Bootstrap interval: 'basic' (2·I_plugin − replicate quantiles, which "
                        "removes the plug-in bias to first order) or 'percentile' (quantiles of "
                        "Miller–Madow-corrected replicates).")
        curve_points: int = Field(
            default=51, ge=0, le=1001,
            description="Points of the leakage curve over the mechanism's main parameter "
                        "(direct: gamma, unary: beta, unary_asymmetric: q, rappor: f); 0: none.")

        @field_validator("prior", mode="wrap")
        @classmethod
        def _prior(cls, value: Any, handler: Any) -> Any:
            if value is None or isinstance(value, str):
                if value not in (None, "uniform", "data"):
                    raise ValueError(f"prior must be 'uniform', 'data' or a list of "
                                     f"probabilities; got {value!r}")
                return value
            if not isinstance(value, (list, tuple)) or not all(
                    isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
                raise ValueError("prior must be 'uniform', 'data' or a list of probabilities "
                                 "in [0, 1] summing to 1")
            ch.check_prior(value)
            return handler(list(value))

        @model_validator(mode="after")
        def _consistent(self) -> MILeakage.Params:
            given = self.model_fields_set
            empirical = self.mode == "empirical"
            if not empirical:
                if self.mechanism is None:
                    raise ValueError("mode 'analytic' needs 'mechanism' (direct, unary, "
                                     "unary_asymmetric, rappor or matrix)")
                if self.randomized_column is not None:
                    raise ValueError("'randomized_column' applies to mode 'empirical' only")
                if self.prior == "data" and self.original_column is None:
                    raise ValueError("prior 'data' needs 'original_column'")
                if self.prior != "data" and self.original_column is not None:
                    raise ValueError("'original_column' applies to prior 'data' or mode "
                                     "'empirical' only")
            elif self.original_column is None or self.randomized_column is None:
                raise ValueError("mode 'empirical' needs 'original_column' and "
                                 "'randomized_column'")
            sizes = {}
            if self.categories is not None:
                sizes["categories"] = self.categories
            if isinstance(self.prior, list):
                sizes["prior (length)"] = len(self.prior)
            if self.matrix is not None:
                sizes["matrix (rows)"] = len(self.matrix)
            if len(set(sizes.values())) > 1:
                raise ValueError("the number of categories disagrees: " + ", ".join(
                    f"{k} = {v}" for k, v in sizes.items()))
            if self.mechanism is not None and not sizes and not empirical and \
                    self.prior != "data":
                raise ValueError("give 'categories' (m >= 2), a prior list or a matrix")
            if self.method == "monte_carlo" and self.mechanism not in _UNARY:
                raise ValueError("method 'monte_carlo' applies to mechanisms unary, "
                                 f"unary_asymmetric and rappor, not {self.mechanism!r}")
            m = next(iter(sizes.values()), None)
            if (self.method == "exact" and self.mechanism in _UNARY and m is not None
                    and isinstance(self.prior, list) and m > ch.ENUMERATION_LIMIT
                    and not ch.is_uniform(np.asarray(self.prior, dtype=float))):
                raise ValueError(_enumeration_message(m))
            only = _ANALYTIC_ONLY if empirical else _EMPIRICAL_ONLY
            wrong = [name for name in only if name in given]
            if wrong:
                raise ValueError(f"{', '.join(map(repr, wrong))} applies to mode "
                                 f"'{'analytic' if empirical else 'empirical'}' only")
            return self

    def required_inputs(self) -> Inputs:
        """none (analytic), either (analytic with prior 'data': the original) or both."""
        if self.params.mode == "empirical":
            return "both"
        return "either" if self.params.prior == "data" else "none"

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        if self.params.mode == "empirical":
            return self._empirical(original, anonymized, ctx)
        prior, m = self._prior(original, "uniform")
        channel = self.params.channel(m)
        leak = self._leakage(channel, prior, ctx)
        details = self._details(channel, prior, leak)
        details.update(self._capacity(channel, leak if prior is None else None, ctx))
        curve = self._curve(channel, prior)
        if curve is not None:
            details["curve"] = curve
        ci = None
        if leak.standard_error is not None:  # Monte Carlo: the normal interval at confidence
            half = float(norm.ppf((1 + self.params.confidence) / 2)) * leak.standard_error
            ci = [self._unit(max(leak.mi - half, 0.0)), self._unit(leak.mi + half)]
        return MeasureResult(value=self._unit(leak.mi), ci=ci, details=details,
                             warnings=_epsilon_warnings(details))

    # -- analytic ------------------------------------------------------------------------------

    def _unit(self, nats: float) -> float:
        return nats / math.log(self.params.base)

    def _prior(self, original: Dataset | None, default: str) -> tuple[np.ndarray | None, int]:
        """The prior (None = uniform) and m."""
        pp = self.params
        prior = pp.prior if pp.prior is not None else default
        if isinstance(prior, list):
            return ch.check_prior(prior), len(prior)
        fixed = pp.categories or (len(pp.matrix) if pp.matrix is not None else None)
        if prior == "uniform" and fixed is not None:
            return None, fixed
        counts = _column_counts(original, pp.original_column)  # type: ignore[arg-type]
        if prior == "uniform":
            return None, max(len(counts), 2)
        m = fixed or len(counts)
        if m < len(counts):
            raise DataError(f"original_column {pp.original_column!r} has {len(counts)} distinct "
                            f"values but categories = {m}; categories must be >= that")
        if m < 2:
            raise DataError(f"original_column {pp.original_column!r} has {len(counts)} distinct "
                            "value; a prior needs categories m >= 2 (set 'categories')")
        full = np.zeros(m)
        full[:len(counts)] = counts / counts.sum()
        return full, m

    def _leakage(self, channel: ch.Channel, prior: np.ndarray | None, ctx: Context) -> ch.Leakage:
        m = channel.m
        uniform = prior is None or ch.is_uniform(prior)
        p = ch.uniform_prior(m) if prior is None else prior
        if channel.kind == "direct":
            return ch.direct_leakage(p, channel.gamma)
        if channel.kind == "matrix":
            return ch.matrix_leakage(p, channel.matrix)  # type: ignore[arg-type]
        method = self.params.method
        if method == "monte_carlo" or (method == "auto" and not uniform
                                       and m > ch.ENUMERATION_LIMIT):
            with ctx.progress(self.params.samples, "MILeakage Monte Carlo") as bar:
                leak = ch.unary_leakage_monte_carlo(p, channel.p1, channel.p0,
                                                    self.params.samples, ctx.rng(_SALT),
                                                    bar.update)
            ctx.warn(f"I is a Monte-Carlo estimate from {self.params.samples} samples (standard "
                     f"error {self._unit(leak.standard_error or 0.0):.3g}); exact computation "
                     f"needs a uniform prior or categories <= {ch.ENUMERATION_LIMIT}")
            return leak
        if uniform:
            return ch.unary_leakage_uniform(m, channel.p1, channel.p0)
        if m > ch.ENUMERATION_LIMIT:
            raise ValueError(_enumeration_message(m))
        with ctx.progress(1 << max(m - 16, 0), "MILeakage enumeration") as bar:
            return ch.unary_leakage_enumerated(p, channel.p1, channel.p0, bar.update)

    def _details(self, channel: ch.Channel, prior: np.ndarray | None,
                 leak: ch.Leakage) -> dict[str, Any]:
        pp = self.params
        details: dict[str, Any] = {
            "mechanism": pp.mechanism,
            "categories": channel.m,
            "prior": "uniform" if prior is None else
            ("data" if pp.prior == "data" or pp.prior is None else "list"),
            "method": leak.method,
            "estimate": leak.standard_error is not None,
            "base": pp.base,
            "H(C)": self._unit(leak.h_input),
            "H(C')": self._unit(leak.h_output),
            "H(C'|C)": self._unit(leak.h_output_given_input),
            "normalized_leakage": _normalized(leak.mi, leak.h_input),
            "normalization": "I/H(C)",
            "ldp_epsilon": channel.ldp_epsilon(),
        }
        if leak.standard_error is not None:
            details["standard_error"] = self._unit(leak.standard_error)
            details["samples"] = leak.extra["samples"]
        if channel.kind == "unary":
            details["bit_probabilities"] = {"p1": channel.p1, "p0": channel.p0}
        if channel.rappor_f is not None:
            beta = channel.rappor_f / 2.0
            details["ldp_epsilon_permanent"] = ch.Channel("unary", channel.m, p1=1.0 - beta,
                                                          p0=beta).ldp_epsilon()
        if prior is not None and pp.prior == "data" and channel.m <= 1000:
            details["prior_values"] = prior.tolist()
        return details

    def _capacity(self, channel: ch.Channel, uniform: ch.Leakage | None,
                  ctx: Context) -> dict[str, Any]:
        """Blahut–Arimoto on the explicit channel, or the uniform-prior I (``uniform`` when
        already computed) for the permutation-symmetric built-ins too big to write out."""
        if channel.kind == "matrix" or channel.explicit_size() <= ch.EXPLICIT_LIMIT:
            cap = ch.blahut_arimoto(channel.explicit())
            if not cap.converged:
                ctx.warn(f"Blahut–Arimoto stopped after {cap.iterations} iterations with a gap "
                         f"of {self._unit(cap.gap):.3g} between its capacity bounds")
            out: dict[str, Any] = {"capacity": self._unit(cap.value),
                                   "capacity_method": "blahut_arimoto",
                                   "capacity_gap": self._unit(cap.gap),
                                   "capacity_iterations": cap.iterations}
            if channel.kind == "matrix" and channel.m <= 1000:
                out["capacity_prior"] = cap.prior.tolist()
            return out
        if uniform is not None and uniform.standard_error is None:
            value = uniform.mi
        elif channel.kind == "direct":
            value = ch.direct_leakage(ch.uniform_prior(channel.m), channel.gamma).mi
        else:
            value = ch.unary_leakage_uniform(channel.m, channel.p1, channel.p0).mi
        return {"capacity": self._unit(value), "capacity_method": "symmetry (uniform prior)"}

    def _curve(self, channel: ch.Channel, prior: np.ndarray | None) -> dict[str, Any] | None:
        """I over a grid of the main parameter, when each point costs O(m)."""
        pp = self.params
        n = pp.curve_points
        m = channel.m
        if n == 0 or channel.kind == "matrix" or m * n > _CURVE_BUDGET:
            return None
        if channel.kind == "unary" and prior is not None and not ch.is_uniform(prior):
            return None
        x = np.linspace(0.0, 1.0, n)
        if pp.mechanism == "direct":
            p = ch.uniform_prior(m) if prior is None else prior
            y = [ch.direct_leakage(p, g).mi for g in x]
            name = "gamma"
        else:
            name = {"unary": "beta", "unary_asymmetric": "q", "rappor": "f"}[pp.mechanism or ""]
            y = []
            for v in x:
                params = pp.model_copy(update={name: float(v)})
                c = params.channel(m)
                y.append(ch.unary_leakage_uniform(m, c.p1, c.p0).mi)
        return {"param": name, "x": x.tolist(), "y": [self._unit(v) for v in y]}

    # -- empirical -----------------------------------------------------------------------------

    def _empirical(self, original: Dataset | None, anonymized: Dataset | None,
                   ctx: Context) -> MeasureResult:
        pp = self.params
        orig, anon = _microdata(original, "original"), _microdata(anonymized, "anonymized")
        col = pp.original_column
        rcols = ([pp.randomized_column] if isinstance(pp.randomized_column, str)
                 else list(pp.randomized_column or []))
        orig.require([col], "original_column")  # type: ignore[list-item]
        anon.require(rcols, "randomized_column")
        if len(orig) != len(anon):
            raise DataError(f"the original has {len(orig)} rows and the anonymized data "
                            f"{len(anon)}; empirical mode needs row-aligned data of equal length")
        if len(orig) < 2:
            raise DataError("empirical mode needs at least 2 records")
        x, x_values = orig.codes(col)  # type: ignore[arg-type]
        if len(rcols) == 1:
            y, y_values = anon.codes(rcols[0])
            n_y = len(y_values)
        else:
            y, n_y = anon.group_ids(rcols)
        est = ch.empirical_mi(x, y, len(x_values), n_y, pp.bootstrap, pp.confidence,
                              pp.ci_method, ctx.rng(_SALT))
        if est.n < 5 * est.inputs * est.outputs:
            ctx.warn(f"{est.n} records for {est.inputs} × {est.outputs} input/output values: "
                     "fewer than 5 per cell, so the plug-in estimate may be biased even after "
                     "the Miller–Madow correction")
        value = max(est.mi, 0.0)
        details: dict[str, Any] = {
            "method": "empirical", "estimate": True, "base": pp.base, "records": est.n,
            "input_values": est.inputs, "output_values": est.outputs, "cells": est.cells,
            "plugin": self._unit(est.mi_plugin),
            "miller_madow_correction": self._unit(est.mi - est.mi_plugin),
            "H(C)": self._unit(est.h_input), "H(C')": self._unit(est.h_output),
            "H(C'|C)": self._unit(est.h_joint - est.h_input),
            "normalized_leakage": _normalized(value, est.h_input),
            "normalization": "I/H(C)",
        }
        if est.ci is not None:
            details.update({"ci_lower": self._unit(est.ci[0]), "ci_upper": self._unit(est.ci[1]),
                            "confidence": pp.confidence, "ci_method": pp.ci_method,
                            "bootstrap": pp.bootstrap})
        if est.standard_error is not None:
            details["standard_error"] = self._unit(est.standard_error)
        if pp.mechanism is not None:
            prior, m = self._prior(orig, "data")
            channel = pp.channel(m)
            leak = self._leakage(channel, prior, ctx)
            details.update({"analytic_value": self._unit(leak.mi),
                            "analytic_method": leak.method,
                            "ldp_epsilon": channel.ldp_epsilon()})
            if est.ci is not None:
                details["analytic_within_ci"] = bool(est.ci[0] <= leak.mi <= est.ci[1])
        ci = ([self._unit(max(est.ci[0], 0.0)), self._unit(max(est.ci[1], 0.0))]
              if est.ci is not None else None)
        return MeasureResult(value=self._unit(value), ci=ci, details=details,
                             warnings=_epsilon_warnings(details))


def _epsilon_warnings(details: dict[str, Any]) -> list[str]:
    """Why an ε of local differential privacy is infinite (reported as null)."""
    return [f"{key} is infinite: some report is possible under one category and impossible "
            "under another, so the mechanism gives no local differential privacy"
            for key in ("ldp_epsilon", "ldp_epsilon_permanent")
            if math.isinf(details.get(key, 0.0))]


def _enumeration_message(m: int) -> str:
    return (f"method 'exact' with a non-uniform prior enumerates 2^m outputs and allows "
            f"categories <= {ch.ENUMERATION_LIMIT}; got categories = {m}. Use method 'auto' or "
            "'monte_carlo'")


def _normalized(mi: float, h_input: float) -> float:
    return min(max(mi / h_input, 0.0), 1.0) if h_input > 0 else 0.0


def _microdata(data: Dataset | None, side: str) -> Microdata:
    if not isinstance(data, Microdata):
        raise DataError(f"MILeakage needs the {side} data as microdata here"
                        + ("" if data is None else f", not {data.data_kind}"))
    return data


def _column_counts(original: Dataset | None, column: str) -> np.ndarray:
    """Counts of the sorted distinct values (missing values last, as one value)."""
    data = _microdata(original, "original")
    data.require([column], "original_column")
    codes, values = data.codes(column)
    counts = np.bincount(codes, minlength=len(values)).astype(float)
    return counts[ch.sorted_order(values)]
