"""Whether a fitted scikit-learn model stopped at its iteration limit, as a report warning.

scikit-learn tells it only on stderr (``ConvergenceWarning``); a measure built on the fit
says it in its own report, where the value it qualifies is read.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def iteration_limit(model: Any, what: str) -> str | None:
    """A warning when the fitted ``model`` (a pipeline: its last step) used all of its
    ``max_iter`` iterations, as scikit-learn's ``ConvergenceWarning`` does; None for a model
    that stopped sooner or has no iterations (trees, forests, least squares)."""
    steps = getattr(model, "steps", None)
    if steps:
        model = steps[-1][1]
    used, limit = getattr(model, "n_iter_", None), getattr(model, "max_iter", None)
    if used is None or limit is None or int(np.max(used)) < int(limit):
        return None
    return (f"{what}: the {type(model).__name__} stopped at its limit of {limit} iterations "
            "without converging; the value rests on that unfinished fit")
