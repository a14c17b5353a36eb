"""A measure built on a scikit-learn fit that stopped at its iteration limit says so in its
report (scikit-learn says it only on stderr); a fit that converged adds nothing."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from anoneval.core import evaluate
from anoneval.plugins._shared.fits import iteration_limit

sklearn_lm = pytest.importorskip("sklearn.linear_model", reason="the sklearn extra")

#: Each measure, and the fits its warnings name.
CASES: list[tuple[dict[str, Any], list[str]]] = [
    ({"name": "PropensityMSE"}, ["the propensity model"]),
    ({"name": "DetectionAUC"}, ["the detection model"]),
    ({"name": "DetectionAUC", "params": {"compat": "sdmetrics"}}, ["the detection model"]),
    ({"name": "MLEfficacy", "params": {"target": "y", "model": "linear"}},
     ["the model trained on the release", "the model trained on the original"]),
    ({"name": "AttributeInference", "params": {"n_attacks": 20, "secret": "y",
                                               "aux_cols": ["a", "b"], "attacker": "logistic"}},
     ["the attacker's model"]),
]


def frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(5)

    def one(n: int) -> pd.DataFrame:
        a = rng.normal(size=n)
        return pd.DataFrame({"a": a, "b": rng.choice(["p", "q", "r"], n),
                             "y": np.where(a + rng.normal(size=n) > 0, "yes", "no")})
    return one(300), one(300), one(100)


class OneStep(sklearn_lm.LogisticRegression):
    """A logistic regression allowed a single iteration: it stops at its limit."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**{**params, "max_iter": 1})


@pytest.mark.parametrize(("spec", "fits"), CASES,
                         ids=["PropensityMSE", "DetectionAUC", "DetectionAUC-sdmetrics",
                              "MLEfficacy", "AttributeInference"])
def test_a_fit_at_its_iteration_limit_is_a_warning_of_the_measure(spec, fits, monkeypatch):
    original, release, control = frames()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's own ConvergenceWarning
        done = evaluate(original, release, [spec], control=control).measures[0]
        monkeypatch.setattr(sklearn_lm, "LogisticRegression", OneStep)
        cut = evaluate(original, release, [spec], control=control).measures[0]
    assert done.error is None and cut.error is None, (done.error, cut.error)
    assert not any("iterations without converging" in w for w in done.warnings)
    said = [w for w in cut.warnings if "stopped at its limit of 1 iterations" in w]
    assert [w.split(":")[0] for w in said] == fits, cut.warnings


def test_models_without_iterations_or_within_them_say_nothing():
    tree = pytest.importorskip("sklearn.tree")
    x, y = np.arange(20.0).reshape(-1, 1), np.r_[np.zeros(10), np.ones(10)]
    assert iteration_limit(tree.DecisionTreeClassifier().fit(x, y), "t") is None
    assert iteration_limit(sklearn_lm.LinearRegression().fit(x, y), "t") is None
    assert iteration_limit(sklearn_lm.LogisticRegression(max_iter=1000).fit(x, y), "t") is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stopped = sklearn_lm.LogisticRegression(max_iter=1).fit(x, y)
    assert iteration_limit(stopped, "m") == (
        "m: the LogisticRegression stopped at its limit of 1 iterations without converging; "
        "the value rests on that unfinished fit")
