"""Seeded samples of query rows: how the pairwise measures escape n² searches.

A pairwise measure (DistanceToClosestRecord, NNDR, RecordLinkage) compares every query row
with every reference row. With ``sample`` it searches the whole reference for a simple random
sample of query rows instead (drawn without replacement from the evaluation's seed), so the
work is s·n, not m·n, and reports the estimate with its interval. ``sample`` is a number of rows
(an integer ≥ 1) or a fraction of them (a float in (0, 1]); a sample as large as the rows, or
1.0, is no sample: the measure then runs exhaustively and equals the unsampled measure exactly.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field, field_validator

from anoneval.core.api import Params


class SampleParams(Params):
    """The ``sample`` param of the pairwise measures."""

    sample: int | float | None = Field(
        None, gt=0, description="Query rows searched: a number (≥ 1) or a fraction in (0, 1] "
        "of them, drawn at random with the evaluation's seed; null: all (exhaustive). The "
        "estimate's interval is in ci.")

    @field_validator("sample")
    @classmethod
    def _fraction_or_count(cls, v: int | float | None) -> int | float | None:
        if isinstance(v, float) and v > 1:
            raise ValueError("a fraction of the rows lies in (0, 1]; give a number of rows "
                             f"as an integer (got {v})")
        return v

    def sample_rows(self, n: int, rng: np.random.Generator) -> np.ndarray | None:
        """Sorted positions of the sampled rows among ``n``, or None when all are used."""
        return sample_rows(n, self.sample, rng)


def sample_size(n: int, sample: int | float | None) -> int:
    """How many of ``n`` rows ``sample`` asks for (at least 1 when n ≥ 1, at most n)."""
    if sample is None:
        return n
    if isinstance(sample, float):
        if not 0 < sample <= 1:
            raise ValueError(f"sample: a fraction must lie in (0, 1], got {sample}")
        return min(n, max(1, round(sample * n)))
    if sample < 1:
        raise ValueError(f"sample: a number of rows must be at least 1, got {sample}")
    return min(n, int(sample))


def sample_rows(n: int, sample: int | float | None, rng: np.random.Generator
                ) -> np.ndarray | None:
    """Sorted positions of a simple random sample of ``sample`` rows among ``n`` (see
    :func:`sample_size`), or None when that is every row."""
    size = sample_size(n, sample)
    if size >= n:
        return None
    return np.sort(rng.choice(n, size=size, replace=False))


__all__ = ["SampleParams", "sample_rows", "sample_size"]
