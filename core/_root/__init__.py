"""anoneval: disclosure risk and information loss of anonymized, perturbed and synthetic data.

The top-level package: the version and the Python API of :mod:`anoneval.core`::

    import anoneval
    report = anoneval.evaluate(original_df, anonymized_df, measures=["KAnonymity"])

``python -m anoneval`` is the ``anoneval`` command. Plugin authors import from
:mod:`anoneval.core`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anoneval.core import Evaluator, evaluate, evaluate_many, load
    from anoneval.core.run.trajectory_distance import trajectory_distance, trajectory_distances

__all__ = [
    "Evaluator", "__version__", "evaluate", "evaluate_many", "load", "trajectory_distance",
    "trajectory_distances",
]
#: Where each name of ``__all__`` is defined; imported at its first use, so that importing
#: anoneval, or a module of it, imports nothing more (the ``anoneval`` command can then start
#: its worker processes before its own imports).
_HOMES = {"trajectory_distance": "anoneval.core.run.trajectory_distance",
          "trajectory_distances": "anoneval.core.run.trajectory_distance"}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("anoneval")
        except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
            value = "0+unknown"
    elif name in __all__:
        value = getattr(importlib.import_module(_HOMES.get(name, "anoneval.core")), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
