"""Helpers shared by the continuous-data families: column selection, transforms, closed forms.

Used by ``synthesizers``, ``fidelity`` and ``similarity``. Source: Pflughoeft, Soofi & Soyer
(2022), "Information Architecture for Data Disclosure", Entropy 24(5):670. Equation numbers
below are the paper's. Logarithms are natural (entropies and divergences in nats).

Every ME synthesizer and inspection works on the *transformed* scale of the paper's Task 2
(x = g_k(y), one one-to-one transform per column): :func:`forward` maps the selected columns of
a frame to an ``n × d`` float array, :func:`backward` maps generated values back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    MeasureResult,
    Microdata,
    Params,
    data_row,
    repeated,
)

Transform = Literal["identity", "log", "log1p", "boxcox"]
TRANSFORMS: tuple[str, ...] = ("identity", "log", "log1p", "boxcox")


class ColumnsParams(Params):
    """Params shared by every ME synthesizer and inspection: columns and their transforms."""

    columns: list[str] | None = Field(
        default=None,
        min_length=1,
        description="Continuous columns to model or compare; null = every numeric column.",
    )
    transform: Transform | dict[str, Transform] = Field(
        default="identity",
        description=(
            "Task 2's one-to-one transform x = g(y), one name for all columns or a mapping "
            "column -> name (unlisted columns: identity). identity | log | log1p | boxcox "
            "(Box-Cox λ fitted by maximum likelihood on the original)."
        ),
    )


def is_continuous(series: pd.Series) -> bool:
    """Numeric and not boolean (booleans count as categorical)."""
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))


def check_unique(columns: Sequence[str]) -> None:
    """A :class:`DataError` naming the columns listed more than once."""
    columns = list(columns)
    dup = repeated(columns)
    if dup:
        raise DataError(f"columns listed twice: {', '.join(map(repr, dup))}")


def select_columns(
    data: Microdata, columns: Sequence[str] | None, what: str = "model"
) -> list[str]:
    """The columns to use: the given ones (required, numeric) or every numeric column.

    Raises a :class:`DataError` naming missing columns, or categorical / non-numeric columns
    ("categorical columns passed to a continuous <what>"). Booleans count as categorical.
    """
    frame = data.frame
    if columns is None:
        chosen = [str(c) for c in frame.columns if is_continuous(frame[c])]
        if not chosen:
            raise DataError(
                f"no numeric columns to pass to a continuous {what}; the columns are: "
                f"{', '.join(map(str, frame.columns))}"
            )
        return chosen
    chosen = list(columns)
    check_unique(chosen)
    data.require(chosen, "column")
    bad = [c for c in chosen if not is_continuous(frame[c])]
    if bad:
        kinds = ", ".join(f"{c!r} ({frame[c].dtype})" for c in bad)
        raise DataError(
            f"categorical columns passed to a continuous {what}: {kinds}; pass numeric "
            f"columns only (or use MaxEntCategorical / GaussianCopula for categorical ones)"
        )
    return chosen


@dataclass(frozen=True)
class FittedTransform:
    """One column's transform, with Box-Cox's λ when fitted (on the original data)."""

    column: str
    kind: Transform
    lam: float | None = None

    def forward(self, y: np.ndarray) -> np.ndarray:
        """x = g(y). The domain is checked by :func:`forward`."""
        if self.kind == "identity":
            return y.astype(np.float64, copy=True)
        if self.kind == "log":
            return np.log(y)
        if self.kind == "log1p":
            return np.log1p(y)
        from scipy.special import boxcox

        return np.asarray(boxcox(y, self.lam), dtype=np.float64)

    def backward(self, x: np.ndarray) -> np.ndarray:
        """y = g⁻¹(x). Box-Cox values outside the inverse's domain (1 + λx ≤ 0) give NaN."""
        x = np.asarray(x, dtype=np.float64)
        if self.kind == "identity":
            return x.copy()
        if self.kind == "log":
            return np.exp(x)
        if self.kind == "log1p":
            return np.expm1(x)
        from scipy.special import inv_boxcox

        return np.asarray(inv_boxcox(x, self.lam), dtype=np.float64)

    def label(self) -> str:
        """x = g(y) spelled out for plot axes: ``loan``, ``log(loan)``, ``log(1 + loan)``,
        ``boxcox(loan; λ=0.12)``."""
        if self.kind == "identity":
            return self.column
        if self.kind == "log1p":
            return f"log(1 + {self.column})"
        if self.kind == "boxcox":
            return f"boxcox({self.column}; λ={self.lam:.3g})"
        return f"{self.kind}({self.column})"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"column": self.column, "transform": self.kind}
        if self.lam is not None:
            out["lambda"] = self.lam
        return out


def resolve_transforms(
    columns: Sequence[str], transform: Transform | Mapping[str, Transform]
) -> dict[str, Transform]:
    """Each column's transform name; a mapping naming an unselected column is an error."""
    if isinstance(transform, str):
        return {c: transform for c in columns}  # type: ignore[misc]
    unknown = [c for c in transform if c not in columns]
    if unknown:
        raise DataError(
            f"transform given for column(s) {', '.join(map(repr, unknown))} that are not "
            f"among the selected columns: {', '.join(columns)}"
        )
    return {c: transform.get(c, "identity") for c in columns}


def _domain_error(column: str, kind: str, bad: int, n: int, rule: str) -> DataError:
    return DataError(
        f"column {column!r}: {kind} transform needs {rule}, but {bad} of {n} values "
        f"are not; choose another transform (identity, log, log1p, boxcox) or clean the column"
    )


def check_domain(column: str, kind: Transform, y: np.ndarray) -> None:
    """A :class:`DataError` naming the column and the count of values outside the domain."""
    n = len(y)
    if kind in ("log", "boxcox"):
        bad = int(np.count_nonzero(~(y > 0)))
        if bad:
            raise _domain_error(column, kind, bad, n, "positive values (> 0)")
    elif kind == "log1p":
        bad = int(np.count_nonzero(~(y > -1)))
        if bad:
            raise _domain_error(column, kind, bad, n, "values > -1")


def fit_transform(column: str, kind: Transform, y: np.ndarray) -> FittedTransform:
    """Check ``y`` against the transform's domain and fit Box-Cox's λ (scipy MLE)."""
    n = len(y)
    check_domain(column, kind, y)
    if kind != "boxcox":
        return FittedTransform(column, kind)
    from scipy import stats

    if n < 2 or np.all(y == y[0]):
        raise DataError(f"column {column!r}: boxcox transform needs at least two distinct values")
    lam = float(stats.boxcox_normmax(y, method="mle"))
    return FittedTransform(column, kind, lam)


def finite_values(frame: pd.DataFrame, column: str) -> np.ndarray:
    """The column as float64 (no copy of a float64 column); a missing or infinite value is a
    :class:`DataError` naming the column, the count and the first row."""
    try:
        y = frame[column].to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise DataError(f"column {column!r} is not numeric: {exc}") from exc
    # the sum is finite when every value is (one SIMD pass); else (or on overflow) look
    bad = [] if np.isfinite(np.add.reduce(y)) else np.flatnonzero(~np.isfinite(y))
    if len(bad):
        raise DataError(
            f"column {column!r} has {len(bad):,} missing or infinite values of {len(y):,}, the "
            f"first at {data_row(bad[0])}; continuous models and distances need complete, "
            "finite numbers (drop or impute those rows first)")
    return y


def forward(
    frame: pd.DataFrame,
    columns: Sequence[str],
    transform: Transform | Mapping[str, Transform] | Sequence[FittedTransform],
    order: Literal["C", "F"] = "C",
) -> tuple[np.ndarray, list[FittedTransform]]:
    """The selected columns on the transformed scale (an ``n × d`` float array) and the fits.

    ``transform`` is a name, a mapping column -> name (Box-Cox λ is then fitted on ``frame``),
    or a list of :class:`FittedTransform` from an earlier call (to put a replica on the
    original's scale with the original's λ). Missing or infinite values are a
    :class:`DataError` naming the column and the count, as are values outside a transform's
    domain (log and boxcox: > 0; log1p: > -1). ``order="F"`` keeps each column contiguous
    (for measures working column by column: no strided writes or reads).
    """
    columns = list(columns)
    if isinstance(transform, (str, Mapping)):
        kinds = resolve_transforms(columns, transform)  # type: ignore[arg-type]
        fitted: list[FittedTransform] | None = None
    else:
        fitted = list(transform)
        if [f.column for f in fitted] != columns:
            raise ValueError("fitted transforms do not match the columns")
    X = np.empty((len(frame), len(columns)), dtype=np.float64, order=order)
    out: list[FittedTransform] = []
    for j, c in enumerate(columns):
        y = finite_values(frame, c)
        if fitted is not None:
            f = fitted[j]
            check_domain(c, f.kind, y)
        else:
            f = fit_transform(c, kinds[c], y)
        X[:, j] = y if f.kind == "identity" else f.forward(y)
        out.append(f)
    return X, out


def backward(X: np.ndarray, fitted: Sequence[FittedTransform]) -> np.ndarray:
    """Inverse of :func:`forward`: transformed values back to the original scale."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != len(fitted):
        raise ValueError(f"expected an n × {len(fitted)} array, got shape {X.shape}")
    if not fitted:
        return X.copy()
    return np.column_stack([f.backward(X[:, j]) for j, f in enumerate(fitted)])


# ---------------------------------------------------------------------------------------------
# Closed forms for normal ME models and the information indices
# ---------------------------------------------------------------------------------------------


def _names(columns: Sequence[str] | None, d: int) -> list[str]:
    return list(columns) if columns is not None else [f"column {j}" for j in range(d)]


def check_covariance(cov: np.ndarray, columns: Sequence[str] | None = None) -> np.ndarray:
    """Return ``cov`` as a float matrix; a singular one is a :class:`DataError`.

    The error names the constant columns (zero variance) or the collinear ones: the columns
    with a non-negligible loading on a null eigenvector of the correlation matrix.
    """
    cov = np.atleast_2d(np.asarray(cov, dtype=np.float64))
    d = cov.shape[0]
    if cov.shape != (d, d):
        raise ValueError(f"covariance must be square, got shape {cov.shape}")
    names = _names(columns, d)
    if not np.all(np.isfinite(cov)):
        raise DataError("the covariance matrix has non-finite entries")
    var = np.diag(cov)
    const = [names[j] for j in range(d) if not var[j] > 0]
    if const:
        raise DataError(
            f"singular covariance: column(s) {', '.join(map(repr, const))} have zero variance "
            f"(constant on the transformed scale); drop them from `columns`"
        )
    sd = np.sqrt(var)
    corr = cov / np.outer(sd, sd)
    w, v = np.linalg.eigh(corr)
    tol = 1e-10 * max(d, 1)
    null = w <= tol
    if null.any():
        load = np.abs(v[:, null]).max(axis=1)
        involved = [names[j] for j in range(d) if load[j] > 1e-6]
        raise DataError(
            f"singular covariance: columns {', '.join(map(repr, involved))} are collinear "
            f"(one is an exact linear combination of the others on the transformed scale); "
            f"drop one of them from `columns`"
        )
    return cov


def normal_entropy(cov: np.ndarray, columns: Sequence[str] | None = None) -> float:
    """Entropy (nats) of the normal ME model N(μ, Σ): d/2·log(2πe) + ½·log|Σ|.

    Eq. (31) of Pflughoeft et al. (its bivariate case, H = 1 + log 2π + ½ log|Σ|), the entropy (6)
    of
    the ME model whose information moments are means and covariances (Table A3).
    """
    cov = check_covariance(cov, columns)
    d = cov.shape[0]
    _, logdet = np.linalg.slogdet(cov)
    return float(0.5 * d * (1.0 + math.log(2.0 * math.pi)) + 0.5 * logdet)


def normal_mutual_information(cov: np.ndarray, columns: Sequence[str] | None = None) -> float:
    """Mutual information (nats) of N(μ, Σ): Σ_k H(f_k) − H(f) = −½·log det R.

    R is the correlation matrix. Eqs. (17)/(19) of Pflughoeft et al. with (31); for two columns
    this is
    eq. (32), M = −½·log(1 − ρ²).
    """
    cov = check_covariance(cov, columns)
    sd = np.sqrt(np.diag(cov))
    _, logdet = np.linalg.slogdet(cov / np.outer(sd, sd))
    return float(max(-0.5 * logdet, 0.0))


def normal_kl(
    mu1: np.ndarray,
    cov1: np.ndarray,
    mu2: np.ndarray,
    cov2: np.ndarray,
    columns: Sequence[str] | None = None,
) -> float:
    """K(N₁ : N₂) in nats, eq. (33) of Pflughoeft et al..

    K = ½(μ₁ − μ₂)ᵀΣ₂⁻¹(μ₁ − μ₂) + ½[tr(Σ₁Σ₂⁻¹) − log|Σ₁Σ₂⁻¹| − d].
    """
    cov1 = check_covariance(cov1, columns)
    cov2 = check_covariance(cov2, columns)
    d = cov1.shape[0]
    diff = np.atleast_1d(np.asarray(mu1, dtype=np.float64) - np.asarray(mu2, dtype=np.float64))
    solve = np.linalg.solve(cov2, np.column_stack([cov1, diff]))
    a = solve[:, :d]
    quad = float(diff @ solve[:, d])
    _, logdet1 = np.linalg.slogdet(cov1)
    _, logdet2 = np.linalg.slogdet(cov2)
    return float(max(0.5 * quad + 0.5 * (np.trace(a) - (logdet1 - logdet2) - d), 0.0))


def m_index(M: float) -> float:
    """Information index of dependence δ²(M) = 1 − e^(−2M), eq. (18); for normals, = ρ²."""
    return float(-math.expm1(-2.0 * M))


def information_index(K: float) -> float:
    """Information index δ²(K) = 1 − e^(−2K) of a KL divergence K, eq. (14); in [0, 1]."""
    return float(-math.expm1(-2.0 * K))


def coin_index(delta2: float) -> float:
    """McCulloch's coin calibration q = ½(1 + √δ²), eq. (15), q in [0.5, 1].

    Discriminating the two distributions is as hard as telling a fair coin from one with
    P(heads) = q.
    """
    return float(0.5 * (1.0 + math.sqrt(min(max(delta2, 0.0), 1.0))))


def information_summary(mi: float | None) -> dict[str, float | None]:
    """Mutual information M (nats) with its M index δ²(M) (eq. 18) and coin index (eq. 15).

    ``None`` (no dependence to measure, e.g. one column) gives ``None`` for all three.
    """
    if mi is None:
        return {"mutual_information": None, "m_index": None, "coin_index": None}
    delta2 = m_index(mi)
    return {"mutual_information": mi, "m_index": delta2, "coin_index": coin_index(delta2)}


def divergence_summary(k: float) -> dict[str, float]:
    """A KL divergence K (nats) with its information index δ²(K) (eq. 14; 1 for K = inf) and
    coin index (eq. 15)."""
    delta2 = information_index(k) if math.isfinite(k) else 1.0
    return {"kl": k, "information_index": delta2, "coin_index": coin_index(delta2)}


# ---------------------------------------------------------------------------------------------
# Actual / replica pairs on the transformed scale
# ---------------------------------------------------------------------------------------------

Scale = Literal["none", "std"]


class ReplicaComparison:
    """Mixin of the measures comparing the actual data (original) with a replica (anonymized)
    on continuous columns, placed before ``LossMeasure`` or ``RiskMeasure`` in the bases:
    ``compute`` puts both sides on the actual's transformed scale (:func:`paired`) and
    :meth:`from_columns` measures."""

    name: ClassVar[str]
    params: ColumnsParams
    #: Memory layout of the arrays handed to :meth:`from_columns` ("F": columns contiguous).
    order: ClassVar[Literal["C", "F"]] = "C"

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        X, Y, columns, _ = paired(original, anonymized, self.params, self.name, self.order)
        return self.from_columns(X, Y, columns, ctx)

    def numbers_only(self) -> bool:
        """By default the columns of a numeric dtype (:func:`select_columns`)."""
        return True

    def from_columns(self, X: np.ndarray, Y: np.ndarray, columns: list[str],
                     ctx: Context) -> MeasureResult:
        """The measure of the actual ``X`` and the replica ``Y`` (rows × ``columns``)."""
        raise NotImplementedError


def paired(
    original: Dataset | None,
    anonymized: Dataset | None,
    params: ColumnsParams,
    what: str = "inspection",
    order: Literal["C", "F"] = "C",
) -> tuple[np.ndarray, np.ndarray, list[str], list[FittedTransform]]:
    """Actual (original) and replica (anonymized) on the actual's transformed scale.

    The columns are chosen on the actual and required in the replica; the transforms (and
    Box-Cox's λ) are fitted on the actual and applied unchanged to the replica. ``order``:
    the arrays' memory layout (see :func:`forward`).
    """
    original, anonymized, columns = _pair_columns(original, anonymized, params, what)
    try:
        X, fitted = forward(original.frame, columns, params.transform, order)
    except DataError as exc:
        raise DataError(f"original data: {exc}") from exc
    try:
        Y, _ = forward(anonymized.frame, columns, fitted, order)
    except DataError as exc:
        raise DataError(f"anonymized data: {exc}") from exc
    _require_rows(len(X), len(Y))
    return X, Y, columns, fitted


def paired_columns(
    original: Dataset | None,
    anonymized: Dataset | None,
    params: ColumnsParams,
    what: str = "inspection",
) -> tuple[list[str], list[np.ndarray], list[np.ndarray]]:
    """The columns :func:`paired` selects and each side's values of each, as they lie (no
    ``n × d`` copy: a float64 column is read in place), with the same checks and errors, for
    measures that read column by column and need no transform (``params.transform`` must be
    "identity")."""
    if params.transform != "identity":
        raise ValueError("paired_columns reads the columns untransformed")
    original, anonymized, columns = _pair_columns(original, anonymized, params, what)
    sides = []
    for side, data in (("original", original), ("anonymized", anonymized)):
        try:
            sides.append([finite_values(data.frame, c) for c in columns])
        except DataError as exc:
            raise DataError(f"{side} data: {exc}") from exc
    _require_rows(len(original), len(anonymized))
    return columns, sides[0], sides[1]


def _pair_columns(original: Dataset | None, anonymized: Dataset | None, params: ColumnsParams,
                  what: str) -> tuple[Microdata, Microdata, list[str]]:
    """Both sides, microdata, and the columns chosen on the original and required in both."""
    if original is None or anonymized is None:
        raise DataError(f"this {what} compares the actual data (original) with the replica "
                        f"(anonymized): give both")
    for side, data in (("original", original), ("anonymized", anonymized)):
        if not isinstance(data, Microdata):
            raise DataError(f"this {what} compares microdata; the {side} data is a "
                            f"{data.data_kind}")
    columns = select_columns(original, params.columns, what)
    anonymized.require(columns, "column")
    select_columns(anonymized, columns, what)
    return original, anonymized, columns


def _require_rows(n_original: int, n_anonymized: int) -> None:
    if n_original == 0 or n_anonymized == 0:
        side = "original" if n_original == 0 else "anonymized"
        raise DataError(f"the {side} data has no rows")


def scale_pair(X: np.ndarray, Y: np.ndarray, scale: Scale, columns: Sequence[str]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Divide both samples by the actual's standard deviations when ``scale == "std"``.

    Returns the scaled pair and the divisors (ones for "none"). A constant actual column
    cannot be standardized: a :class:`DataError` names it.
    """
    if scale == "none":
        return X, Y, np.ones(X.shape[1])
    sd = X.std(axis=0, ddof=1) if len(X) > 1 else np.zeros(X.shape[1])
    const = [c for c, s in zip(columns, sd, strict=True) if not s > 0]
    if const:
        raise DataError(f"cannot standardize constant column(s) {', '.join(map(repr, const))}")
    return X / sd, Y / sd, sd


# ---------------------------------------------------------------------------------------------
# Grid densities: Pflughoeft et al.'s semi-parametric measures (Section 3.3, eqs. 21-26)
# ---------------------------------------------------------------------------------------------


def rule_of_thumb_bandwidth(X: np.ndarray) -> np.ndarray:
    """h_k = 1.06·σ_k·n^(−1/5) per column (Pflughoeft et al., Section 4.1.2; σ with ddof=1)."""
    X = np.atleast_2d(X)
    n = X.shape[0]
    sd = X.std(axis=0, ddof=1) if n > 1 else np.zeros(X.shape[1])
    return 1.06 * sd * n ** (-0.2)


def grid_axes(lo: np.ndarray, hi: np.ndarray, points: int) -> list[np.ndarray]:
    """Equally spaced grid ξ_k0 < … < ξ_kA per dimension, eq. (21)."""
    return [np.linspace(a, b, points) for a, b in zip(lo, hi, strict=True)]


def kde_on_grid(X: np.ndarray, h: np.ndarray, axes: Sequence[np.ndarray],
                chunk: int = 4096) -> np.ndarray:
    """Product-Gaussian-kernel density of the rows of ``X`` at the grid points.

    f̃(ξ) = (1/n) Σ_i Π_k φ((ξ_k − x_ik)/h_k)/h_k. Computed as a sum over data chunks of outer
    products of per-dimension kernel matrices (a matrix product in 2-D), never n × grid³.
    """
    X = np.atleast_2d(X)
    n, d = X.shape
    if len(axes) != d:
        raise ValueError("one grid axis per column")
    out = np.zeros(tuple(len(a) for a in axes))
    letters = "abcdefgh"[:d]
    spec = ",".join(f"{c}i" for c in letters) + "->" + letters
    norm = 1.0 / math.sqrt(2.0 * math.pi)
    for s in range(0, n, chunk):
        part = X[s:s + chunk]
        mats = [norm / h[k] * np.exp(-0.5 * ((axes[k][:, None] - part[None, :, k]) / h[k]) ** 2)
                for k in range(d)]
        out += mats[0].sum(axis=1) if d == 1 else np.einsum(spec, *mats, optimize=True)
    return out / n


def log_kde_on_grid(X: np.ndarray, h: np.ndarray, axes: Sequence[np.ndarray],
                    neighbours: int = 64) -> np.ndarray:
    """log f̃ at the grid points, also in the far tails where f̃ underflows to 0.

    Grid points where :func:`kde_on_grid` gives less than 1e-250 are recomputed as
    logsumexp over the ``neighbours`` nearest kernel centres (in h-scaled distance) of
    −½·Σ_k ((ξ_k − x_ik)/h_k)², minus log n + Σ_k log(h_k·√(2π)). So far out, the nearest
    centres dominate: each farther one contributes at most the 64th's term. A grid KL against a
    kernel density is then finite wherever the density is positive in exact arithmetic.
    """
    from scipy.spatial import cKDTree
    from scipy.special import logsumexp

    X = np.atleast_2d(X)
    dens = kde_on_grid(X, h, axes)
    with np.errstate(divide="ignore"):
        out = np.log(dens)
    tiny = np.argwhere(dens < 1e-250)
    if len(tiny):
        pts = np.column_stack([axes[k][tiny[:, k]] for k in range(len(axes))]) / h
        k = min(neighbours, len(X))
        dist, _ = cKDTree(X / h).query(pts, k=k)
        dist = dist.reshape(len(pts), k)
        const = math.log(len(X)) + float(np.sum(np.log(h * math.sqrt(2.0 * math.pi))))
        out[tuple(tiny.T)] = logsumexp(-0.5 * dist**2, axis=1) - const
    return out


def trapezoid_weights(axes: Sequence[np.ndarray]) -> np.ndarray:
    """Product trapezoid weights w₁w₂… of the grid cells (half weight on the edges)."""
    w = np.ones(())
    for a in axes:
        if len(a) < 2:
            raise ValueError("a grid axis needs at least two points")
        wa = np.full(len(a), a[1] - a[0])
        wa[[0, -1]] *= 0.5
        w = np.multiply.outer(w, wa)
    return w


def grid_probabilities(density: np.ndarray, axes: Sequence[np.ndarray]) -> np.ndarray:
    """Normalized cell probabilities P_ab of eqs. (22)-(23): trapezoid mass, summing to one."""
    mass = density * trapezoid_weights(axes)
    total = mass.sum()
    if not total > 0:
        raise DataError("the density vanishes on the whole grid; widen the grid")
    return mass / total


def log_grid_probabilities(logdensity: np.ndarray, axes: Sequence[np.ndarray]) -> np.ndarray:
    """log P_ab from a log-density (no underflow in far tails), eqs. (22)-(23)."""
    from scipy.special import logsumexp

    logmass = logdensity + np.log(trapezoid_weights(axes))
    return logmass - logsumexp(logmass)


def grid_kl(P: np.ndarray, logQ: np.ndarray) -> float:
    """K(P : Q) = Σ P log(P/Q) over the grid cells, eq. (25); 0·log 0 = 0; inf if Q = 0 < P."""
    mask = P > 0
    if np.any(np.isneginf(logQ[mask])):
        return math.inf
    return float(max(np.sum(P[mask] * (np.log(P[mask]) - logQ[mask])), 0.0))


def grid_entropy(P: np.ndarray, axes: Sequence[np.ndarray]) -> float:
    """Histogram entropy estimate H ≈ −Σ P log P + log(w₁w₂…), eq. (26), in nats."""
    mask = P > 0
    logw = sum(math.log(a[1] - a[0]) for a in axes)
    return float(-np.sum(P[mask] * np.log(P[mask])) + logw)


def grid_mutual_information(P: np.ndarray) -> float:
    """M = Σ P log(P / Π_k P_k) over a 2-D (or d-D) grid, eq. (16) with grid marginals."""
    d = P.ndim
    prod = np.ones(())
    for k in range(d):
        prod = np.multiply.outer(prod, P.sum(axis=tuple(j for j in range(d) if j != k)))
    mask = P > 0
    return float(max(np.sum(P[mask] * np.log(P[mask] / prod[mask])), 0.0))


def normal_logpdf_on_grid(mu: np.ndarray, cov: np.ndarray, axes: Sequence[np.ndarray]
                          ) -> np.ndarray:
    """log N(ξ; μ, Σ) at every grid point."""
    from scipy import stats

    mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
    return np.asarray(stats.multivariate_normal(mean=mu, cov=cov).logpdf(mesh)).reshape(
        mesh.shape[:-1])


__all__ = [
    "TRANSFORMS", "ColumnsParams", "FittedTransform", "Scale", "Transform", "backward",
    "check_covariance", "check_domain", "check_unique", "coin_index", "divergence_summary",
    "finite_values", "fit_transform", "forward", "grid_axes", "grid_entropy", "grid_kl",
    "grid_mutual_information", "grid_probabilities", "information_index",
    "information_summary", "is_continuous", "kde_on_grid", "log_grid_probabilities",
    "log_kde_on_grid", "m_index", "normal_entropy", "normal_kl", "normal_logpdf_on_grid",
    "normal_mutual_information", "paired", "paired_columns", "resolve_transforms",
    "rule_of_thumb_bandwidth", "scale_pair", "select_columns", "trapezoid_weights",
]
