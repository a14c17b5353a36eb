"""What the ME synthesizers share: the ``n`` param, entropies on the original scale, details.

Entropy under a coordinatewise one-to-one transform y = g⁻¹(x) (Ebrahimi, Soofi & Soyer 2008;
Pflughoeft et al.'s formula below Table 3):

    H(Y) = H(X) + E[Σ_k log |dy_k/dx_k|],

with log |dy/dx| = x for ``log`` and ``log1p`` (so H(Y_k) = H(X_k) + μ_k), 0 for ``identity``
and (1/λ − 1)·log(1 + λx) for ``boxcox``. Mutual information and KL divergence are invariant
under such transforms (Pflughoeft et al., Section 4.1.3), so they are reported once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import Microdata, Params, SynthesisResult
from anoneval.plugins._shared.continuous import (
    ColumnsParams,
    FittedTransform,
    backward,
    information_summary,
)


def replica_n() -> Any:
    """The ``n`` param of every synthesizer: the replica's size."""
    return Field(default=None, ge=1, description="Rows to generate; null = as many as the "
                                                 "original has.")


class SynthParams(ColumnsParams):
    """Columns and transforms (shared with the inspections) plus the replica size."""

    n: int | None = replica_n()


class MixedSynthParams(Params):
    """Columns and replica size of the synthesizers that model categories too."""

    columns: list[str] | None = Field(
        None, min_length=1, description="Columns to model; null = every column the "
                                        "synthesizer can model (see its description).")
    n: int | None = replica_n()


def replica_size(params: SynthParams | MixedSynthParams, original: Microdata) -> int:
    return int(params.n) if params.n is not None else len(original)


def log_jacobian(x: np.ndarray, fitted: FittedTransform) -> np.ndarray:
    """log |dy/dx| of the back-transform at transformed values ``x`` (NaN outside its domain)."""
    if fitted.kind == "identity":
        return np.zeros_like(x, dtype=float)
    if fitted.kind in ("log", "log1p"):
        return np.asarray(x, dtype=float)
    lam = float(fitted.lam or 0.0)
    x = np.asarray(x, dtype=float)
    if lam == 0.0:  # Box-Cox at λ = 0 is the log transform
        return x.copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        inner = 1.0 + lam * x
        return np.where(inner > 0, (1.0 / lam - 1.0) * np.log(inner), np.nan)


def original_scale_shift(fitted: Sequence[FittedTransform], means: np.ndarray,
                         draws: np.ndarray | None) -> tuple[np.ndarray, str]:
    """E[log |dy_k/dx_k|] per column under the model, and how it was obtained.

    Exact (the model mean) for identity/log/log1p; for boxcox the mean over ``draws`` from the
    model (Monte Carlo), NaN when draws fall outside the inverse's domain.
    """
    out = np.zeros(len(fitted))
    how = "exact"
    for k, f in enumerate(fitted):
        if f.kind in ("log", "log1p"):
            out[k] = means[k]
        elif f.kind == "boxcox":
            how = "monte_carlo"
            out[k] = float(np.mean(log_jacobian(draws[:, k], f))) if draws is not None \
                else np.nan
    return out, how


def information_details(columns: Sequence[str], marginal: Sequence[float], joint: float,
                        shift: np.ndarray, how: str,
                        pairwise: dict[str, float] | None = None) -> dict[str, Any]:
    """Entropies (transformed and original scale), mutual information, M and coin indices.

    ``mutual_information`` is the total correlation Σ H(X_k) − H(X) (Pflughoeft et al., eq. 19),
    for two
    columns the mutual information M(X₁, X₂); ``m_index`` = 1 − e^(−2M) (eq. 18) and
    ``coin_index`` = ½(1 + √(1 − e^(−2M))) (eq. 15). All in nats.
    """
    cols = list(columns)
    out: dict[str, Any] = {
        "entropy": {"scale": "transformed", "marginal": dict(zip(cols, map(float, marginal),
                                                                 strict=True)),
                    "joint": float(joint)},
        "entropy_original_scale": {
            "method": how,
            "marginal": dict(zip(cols, (float(h + s) for h, s in zip(marginal, shift,
                                                                        strict=True)),
                                 strict=True)),
            "joint": float(joint + np.sum(shift)),
        },
    }
    if len(cols) >= 2:
        out.update(information_summary(max(float(np.sum(marginal) - joint), 0.0)))
        if pairwise is not None and len(cols) > 2:
            out["pairwise_mutual_information"] = pairwise
    else:
        out.update(information_summary(None))
    return out


def back_transform(draws: np.ndarray, fitted: Sequence[FittedTransform]
                   ) -> tuple[np.ndarray, list[str]]:
    """Model draws back on the original scale (:func:`backward`), with a warning counting the
    values outside the back-transform's domain (Box-Cox 1 + λx ≤ 0), which are NaN."""
    values = backward(draws, fitted)
    bad = int(np.count_nonzero(~np.isfinite(values)))
    return values, ([f"{bad} generated values fall outside the back-transform's domain "
                     "(Box-Cox 1 + λx ≤ 0) and are NaN"] if bad else [])


def pair_key(a: str, b: str) -> str:
    return f"{a} | {b}"


def frame_from(values: np.ndarray, columns: Sequence[str]) -> pd.DataFrame:
    """The replica as a frame of floats (a model draw is not an integer even if the input was)."""
    return pd.DataFrame(np.asarray(values, dtype=float), columns=list(columns))


def replica_result(columns: Sequence[str], fitted: Sequence[FittedTransform], draws: np.ndarray,
                   centre: np.ndarray, marginal: Sequence[float], joint: float,
                   pair_information: Callable[[int, int], float],
                   details: dict[str, Any]) -> SynthesisResult:
    """A closed-form continuous model's replica on the original scale, with ``details`` (the
    model's own) followed by the columns, transforms, entropies and mutual information
    (:func:`information_details`; ``centre`` the model mean for the original-scale shift,
    ``pair_information(a, b)`` the mutual information of columns a and b)."""
    cols = list(columns)
    values, warnings = back_transform(draws, fitted)
    shift, how = original_scale_shift(fitted, centre, draws)
    pairwise = {pair_key(cols[a], cols[b]): pair_information(a, b)
                for a in range(len(cols)) for b in range(a + 1, len(cols))}
    out = {"model": details.pop("model"), "columns": cols,
           "transforms": [f.to_dict() for f in fitted], **details,
           **information_details(cols, marginal, joint, shift, how, pairwise),
           "n": len(draws)}
    return SynthesisResult(data=Microdata(frame_from(values, cols)), details=out,
                           warnings=warnings)
