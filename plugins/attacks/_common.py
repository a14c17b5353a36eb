"""Shared statistics of the attacks: Wilson rates, the control-normalised risk, input checks.

Source: Giomi, Boenisch, Wehmeyer & Tasnádi (2023), "A Unified Framework for Quantifying
Privacy Risk in Synthetic Data", PoPETs 2023(2):312–328 (anonymeter). Each attack is run three
times: against the original records used to make the release (the *main* attack), against the
control records (held out of the release) and as a naive baseline that ignores the release's
structure. A rate with ``n_s`` successes in ``n`` attacks is the centre of the Wilson (1927)
score interval, with z = Φ⁻¹((1 + confidence_level)/2),

    p̃ = (n_s + z²/2) / (n + z²),   e = z / (n + z²) · √(n_s (n − n_s)/n + z²/4),

and the risk is the main attack's success in excess of the control's, normalised by what the
control attack leaves to gain,

    R = (p̃_main − p̃_control) / (1 − p̃_control),
    e_R = √[(e_main / (1 − p̃_c))² + (e_c (p̃_main − 1) / (1 − p̃_c)²)²]

(first-order error propagation). The value is R clipped to [0, 1]; its interval ``ci`` is
R ± e_R clipped to [0, 1] (anonymeter's ``risk().ci``). The linkability and inference rates
are per target, so an original and a control set of different sizes are compared as they are
(``n_attacks`` capped by each set's size); only the singling-out count grows with the size of
the set, and there the control count is brought to the original's size (see
:class:`~anoneval.plugins.attacks.singling_out.SinglingOut`), with its error over the control's
records added to the control rate's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from pydantic import Field
from scipy.stats import norm

from anoneval.core.api import (
    DataError,
    Dataset,
    MeasureResult,
    Microdata,
    Params,
    RiskMeasure,
    refuse_infinite,
)
from anoneval.plugins._control import checked_control


class AttackParams(Params):
    """Params every attack shares."""

    n_attacks: int = Field(500, ge=1, description="Number of attacks (queries or targets).")
    confidence_level: float = Field(0.95, gt=0, lt=1,
                                    description="Confidence level of the rates' errors and of "
                                                "the risk's interval.")


def wilson(n_success: float, n: int, confidence_level: float) -> tuple[float, float]:
    """Centre and half-width of the Wilson score interval (``n_success`` may be fractional)."""
    if n < 1:
        raise ValueError("a rate needs at least one attack")
    z = float(norm.ppf((1 + confidence_level) / 2))
    z2 = z * z
    centre = (n_success + z2 / 2) / (n + z2)
    spread = max(n_success * (n - n_success) / n, 0.0) + z2 / 4
    return centre, z / (n + z2) * math.sqrt(spread)


def risk(main: tuple[float, float], control: tuple[float, float]) -> tuple[float, float]:
    """R and its propagated error from the main and control (rate, error) pairs."""
    (p, e_p), (c, e_c) = main, control
    value = (p - c) / (1 - c)
    error = math.hypot(e_p / (1 - c), e_c * (p - 1) / (1 - c) ** 2)
    return value, error


def clip01(x: float) -> float:
    return min(max(x, 0.0), 1.0)


def attack_result(n_attacks: int, n_success: float, n_baseline: float, n_control: float,
                  confidence_level: float, n_control_attacks: int | None = None,
                  details: dict[str, Any] | None = None,
                  warnings: Sequence[str] = (),
                  control_sd: float = 0.0) -> MeasureResult:
    """The attack's MeasureResult: value = clipped risk, ci its interval, rates with errors.

    ``control_sd``: the standard deviation of an estimated ``n_control`` (a size-corrected
    count); its error at the level, z · ``control_sd`` / n, adds in quadrature to the control
    rate's Wilson error."""
    n_c = n_control_attacks or n_attacks
    main = wilson(n_success, n_attacks, confidence_level)
    base = wilson(n_baseline, n_attacks, confidence_level)
    ctrl = wilson(n_control, n_c, confidence_level)
    z = float(norm.ppf((1 + confidence_level) / 2))
    ctrl = ctrl[0], math.hypot(ctrl[1], z * control_sd / n_c)
    r, e = risk(main, ctrl)
    notes = list(warnings)
    if base[0] >= main[0]:
        notes.append(f"the naive baseline ({base[0]:.4g}) succeeds at least as often as the "
                     f"attack ({main[0]:.4g}): the attack is too weak for the risk to mean much")
    out = {
        "attack_rate": {"value": main[0], "error": main[1]},
        "baseline_rate": {"value": base[0], "error": base[1]},
        "control_rate": {"value": ctrl[0], "error": ctrl[1]},
        "risk_unclipped": r,
        "confidence_level": confidence_level,
        "n_attacks": n_attacks,
        "n_success": n_success,
        "n_baseline": n_baseline,
        "n_control": n_control,
        "n_control_attacks": n_c,
        **(details or {}),
    }
    return MeasureResult(value=clip01(r), ci=[clip01(r - e), clip01(r + e)], details=out,
                         warnings=notes)


def microdata(data: Dataset | None, role: str) -> Microdata:
    if data is None:
        raise DataError(f"the attack needs the {role} data")
    if not isinstance(data, Microdata):
        raise DataError(f"the {role} data must be microdata, not {data.kind}")
    if len(data) == 0:
        raise DataError(f"the {role} data has no records")
    return data


def frames(original: Dataset | None, anonymized: Dataset | None, control: Dataset | None,
           columns: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The three frames restricted to ``columns``; a missing column is named with its side, an
    infinite value with its side, column and row; the control set needs at least two records
    and no column of only missing values (:func:`anoneval.plugins._control.checked_control`)."""
    out = []
    for data, role in ((original, "original"), (anonymized, "anonymized")):
        d = microdata(data, role)
        missing = [c for c in columns if c not in d.columns]
        if missing:
            raise DataError(f"column(s) {', '.join(map(repr, missing))} not in the {role} data; "
                            f"its columns: {', '.join(map(str, d.columns))}")
        frame = d.frame[list(columns)]
        for c in columns:
            if pd.api.types.is_float_dtype(frame[c]):
                refuse_infinite(frame[c].to_numpy(dtype=np.float64, na_value=np.nan),
                                f"column {c!r} of the {role} data",
                                "the attacks need finite numbers (missing values may be empty)")
        out.append(frame)
    ctl = checked_control(control, columns, "the attack")
    out.append(ctl.frame[list(columns)])
    return out[0], out[1], out[2]


def check_not_all_missing(frame: pd.DataFrame, role: str) -> None:
    empty = [str(c) for c in frame.columns if frame[c].isna().all()]
    if empty:
        raise DataError(f"column(s) {', '.join(map(repr, empty))} of the {role} data hold only "
                        "missing values")


def sample_targets(n_rows: int, n_attacks: int, rng: np.random.Generator) -> np.ndarray:
    """``min(n_attacks, n_rows)`` distinct row positions."""
    return np.sort(rng.choice(n_rows, size=min(n_attacks, n_rows), replace=False))


def membership_sets(n_original: int, n_control: int, n_attacks: int, rng: np.random.Generator,
                    reference: bool = False
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Row positions of a membership attack's members (original records) and non-members
    (control records), each a seeded sample without replacement of at most ``n_attacks``.

    Without ``reference`` (MembershipInference, EmpiricalEpsilon's distance attack) the two
    samples are drawn independently, each capped by its set's size. With ``reference``
    (DOMIAS) the control set also supplies the reference sample of the population, disjoint
    from the non-members: as many members as non-members, fewer than half the control (the
    reference keeps at least two records), and the third array is the reference's rows."""
    if not reference:
        return (sample_targets(n_original, n_attacks, rng),
                sample_targets(n_control, n_attacks, rng), None)
    n = min(n_attacks, n_original, (n_control - 1) // 2)
    if n < 1:
        raise DataError(f"needs at least three control records (non-members and a reference "
                        f"sample of two or more); the control set has {n_control}")
    members = sample_targets(n_original, n, rng)
    perm = rng.permutation(n_control)
    return members, np.sort(perm[:n]), np.sort(perm[n:])


class AttackMeasure(RiskMeasure):
    """Base of the control-set attacks."""

    uses_control = "required"


class TargetedAttack(AttackMeasure):
    """Base of the attacks on target records drawn from the original and the control set."""

    def targets(self, original: Dataset | None, anonymized: Dataset | None,
                control: Dataset | None, columns: Sequence[str], rng: np.random.Generator
                ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
        """The three frames on ``columns`` and up to ``n_attacks`` target rows of the
        original and of the control set."""
        ori, syn, ctl = frames(original, anonymized, control, columns)
        check_not_all_missing(syn, "anonymized")
        n = self.params.n_attacks
        return ori, syn, ctl, sample_targets(len(ori), n, rng), sample_targets(len(ctl), n, rng)

    def result(self, success: np.ndarray, baseline: np.ndarray, control: np.ndarray,
               details: dict[str, Any]) -> MeasureResult:
        """The result from the per-target successes (main, baseline, control); a warning when
        fewer targets than ``n_attacks`` were available."""
        n_attacks = self.params.n_attacks
        warnings = []
        if len(success) < n_attacks or len(control) < n_attacks:
            warnings.append(f"n_attacks = {n_attacks} exceeds the records available; "
                            f"{len(success)} original and {len(control)} control targets used")
        return attack_result(len(success), int(success.sum()), int(baseline.sum()),
                             int(control.sum()), self.params.confidence_level,
                             n_control_attacks=len(control), details=details,
                             warnings=warnings)
