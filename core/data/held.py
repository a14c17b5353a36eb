"""Process-wide settings that callers in any thread switch on while they need them.

pandas' options and Dask's configuration are one per process. A context manager per caller
(``pd.option_context``, ``dask.config.set``) restores the old value when that caller ends,
even while a caller in another thread still needs the setting. A :class:`Held` setting counts
its callers instead: the first in switches it on, the last out restores it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any


class Held:
    """A setting switched on by ``switch_on``, which returns the call that restores it."""

    def __init__(self, switch_on: Callable[[], Callable[[], None]]) -> None:
        self._switch_on = switch_on
        self._lock = threading.Lock()
        self._callers = 0
        self._restore: Callable[[], None] | None = None

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._callers == 0:
                self._restore = self._switch_on()
            self._callers += 1
        try:
            yield
        finally:
            with self._lock:
                self._callers -= 1
                if self._callers == 0 and self._restore is not None:
                    restore, self._restore = self._restore, None
                    restore()


def pandas_option(name: str, value: Any) -> Callable[[], Callable[[], None]]:
    """The ``switch_on`` of pandas option ``name`` set to ``value``."""

    def switch_on() -> Callable[[], None]:
        import pandas as pd

        before = pd.get_option(name)
        pd.set_option(name, value)
        return lambda: pd.set_option(name, before)

    return switch_on


def dask_config(settings: dict[str, Any]) -> Callable[[], Callable[[], None]]:
    """The ``switch_on`` of Dask configuration ``settings``."""

    def switch_on() -> Callable[[], None]:
        import dask

        changed = dask.config.set(settings)
        return lambda: changed.__exit__(None, None, None)

    return switch_on
