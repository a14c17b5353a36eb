"""Numeric embedding of mixed records for the distance-based fidelity measures, and their
seeded subsample."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
import pandas as pd
from pydantic import Field
from scipy.spatial.distance import cdist

from anoneval.core.api import DataError, Dataset, task_threads
from anoneval.plugins.fidelity._common import choose, pair, require_finite
from anoneval.plugins.fidelity._sklearn import design

T = TypeVar("T")


def embed(original: pd.DataFrame, released: pd.DataFrame, columns: Sequence[str]
          ) -> tuple[np.ndarray, np.ndarray]:
    """Both sides as dense float64 rows: numbers standardised by the original's mean and
    standard deviation (ddof 0; a missing value becomes 0 plus a 0/1 missing indicator),
    categories one-hot over the categories of both sides (missing is a category), so two
    records differing in one category are √2 apart; the one-hot columns in category order, so
    the embedding does not depend on the record order."""
    x, y = design(original, [original, released], columns, sort_categories=True)
    return x.toarray(), y.toarray()


def canonical(frame: pd.DataFrame) -> pd.DataFrame:
    """The records in an order fixed by their values (a 64-bit hash of each record; equal
    records are interchangeable): seeded samples, folds and bootstraps drawn by position then
    pick the same records whatever order the data came in."""
    h = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return frame.iloc[np.argsort(h, kind="stable")]


def rows_field(default: int) -> object:
    return Field(default, ge=2, description="Records of each side used (the method is "
                                            "quadratic): a larger side is replaced by a uniform "
                                            "random sample of that many, drawn with the "
                                            "evaluation seed (listed in details and warnings); "
                                            "null: all records.")


def sample_rows(n: int, max_rows: int | None, rng: np.random.Generator, role: str,
                warnings: list[str]) -> np.ndarray:
    """Row indices of a side: all, or ``max_rows`` sorted ones drawn without replacement."""
    if max_rows is None or n <= max_rows:
        return np.arange(n)
    warnings.append(f"a random sample of {max_rows:,} of the {n:,} {role} records was used "
                    "(max_rows)")
    return np.sort(rng.choice(n, size=max_rows, replace=False))


def sampled_embedding(original: Dataset | None, anonymized: Dataset | None,
                      columns: Sequence[str] | None, max_rows: int | None,
                      rng: np.random.Generator, name: str, warnings: list[str],
                      min_rows: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Both sides' chosen columns (all shared ones when ``columns`` is None; finite numbers
    required) in :func:`canonical` order, each sampled to at most ``max_rows`` rows
    (:func:`sample_rows`), then :func:`embed`-ded; fewer than ``min_rows`` rows on a side is
    an error naming the measure."""
    ori, syn = pair(original, anonymized, name)
    chosen = choose(ori, syn, columns, lambda s: True, name, "")
    require_finite({"original": ori, "anonymized": syn}, chosen, name)
    frames = [canonical(ori.frame[chosen]), canonical(syn.frame[chosen])]
    ir = sample_rows(len(ori), max_rows, rng, "original", warnings)
    iy = sample_rows(len(syn), max_rows, rng, "anonymized", warnings)
    if len(ir) < min_rows or len(iy) < min_rows:
        raise DataError(f"{name} needs at least {min_rows} records on each side")
    return embed(frames[0].iloc[ir], frames[1].iloc[iy], chosen)


#: Rows of the left side per block of pairwise distances (a block holds BLOCK × m floats).
BLOCK = 1024


def blocks(n: int, m: int, budget: int = 2**24) -> list[tuple[int, int]]:
    """Spans of left rows so that a block of distances to ``m`` right rows holds at most
    ``budget`` floats."""
    size = max(1, min(BLOCK, budget // max(m, 1)))
    return [(a, min(a + size, n)) for a in range(0, n, size)]


def each_block(fn: Callable[[int, int], T], spans: list[tuple[int, int]]) -> list[T]:
    """``fn(a, b)`` for every span, on the process's cores (scipy's cdist and numpy release
    the GIL), results in span order."""
    threads = task_threads()
    if threads == 1 or len(spans) == 1:
        return [fn(a, b) for a, b in spans]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda s: fn(*s), spans))


def distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distances by differences (scipy's cdist), so equal records are exactly 0
    apart and ties compare exactly."""
    return cdist(a, b)


def kth_neighbour(x: np.ndarray, k: int) -> np.ndarray:
    """Each row's distance to its k-th nearest other row of ``x`` (the (k+1)-th smallest
    distance counting the row itself; a duplicate row is a neighbour at distance 0)."""
    if k >= len(x):
        raise DataError(f"{k} nearest neighbours need more than {k} records; the data has "
                        f"{len(x)}")

    def part(a: int, b: int) -> np.ndarray:
        return np.partition(distances(x[a:b], x), k, axis=1)[:, k]

    return np.concatenate(each_block(part, blocks(len(x), len(x))))
