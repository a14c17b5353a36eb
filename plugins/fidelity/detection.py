"""Classifier two-sample test: how well a model tells released from original records (AUC)."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field
from scipy import sparse
from scipy.stats import norm

from anoneval.core.api import (
    Context,
    Dataset,
    IntervalParams,
    LossMeasure,
    MeasureResult,
    task_threads,
)
from anoneval.plugins._shared.fits import iteration_limit
from anoneval.plugins.fidelity._common import FidelityParams, choose, pair, require_finite
from anoneval.plugins.fidelity._embed import canonical
from anoneval.plugins.fidelity._sklearn import (
    design,
    for_trees,
    max_rows_field,
    sklearn,
    subsample,
)

#: Default ``max_rows`` per model.
MAX_ROWS = {"logistic": 50_000, "forest": 20_000}


def hanley_mcneil_var(auc: float, n_pos: int, n_neg: int) -> float:
    """Variance of an AUC from n_pos positives and n_neg negatives (Hanley & McNeil 1982,
    Radiology 143:29–36, eq. 2)."""
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
    return (auc * (1 - auc) + (n_pos - 1) * (q1 - auc * auc)
            + (n_neg - 1) * (q2 - auc * auc)) / (n_pos * n_neg)


def sdmetrics_matrix(real: pd.DataFrame, synthetic: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """SDMetrics' HyperTransformer: numbers and booleans kept (missing → the original's mean,
    booleans its mode), datetimes as nanoseconds, other columns one-hot on the original's
    categories (sorted; missing a category) appended after the kept columns in column order;
    a released category the original lacks is all zeros (SDMetrics raises)."""
    ohe = sklearn("preprocessing", "DetectionAUC").OneHotEncoder
    kept: list[list[np.ndarray]] = [[], []]
    hot: list[list[np.ndarray]] = [[], []]
    for c in real.columns:
        kind = real[c].dropna().infer_objects().dtype.kind
        if kind in "if":
            fill = real[c].mean()
            for out, f in zip(kept, (real, synthetic), strict=True):
                out.append(f[c].fillna(fill).to_numpy(dtype=float))
        elif kind == "b":
            fill = pd.to_numeric(real[c], errors="coerce").astype(float).mode().iloc[0]
            for out, f in zip(kept, (real, synthetic), strict=True):
                out.append(pd.to_numeric(f[c], errors="coerce").astype(float).fillna(fill)
                           .to_numpy())
        elif kind == "M":
            cols = [pd.to_numeric(f[c], errors="coerce").to_numpy().astype(float)
                    for f in (real, synthetic)]
            for v, f in zip(cols, (real, synthetic), strict=True):
                v[f[c].isna().to_numpy()] = np.nan
            fill = np.nanmean(cols[0])
            for out, v in zip(kept, cols, strict=True):
                out.append(np.where(np.isnan(v), fill, v))
        else:
            enc = ohe(handle_unknown="ignore").fit(pd.DataFrame({"field": real[c]}))
            for out, f in zip(hot, (real, synthetic), strict=True):
                out.append(enc.transform(pd.DataFrame({"field": f[c]})).toarray())
    return tuple(np.column_stack([*k, *h]) for k, h in zip(kept, hot, strict=True))


class DetectionAUC(LossMeasure):
    """Classifier two-sample test (Lopez-Paz & Oquab 2017, "Revisiting classifier two-sample
    tests", ICLR; SDMetrics' LogisticDetection): a model learns to tell original (label 1)
    from released (label 0) records; its ROC AUC on held-out folds measures how
    distinguishable the release is.

    Stratified ``folds``-fold cross-validation (shuffled, evaluation seed; the records first put
    in an order fixed by their values, so the folds do not depend on the input order); AUC_f on
    each held-out fold, AUC = their mean; value 1 − 2·|AUC − 0.5| (1 = indistinguishable, 0 =
    perfectly separated; higher = less loss). ``model``: ``logistic`` (scikit-learn's
    LogisticRegression, L2 with C = 1, lbfgs) or ``forest`` (a random forest of ``n_trees``
    trees). Features by default: numbers standardised on both sides together (missing → 0 plus a
    missing indicator), categories one-hot over both sides (missing a category).

    ``compat: "sdmetrics"`` reproduces SDMetrics' LogisticDetection exactly (with
    ``model: logistic``, ``folds: 3``): SDMetrics' feature matrix (numbers with missing values
    filled by the original's mean; categories one-hot on the original's categories), a
    mean imputer and a RobustScaler fitted per training fold before the model, and the value
    1 − mean_f(2·max(AUC_f, 0.5) − 1). SDMetrics' folds are unseeded; here they use the
    evaluation seed. Its clip at 0.5 scores a model that is reliably *wrong* (AUC < 0.5,
    which still tells the sides apart) as perfect; the default 1 − 2|AUC − 0.5| does not. It
    happens with near-copies: a forest predicts a held-out original record from its released
    twin in the training folds, labelled "released", so the AUC falls well below 0.5 (tested).
    With ``model: forest`` the option changes only the features and the score rule.

    ``ci``: each fold's AUC variance by Hanley & McNeil (1982), combined for the mean of
    independent folds (Var = Σ Var_f / F²), a normal interval for AUC clipped to [0, 1] and
    mapped through 1 − 2|AUC − 0.5| (upper end 1 when it contains 0.5). It holds the fitted
    models fixed: the spread of the held-out records, not of refitting. ``details``: ``auc``,
    ``fold_auc``, ``auc_ci``, ``model_rows``. Sides larger than ``max_rows`` (default 50,000
    logistic, 20,000 forest) are replaced by a seeded uniform sample (warning).
    """

    name = "DetectionAUC"
    description = "Classifier two-sample test: 1 − 2·abs(AUC − 0.5) of a model telling "\
                  "released from original records (SDMetrics' LogisticDetection)."
    unit = "share"
    higher_is_worse = False

    class Params(FidelityParams, IntervalParams):
        model: Literal["logistic", "forest"] = Field("logistic", description="Classifier.")
        folds: int = Field(3, ge=2, le=20, description="Cross-validation folds.")
        n_trees: int = Field(100, ge=1, le=2000, description="Forest: number of trees.")
        compat: Literal["none", "sdmetrics"] = Field(
            "none", description="sdmetrics: SDMetrics' LogisticDetection features and score.")
        max_rows: int | None = max_rows_field("logistic 50,000, forest 20,000")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        ori, syn = pair(original, anonymized, self.name)
        columns = choose(ori, syn, p.columns, lambda s: True, self.name, "")
        require_finite({"original": ori, "anonymized": syn}, columns, self.name)
        frames, sizes, warnings = subsample({"original": canonical(ori.frame[columns]),
                                             "anonymized": canonical(syn.frame[columns])},
                                            p.max_rows or MAX_ROWS[p.model], ctx.rng(59))
        real, fake = frames["original"], frames["anonymized"]
        y = np.r_[np.ones(len(real)), np.zeros(len(fake))]
        if p.compat == "sdmetrics":
            X: np.ndarray | sparse.csr_matrix = np.vstack(sdmetrics_matrix(real, fake))
        else:
            both = pd.concat([real, fake], ignore_index=True)
            (X,) = design(both, [both], columns)
        model_selection = sklearn("model_selection", self.name)
        metrics = sklearn("metrics", self.name)
        seed = int(ctx.rng(61).integers(2**31 - 1))
        kf = model_selection.StratifiedKFold(n_splits=p.folds, shuffle=True, random_state=seed)
        if p.model == "forest":
            X = for_trees(X)
        aucs, variances, unfinished = [], [], []
        for train, test in kf.split(X, y):
            scores, note = self._fit_predict(X[train], y[train], X[test], seed)
            if note:
                unfinished.append(note)
            auc = float(metrics.roc_auc_score(y[test], scores))
            aucs.append(auc)
            variances.append(hanley_mcneil_var(auc, int(y[test].sum()),
                                               int(len(test) - y[test].sum())))
        if unfinished:
            warnings.append(f"{unfinished[0]} (in {len(unfinished)} of {len(aucs)} folds)")
        auc = float(np.mean(aucs))
        if p.compat == "sdmetrics":
            value = float(1 - np.mean([max(0.5, a) * 2 - 1 for a in aucs]))
        else:
            value = 1 - 2 * abs(auc - 0.5)
        half = float(norm.ppf((1 + p.confidence_level) / 2)) * math.sqrt(
            max(sum(variances), 0.0)) / len(aucs)
        lo, hi = max(auc - half, 0.0), min(auc + half, 1.0)
        ends = [1 - 2 * abs(lo - 0.5), 1 - 2 * abs(hi - 0.5)]
        ci = (min(ends), 1.0 if lo <= 0.5 <= hi else max(ends))
        return MeasureResult(value=value, ci=ci, warnings=warnings, details={
            "auc": auc, "fold_auc": aucs, "auc_ci": [lo, hi], "model": p.model,
            "folds": p.folds, "compat": p.compat, "model_rows": sizes})

    def _fit_predict(self, X_train: object, y_train: np.ndarray, X_test: object,
                     seed: int) -> tuple[np.ndarray, str | None]:
        """The test rows' scores, and a warning when the model stopped at its iteration
        limit."""
        p = self.params
        if p.model == "forest":
            ensemble = sklearn("ensemble", self.name)
            model = ensemble.RandomForestClassifier(n_estimators=p.n_trees, n_jobs=task_threads(),
                                                    min_samples_leaf=5, random_state=seed)
        elif p.compat == "sdmetrics":
            impute, pre = sklearn("impute", self.name), sklearn("preprocessing", self.name)
            pipeline, lm = sklearn("pipeline", self.name), sklearn("linear_model", self.name)
            model = pipeline.Pipeline([("imputer", impute.SimpleImputer()),
                                       ("scalar", pre.RobustScaler()),
                                       ("classifier", lm.LogisticRegression(solver="lbfgs"))])
        else:
            lm = sklearn("linear_model", self.name)
            model = lm.LogisticRegression(max_iter=1000)
        model.fit(X_train, y_train)
        return model.predict_proba(X_test)[:, 1], iteration_limit(model, "the detection model")
