"""Whether two results are the same up to the order their floats were added in.

Two paths to one result (partitions or blocks against the whole frame, the Dask engine against
the local one) add the same terms in another order, so their floats agree to about 1e-12
relative, not bit for bit; everything else must be equal.
"""

from __future__ import annotations

from typing import Any

import pytest


def close(a: Any, b: Any, abs_tol: float = 1e-15) -> bool:
    """Equal: dicts by key, lists and tuples by position, floats to 1e-12 relative (or
    ``abs_tol``; NaN equals NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], abs_tol) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(close(x, y, abs_tol) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-12, abs=abs_tol, nan_ok=True)
    return bool(a == b)
