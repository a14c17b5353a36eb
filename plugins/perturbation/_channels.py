"""Shared math of the rappor family: randomized-response channels and their leakage I(C;C′).

Everything here works in nats; callers convert to the requested base. Conventions:
``0 log 0 = 0``; a prior is a probability vector over the m categories (zeros allowed).

The unary family (one-hot encoding, each of the m bits randomized independently) is described
by two numbers: ``p1`` = P(reported bit 1 | true bit 1) and ``p0`` = P(reported bit 1 | true bit
0). Symmetric unary (Aditya & Škorić, Sec. 2.2) has p1 = 1 − β, p0 = β; Wang et al.'s
asymmetric unary (OUE/SUE) has p1 = p, p0 = q; google/rappor's one report has p1 = q*,
p0 = p* (:func:`rappor_bits`). Given the true category c, an output z ∈ {0,1}^m of Hamming
weight w has probability ``A_w = p1 · g(w−1)`` when z_c = 1 and ``B_w = (1 − p1) · g(w)`` when
z_c = 0, with ``g(k) = p0^k (1 − p0)^(m−1−k)`` (the paper's eq. 10 generalized). Hence
P(z) = S1(z)·A_w + S0(z)·B_w with S1(z) the prior mass of z's set bits and S0 = 1 − S1: every
method below (weight grouping, enumeration, Monte Carlo) rests on that identity.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, field_validator, model_validator
from scipy.special import gammaln, logsumexp, rel_entr, xlogy

from anoneval.core.api import Params

#: Largest m for which the 2^m outputs of a unary channel are enumerated exactly.
ENUMERATION_LIMIT = 20
#: Largest number of entries of an explicit channel matrix handed to Blahut–Arimoto.
EXPLICIT_LIMIT = 1 << 20
#: Tolerance on the sum of a prior or of a channel row.
SUM_TOL = 1e-9
#: google/rappor's defaults (client/python/rappor.py): f, p, q.
RAPPOR_DEFAULTS = {"f": 0.5, "p": 0.5, "q": 0.75}

Mechanism = Literal["direct", "unary", "unary_asymmetric", "rappor", "matrix"]

# -- parameters shared by MILeakage and RandomizedResponse -----------------------------------

_TAKES: dict[str, tuple[str, ...]] = {
    "direct": ("gamma",),
    "unary": ("beta",),
    "unary_asymmetric": ("p", "q"),
    "rappor": ("f", "p", "q", "rappor_report"),
    "matrix": ("matrix",),
}
_REQUIRED: dict[str, tuple[str, ...]] = {
    "direct": ("gamma",), "unary": ("beta",), "unary_asymmetric": ("p", "q"), "rappor": (),
    "matrix": ("matrix",),
}
_MECHANISM_PARAMS = ("gamma", "beta", "p", "q", "f", "rappor_report", "matrix")


def _probability(description: str) -> Any:
    """An optional probability param (in [0, 1], default unset)."""
    return Field(default=None, ge=0.0, le=1.0, description=description)


class MechanismParams(Params):
    """The randomization mechanism: which one, and its probabilities (all in [0, 1])."""

    mechanism: Mechanism | None = Field(
        default=None,
        description="direct (k-RR: keep w.p. gamma, else move uniformly to another category); "
                    "unary (one-hot, each bit flipped w.p. beta); unary_asymmetric (one-hot, "
                    "a 1 stays 1 w.p. p, a 0 becomes 1 w.p. q, as in Wang et al. 2017); rappor "
                    "(google/rappor with f, p, q on a one-hot encoding); matrix (any "
                    "row-stochastic channel P(output | input)).")
    gamma: float | None = _probability("direct: probability of keeping the true category.")
    beta: float | None = _probability("unary: probability of flipping each bit.")
    p: float | None = _probability(
        "unary_asymmetric: P(a 1 stays 1). rappor: P(report 1 | permanent bit 0) "
        "(google/rappor's p; default 0.5).")
    q: float | None = _probability(
        "unary_asymmetric: P(a 0 becomes 1). rappor: P(report 1 | permanent bit 1) "
        "(google/rappor's q; default 0.75).")
    f: float | None = _probability(
        "rappor: the permanent step keeps a bit w.p. 1 − f, else sets it to 0 or 1 w.p. f/2 "
        "each (default 0.5).")
    rappor_report: Literal["instantaneous", "permanent"] = Field(
        default="instantaneous",
        description="rappor: 'instantaneous' = one report (permanent then instantaneous step); "
                    "'permanent' = the memoized permanent response alone, what an aggregator "
                    "learns in the limit of many reports.")
    matrix: list[list[float]] | None = Field(
        default=None,
        description="matrix: row c is P(output | input c); rows must sum to 1 within 1e-9.")

    @field_validator("matrix")
    @classmethod
    def _row_stochastic(cls, w: list[list[float]] | None) -> list[list[float]] | None:
        if w is None:
            return w
        if len(w) < 2:
            raise ValueError(f"matrix needs at least 2 rows (categories m >= 2); got {len(w)}")
        n = len(w[0])
        for i, row in enumerate(w):
            if len(row) != n or n == 0:
                raise ValueError(f"matrix row {i} has {len(row)} entries; every row needs the "
                                 f"same number (>= 1) of entries as row 0 ({n})")
            bad = [x for x in row if not 0.0 <= x <= 1.0]
            if bad:
                raise ValueError(f"matrix row {i} has entry {bad[0]!r}; entries must lie in "
                                 "[0, 1]")
            total = math.fsum(row)
            if abs(total - 1.0) > SUM_TOL:
                raise ValueError(f"matrix row {i} sums to {total!r}; a row-stochastic matrix "
                                 "needs every row to sum to 1 within 1e-9")
        return w

    @model_validator(mode="after")
    def _mechanism_params(self) -> MechanismParams:
        given = self.model_fields_set
        mech = self.mechanism
        takes = _TAKES.get(mech or "", ())
        for name in _MECHANISM_PARAMS:
            if name in given and getattr(self, name) is not None and name not in takes:
                if mech is None:
                    raise ValueError(f"{name!r} is a mechanism parameter; set 'mechanism' "
                                     "(direct, unary, unary_asymmetric, rappor or matrix)")
                raise ValueError(f"{name!r} does not apply to mechanism {mech!r}, which takes "
                                 f"{', '.join(takes)}")
        for name in _REQUIRED.get(mech or "", ()):
            if getattr(self, name) is None:
                what = "a row-stochastic matrix" if name == "matrix" else "in [0, 1]"
                raise ValueError(f"mechanism {mech!r} needs {name!r} ({what})")
        return self

    def channel(self, m: int) -> Channel:
        """The channel of this mechanism on ``m`` categories."""
        mech = self.mechanism
        if mech is None:
            raise ValueError("no mechanism given")
        if mech == "direct":
            return Channel("direct", m, gamma=float(self.gamma))  # type: ignore[arg-type]
        if mech == "unary":
            b = float(self.beta)  # type: ignore[arg-type]
            return Channel("unary", m, p1=1.0 - b, p0=b)
        if mech == "unary_asymmetric":
            return Channel("unary", m, p1=float(self.p), p0=float(self.q))  # type: ignore
        if mech == "rappor":
            f, p, q = (RAPPOR_DEFAULTS[k] if getattr(self, k) is None else float(getattr(self, k))
                       for k in ("f", "p", "q"))
            p1, p0 = rappor_bits(f, p, q, self.rappor_report)
            return Channel("unary", m, p1=p1, p0=p0, rappor_f=f)
        w = np.asarray(self.matrix, dtype=float)
        if w.shape[0] != m:
            raise ValueError(f"matrix has {w.shape[0]} rows but there are {m} categories")
        return Channel("matrix", m, matrix=w / w.sum(axis=1, keepdims=True))


def rappor_bits(f: float, p: float, q: float, report: str = "instantaneous") -> tuple[float, float]:
    """Per-bit (P(1 | true 1), P(1 | true 0)) of google/rappor on a one-hot encoding.

    Permanent step (PRR): a bit becomes 1 w.p. f/2, 0 w.p. f/2, stays w.p. 1 − f. Instantaneous
    step (IRR): report 1 w.p. q if the PRR bit is 1, p if it is 0. So one report has
    q* = ½f(p+q) + (1−f)q and p* = ½f(p+q) + (1−f)p (Erlingsson et al., CCS 2014).
    """
    if report == "permanent":
        return 1.0 - f / 2.0, f / 2.0
    return 0.5 * f * (p + q) + (1.0 - f) * q, 0.5 * f * (p + q) + (1.0 - f) * p


@dataclass
class Channel:
    """A randomized-response channel on m categories (``kind`` direct, unary or matrix)."""

    kind: str
    m: int
    gamma: float = 0.0
    p1: float = 0.0
    p0: float = 0.0
    matrix: np.ndarray | None = None
    rappor_f: float | None = None

    def explicit(self) -> np.ndarray:
        """The m × outputs matrix P(output | input); unary outputs are indexed by bit mask."""
        if self.kind == "matrix":
            return self.matrix  # type: ignore[return-value]
        if self.kind == "direct":
            return direct_matrix(self.m, self.gamma)
        return unary_matrix(self.m, self.p1, self.p0)

    def explicit_size(self) -> float:
        if self.kind == "matrix":
            return float(self.matrix.size)  # type: ignore[union-attr]
        if self.kind == "direct":
            return float(self.m) ** 2
        return math.inf if self.m > 60 else float(self.m) * 2.0 ** self.m

    def ldp_epsilon(self) -> float:
        """The smallest ε (natural log) with P(y|c) <= e^ε P(y|c′) for all outputs y, c, c′."""
        if self.kind == "direct":
            a = (1.0 - self.gamma) / (self.m - 1)
            return _log_ratio_eps(np.array([[self.gamma, a], [a, self.gamma]]))
        if self.kind == "unary":
            # Changing c to c′ changes the distribution of bits c and c′ only; the worst output
            # maximizes both bits' likelihood ratios independently.
            bit = np.array([[1.0 - self.p0, self.p0], [1.0 - self.p1, self.p1]])
            return _one_way_eps(bit[1], bit[0]) + _one_way_eps(bit[0], bit[1])
        return _log_ratio_eps(self.matrix)  # type: ignore[arg-type]


def direct_matrix(m: int, gamma: float) -> np.ndarray:
    w = np.full((m, m), (1.0 - gamma) / (m - 1))
    np.fill_diagonal(w, gamma)
    return w


def unary_matrix(m: int, p1: float, p0: float) -> np.ndarray:
    """Explicit m × 2^m unary channel; column z is the output whose bit c is (z >> c) & 1."""
    z = np.arange(1 << m, dtype=np.int64)
    bits = ((z[None, :] >> np.arange(m)[:, None]) & 1).astype(bool)  # (m, 2^m): bit c of z
    w = bits.sum(axis=0)
    log_a, log_b = _unary_logs(m, p1, p0)
    return np.exp(np.where(bits, log_a[w][None, :], log_b[w][None, :]))


def _one_way_eps(a: np.ndarray, b: np.ndarray) -> float:
    """max over outcomes y possible under a or b of log(a_y / b_y) (inf when b_y = 0 < a_y)."""
    best = -math.inf
    for x, y in zip(a, b, strict=True):
        if x == 0.0 and y == 0.0:
            continue
        if y == 0.0:
            return math.inf
        if x > 0.0:
            best = max(best, math.log(x) - math.log(y))
    return max(best, 0.0)


def _log_ratio_eps(w: np.ndarray) -> float:
    """LDP ε of an explicit channel: max over columns of log(max_c W / min_c W)."""
    hi = w.max(axis=0)
    lo = w.min(axis=0)
    used = hi > 0
    if not used.any():
        return 0.0
    if (lo[used] == 0).any():
        return math.inf
    return float(np.max(np.log(hi[used]) - np.log(lo[used])))


# -- entropies ---------------------------------------------------------------------------------

def entropy(p: np.ndarray) -> float:
    """Shannon entropy in nats of a probability vector (0 log 0 = 0)."""
    return float(-xlogy(p, p).sum())


def binary_entropy(x: float) -> float:
    """h(x) = −x log x − (1−x) log(1−x) in nats (Aditya & Škorić, eq. 3)."""
    return float(-xlogy(x, x) - xlogy(1.0 - x, 1.0 - x))


@dataclass
class Leakage:
    """I(C;C′) and its parts, in nats; ``standard_error`` only for Monte-Carlo estimates."""

    mi: float
    h_input: float
    h_output: float
    h_output_given_input: float
    method: str
    standard_error: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# -- direct representation ---------------------------------------------------------------------

def direct_conditional_entropy(m: int, gamma: float) -> float:
    """H(C′|C) = h(γ) + (1−γ) log(m−1) for any prior (Aditya & Škorić, eq. 6)."""
    return binary_entropy(gamma) + (1.0 - gamma) * math.log(m - 1)


def direct_leakage(prior: np.ndarray, gamma: float) -> Leakage:
    """Closed form for any prior: r_j = p_j γ + (1−p_j)(1−γ)/(m−1) (eq. 7), I = H(r) − H(C′|C)
    (eq. 8). Clamped at 0 (the difference can be −1e−16 at γ = 1/m)."""
    m = len(prior)
    r = prior * gamma + (1.0 - prior) * (1.0 - gamma) / (m - 1)
    h_out = entropy(r)
    h_cond = direct_conditional_entropy(m, gamma)
    return Leakage(max(h_out - h_cond, 0.0), entropy(prior), h_out, h_cond, "closed_form")


# -- unary representation ----------------------------------------------------------------------

def _unary_logs(m: int, p1: float, p0: float) -> tuple[np.ndarray, np.ndarray]:
    """log A_w and log B_w for w = 0..m (−inf where impossible or undefined)."""
    k = np.arange(m, dtype=float)
    log_g = xlogy(k, p0) + xlogy(m - 1 - k, 1.0 - p0)  # g(k), k = 0..m-1
    with np.errstate(divide="ignore"):
        log_p1, log_q1 = np.log(p1), np.log(1.0 - p1)
    log_a = np.full(m + 1, -np.inf)
    log_b = np.full(m + 1, -np.inf)
    log_a[1:] = log_p1 + log_g
    log_b[:-1] = log_q1 + log_g
    return log_a, log_b


def unary_leakage_uniform(m: int, p1: float, p0: float) -> Leakage:
    """Exact I for a uniform prior in O(m) by grouping the 2^m outputs by Hamming weight.

    Outputs of weight w: C(m−1, w−1) of them have the true bit set (probability A_w each),
    C(m−1, w) have it clear (B_w each), and P_w = (w A_w + (m−w) B_w)/m (the paper's eq. 13).
    I = Σ_w [C(m−1,w−1) A_w log(A_w/P_w) + C(m−1,w) B_w log(B_w/P_w)], a sum of non-negative
    probability-weighted log-ratios, so it does not suffer the cancellation of H(Z) − H(Z|C)
    at large m (H(Z) ≈ m·h(p0) is huge). Binomials and probabilities are handled in log space.
    """
    log_a, log_b = _unary_logs(m, p1, p0)
    w = np.arange(m + 1, dtype=float)
    log_count_a = np.full(m + 1, -np.inf)
    log_count_b = np.full(m + 1, -np.inf)
    log_count_a[1:] = _log_binom(m - 1, w[1:] - 1)
    log_count_b[:-1] = _log_binom(m - 1, w[:-1])
    with np.errstate(divide="ignore"):
        log_share_a = np.log(w / m)
        log_share_b = np.log((m - w) / m)
    log_p = np.logaddexp(log_share_a + log_a, log_share_b + log_b)
    mi, _ = _weighted(log_count_a + log_a, log_a, log_count_b + log_b, log_b, log_p)
    h_cond = binary_entropy(p1) + (m - 1) * binary_entropy(p0)
    # H(C′) = H(C′|C) + I: summing −P log P directly would multiply the ~1e−10 relative error
    # of large log-binomials by log P ≈ −m·h(p0), e.g. 1e−6 bits at m = 100,000.
    mi = max(mi, 0.0)
    return Leakage(mi, math.log(m), h_cond + mi, h_cond, "hamming_weight")


def _log_binom(n: int, k: np.ndarray) -> np.ndarray:
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def _weighted(log_mass_a: np.ndarray, log_a: np.ndarray, log_mass_b: np.ndarray,
              log_b: np.ndarray, log_p: np.ndarray) -> tuple[float, float]:
    """(Σ mass·log(P(z|c)/P(z)), −Σ mass·log P(z)) over the A and B parts of output classes."""
    mass_a = np.exp(log_mass_a)
    mass_b = np.exp(log_mass_b)
    ok_a = mass_a > 0
    ok_b = mass_b > 0
    mi = float(np.sum(mass_a[ok_a] * (log_a[ok_a] - log_p[ok_a]))
               + np.sum(mass_b[ok_b] * (log_b[ok_b] - log_p[ok_b])))
    h = float(-np.sum(mass_a[ok_a] * log_p[ok_a]) - np.sum(mass_b[ok_b] * log_p[ok_b]))
    return mi, h


def _subset_sums(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sum of ``values`` and popcount over every subset; subset i has bit j set iff j in it."""
    sums = np.zeros(1)
    counts = np.zeros(1, dtype=np.int64)
    for v in values:
        sums = np.concatenate([sums, sums + v])
        counts = np.concatenate([counts, counts + 1])
    return sums, counts


def unary_leakage_enumerated(prior: np.ndarray, p1: float, p0: float,
                             progress: Callable[[int], None] | None = None) -> Leakage:
    """Exact I for any prior by enumerating all 2^m outputs (m <= ENUMERATION_LIMIT).

    P(z) = S1(z) A_w + S0(z) B_w with S1/S0 the prior mass on z's set/clear bits, and
    I = Σ_z [S1 A_w log(A_w/P(z)) + S0 B_w log(B_w/P(z))]. Outputs are split into a block of
    the low (at most 16) bits, vectorised, and a loop over the high bits, so memory stays
    bounded; S0 is the subset sum of the complement, which avoids 1 − S1 cancellation.
    """
    m = len(prior)
    if m > ENUMERATION_LIMIT:
        raise ValueError(f"exact enumeration is limited to categories <= {ENUMERATION_LIMIT}; "
                         f"got {m}")
    log_a, log_b = _unary_logs(m, p1, p0)
    low = min(m, 16)
    low_s, low_w = _subset_sums(prior[:low])
    high_s, high_w = _subset_sums(prior[low:])
    low_c = low_s[::-1]  # complement of low subset i is (2^low − 1) − i
    high_c = high_s[::-1]
    mi = h_out = 0.0
    with np.errstate(divide="ignore"):
        for j in range(len(high_s)):
            s1 = low_s + high_s[j]
            s0 = low_c + high_c[j]
            w = low_w + high_w[j]
            la, lb = log_a[w], log_b[w]
            ls1, ls0 = np.log(s1), np.log(s0)
            log_p = np.logaddexp(ls1 + la, ls0 + lb)
            d_mi, d_h = _weighted(ls1 + la, la, ls0 + lb, lb, log_p)
            mi += d_mi
            h_out += d_h
            if progress is not None:
                progress(1)
    h_cond = binary_entropy(p1) + (m - 1) * binary_entropy(p0)
    return Leakage(max(mi, 0.0), entropy(prior), h_out, h_cond, "enumeration")


def unary_leakage_monte_carlo(prior: np.ndarray, p1: float, p0: float, samples: int,
                              rng: np.random.Generator,
                              progress: Callable[[int], None] | None = None) -> Leakage:
    """Monte-Carlo estimate of I for any prior: the mean of log P(z|c)/P(z) over (c, z) drawn
    from the joint distribution, with its standard error (sample sd / √n).

    P(z) is exact for each draw (from its weight and S1(z)); H(C′|C) is exact. Cost
    O(samples · m), in chunks of about 2^21 bits.
    """
    m = len(prior)
    log_a, log_b = _unary_logs(m, p1, p0)
    chunk = max(1, (1 << 21) // m)
    cum = np.cumsum(prior)
    cum[-1] = 1.0
    values = np.empty(samples)
    done = 0
    with np.errstate(divide="ignore"):
        while done < samples:
            n = min(chunk, samples - done)
            c = np.searchsorted(cum, rng.random(n), side="right")
            c = np.minimum(c, m - 1)
            bits = rng.random((n, m)) < p0
            own = rng.random(n) < p1
            bits[np.arange(n), c] = own
            w = bits.sum(axis=1)
            s1 = bits @ prior
            s0 = (~bits) @ prior
            log_p = np.logaddexp(np.log(s1) + log_a[w], np.log(s0) + log_b[w])
            values[done:done + n] = np.where(own, log_a[w], log_b[w]) - log_p
            done += n
            if progress is not None:
                progress(n)
    se = float(values.std(ddof=1) / math.sqrt(samples)) if samples > 1 else math.inf
    mi = float(values.mean())
    h_cond = binary_entropy(p1) + (m - 1) * binary_entropy(p0)
    return Leakage(max(mi, 0.0), entropy(prior), h_cond + mi, h_cond, "monte_carlo",
                   standard_error=se, extra={"samples": samples, "raw_estimate": mi})


# -- explicit channels -------------------------------------------------------------------------

def matrix_leakage(prior: np.ndarray, w: np.ndarray) -> Leakage:
    """I = Σ_c π_c D(W_c ‖ πW) for an explicit row-stochastic W (Cover & Thomas 2006, Sec. 2.3)."""
    q = prior @ w
    used = prior > 0
    mi = float(prior[used] @ _divergences(w[used], q))
    h_cond = float(prior @ (-xlogy(w, w).sum(axis=1)))
    return Leakage(max(mi, 0.0), entropy(prior), entropy(q), h_cond, "closed_form")


def _divergences(w: np.ndarray, q: np.ndarray) -> np.ndarray:
    """D(W_c ‖ q) per row in nats. An output with q_y = 0 < W_cy can only come from
    underflow (q_y >= π_c W_cy for every row in use), so its term, W_cy·log(W_cy/q_y) with
    W_cy below the smallest double, counts as 0."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        terms = rel_entr(w, q[None, :])
    return np.where(np.isfinite(terms), terms, 0.0).sum(axis=1)


@dataclass
class Capacity:
    value: float
    prior: np.ndarray
    gap: float
    iterations: int
    converged: bool


def blahut_arimoto(w: np.ndarray, tol: float = 1e-12, max_iter: int = 10_000,
                   init: np.ndarray | None = None) -> Capacity:
    """Channel capacity max_π I(C;C′) in nats by Blahut–Arimoto (Blahut 1972; Arimoto 1972).

    Iterates π ← π·exp(D(W_c ‖ πW)) / Σ. At each step I(π) <= C <= max_c D(W_c ‖ πW); stops
    when the gap between these bounds is below ``tol`` nats and returns the lower bound.
    """
    m = w.shape[0]
    log_pi = np.log(np.full(m, 1.0 / m) if init is None else np.asarray(init, dtype=float))
    pi = np.exp(log_pi)
    lower, gap, it = 0.0, math.inf, 0
    for it in range(1, max_iter + 1):  # noqa: B007 (the count is returned)
        q = pi @ w
        d = _divergences(w, q)
        lower = float(pi @ d)
        gap = float(d.max()) - lower
        if gap < tol:
            break
        log_pi = log_pi + d
        log_pi = np.maximum(log_pi - logsumexp(log_pi), -700.0)
        pi = np.exp(log_pi)
        pi /= pi.sum()
    return Capacity(max(lower, 0.0), pi, max(gap, 0.0), it, gap < tol)


# -- empirical (plug-in) mutual information ----------------------------------------------------

@dataclass
class Empirical:
    """Plug-in estimates (nats) from a contingency table, Miller–Madow corrected."""

    mi: float
    mi_plugin: float
    h_input: float
    h_output: float
    h_joint: float
    cells: int
    inputs: int
    outputs: int
    n: int
    ci: tuple[float, float] | None = None
    standard_error: float | None = None


def _plugin_mi_rows(counts: np.ndarray, rows: np.ndarray, cols: np.ndarray, n_rows: int,
                    n_cols: int, n: int) -> np.ndarray:
    """Plug-in MI (nats) of each row of ``counts`` (replicates × cells) over sparse cells."""
    total = float(n)
    cx = np.zeros((counts.shape[0], n_rows))
    cy = np.zeros((counts.shape[0], n_cols))
    for i in range(counts.shape[0]):
        cx[i] = np.bincount(rows, weights=counts[i], minlength=n_rows)
        cy[i] = np.bincount(cols, weights=counts[i], minlength=n_cols)
    hj = -(xlogy(counts, counts).sum(axis=1) / total - math.log(total))
    hx = -(xlogy(cx, cx).sum(axis=1) / total - math.log(total))
    hy = -(xlogy(cy, cy).sum(axis=1) / total - math.log(total))
    return hx + hy - hj


def empirical_mi(x: np.ndarray, y: np.ndarray, n_x: int, n_y: int, bootstrap: int,
                 confidence: float, ci_method: str, rng: np.random.Generator) -> Empirical:
    """Plug-in I(X;Y) from paired integer codes, Miller–Madow corrected, with a bootstrap CI.

    Each plug-in entropy is corrected by (K − 1)/(2N) nats, K its number of non-empty cells
    (Miller 1955; Paninski 2003), so I_MM = I_plugin − (K_xy − K_x − K_y + 1)/(2N).
    Bootstrap: resampling N records with replacement is drawing the cell counts from
    Multinomial(N, n_xy/N), so each replicate costs O(cells), not O(N). ``ci_method='basic'``
    gives [2Î − q_hi, 2Î − q_lo] (it corrects the replicates' own plug-in bias to first
    order); 'percentile' gives [q_lo, q_hi] of Miller–Madow-corrected replicates.
    """
    n = len(x)
    key = x.astype(np.int64) * n_y + y
    if n_x * n_y <= 1 << 24:
        full = np.bincount(key, minlength=n_x * n_y)
        uniq = np.flatnonzero(full)
        counts = full[uniq]
    else:
        uniq, counts = np.unique(key, return_counts=True)
    rows, cols = uniq // n_y, uniq % n_y
    cx = np.bincount(rows, weights=counts, minlength=n_x)
    cy = np.bincount(cols, weights=counts, minlength=n_y)
    kx, ky, kxy = int((cx > 0).sum()), int((cy > 0).sum()), len(uniq)
    mi_plugin = float(_plugin_mi_rows(counts[None, :].astype(float), rows, cols, n_x, n_y, n)[0])
    hx = entropy(cx / n) + (kx - 1) / (2 * n)
    hy = entropy(cy / n) + (ky - 1) / (2 * n)
    hj = entropy(counts / n) + (kxy - 1) / (2 * n)
    result = Empirical(hx + hy - hj, mi_plugin, hx, hy, hj, kxy, kx, ky, n)
    if bootstrap > 0:
        reps = rng.multinomial(n, counts / n, size=bootstrap).astype(float)
        plug = _plugin_mi_rows(reps, rows, cols, n_x, n_y, n)
        alpha = (1.0 - confidence) / 2.0
        if ci_method == "basic":
            lo_q, hi_q = np.quantile(plug, [alpha, 1.0 - alpha])
            ci = (2 * mi_plugin - hi_q, 2 * mi_plugin - lo_q)
        else:
            kxr = (np.stack([np.bincount(rows, weights=r, minlength=n_x) for r in reps]) > 0)
            kyr = (np.stack([np.bincount(cols, weights=r, minlength=n_y) for r in reps]) > 0)
            corr = ((reps > 0).sum(axis=1) - kxr.sum(axis=1) - kyr.sum(axis=1) + 1) / (2 * n)
            ci = tuple(np.quantile(plug - corr, [alpha, 1.0 - alpha]))  # type: ignore[assignment]
        result.ci = (max(float(ci[0]), 0.0), max(float(ci[1]), 0.0))
        result.standard_error = float(plug.std(ddof=1)) if bootstrap > 1 else None
    return result


def uniform_prior(m: int) -> np.ndarray:
    return np.full(m, 1.0 / m)


def is_uniform(prior: np.ndarray) -> bool:
    return bool(np.all(np.abs(prior - 1.0 / len(prior)) <= 1e-15))


def check_prior(values: Sequence[float]) -> np.ndarray:
    """A prior list as an array; raises ValueError naming 'prior' and the allowed values."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or len(arr) < 2:
        raise ValueError(f"prior needs at least 2 probabilities (categories m >= 2); got "
                         f"{len(arr) if arr.ndim == 1 else arr.shape}")
    bad = np.flatnonzero(~((arr >= 0) & (arr <= 1)))
    if len(bad):
        raise ValueError(f"prior[{bad[0]}] = {float(arr[bad[0]])!r}; probabilities must lie in "
                         "[0, 1]")
    total = math.fsum(arr.tolist())
    if abs(total - 1.0) > SUM_TOL:
        raise ValueError(f"prior sums to {total!r}; it must sum to 1 within 1e-9")
    return arr / total


def sorted_order(values: Any) -> np.ndarray:
    """Positions of distinct ``values`` in sorted order (missing last); first-seen order when
    the values do not sort (mixed types). This order numbers the categories."""
    index = pd.Index(values)
    try:
        return np.asarray(index.sort_values(return_indexer=True, na_position="last")[1])
    except TypeError:
        return np.arange(len(index))
