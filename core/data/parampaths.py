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


def _keywords(tp: Any) -> set[str]:
    """The strings a ``Literal`` anywhere in ``tp`` accepts (``"flat"`` beside a path)."""
    if typing.get_origin(tp) is typing.Literal:
        return {a for a in typing.get_args(tp) if isinstance(a, str)}
    return set().union(*(_keywords(a) for a in typing.get_args(tp)))


def path_fields(model: type[BaseModel]) -> list[str]:
    """Names of the fields of ``model`` typed with :data:`ParamPath`."""
    out = []
    for name, info in model.model_fields.items():
        if any(m is PATH_MARK for m in info.metadata) or _marked(info.annotation):
            out.append(name)
    return out


def param_paths(params: BaseModel) -> Iterator[tuple[str, str]]:
    """``(where, path)`` for every file path in ``params`` (``where`` like ``hierarchies.sex``),
    as written in the config; a keyword the field's type also accepts (a ``Literal``) is no
    path."""
    for name in path_fields(type(params)):
        value = getattr(params, name)
        keywords = _keywords(type(params).model_fields[name].annotation)
        if isinstance(value, str):
            items: list[tuple[str, object]] = [(name, value)]
        elif isinstance(value, dict):
            items = [(f"{name}.{k}", v) for k, v in value.items()]
        elif isinstance(value, (list, tuple)):
            items = [(f"{name}[{i}]", v) for i, v in enumerate(value)]
        else:
            items = []
        for where, v in items:
            if isinstance(v, str) and v not in keywords:
                yield where, v


__all__ = ["PATH_MARK", "ParamPath", "param_paths", "path_fields"]
