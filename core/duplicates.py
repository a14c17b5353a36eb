"""Finding values listed more than once (labels, quasi-identifiers, cells, columns)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable


def repeated(values: Iterable[str]) -> list[str]:
    """The values that occur more than once, sorted (for "listed twice" errors)."""
    return sorted(v for v, n in Counter(values).items() if n > 1)
