"""File paths in plugin params: the ``ParamPath`` type and where a params model holds them.

A param typed :data:`ParamPath` (alone, optional, or as the values of a dict or list) names a
file the plugin reads, relative to the config file's folder. Declaring it so lets the config
layer check the file exists when the config is validated (``anoneval validate`` too) and lets
the run refuse any output that would overwrite it; the plugin resolves it with
``Context.path``, which gives an absolute path and returns an absolute path unchanged, so a
path resolved twice is still right.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Annotated, Any

from pydantic import BaseModel, Field

#: The JSON Schema mark of a path param (``"format": "path"`` is what editors understand).
_SCHEMA = {"format": "path", "x-anoneval-path": True}


class _PathMark:
    """The marker :func:`param_paths` looks for in a field's type."""

    def __repr__(self) -> str:
        return "ParamPath"


PATH_MARK = _PathMark()

#: A param naming a file the plugin reads, relative to the config file's folder.
ParamPath = Annotated[str, PATH_MARK, Field(min_length=1, json_schema_extra=_SCHEMA)]


def _marked(tp: Any) -> bool:
    """Whether a type annotation contains :data:`ParamPath` anywhere."""
    if typing.get_origin(tp) is Annotated and any(
            m is PATH_MARK for m in getattr(tp, "__metadata__", ())):
        return True
    return any(_marked(a) for a in typing.get_args(tp))


def path_fields(model: type[BaseModel]) -> list[str]:
    """Names of the fields of ``model`` typed with :data:`ParamPath`."""
    out = []
    for name, info in model.model_fields.items():
        if any(m is PATH_MARK for m in info.metadata) or _marked(info.annotation):
            out.append(name)
    return out


def param_paths(params: BaseModel) -> Iterator[tuple[str, str]]:
    """``(where, path)`` for every file path in ``params`` (``where`` like ``hierarchies.sex``),
    as written in the config."""
    for name in path_fields(type(params)):
        value = getattr(params, name)
        if isinstance(value, str):
            yield name, value
        elif isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, str):
                    yield f"{name}.{k}", v
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                if isinstance(v, str):
                    yield f"{name}[{i}]", v


__all__ = ["PATH_MARK", "ParamPath", "param_paths", "path_fields"]
