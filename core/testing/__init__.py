"""pytest fixtures for plugin authors (installed as the ``anoneval`` pytest plugin).

``anoneval_registry`` is an isolated registry holding the built-ins only: register your classes
on it without touching the shared one. ``anoneval_evaluate`` runs measures through the evaluator
on that registry, exactly as a config would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from anoneval.core.report.model import Report
from anoneval.core.run.evaluator import evaluate
from anoneval.registry import Registry, build_registry


@pytest.fixture
def anoneval_registry() -> Registry:
    """A fresh registry with the built-ins; no entry points, no user file."""
    return build_registry(entry_points=False)


@pytest.fixture
def anoneval_evaluate(anoneval_registry: Registry) -> Callable[..., Report]:
    """``anoneval_evaluate(original, anonymized, measures, seed=0)`` on the isolated registry."""

    def run(original: Any, anonymized: Any, measures: Sequence[Any], seed: int = 0,
            **kwargs: Any) -> Report:
        return evaluate(original, anonymized, measures, seed=seed, registry=anoneval_registry,
                        **kwargs)

    return run
