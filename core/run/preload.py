"""What every worker process imports ahead of its first task; importing this module imports it.

The engine, the registry, the built-in plugins' modules (those ``config.json`` lists; one that
fails to import is left to the task that needs it) and pyarrow's Parquet reader. The local
engine's fork server imports it once for all the processes it forks
(:mod:`anoneval.core.run.forkserver`), and a LocalCluster's workers as the cluster starts.
"""

from __future__ import annotations

from anoneval.core.run.forkserver import import_all
from anoneval.registry import BUILTIN_HOOK_PLUGINS

MODULES = ("anoneval.core.run.engine", "anoneval.registry",
           *(path.partition(":")[0] for path in BUILTIN_HOOK_PLUGINS.values()),
           "pyarrow.parquet", "pyarrow.dataset")

import_all(MODULES)

__all__ = ["MODULES"]
