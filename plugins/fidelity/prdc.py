"""Precision, recall, density and coverage of the release on the original's k-NN manifold."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import (
    Context,
    Dataset,
    IntervalParams,
    LossMeasure,
    MeasureResult,
    bootstrap_indices,
    percentile_interval,
)
from anoneval.plugins.fidelity._common import FidelityParams
from anoneval.plugins.fidelity._embed import (
    blocks,
    distances,
    each_block,
    kth_neighbour,
    rows_field,
    sampled_embedding,
)

STATISTICS = ("precision", "recall", "density", "coverage")


def prdc_indicators(x: np.ndarray, y: np.ndarray, k: int, closed: bool = False
                    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Per-record parts of PRDC: per released record (precision, density) and per original
    record (recall, coverage), and the k-NN radii of both sides; ``closed`` balls count a
    distance equal to the radius as inside."""
    rx, ry = kth_neighbour(x, k), kth_neighbour(y, k)
    within = np.less_equal if closed else np.less

    def part(a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        d = distances(x[a:b], y)                       # original block × released
        inside = within(d, rx[a:b, None])               # released j in original i's ball
        return (inside.any(axis=0), inside.sum(axis=0),
                within(d, ry[None, :]).any(axis=1), within(d.min(axis=1), rx[a:b]))

    parts = each_block(part, blocks(len(x), len(y)))
    return {"precision": np.logical_or.reduce([p[0] for p in parts]).astype(float),
            "density": np.sum([p[1] for p in parts], axis=0) / k,
            "recall": np.concatenate([p[2] for p in parts]).astype(float),
            "coverage": np.concatenate([p[3] for p in parts]).astype(float)}, rx, ry


class PRDC(LossMeasure):
    """Precision, recall, density and coverage of Naeem, Oh, Uh, Choi & Yoo (2020), "Reliable
    fidelity and diversity metrics for generative models", ICML (precision and recall after
    Kynkäänniemi et al. 2019), on the records embedded as numbers (standardised by the
    original; categories one-hot; missing values a 0 plus an indicator).

    With B(x, r) the open ball and NND_k(x) the distance from x to its k-th nearest other
    record of its own side (a duplicate record is a neighbour at distance 0), for original
    records X (n) and released records Y (m):
    precision = (1/m) Σ_j 1[∃i: ‖Y_j − X_i‖ < NND_k(X_i)];
    recall = (1/n) Σ_i 1[∃j: ‖X_i − Y_j‖ < NND_k(Y_j)];
    density = (1/(k m)) Σ_j Σ_i 1[‖Y_j − X_i‖ < NND_k(X_i)];
    coverage = (1/n) Σ_i 1[min_j ‖X_i − Y_j‖ < NND_k(X_i)].
    Strict ``<`` as Naeem et al.'s code and synthcity's PRDCScore (default). Distances are
    exact differences (equal records are exactly 0 apart); synthcity's come from
    ‖a‖² + ‖b‖² − 2a·b, whose rounding can break a tie at a ball's edge the other way. On data with
    many repeated records (categorical tables: a record with k or more copies has radius 0)
    an open ball of radius 0 holds nothing, so even an exact copy loses those records:
    ``closed: true`` counts ``<=`` instead (a departure from the paper). The value is the
    ``statistic`` chosen (default coverage, which Naeem et al. recommend with density); all
    four are in ``details`` with their intervals. Higher = closer to the original (density
    may exceed 1).

    The method is quadratic: sides larger than ``max_rows`` (default 5,000) are replaced by a
    seeded uniform sample (warning). ``ci``: seeded percentile bootstrap (``n_boot``) of the
    per-record indicators with the k-NN balls held fixed (released records resampled for
    precision and density, original records for recall and coverage), so the interval
    reflects the records averaged over, not the balls' own sampling variation.
    """

    name = "PRDC"
    description = "Precision, recall, density and coverage on k-nearest-neighbour balls "\
                  "(Naeem et al. 2020)."
    unit = "share"
    higher_is_worse = False

    class Params(FidelityParams, IntervalParams):
        k: int = Field(5, ge=1, le=1000, description="Nearest neighbours defining the balls.")
        closed: bool = Field(False, description="Count a distance equal to the radius as "
                                                "inside (<=), for data with repeated records.")
        statistic: Literal["precision", "recall", "density", "coverage"] = Field(
            "coverage", description="Which of the four is the value.")
        max_rows: int | None = rows_field(5000)

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        warnings: list[str] = []
        rng = ctx.rng(41)
        x, y = sampled_embedding(original, anonymized, p.columns, p.max_rows, rng, self.name,
                                 warnings)
        parts, _, _ = prdc_indicators(x, y, p.k, p.closed)
        boot = {"x": bootstrap_indices(rng, len(x), p.n_boot),
                "y": bootstrap_indices(rng, len(y), p.n_boot)}
        stats, cis = {}, {}
        for s in STATISTICS:
            v = parts[s]
            stats[s] = float(v.mean())
            side = "y" if s in ("precision", "density") else "x"
            cis[s] = percentile_interval(v[boot[side]].mean(axis=1), p.confidence_level)
        return MeasureResult(value=stats[p.statistic], ci=cis[p.statistic], warnings=warnings,
                             details={**stats, "ci": cis, "k": p.k, "closed": p.closed,
                                      "statistic": p.statistic,
                                      "rows": {"original": len(x), "anonymized": len(y)},
                                      "dimensions": x.shape[1]})
