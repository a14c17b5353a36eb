"""Progress bars (tqdm; widgets in notebooks), shown only to a person watching a terminal."""

from __future__ import annotations

import sys
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


__all__ = ["progress_bar", "progress_wanted"]
