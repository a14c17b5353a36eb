"""Progress bars (tqdm; widgets in notebooks), shown only to a person watching a terminal."""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Callable, Iterator
from typing import TextIO

from tqdm.auto import tqdm

#: Seconds before a bar is drawn: work shorter than that shows none.
DELAY = 2.0


def progress_bar(total: int, desc: str = "", *, enabled: bool = False,
                 stream: TextIO | None = None, delay: float | None = None) -> tqdm:
    """A :class:`tqdm.auto.tqdm` bar of ``total`` steps on ``stream`` (default stderr);
    silent unless ``enabled``, drawn only once the work has taken ``delay`` seconds. Use it
    as a context manager and call ``update(n)``."""
    return tqdm(total=max(int(total), 0), desc=desc, disable=not enabled,
                file=stream if stream is not None else sys.stderr, leave=False,
                dynamic_ncols=True, mininterval=0.1, delay=DELAY if delay is None else delay)


def progress_wanted(quiet: bool = False, stream: TextIO | None = None) -> bool:
    """A bar is shown unless ``quiet`` or when the stream is not a terminal."""
    stream = stream if stream is not None else sys.stderr
    return not quiet and hasattr(stream, "isatty") and stream.isatty()


_RELAY: contextvars.ContextVar[Callable[[int], None] | None] = contextvars.ContextVar(
    "anoneval_progress_relay", default=None)


@contextlib.contextmanager
def relayed(send: Callable[[int], None]) -> Iterator[None]:
    """Within the block, :func:`step_done` calls ``send(n)``: an engine task hands its finished
    steps to the bar of the process that started the run (another process or machine)."""
    token = _RELAY.set(send)
    try:
        yield
    finally:
        _RELAY.reset(token)


def step_done(n: int = 1) -> None:
    """Report ``n`` finished steps (measures) to the run's bar when this code runs as an engine
    task elsewhere (:func:`relayed`); nothing otherwise (a bar here is updated directly)."""
    send = _RELAY.get()
    if send is not None:
        with contextlib.suppress(Exception):  # progress never fails a measure
            send(n)


__all__ = ["progress_bar", "progress_wanted", "relayed", "step_done"]
