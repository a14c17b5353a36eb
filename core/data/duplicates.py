"""Finding values listed more than once (labels, quasi-identifiers, cells, columns)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable


def repeated(values: Iterable[str]) -> list[str]:
    """The values that occur more than once, sorted (for "listed twice" errors)."""
    return sorted(v for v, n in Counter(values).items() if n > 1)


def distinct(message: str) -> Callable[[list[str]], list[str]]:
    """A pydantic after-validator refusing a list with repeated values: ``message`` and the
    repeated values, e.g. ``Annotated[list[str], AfterValidator(distinct("listed twice:"))]``."""

    def check(values: list[str]) -> list[str]:
        dups = repeated(values)
        if dups:
            raise ValueError(f"{message} {dups}")
        return values

    return check
