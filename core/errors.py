"""Exceptions with messages a practitioner can act on."""

from __future__ import annotations

from collections.abc import Iterable


class AnonevalError(Exception):
    """Base class of every error anoneval raises on purpose."""


class ConfigError(AnonevalError):
    """One or more problems in an evaluation config, each with its JSON path."""

    def __init__(self, problems: Iterable[tuple[str, str]]) -> None:
        self.problems = list(dict.fromkeys(problems))  # one check may meet a problem twice
        lines = [f"{path}: {msg}" if path else msg for path, msg in self.problems]
        super().__init__("invalid configuration:\n  " + "\n  ".join(lines))


class DataError(AnonevalError):
    """Input data that cannot be used as given (missing column, bad value, ...)."""


class PluginError(AnonevalError):
    """A plugin that cannot be registered or loaded."""


class UnknownPluginError(PluginError, KeyError):
    """A plugin name that no registered plugin of that kind has."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
