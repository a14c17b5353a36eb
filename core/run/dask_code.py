"""The Dask worker plugin that loads the plugins of registry files (``file.py:Class``) on every
worker, those that join later included: a worker cannot import such a file by name."""

from __future__ import annotations

from typing import Any

from distributed import WorkerPlugin


class UserModules(WorkerPlugin):
    """Loads ``modules`` (name → (path, source), from :func:`anoneval.registry.user_modules`)
    by value when a worker starts or when it is registered."""

    idempotent = False

    def __init__(self, modules: dict[str, tuple[str, str]]) -> None:
        self.modules = modules

    def setup(self, worker: Any) -> None:
        import logging

        from anoneval.registry import load_user_sources

        for problem in load_user_sources(self.modules):
            logging.getLogger("anoneval").warning("cannot load the registry file %s", problem)
