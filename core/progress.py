"""A dependency-free progress bar on stderr, shown only to a person watching a terminal."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO


class Progress:
    """Counts work done; draws a bar on ``stream`` when ``enabled`` (at most ~10 redraws/s)."""

    def __init__(self, total: int, desc: str = "", *, enabled: bool = False,
                 stream: TextIO | None = None) -> None:
        self.total = max(int(total), 0)
        self.desc = desc
        self.done = 0
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self._start = time.perf_counter()
        self._last = 0.0

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.enabled:
            now = time.perf_counter()
            if now - self._last >= 0.1 or self.done >= self.total:
                self._last = now
                self._draw(now)

    def _draw(self, now: float) -> None:
        frac = self.done / self.total if self.total else 1.0
        width = 30
        bar = "#" * int(frac * width)
        elapsed = now - self._start
        eta = elapsed / frac - elapsed if frac > 0 else float("nan")
        self.stream.write(
            f"\r{self.desc[:30]:<30} [{bar:<{width}}] {100 * frac:5.1f}% "
            f"{elapsed:6.1f}s eta {eta:6.1f}s"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def progress_wanted(quiet: bool = False, stream: TextIO | None = None) -> bool:
    """A bar is shown unless ``quiet`` or when the stream is not a terminal."""
    stream = stream if stream is not None else sys.stderr
    return not quiet and hasattr(stream, "isatty") and stream.isatty()
