"""Model attackers of the attribute-inference attack: a scikit-learn model fitted on the
release (the known columns → the secret), its design matrix and its seeded training sample."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Literal

import numpy as np
import pandas as pd
from scipy import sparse

from anoneval.core.api import PluginError, task_threads
from anoneval.plugins._shared.fits import iteration_limit
from anoneval.plugins._shared.mixed import _as_float, is_numeric

Attacker = Literal["nearest", "logistic", "forest"]


def sklearn(module: str) -> ModuleType:
    """``sklearn.<module>``; a missing scikit-learn names the extra that brings it."""
    try:
        return importlib.import_module(f"sklearn.{module}")
    except ImportError as exc:
        raise PluginError("AttributeInference's model attackers need scikit-learn; install "
                          "it with pip install 'anoneval[synthetic]'") from exc


def design(fit_on: pd.DataFrame, frames: Sequence[pd.DataFrame],
           columns: Sequence[str]) -> list[sparse.csr_matrix]:
    """Sparse features of each frame (a category of many values stays small): numbers
    standardised by ``fit_on`` (a missing number → 0 plus a missing indicator), other columns
    one-hot on the categories of all frames (missing is a category)."""
    out: list[list[sparse.spmatrix]] = [[] for _ in frames]
    for c in columns:
        if all(is_numeric(f[c]) for f in (fit_on, *frames)):
            ref = _as_float(fit_on[c])
            mu = float(np.nanmean(ref)) if np.isfinite(ref).any() else 0.0
            sd = float(np.nanstd(ref)) if np.isfinite(ref).any() else 1.0
            sd = sd if sd > 0 else 1.0
            gaps = any(f[c].isna().any() for f in frames)
            for block, f in zip(out, frames, strict=True):
                x = _as_float(f[c])
                miss = np.isnan(x)
                cols = [np.where(miss, 0.0, (x - mu) / sd)] + ([miss.astype(float)] if gaps
                                                               else [])
                block.append(sparse.csr_matrix(np.column_stack(cols)))
        else:
            codes, uniques = pd.factorize(pd.concat([f[c] for f in frames], ignore_index=True),
                                          use_na_sentinel=False)
            start = 0
            for block, f in zip(out, frames, strict=True):
                n = len(f)
                block.append(sparse.csr_matrix((np.ones(n), (np.arange(n),
                                                             codes[start:start + n])),
                                               shape=(n, len(uniques))))
                start += n
    return [sparse.hstack(b, format="csr") for b in out]


def model_guesses(attacker: Attacker, released: pd.DataFrame, targets: Sequence[pd.DataFrame],
                  aux_cols: Sequence[str], secret: str, regression: bool, max_train_rows: int,
                  n_estimators: int, rng: np.random.Generator,
                  warn: Callable[[str], None]) -> list[pd.Series]:
    """The secret guessed for each frame of ``targets`` by a model fitted on (a seeded sample
    of at most ``max_train_rows``) released records: ``logistic``, a multinomial logistic
    regression (scikit-learn defaults, up to 1000 iterations) or, for a numeric secret, least
    squares; ``forest``, a random forest (``n_estimators`` trees) classifier or regressor.
    Released records with a missing numeric secret are not trained on; a categorical secret's
    missing value is a class."""
    train = released
    if regression:
        train = train[train[secret].notna()]
    if len(train) > max_train_rows:
        train = train.iloc[np.sort(rng.choice(len(train), max_train_rows, replace=False))]
    if len(train) == 0:
        raise PluginError("AttributeInference: no released record has the secret to learn from")
    x_train, *x_targets = design(train, [train, *targets], aux_cols)
    seed = int(rng.integers(2**31 - 1))
    if regression:
        y = _as_float(train[secret])
        if attacker == "logistic":
            model = sklearn("linear_model").LinearRegression()
        else:
            model = sklearn("ensemble").RandomForestRegressor(
                n_estimators=n_estimators, random_state=seed, n_jobs=task_threads())
        model.fit(x_train, y)
        return [pd.Series(model.predict(x)) for x in x_targets]
    codes, classes = pd.factorize(train[secret], use_na_sentinel=False)
    if len(classes) == 1:  # one class: every guess is it
        return [pd.Series(np.repeat(classes[:1], len(t))) for t in targets]
    if attacker == "logistic":
        model = sklearn("linear_model").LogisticRegression(max_iter=1000)
    else:
        model = sklearn("ensemble").RandomForestClassifier(
            n_estimators=n_estimators, random_state=seed, n_jobs=task_threads())
    model.fit(x_train, codes)
    note = iteration_limit(model, "the attacker's model")
    if note:
        warn(note)
    return [pd.Series(np.asarray(classes)[model.predict(x)]) for x in x_targets]
