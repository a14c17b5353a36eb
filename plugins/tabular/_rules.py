"""The primary sensitivity rules ((n,k) dominance, p% and pq, minimum frequency) on per-cell
statistics, with tau-Argus's protection levels; conventions in :mod:`._cells`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

#: Relative tolerance of the rule comparisons (see the docstring of :mod:`._cells`).
RTOL = 1e-10
Level = Literal["record", "holding"]


@dataclass
class LevelStats:
    """Per-cell statistics at one level (records or holdings)."""

    contributors: np.ndarray
    total: np.ndarray
    top: np.ndarray  # (cells, depth): T(1..depth), cumulative top-unit sums


@dataclass(frozen=True)
class Rule:
    """One primary sensitivity rule at record or holding level."""

    kind: Literal["nk", "p", "freq"]
    level: Level = "record"
    n: int = 1
    k: float = 75.0
    p: float = 10.0
    q: float = 100.0
    min_contributors: float = 3

    @property
    def depth(self) -> int:
        """How many top units the rule reads: n for (n,k), n+1 for p/pq, none for freq."""
        return {"nk": self.n, "p": self.n + 1, "freq": 0}[self.kind]

    @property
    def label(self) -> str:
        if self.kind == "nk":
            text = f"nk({self.n},{_num(self.k)})"
        elif self.kind == "p" and self.q == 100:
            text = f"p({_num(self.p)},n={self.n})"
        elif self.kind == "p":
            text = f"pq({_num(self.p)},{_num(self.q)},n={self.n})"
        else:
            text = f"freq(<{_num(self.min_contributors)})"
        return f"holding:{text}" if self.level == "holding" else text

    def unsafe(self, lv: LevelStats) -> np.ndarray:
        """Cells failing the rule (empty cells are excluded by the caller)."""
        if self.kind == "freq":
            return lv.contributors < self.min_contributors
        x_total = lv.total
        tol = RTOL * np.abs(x_total)
        if self.kind == "nk":
            # unsafe iff Σ_{i<=n} x_i > k/100 · X  (sdcTable domRule, tau-Argus DataCell.cpp)
            return self.k * x_total < 100.0 * lv.top[:, self.n - 1] - 100.0 * tol
        # unsafe iff X − Σ_{i<=n+1} x_i < p/q · x1  (tau-Argus P(p,q,n); p% rule when q = 100)
        gap = x_total - lv.top[:, self.n]
        return self.q * gap < self.p * lv.top[:, 0] - self.q * tol


    def protection(self, lv: LevelStats) -> np.ndarray:
        """tau-Argus's upper protection level (Table.cpp): how far the cell total must be from
        what an intruder could claim: (n,k): 100·Σ_{i<=n} x_i / k − X; p/pq: (p/q)·x_1 −
        (X − Σ_{i<=n+1} x_i). Positive exactly when the rule fails; NaN for the freq rule."""
        if self.kind == "freq":
            return np.full(len(lv.contributors), np.nan)
        if self.kind == "nk":
            return 100.0 * lv.top[:, self.n - 1] / self.k - lv.total
        return self.p / self.q * lv.top[:, 0] - (lv.total - lv.top[:, self.n])


def _num(v: float) -> str:
    return f"{v:g}"

