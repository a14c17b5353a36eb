"""Machine-learning efficacy: a model trained on the release, tested on held-out originals."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field
from scipy import sparse

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    IntervalParams,
    LossMeasure,
    MeasureResult,
    Microdata,
    Params,
    percentile_interval,
)
from anoneval.plugins._control import checked_control
from anoneval.plugins._shared.fits import iteration_limit
from anoneval.plugins._shared.mixed import is_numeric
from anoneval.plugins.fidelity._common import pair, require_finite
from anoneval.plugins.fidelity._sklearn import (
    design,
    for_trees,
    max_rows_field,
    sklearn,
    subsample,
)

HIGHER_IS_BETTER = {"accuracy": True, "balanced_accuracy": True, "f1_macro": True, "r2": True,
                    "mae": False, "rmse": False}
#: Default ``max_rows`` per model family.
MAX_ROWS = {"linear": 50_000, "tree": 100_000, "forest": 20_000}
CLASSIFICATION = ("accuracy", "balanced_accuracy", "f1_macro")
REGRESSION = ("r2", "mae", "rmse")
#: Bootstrap cells (replicates × test rows) weighed at once: bounds the bootstrap's memory.
BOOT_CELLS = 1 << 21


def weighted_metric(metric: str, y_true: np.ndarray, pred: np.ndarray,
                    weights: np.ndarray) -> np.ndarray:
    """``metric`` of each row of ``weights`` (b × n multiplicities of the test records), as
    scikit-learn computes it on the test set with each record repeated that often (all ones:
    the test set itself). Classification: labels compared as given; macro averages over the
    classes present among the weighted true or predicted labels (f1) or the true ones
    (balanced accuracy), an empty F1 denominator scoring 0 as scikit-learn does."""
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    total = w.sum(axis=1)
    if metric in REGRESSION:
        y = np.asarray(y_true, dtype=np.float64)
        err = y - np.asarray(pred, dtype=np.float64)
        if metric == "mae":
            return (w @ np.abs(err)) / total
        sse = w @ (err * err)
        if metric == "rmse":
            return np.sqrt(sse / total)
        sst = w @ (y * y) - (w @ y) ** 2 / total
        with np.errstate(invalid="ignore", divide="ignore"):
            return 1 - sse / sst
    codes, _ = pd.factorize(np.concatenate([np.asarray(y_true), np.asarray(pred)]))
    t, q = codes[:len(y_true)], codes[len(y_true):]
    correct = (t == q).astype(np.float64)
    if metric == "accuracy":
        return (w @ correct) / total
    k = int(codes.max()) + 1
    rows = np.arange(len(t))

    def per_class(labels: np.ndarray, ones: np.ndarray) -> np.ndarray:
        """b × k weighted counts (sparse one-hot: memory O(n), not O(n·k))."""
        onehot = sparse.csr_matrix((ones, (rows, labels)), shape=(len(t), k))
        return np.asarray((onehot.T @ w.T).T)

    hit = per_class(t, correct)  # true positives
    support = per_class(t, np.ones(len(t)))
    predicted = per_class(q, np.ones(len(t)))
    with np.errstate(invalid="ignore", divide="ignore"):
        if metric == "balanced_accuracy":
            recall = np.where(support > 0, hit / support, np.nan)
            return np.nanmean(recall, axis=1)
        present = (support + predicted) > 0
        f1 = np.where(present, 2 * hit / np.where(present, support + predicted, 1), np.nan)
        return np.nanmean(f1, axis=1)


def loss_replicates(metric: str, y_test: np.ndarray, pred_release: np.ndarray,
                    pred_original: np.ndarray, n_boot: int,
                    rng: np.random.Generator) -> np.ndarray:
    """The loss recomputed on ``n_boot`` bootstrap resamples of the test records (the same
    resample for both models: a paired bootstrap), the models kept as fitted."""
    n = len(y_test)
    per = max(1, BOOT_CELLS // n)
    out = []
    for start in range(0, n_boot, per):
        b = min(per, n_boot - start)
        rows = rng.integers(0, n, (b, n)) + n * np.arange(b)[:, None]
        w = np.bincount(rows.ravel(), minlength=b * n).reshape(b, n)  # multiplicities
        release = weighted_metric(metric, y_test, pred_release, w)
        real = weighted_metric(metric, y_test, pred_original, w)
        out.append(real - release if HIGHER_IS_BETTER[metric] else release - real)
    return np.concatenate(out)


class MLEfficacy(LossMeasure):
    """Train-on-release, test-on-real efficacy against train-on-real (Esteban et al. 2017's
    TSTR; SDMetrics docs, "ML Efficacy").

    A model predicting ``target`` from ``features`` (default: every other column) is trained
    on the release and, for comparison, on the original; both are tested on original records
    the release was not made from: the control set when given (recommended), else a random
    ``test_size`` share of the original (left out of the original's training set; the
    release may still have been made from those records, which flatters it). Features:
    numbers standardised (missing → 0 plus an indicator), categories one-hot. ``task``:
    classification (metrics accuracy, balanced_accuracy, f1_macro) or regression (r2, mae,
    rmse); ``auto`` picks regression for a numeric target with more than 20 distinct values.
    Models (scikit-learn): ``linear`` (default; logistic / ordinary least squares), ``tree``
    (decision tree, ``max_depth``), ``forest`` (random forest of 50 trees). The value is the
    loss metric(original-trained) − metric(release-trained), sign-flipped for the error metrics
    mae and rmse (higher = more loss; negative when the release trains a better model).
    ``details.score`` is the release-trained metric, ``details.score_original`` the other.
    Records with a missing target are dropped. A training or test set larger than
    ``max_rows`` (default 50,000 for linear, 100,000 for tree, 20,000 for forest models) is
    replaced by a uniform random sample of that many records drawn with the evaluation seed
    (a warning says so; ``details`` gives the sizes used), so the measure stays within
    seconds on millions of records. ``ci``: the bootstrap percentile interval at
    ``confidence_level`` over ``n_boot`` resamples of the test records, both models scored on
    the same resample (a paired bootstrap: Efron & Tibshirani 1993, ch. 13); it covers the
    test set's sampling, not the randomness of training.
    """

    name = "MLEfficacy"
    description = "Model quality lost by training on the release instead of the original "\
                  "(tested on held-out original records)."
    uses_control = "optional"

    class Params(Params, IntervalParams):
        target: str = Field(description="Column to predict.")
        features: list[str] | None = Field(None, min_length=1,
                                           description="Predictors; null: every other column.")
        task: Literal["auto", "classification", "regression"] = Field("auto",
                                                                      description="Task.")
        metric: Literal["auto", "accuracy", "balanced_accuracy", "f1_macro", "r2", "mae",
                        "rmse"] = Field("auto", description="auto: f1_macro or r2.")
        model: Literal["linear", "tree", "forest"] = Field(
            "linear", description="Model family: linear (fast on large data), tree, forest.")
        max_depth: int | None = Field(8, ge=1, description="Depth of trees.")
        test_size: float = Field(0.3, gt=0, lt=1, description="Held-out share of the original "
                                                              "when no control set is given.")
        max_rows: int | None = max_rows_field("linear 50,000, tree 100,000, forest 20,000")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        ori, syn = pair(original, anonymized, self.name)
        features = p.features or [c for c in ori.columns if c != p.target]
        if p.target in features:
            raise DataError(f"the target {p.target!r} is also a feature")
        for data in (ori, syn):
            data.require([*features, p.target], f"{self.name} column")
        rng = ctx.rng(7)
        frame = ori.frame
        if ctx.control is not None:
            control = checked_control(ctx.control, [*features, p.target], self.name)
            train_o, test, test_set = frame, control.frame, "control"
        else:
            mask = np.zeros(len(frame), dtype=bool)
            mask[rng.choice(len(frame), size=max(1, round(p.test_size * len(frame))),
                            replace=False)] = True
            train_o, test = frame[~mask], frame[mask]
            test_set = f"held-out {p.test_size:g} of the original"
        sides = {"original": ori, "anonymized": syn}
        if isinstance(ctx.control, Microdata):
            sides["control"] = ctx.control
        require_finite(sides, [*features, p.target], self.name)
        train_s = syn.frame
        train_o, train_s, test = (f[f[p.target].notna()] for f in (train_o, train_s, test))
        if min(len(train_o), len(train_s), len(test)) == 0:
            raise DataError(f"{self.name}: no records with a target on one side")
        sets, _, warnings = subsample({"original training": train_o,
                                       "released training": train_s, "test": test},
                                      p.max_rows or MAX_ROWS[p.model], ctx.rng(8))
        train_o, train_s, test = sets.values()
        task = p.task
        if task == "auto":
            y = frame[p.target]
            task = ("regression" if is_numeric(y) and y.nunique() > 20 else "classification")
        metric = p.metric if p.metric != "auto" else ("f1_macro" if task == "classification"
                                                      else "r2")
        allowed = CLASSIFICATION if task == "classification" else REGRESSION
        if metric not in allowed:
            raise DataError(f"metric {metric!r} does not fit {task}; allowed: "
                            f"{', '.join(allowed)}")
        X_o, X_s, X_t = design(train_o, [train_o, train_s, test], features)
        if p.model != "linear":
            X_o, X_s, X_t = for_trees(X_o), for_trees(X_s), for_trees(X_t)
        seed = int(rng.integers(2**31 - 1))
        scores = []
        with ctx.progress(2, f"{self.name} (fits)") as bar:
            for side, X, f in (("release", X_s, train_s), ("original", X_o, train_o)):
                model = self._model(task, seed)
                scores.append(_score(model, X, f[p.target], X_t, test[p.target], task, metric))
                note = iteration_limit(model, f"the model trained on the {side}")
                if note:
                    warnings.append(note)
                bar.update(1)
        (release, pred_s), (real, pred_o) = scores
        loss = real - release if HIGHER_IS_BETTER[metric] else release - real
        y_t = test[p.target].to_numpy(dtype=str if task == "classification" else np.float64)
        reps = loss_replicates(metric, y_t, pred_s, pred_o, p.n_boot, ctx.rng(9))
        ends = percentile_interval(reps, p.confidence_level)
        return MeasureResult(value=loss, ci=list(ends) if ends else None, details={
            "score": release, "score_original": real, "metric": metric, "task": task,
            "model": p.model, "test_set": test_set, "n_test": len(test),
            "n_train_release": len(train_s), "n_train_original": len(train_o)},
            warnings=warnings)

    def _model(self, task: str, seed: int) -> Any:
        p = self.params
        if p.model == "linear":
            lm = sklearn("linear_model", self.name)
            return (lm.LogisticRegression(max_iter=1000) if task == "classification"
                    else lm.LinearRegression())
        if p.model == "tree":
            tree = sklearn("tree", self.name)
            cls = (tree.DecisionTreeClassifier if task == "classification"
                   else tree.DecisionTreeRegressor)
            return cls(max_depth=p.max_depth, random_state=seed)
        ens = sklearn("ensemble", self.name)
        cls = (ens.RandomForestClassifier if task == "classification"
               else ens.RandomForestRegressor)
        return cls(n_estimators=50, max_depth=p.max_depth, random_state=seed, n_jobs=1)


def _score(model: Any, X: sparse.csr_matrix | np.ndarray, y: pd.Series,
           X_test: sparse.csr_matrix | np.ndarray, y_test: pd.Series, task: str,
           metric: str) -> tuple[float, np.ndarray]:
    """The fitted model's metric on the test set and its predictions."""
    metrics = sklearn("metrics", "MLEfficacy")
    if task == "classification":
        y, y_test = y.astype(str), y_test.astype(str)
    else:
        y, y_test = y.astype(float), y_test.astype(float)
    if task == "classification" and y.nunique() < 2:
        raise DataError("the training target has a single class; no classifier can be fitted")
    pred = model.fit(X, y).predict(X_test)
    if metric == "accuracy":
        return float(metrics.accuracy_score(y_test, pred)), pred
    if metric == "balanced_accuracy":
        return float(metrics.balanced_accuracy_score(y_test, pred)), pred
    if metric == "f1_macro":
        return float(metrics.f1_score(y_test, pred, average="macro")), pred
    if metric == "r2":
        return float(metrics.r2_score(y_test, pred)), pred
    if metric == "mae":
        return float(metrics.mean_absolute_error(y_test, pred)), pred
    return float(np.sqrt(metrics.mean_squared_error(y_test, pred))), pred

