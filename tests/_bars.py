"""A stand-in for the tqdm progress bar that records every update, for tests of progress."""

from __future__ import annotations

from typing import Any, ClassVar


class CountingBar:
    """Stands in for the tqdm bar: records every update (reset ``instances`` per test)."""

    instances: ClassVar[list[CountingBar]] = []

    def __init__(self, total: int, *args: Any, **kwargs: Any) -> None:
        self.total, self.updates, self.disable = total, [], False
        CountingBar.instances.append(self)

    def __enter__(self) -> CountingBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def update(self, n: int = 1) -> None:
        self.updates.append(n)

    def set_postfix_str(self, *args: Any, **kwargs: Any) -> None:
        return None
