"""Estimators of the number of population uniques from a sample's class-size histogram.

Every estimator takes the histogram as ``sizes`` (distinct class sizes i) and ``counts`` (u_i,
the number of classes of size i), the sample size n = Σ i·u_i and the population size N; the
sampling fraction is f = n/N. Notation: u = Σ u_i classes, c1 = u_1 sample uniques, c2 = u_2.
Solvers are deterministic Newton–Raphson iterations bounded by iteration counts (never by
wall-clock time); an estimate that does not converge, or falls outside [0, N], is reported as
not available with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import digamma, gammaln, polygamma

#: Accuracy of the solvers: |equation residual| at a root (ARX's default, 1e-6).
ACCURACY = 1e-6


@dataclass
class Estimate:
    """An estimated number of population uniques, or None with the reason."""

    uniques: float | None
    reason: str | None = None
    iterations: int = 0
    parameters: dict[str, float] | None = None


@dataclass
class Histogram:
    """A sample's class-size histogram and the population size."""

    sizes: np.ndarray
    counts: np.ndarray
    N: float

    @property
    def n(self) -> float:
        return float((self.sizes * self.counts).sum())

    @property
    def u(self) -> float:
        return float(self.counts.sum())

    def classes_of_size(self, size: int) -> float:
        return float(self.counts[self.sizes == size].sum())

    @property
    def f(self) -> float:
        return self.n / self.N


def _log_hypergeom_p1(N: float, size: np.ndarray, n: float) -> np.ndarray:
    """log P(X = 1), X ~ Hypergeometric(population N, successes ``size``, draws n)."""

    def log_binom(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
        return gammaln(np.asarray(a) + 1) - gammaln(np.asarray(b) + 1) - gammaln(
            np.asarray(a) - np.asarray(b) + 1)

    size = size.astype(float)
    ok = N - size >= n - 1
    out = np.full(len(size), -np.inf)
    out[ok] = np.log(size[ok]) + log_binom(N - size[ok], n - 1) - log_binom(N, n)
    return out


def zayatz(h: Histogram) -> Estimate:
    """Zayatz (1991): c1 · P(population unique | sample unique) / f.

    P = (c1/u)·H(1; N, 1, n) / Σ_i (u_i/u)·H(1; N, i, n), with H(1; N, i, n) the
    hypergeometric probability of drawing exactly one of i marked records in a sample of n
    from N (ARX's ``ModelZayatz``).
    """
    c1 = h.classes_of_size(1)
    if c1 == 0:
        return Estimate(0.0)
    logs = _log_hypergeom_p1(h.N, h.sizes, h.n)
    top = logs.max()
    denom = float((h.counts / h.u * np.exp(logs - top)).sum())
    p1 = float(np.exp(_log_hypergeom_p1(h.N, np.array([1]), h.n)[0] - top))
    if denom <= 0:
        return Estimate(None, "Zayatz: every hypergeometric term is 0")
    return Estimate(c1 * ((c1 / h.u) * p1 / denom) / h.f)


def _newton(fun: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], start: np.ndarray,
            feasible: Callable[[np.ndarray], bool], max_iterations: int,
            accuracy: float) -> tuple[np.ndarray | None, int]:
    """2-D Newton–Raphson with step halving to stay feasible; (root or None, iterations)."""
    x = start.astype(float)
    for it in range(1, max_iterations + 1):
        with np.errstate(all="ignore"):
            value, jac = fun(x)
        if not np.all(np.isfinite(value)) or not np.all(np.isfinite(jac)):
            return None, it
        if np.max(np.abs(value)) <= accuracy:
            return x, it
        try:
            step = np.linalg.solve(jac, value)
        except np.linalg.LinAlgError:
            return None, it
        for _ in range(30):
            nxt = x - step
            if feasible(nxt):
                break
            step = step / 2
        else:
            return None, it
        x = nxt
    return None, max_iterations


def _tries(starts: list[np.ndarray], solve: Callable[[np.ndarray, int],
                                                     tuple[np.ndarray | None, int]],
           per_try: int, total: int) -> tuple[np.ndarray | None, int]:
    """Run ``solve`` from each start until one converges or ``total`` iterations are spent."""
    spent = 0
    for s in starts:
        if spent >= total:
            break
        root, it = solve(s, min(per_try, total - spent))
        spent += it
        if root is not None:
            return root, spent
    return None, spent


def _pitman_equations(h: Histogram) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Score equations of the Pitman sampling formula's likelihood in (θ, α) and their Jacobian.

    F1 = Σ_{i<u} 1/(θ+iα) − Σ_{i<n} 1/(θ+i),
    F2 = Σ_{i<u} i/(θ+iα) − Σ_classes Σ_{j<size} 1/(j−α) (Hoshino 2001), in closed form with
    the digamma and trigamma functions.
    """
    u, n = h.u, h.n
    big = h.sizes > 1
    sizes, counts = h.sizes[big].astype(float), h.counts[big].astype(float)

    idx = np.arange(1, max(int(u), 1), dtype=float)

    def fun(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t, a = float(x[0]), float(x[1])
        if not (t >= 0 and a < 1):  # 1 - α must stay positive for the class sums
            return np.full(2, np.nan), np.full((2, 2), np.nan)
        if a > 0:  # closed forms in θ/α
            xa = t / a
            o1 = (digamma(xa + u) - digamma(xa + 1)) / a
            s2 = (polygamma(1, xa + 1) - polygamma(1, xa + u)) / (a * a)
            o3 = ((u - 1) - t * o1) / a
            s3 = (o1 - t * s2) / a
            s4 = (o3 - t * s3) / a
        else:  # the sums themselves (polygamma is slow at large negative arguments)
            inv = 1.0 / (t + idx * a)
            o1, o3 = inv.sum(), (idx * inv).sum()
            s2, s3, s4 = (inv * inv).sum(), (idx * inv * inv).sum(), (idx * idx * inv * inv).sum()
        o2 = digamma(t + n) - digamma(t + 1)
        d2 = polygamma(1, t + 1) - polygamma(1, t + n)
        o4 = float((counts * (digamma(sizes - a) - digamma(1 - a))).sum())
        d4 = float((counts * (polygamma(1, 1 - a) - polygamma(1, sizes - a))).sum())
        value = np.array([o1 - o2, o3 - o4])
        jac = np.array([[d2 - s2, -s3], [-s3, -s4 - d4]])
        return value, jac

    return fun


def pitman(h: Histogram, max_iterations: int = 100, total_iterations: int = 1500,
           accuracy: float = ACCURACY, compat_arx: bool = False) -> Estimate:
    """Pitman (1996) / Hoshino (2001): Γ(θ+1)/Γ(θ+α)·N^α at the ML estimate of (θ, α).

    Newton–Raphson from ARX's start values (from c1 and c2, c2 := 1 when 0; α := 0.5 when
    outside (0, 1)), then from deterministic rescalings of θ; the iterates must stay in the
    model's range θ ≥ 0, 0 < α < 1. ``compat_arx`` only requires θ ≥ 0 (and α < 1), as ARX,
    and keeps ARX's start α. Not available when no start converges, α = 0, or the estimate is
    outside [0, N] (as ARX's ``ModelPitman``).
    """
    # numpy scalars: a zero denominator below gives inf/nan (rejected starts), not an error
    c1, c2, u, n = (np.float64(v) for v in (h.classes_of_size(1), h.classes_of_size(2), h.u,
                                            h.n))
    if c1 == 0:
        return Estimate(0.0)
    c2 = c2 if c2 != 0 else np.float64(1.0)
    c = c1 * (c1 - 1) / c2
    with np.errstate(all="ignore"):
        t0 = (n * u * c - c1 * (n - 1) * (2 * u + c)) / (2 * c1 * u + c1 * c - n * c)
        a0 = (t0 * (c1 - n) + (n - 1) * c1) / (n * u)
    fun = _pitman_equations(h)
    if not compat_arx and not 0 < a0 < 1:
        a0 = 0.5
    starts = [np.array([t0 * s, a0]) for s in (1.0, 0.5, 2.0, 0.1, 10.0)]
    starts = [s for s in starts if np.all(np.isfinite(s)) and s[0] >= 0] or [
        np.array([1.0, a0])]
    root, spent = _tries(
        starts, lambda s, it: _newton(fun, s, lambda x: x[0] >= 0 and (
            x[1] < 1 if compat_arx else 0 < x[1] < 1), it, accuracy),
        max_iterations, total_iterations)
    if root is None:
        return Estimate(None, f"Pitman: Newton-Raphson did not converge within {spent} "
                              "iterations", spent)
    t, a = float(root[0]), float(root[1])
    params = {"theta": t, "alpha": a}
    if a == 0 or t + a <= 0:
        return Estimate(None, "Pitman: alpha = 0 at the solution", spent, params)
    log_value = float(gammaln(t + 1) - gammaln(t + a)) + a * math.log(h.N)
    value = math.exp(log_value) if log_value < 700 else math.inf
    if not 0 <= value <= h.N:
        return Estimate(None, f"Pitman: estimate {value:.6g} outside [0, N]", spent, params)
    return Estimate(value, None, spent, params)


def snb_classes(h: Histogram, compat_arx: bool = False) -> float:
    """Estimated number K of non-empty population classes (for SNB).

    K = u + c1·(A/B)·(C/D)², A = Σ i·f²(1−f²)^{i−1}·u_i, B = Σ (1−f)^i(1+f)^i·u_i,
    C = Σ (1−f)^i·u_i, D = Σ i·f(1−f)^{i−1}·u_i. ARX's ``estimateNonEmptyEquivalenceClasses``
    subtracts 1 from B per histogram entry (``compat_arx``). B's terms are computed as
    (1−f²)^i: ARX's product (1−f)^i·(1+f)^i overflows to 0·∞ = NaN for classes of more than
    about 1,750 records at f = 0.5.
    """
    f = h.f
    i, ui = h.sizes.astype(float), h.counts.astype(float)
    a = (i * f * f * (1 - f * f) ** (i - 1) * ui).sum()
    b = ((1 - f * f) ** i * ui).sum() - (len(i) if compat_arx else 0)
    c = ((1 - f) ** i * ui).sum()
    d = (i * f * (1 - f) ** (i - 1) * ui).sum()
    with np.errstate(all="ignore"):
        return float(h.u + h.classes_of_size(1) * (a / b) * (c / d) ** 2)


def snb(h: Histogram, max_iterations: int = 100, total_iterations: int = 1500,
        accuracy: float = ACCURACY, compat_arx: bool = False) -> Estimate:
    """Shifted negative binomial (Chen & McNulty 1998): K·β^α population uniques.

    Population class sizes are 1 + NegBin(α, β) over K non-empty classes (K from
    :func:`snb_classes`), each record sampled with probability f. (α, β) solve the moment
    equations for the expected numbers of sample uniques and pairs, with d = (1−f)(1−β):
    K·f·(β/(1−d))^α·(1 + α·d/(1−d)) = c1 and
    K·α·β^α·f²·(1−β)/2·(1−d)^{−(α+2)}·(2 − (1−α)·d) = c2 (both from the probability
    generating function of the negative binomial). ARX's ``ModelSNB`` (``compat_arx``) uses
    (1−d)^{+(α+2)} in the second equation and its variant of K. Newton–Raphson (numerical
    Jacobian) from a fixed grid of starts with α > 0, 0 < β < 1; not available when none
    converges or K·β^α is outside (0, N]. When f = 1 the sample is the population and the
    estimate is c1.
    """
    c1, c2 = h.classes_of_size(1), h.classes_of_size(2)
    if c1 == 0:
        return Estimate(0.0)
    if h.f >= 1 and not compat_arx:  # the sample is the population
        return Estimate(c1)
    k = snb_classes(h, compat_arx)
    f = h.f
    sign = 1.0 if compat_arx else -1.0
    if not np.isfinite(k) or k <= 0:
        return Estimate(None, f"SNB: estimated number of population classes {k} is not "
                              "positive")

    def equations(x: np.ndarray) -> np.ndarray:
        a, b = x
        d = (1 - f) * (1 - b)
        e1 = k * f * (b / (1 - d)) ** a * (a * d / (1 - d) + 1) - c1
        e2 = (k * a * b ** a * f * f * (1 - b) / 2 * (1 - d) ** (sign * (a + 2))
              * (2 - (1 - a) * d) - c2)
        return np.array([e1, e2])

    def fun(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        value = equations(x)
        jac = np.empty((2, 2))
        for j in range(2):
            hstep = 1e-7 * max(abs(x[j]), 1e-3)
            up, down = x.copy(), x.copy()
            up[j] += hstep
            down[j] -= hstep
            jac[:, j] = (equations(up) - equations(down)) / (2 * hstep)
        return value, jac

    starts = [np.array([a, b]) for a in (1.0, 0.5, 2.0, 0.1, 5.0) for b in (0.5, 0.1, 0.9)]
    root, spent = _tries(
        starts, lambda s, it: _newton(fun, s, lambda x: x[0] > 0 and 0 < x[1] < 1, it,
                                      accuracy * max(c1, 1.0)),
        max_iterations, total_iterations)
    if root is None:
        return Estimate(None, f"SNB: Newton-Raphson did not converge within {spent} "
                              "iterations", spent, {"K": k})
    a, b = float(root[0]), float(root[1])
    value = k * b ** a
    params = {"K": k, "alpha": a, "beta": b}
    if not 0 < value <= h.N:
        return Estimate(None, f"SNB: estimate {value:.6g} outside (0, N]", spent, params)
    return Estimate(value, None, spent, params)
