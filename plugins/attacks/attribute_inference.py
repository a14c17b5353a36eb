"""Attribute-inference attack: a secret guessed from the nearest released record."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from anoneval.core.api import Context, DataError, Dataset, MeasureResult, repeated
from anoneval.plugins._shared.mixed import encode, is_numeric, nearest
from anoneval.plugins.attacks._common import AttackParams, TargetedAttack
from anoneval.plugins.attacks._models import Attacker, model_guesses


def correct(guess: pd.Series, secret: pd.Series, regression: bool,
            tolerance: float) -> np.ndarray:
    """Whether each guess is right: equal (categories; missing equals missing), or for
    numbers ``|guess − secret| <= tolerance · |secret|`` (a missing guess or secret fails)."""
    if regression:
        g = guess.to_numpy(dtype=float, na_value=np.nan)
        s = secret.to_numpy(dtype=float, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            return np.abs(g - s) <= tolerance * np.abs(s)
    g, s = guess.reset_index(drop=True), secret.reset_index(drop=True)
    return ((g == s) | (g.isna() & s.isna())).to_numpy(dtype=bool)


class AttributeInference(TargetedAttack):
    """Attribute-inference risk: an attacker who knows some attributes of a person guesses a
    secret one from the nearest released record or a model fitted on the release (Giomi et al.
    2023, anonymeter; Article 29 Working Party opinion 05/2014).

    ``n_attacks`` targets are drawn from the original (main) and from the control set
    (control). For each, the released record nearest on ``aux_cols`` (anonymeter's mixed-type
    distance, see :class:`~anoneval.plugins.attacks.linkability.Linkability`; ties go to a
    random one) gives the guess of ``secret``. A categorical guess is right when equal to the
    secret; with ``regression`` (default: when the secret is numeric) when
    ``|guess − secret| <= tolerance · |secret|``. The naive baseline guesses the secret of a
    random released record, one per target.

    Two defects of anonymeter 1.1.0 are fixed: it divides the error by the *guess*, so every
    negative numeric guess counts as a success (here the error is relative to the true
    secret, and a secret of 0 needs an exact guess); and it re-indexes the baseline's random
    guesses onto the targets' index, turning most of them into missing values and deflating
    the baseline (here each target gets its own random guess). See
    :mod:`anoneval.plugins.attacks._common` for the rates and the risk.

    ``attacker``: ``nearest`` (the above, anonymeter's), or a model trained on the release to
    predict the secret from ``aux_cols`` (anonymeter's ``InferencePredictor`` hook; the kind
    of SDMetrics' CategoricalRF and NumericalLR attackers; Stadler, Oprisanu & Troncoso 2022,
    "Synthetic data – anonymisation groundhog day", USENIX Security): ``logistic`` (logistic
    regression; least squares for a numeric secret) or ``forest`` (a random forest of
    ``n_estimators`` trees), fitted on a seeded sample of at most ``max_train_rows`` released
    records (numbers standardised, categories one-hot; see
    :mod:`anoneval.plugins.attacks._models`). Same targets, rule of success and baseline.
    """

    name = "AttributeInference"
    description = "Attribute-inference attack risk (anonymeter): a secret guessed from the "\
                  "nearest released record or a model fitted on the release, above the "\
                  "control set's rate."

    class Params(AttackParams):
        aux_cols: list[str] = Field(min_length=1, description="Columns the attacker knows.")
        secret: str = Field(description="The column the attacker guesses.")
        regression: bool | None = Field(
            None, description="Numeric secret compared with a tolerance; null: when the secret "
                              "is numeric.")
        tolerance: float = Field(0.05, ge=0, description="Relative tolerance of a numeric "
                                                         "guess: |guess − secret| <= tol·|secret|.")
        attacker: Attacker = Field("nearest", description="nearest: the nearest released "
                                                          "record's secret; logistic or "
                                                          "forest: a model fitted on the "
                                                          "release.")
        max_train_rows: int = Field(20_000, ge=1, description="Model attackers: released "
                                                              "records trained on (a seeded "
                                                              "sample).")
        n_estimators: int = Field(100, ge=1, description="forest: number of trees.")

        @model_validator(mode="after")
        def _check(self) -> AttributeInference.Params:
            if self.secret in self.aux_cols:
                raise ValueError(f"the secret {self.secret!r} is also in aux_cols")
            dup = repeated(self.aux_cols)
            if dup:
                raise ValueError(f"columns listed twice in aux_cols: {dup}")
            return self

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        rng = ctx.rng(3)
        ori, syn, ctl, t_ori, t_ctl = self.targets(original, anonymized, ctx.control,
                                                   [*p.aux_cols, p.secret], rng)
        regression = p.regression
        if regression is None:
            regression = is_numeric(ori[p.secret]) and is_numeric(syn[p.secret])
        elif regression and not (is_numeric(ori[p.secret]) and is_numeric(syn[p.secret])):
            raise DataError(f"regression needs a numeric secret; {p.secret!r} is not numeric")
        order = rng.permutation(len(syn))
        secrets = syn[p.secret].reset_index(drop=True)
        roles = (("main", ori.iloc[t_ori]), ("control", ctl.iloc[t_ctl]))
        success = {}
        with ctx.progress(2, f"{self.name} ({p.attacker} attacker)") as bar:
            if p.attacker == "nearest":
                for role, targets in roles:
                    (enc_t, enc_s), _, _ = encode([targets, syn], p.aux_cols)
                    idx = nearest(enc_t, enc_s, 1, order=order)[0][:, 0]
                    success[role] = correct(secrets.iloc[idx], targets[p.secret], regression,
                                            p.tolerance)
                    bar.update(1)
            else:
                predicted = model_guesses(p.attacker, syn, [t for _, t in roles], p.aux_cols,
                                          p.secret, regression, p.max_train_rows,
                                          p.n_estimators, ctx.rng(34), ctx.warn)
                for (role, targets), guess in zip(roles, predicted, strict=True):
                    success[role] = correct(guess, targets[p.secret], regression, p.tolerance)
                    bar.update(1)
        guesses = secrets.iloc[rng.integers(0, len(syn), size=len(t_ori))]
        base = correct(guesses, ori[p.secret].iloc[t_ori], regression, p.tolerance)
        return self.result(success["main"], base, success["control"],
                           {"secret": p.secret, "regression": regression,
                            "aux_cols": p.aux_cols, "attacker": p.attacker})
