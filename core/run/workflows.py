"""Workflow configs: plugins register a config model by name; a config picks one by its
top-level ``workflow`` key.

A workflow (e.g. the information architecture) is a program with its own config, not a
measure. Its plugin registers the config's pydantic model through the ``workflow`` hook, so
``anoneval validate`` checks such a config in full and ``anoneval schema`` describes it, while
the core knows no workflow by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from anoneval.core.data.files import read_json
from anoneval.core.errors import ConfigError, DataError, PluginError

if TYPE_CHECKING:
    from anoneval.registry import Registry

#: The top-level key that names a config's workflow.
WORKFLOW_KEY = "workflow"

Check = Callable[[Any, Path, "Registry", "Path | None"], None]


@dataclass(frozen=True)
class Workflow:
    """One registered workflow config."""

    name: str
    model: type[BaseModel]
    check: Check | None = None

    def validate(self, raw: Any, base_dir: Path, registry: Registry,
                 config_path: Path | None = None) -> BaseModel:
        """The validated config; every problem in one :class:`ConfigError`."""
        from anoneval.core.run.config import json_path

        try:
            config = self.model.model_validate(raw)
        except ValidationError as exc:
            raise ConfigError([(json_path(e["loc"]), e["msg"]) for e in exc.errors()]) from exc
        if self.check is not None:
            self.check(config, base_dir, registry, config_path)
        return config


def workflows(registry: Registry) -> dict[str, Workflow]:
    """Every workflow the registry's plugins register, by name."""
    found: dict[str, Workflow] = {}

    def register(name: str, model: type[BaseModel], check: Check | None = None) -> None:
        if name in found:
            raise PluginError(f"workflow {name!r} is registered twice")
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise PluginError(f"workflow {name!r}: {model!r} is not a pydantic model")
        found[name] = Workflow(name, model, check)

    registry.pm.hook.workflow(register=register)
    return dict(sorted(found.items()))


def workflow_name(path: str | Path) -> str | None:
    """The ``workflow`` key of a JSON config file, or None (also when it cannot be read:
    the evaluation config's loader then reports why)."""
    try:
        raw = read_json(path, "config")
    except DataError:
        return None
    name = raw.get(WORKFLOW_KEY) if isinstance(raw, dict) else None
    return name if isinstance(name, str) else None


def load_workflow_config(path: str | Path, registry: Registry) -> tuple[Workflow, BaseModel]:
    """Read and validate a workflow config file (its ``workflow`` key picks the model)."""
    path = Path(path)
    try:
        raw = read_json(path, "config")
    except DataError as exc:
        raise ConfigError([("", str(exc))]) from None
    name = raw.get(WORKFLOW_KEY) if isinstance(raw, dict) else None
    known = workflows(registry)
    if name not in known:
        raise ConfigError([(WORKFLOW_KEY, f"unknown workflow {name!r}; known: "
                                          f"{', '.join(known) or '(none)'}")])
    flow = known[name]
    return flow, flow.validate(raw, path.resolve().parent, registry, path)


__all__ = ["WORKFLOW_KEY", "Workflow", "load_workflow_config", "workflow_name", "workflows"]
