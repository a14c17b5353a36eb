"""anoneval: disclosure risk and information loss of anonymized, perturbed and synthetic data.

The top-level package: the version and the Python API of :mod:`anoneval.core`::

    import anoneval
    report = anoneval.evaluate(original_df, anonymized_df, measures=["KAnonymity"])

``python -m anoneval`` is the ``anoneval`` command. Plugin authors import from
:mod:`anoneval.core`.
"""

from importlib.metadata import PackageNotFoundError, version

from anoneval.core import Evaluator, evaluate, evaluate_many, load
from anoneval.core.run.trajectory_distance import trajectory_distance, trajectory_distances

try:
    __version__ = version("anoneval")
except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
    __version__ = "0+unknown"

__all__ = [
    "Evaluator", "__version__", "evaluate", "evaluate_many", "load", "trajectory_distance",
    "trajectory_distances",
]
