"""Sample and weighted frequencies of each record's key: fk, Fk, and sdcMicro's wildcard rule.

* ``fk`` is the number of released records sharing a record's quasi-identifier values and
  ``Fk`` the sum of their sampling weights (``Fk = fk`` without weights): the sample and
  estimated population frequencies of Skinner & Holmes (1998) and Benedetti & Franconi (1998).
* ``missing="wildcard"`` follows sdcMicro's ``freqCalc`` (Templ, Kowarik & Meindl 2015): a
  missing value matches any value. Two keys are *compatible* when they agree wherever both are
  observed. For a complete key, fk = its own count + α·(compatible keys that are partly
  missing; keys missing on every variable are not added). For a partly missing key, fk = its
  own count + α·(other compatible keys with a missing value, all-missing ones included) +
  (compatible complete keys, not scaled by α). A record missing on every key has fk = n. With a
  single key variable, complete keys add α·(number of missing records). ``Fk`` follows the same
  rule with weights.

Records suppressed on every quasi-identifier are in no class; their fk and Fk are NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from anoneval.core.api import Context, Microdata
from anoneval.plugins.microdata._common import Classes


def note_wildcard(ctx: Context, since: int) -> None:
    """Reword the missing-value warnings issued after ``since``: they are wildcards here."""
    for i in range(since, len(ctx.warnings)):
        text = ctx.warnings[i]
        if text.startswith("missing values in quasi-identifiers"):
            ctx.warnings[i] = (text.split("; treated as")[0] + "; treated as wildcards "
                               "matching any value (sdcMicro's freqCalc rule)")


@dataclass(frozen=True)
class Frequencies:
    """Per-class and per-row frequencies.

    ``fk``/``Fk`` are indexed by class (see :class:`Classes`); ``row_fk``/``row_Fk`` by released
    row (NaN for suppressed rows).
    """

    fk: np.ndarray
    Fk: np.ndarray
    row_class: np.ndarray

    @property
    def row_fk(self) -> np.ndarray:
        return _per_row(self.fk, self.row_class)

    @property
    def row_Fk(self) -> np.ndarray:
        return _per_row(self.Fk, self.row_class)


def _per_row(per_class: np.ndarray, row_class: np.ndarray) -> np.ndarray:
    out = np.full(len(row_class), np.nan)
    ok = row_class >= 0
    out[ok] = per_class[row_class[ok]]
    return out


def frequencies(data: Microdata, qi: list[str], cl: Classes, weights: np.ndarray | None,
                wildcard: bool = False, alpha: float = 1.0) -> Frequencies:
    """fk and Fk of every class of ``cl`` (classes formed with missing values as a value)."""
    row_class = cl.row_class()
    n_classes = len(cl.sizes)
    released = row_class >= 0
    f = cl.sizes.astype(np.float64)
    if weights is None:
        w_class = f.copy()
    else:
        w_class = np.bincount(row_class[released], weights=weights[released],
                              minlength=n_classes)
    if wildcard and n_classes:
        f, w_class = _wildcard(data, qi, row_class, released, f, w_class, alpha)
    return Frequencies(f, w_class, row_class)


def _class_codes(data: Microdata, qi: list[str], row_class: np.ndarray,
                 released: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Code matrix (class × key) of each class and its missing-value mask."""
    rows = np.flatnonzero(released)
    first = np.full(n_classes, -1, dtype=np.int64)
    first[row_class[rows][::-1]] = rows[::-1]  # first row of each class
    codes = np.empty((n_classes, len(qi)), dtype=np.int64)
    missing = np.zeros((n_classes, len(qi)), dtype=bool)
    for j, col in enumerate(qi):
        c, uniques = data.codes(col)
        codes[:, j] = c[first]
        na = np.flatnonzero(np.asarray(pd.isna(uniques), dtype=bool))
        if len(na):
            missing[:, j] = np.isin(codes[:, j], na)
    return codes, missing


def _project(codes: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Dense ids of the rows of ``codes`` restricted to ``cols`` (equal projections share)."""
    if len(cols) == 0:
        return np.zeros(len(codes), dtype=np.int64)
    frame = pd.DataFrame(codes[:, cols])
    return frame.groupby(list(frame.columns), sort=False).ngroup().to_numpy(np.int64)


def _sum_matching(src_codes: np.ndarray, src_values: np.ndarray, dst_codes: np.ndarray,
                  cols: np.ndarray) -> np.ndarray:
    """For each ``dst`` row, the sum of ``src_values`` over ``src`` rows equal on ``cols``."""
    both = _project(np.vstack([src_codes, dst_codes]), cols)
    sums = np.bincount(both[:len(src_codes)], weights=src_values, minlength=int(both.max()) + 1)
    return sums[both[len(src_codes):]]


def _wildcard(data: Microdata, qi: list[str], row_class: np.ndarray, released: np.ndarray,
              f: np.ndarray, w: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """freqCalc's wildcard frequencies of each class (see the module docstring)."""
    codes, missing = _class_codes(data, qi, row_class, released, len(f))
    if not missing.any():
        return f, w
    m = len(qi)
    bits = (missing * (1 << np.arange(m))).sum(axis=1)
    full = (1 << m) - 1
    n_total, w_total = f.sum(), w.sum()
    new_f, new_w = f.copy(), w.copy()
    complete = np.flatnonzero(bits == 0)
    if m == 1:
        na = bits == full
        new_f[complete] += alpha * f[na].sum()
        new_w[complete] += alpha * w[na].sum()
        new_f[na], new_w[na] = n_total, w_total
        return new_f, new_w
    masks = [int(b) for b in np.unique(bits) if b not in (0, full)]
    with_na = [*masks, full] if (bits == full).any() else masks
    members = {b: np.flatnonzero(bits == b) for b in {*with_na, 0}}
    observed = {b: np.flatnonzero(~((b >> np.arange(m)) & 1).astype(bool)) for b in members}
    for b1 in masks:
        i = members[b1]
        # compatible complete keys count fully; the partial key counts α towards them
        c = members[0]
        if len(c):
            new_f[i] += _sum_matching(codes[c], f[c], codes[i], observed[b1])
            new_w[i] += _sum_matching(codes[c], w[c], codes[i], observed[b1])
            new_f[c] += alpha * _sum_matching(codes[i], f[i], codes[c], observed[b1])
            new_w[c] += alpha * _sum_matching(codes[i], w[i], codes[c], observed[b1])
        for b2 in with_na:  # other keys with a missing value count α
            j = members[b2]
            common = np.intersect1d(observed[b1], observed[b2])
            add_f = _sum_matching(codes[j], f[j], codes[i], common)
            add_w = _sum_matching(codes[j], w[j], codes[i], common)
            if b2 == b1:  # a key is not compatible "with another" with itself
                add_f, add_w = add_f - f[i], add_w - w[i]
            new_f[i] += alpha * add_f
            new_w[i] += alpha * add_w
    all_na = bits == full
    new_f[all_na], new_w[all_na] = n_total, w_total
    return new_f, new_w
