"""scikit-learn for the model-based fidelity measures: the import, the design matrix and the
seeded subsample that bounds a model fit's records."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
from pydantic import Field
from scipy import sparse

from anoneval.core.api import PluginError
from anoneval.plugins._shared.mixed import is_numeric
from anoneval.plugins.fidelity._common import as_number


def sklearn(module: str, measure: str) -> ModuleType:
    """Import ``sklearn.<module>``; a missing scikit-learn names the extra that brings it."""
    try:
        return importlib.import_module(f"sklearn.{module}")
    except ImportError as exc:
        raise PluginError(f"{measure} needs scikit-learn; install it with "
                          "pip install 'anoneval[synthetic]'") from exc


def design(fit_on: pd.DataFrame, frames: Sequence[pd.DataFrame], columns: Sequence[str],
           drop_first: bool = False, sort_categories: bool = False) -> list[sparse.csr_matrix]:
    """Features of each frame: numeric columns standardised by ``fit_on`` (ddof 0; missing → 0
    plus a missing indicator), other columns one-hot on the categories of the frames (missing is a
    category; ``drop_first`` leaves out the first category, a full-rank coding;
    ``sort_categories`` orders the one-hot columns by category, not by first appearance, so
    that they do not depend on the record order)."""
    blocks: list[list[sparse.spmatrix]] = [[] for _ in frames]
    for c in columns:
        if all(is_numeric(f[c]) for f in (fit_on, *frames)):
            # sorted, so that mean and deviation have the same bits in any row order
            ref = np.sort(as_number(fit_on[c]).dropna().to_numpy())
            mu, sd = (ref.mean(), ref.std()) if len(ref) else (0.0, 0.0)
            sd = sd if sd > 0 else 1.0
            any_missing = any(f[c].isna().any() for f in frames)
            for out, f in zip(blocks, frames, strict=True):
                x = as_number(f[c]).to_numpy()
                miss = np.isnan(x)
                cols = [np.where(miss, 0.0, (x - mu) / sd)]
                if any_missing:
                    cols.append(miss.astype(float))
                out.append(sparse.csr_matrix(np.column_stack(cols)))
        else:
            joined = pd.concat([f[c] for f in frames], ignore_index=True)
            try:
                codes, uniques = pd.factorize(joined, use_na_sentinel=False,
                                              sort=sort_categories)
            except TypeError:  # categories of mixed types: sorted by their text
                codes, uniques = pd.factorize(joined.map(repr) if sort_categories else joined,
                                              use_na_sentinel=False, sort=sort_categories)
            start = 0
            for out, f in zip(blocks, frames, strict=True):
                n = len(f)
                part = codes[start:start + n]
                block = sparse.csr_matrix((np.ones(n), (np.arange(n), part)),
                                          shape=(n, len(uniques)))
                out.append(block[:, 1:] if drop_first else block)
                start += n
    return [sparse.hstack(b, format="csr") for b in blocks]


#: Largest design matrix (cells) handed to tree models as a dense float32 array.
DENSE_CELLS = 50_000_000


def for_trees(X: sparse.csr_matrix) -> sparse.csr_matrix | np.ndarray:
    """Trees fit much faster on dense float32 (their internal type) than on sparse input."""
    return X.toarray().astype(np.float32) if X.shape[0] * X.shape[1] <= DENSE_CELLS else X


def max_rows_field(defaults: str) -> Any:
    return Field(None, ge=2, description="Records of each data set given to the model: a larger "
                                         "one is replaced by a random sample of that many "
                                         "(evaluation seed; listed in details and warnings); "
                                         f"null: the model's default ({defaults}); a number "
                                         "at least the data's size: all records.")


def subsample(frames: dict[str, pd.DataFrame], max_rows: int | None, rng: np.random.Generator
              ) -> tuple[dict[str, pd.DataFrame], dict[str, int], list[str]]:
    """Each frame, or a uniform random sample of ``max_rows`` of its records (without
    replacement, record order kept) when it is larger; the sizes used and a warning per
    sampled frame."""
    out, sizes, notes = {}, {}, []
    for role, frame in frames.items():
        if max_rows is not None and len(frame) > max_rows:
            rows = np.sort(rng.choice(len(frame), size=max_rows, replace=False))
            notes.append(f"the model used a random sample of {max_rows:,} of the "
                         f"{len(frame):,} {role} records (max_rows)")
            frame = frame.iloc[rows]
        out[role], sizes[role] = frame, len(frame)
    return out, sizes, notes
