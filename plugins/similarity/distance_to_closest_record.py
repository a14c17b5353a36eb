"""Distance to the closest record: replica rows suspiciously close to an actual row."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import (
    Context,
    ControlUse,
    DataError,
    Dataset,
    IntervalParams,
    MeasureResult,
    Microdata,
    RiskMeasure,
    percentile_interval,
    spans,
    wilson_interval,
)
from anoneval.plugins._control import checked_control, refuse_non_finite
from anoneval.plugins._shared.continuous import ColumnsParams, Scale, paired, scale_pair
from anoneval.plugins._shared.euclidean import EuclideanIndex, Method, choose_method
from anoneval.plugins._shared.mixed import Encoded, encode, is_numeric, nearest_distances
from anoneval.plugins._shared.sampling import SampleParams

#: Query rows per block of the nearest searches (``Context.map_blocks``).
QUERY_ROWS = 1 << 15
#: Record pairs per block of the mixed-type brute-force search (chunked inside).
BLOCK_PAIRS = 1 << 24


def _query_block(shared: tuple[EuclideanIndex, np.ndarray, np.ndarray],
                 block: tuple[str, np.ndarray]) -> np.ndarray:
    """Nearest-actual distances of actual rows (``"x"``: the second nearest, the nearest being
    the row itself or a duplicate at 0) or replica rows (``"y"``) at positions ``rows``."""
    index, X, Y = shared
    side, rows = block
    if side == "x":
        return index.query(X[rows], k=2)[1][:, 1]
    return index.query(Y[rows], k=1)[1][:, 0]


def dcr_share(X: np.ndarray, Y: np.ndarray, percentile: float = 5.0, ctx: Context | None = None,
              x_rows: np.ndarray | None = None, y_rows: np.ndarray | None = None,
              method: Method = "auto") -> tuple[float, float, np.ndarray, np.ndarray, float]:
    """Share of replica rows close to an actual row, on already scaled samples (X needs two
    rows or more): #{h: DCR(x*_h) < t or DCR(x*_h) = 0}/m.

    Returns the share, the threshold t (the ``percentile``-th percentile of actual-to-actual
    nearest-neighbour distances), the DCRs of the replica rows, those NN distances and the
    same share for the actual rows (their NN distances in place of DCRs). ``x_rows`` /
    ``y_rows``: only those actual / replica rows are queried (each against all of X), a
    sample; None: all. The exact searches (:class:`EuclideanIndex`, ``method``) run in blocks
    of :data:`QUERY_ROWS` rows on ``ctx``'s engine (each row's distance is its own: the same
    on every engine).
    """
    xq = np.arange(len(X)) if x_rows is None else np.asarray(x_rows, np.int64)
    yq = np.arange(len(Y)) if y_rows is None else np.asarray(y_rows, np.int64)
    blocks = ([("x", xq[a:b]) for a, b in spans(len(xq), QUERY_ROWS)]
              + [("y", yq[a:b]) for a, b in spans(len(yq), QUERY_ROWS)])
    parts = (ctx or Context()).map_blocks(_query_block, blocks, (EuclideanIndex(X, method), X, Y),
                                          desc="DistanceToClosestRecord (nearest records)")
    nx = len(spans(len(xq), QUERY_ROWS))
    nn_actual = np.concatenate(parts[:nx])
    threshold = float(np.percentile(nn_actual, percentile))
    dcr = np.concatenate(parts[nx:]) if len(parts) > nx else np.zeros(0)

    def share(d: np.ndarray) -> float:
        return float(np.count_nonzero((d < threshold) | (d == 0)) / len(d))

    return share(dcr), threshold, dcr, nn_actual, share(nn_actual)


#: Bootstrap cells (replicates × rows) resampled at once: bounds the memory of the bootstrap.
BOOT_CELLS = 1 << 22


def share_replicates(nn_actual: np.ndarray, dcr: np.ndarray, percentile: float,
                     n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap replicates of :func:`dcr_share`'s share: each replicate resamples the actual
    rows' NN distances (so the threshold t_b) and the replica rows. Given t_b, the number of
    resampled replica rows that count is Binomial(m, F(t_b)), F the replica's share counting
    at t_b, which draws it exactly without materialising the m resampled rows; the
    thresholds' resamples are drawn in blocks of :data:`BOOT_CELLS` cells."""
    n = len(nn_actual)
    per = max(1, BOOT_CELLS // n)
    thresholds = np.concatenate([
        np.percentile(nn_actual[rng.integers(0, n, (min(per, n_boot - i), n))], percentile,
                      axis=1) for i in range(0, n_boot, per)])
    ordered = np.sort(dcr)
    zeros = int(np.count_nonzero(dcr == 0))
    counting = np.maximum(np.searchsorted(ordered, thresholds, side="left"), zeros)
    return rng.binomial(len(dcr), counting / len(dcr)) / len(dcr)


def _sdm_block(shared: tuple[Encoded, Encoded], span: tuple[int, int]) -> np.ndarray:
    query, reference = shared
    return nearest_distances(query.take(np.arange(*span)), reference, 1, cap=True)[:, 0]


def sdm_dcr(query: pd.DataFrame, reference: pd.DataFrame, columns: list[str],
            ctx: Context | None = None) -> np.ndarray:
    """SDMetrics' DCR of each query row to the reference: the mean over columns of
    min(|x − y| / R, 1) for numbers and datetimes (R the reference's range; R = 0: 0 if equal
    else 1) and 0/1 for other columns; both missing 0, one missing 1. Query rows run in
    blocks on ``ctx``'s engine (chunked inside)."""
    (q, r), _, _ = encode([query, reference], columns, range_from=[1])
    rows = max(BLOCK_PAIRS // max(len(r), 1), 1)
    parts = (ctx or Context()).map_blocks(_sdm_block, spans(len(q), rows), (q, r),
                                          desc="DistanceToClosestRecord (distances)")
    return (np.concatenate(parts) if parts else np.zeros(0)) / len(columns)


def uniform_like(real: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """SDMetrics' random baseline: per column, uniform on the real [min, max] (integers:
    uniform integers), a uniform choice of the real categories, missing at the real rate."""
    out = {}
    for c in real.columns:
        col = real[c]
        present = col.dropna()
        if not len(present):
            out[c] = pd.Series([np.nan] * n)
            continue
        if pd.api.types.is_integer_dtype(col) and not pd.api.types.is_bool_dtype(col):
            values = pd.Series(rng.integers(present.min(), present.max() + 1, size=n))
        elif is_numeric(col) and not pd.api.types.is_datetime64_any_dtype(col):
            values = pd.Series(rng.uniform(present.min(), present.max(), size=n))
        elif pd.api.types.is_datetime64_any_dtype(col):
            lo, hi = present.min().value, present.max().value
            values = pd.Series(pd.to_datetime(rng.integers(lo, hi + 1, size=n)))
        else:
            levels = present.unique()
            values = pd.Series(levels[rng.integers(0, len(levels), size=n)], dtype=object)
        missing = rng.random(n) < col.isna().mean()
        out[c] = values.where(~missing) if missing.any() else values
    return pd.DataFrame(out)


class DistanceToClosestRecord(RiskMeasure):
    """Replica rows close to an actual row: a share below a threshold, or SDMetrics' two DCR
    protections.

    ``mode = "share"`` (default): DCR(x*_h) = min_i ‖x*_h − x_i‖ (Euclidean, transformed
    scale, by default standardized by the actual's standard deviations, numeric ``columns``).
    The threshold t is the ``percentile``-th percentile (default 5th; numpy's linear
    interpolation) of the actual-to-actual nearest-neighbour distances, each actual row's
    distance to its nearest *other* actual row. The value is #{h: DCR(x*_h) < t or
    DCR(x*_h) = 0}/m (the literature's table-GAN / CTAB-GAN reference of DCR(real→real)):
    an exact copy always counts, so duplicated actual rows (t = 0) cannot hide copies.
    ``expected_share`` is the same share for the actual rows themselves, what a replica drawn
    from the actual's distribution should show; much more flags memorization.

    ``mode = "baseline"`` and ``"overfitting"`` are SDMetrics' DCRBaselineProtection and
    DCROverfittingProtection (SDMetrics docs) with their mixed-type distance over all columns
    (or ``columns``): the mean over columns of min(|x − y| / R, 1) for numbers (R the
    reference's range) and 0/1 for categories; both missing 0, one missing 1. baseline:
    score = min(median DCR(release→original) / median DCR(random→original), 1), the random
    table uniform within the original's ranges and categories, as large as the release,
    drawn with the evaluation seed; None when the random median is 0. overfitting (needs the
    control set as holdout): p = share of released rows strictly closer to the original than
    to the control set (ties count as control), score = min(2(1 − p), 1). ``details.score``
    is SDMetrics' score (higher = safer); the value is 1 − score (higher = riskier).
    ``ci`` at ``confidence_level``: in share mode the bootstrap percentile interval of
    :func:`share_replicates` (``n_boot`` replicates, resampling the threshold's actual rows and
    the replica rows; the actual rows' NN distances are resampled as values, not recomputed);
    overfitting, Wilson's interval of p mapped through the score; baseline, the bootstrap of
    both medians (the random table is kept). The reference is never subsampled
    (SDMetrics' ``num_rows_subsample`` also subsamples the real reference, SDMetrics#934,
    which hides copies). The share mode's search is exact (:class:`EuclideanIndex`): a
    KD-tree up to 12 columns, else blockwise BLAS screening, every distance recomputed
    directly (``cdist``'s values; exact copies at exactly 0). SDMetrics' modes search
    exhaustively in blocks of bounded memory (:func:`anoneval.plugins._shared.mixed.nearest`);
    no tree index fits that distance, whose per-column cap makes it no norm of a fixed
    embedding.

    ``sample`` (:mod:`anoneval.plugins._shared.sampling`): a seeded simple random sample of
    query rows searched against the whole original. Share mode: s replica rows and s actual
    rows (for the threshold; each still against every actual row), so the work is ~2·s·n
    instead of (n + m)·n; the bootstrap above then covers the sampling too (it resamples both
    samples), and ``details.sample`` gives the sizes. SDMetrics' modes: a sample of released
    rows (the random baseline as large as the sample). A sample of all rows is no sample.
    """

    name = "DistanceToClosestRecord"
    description = "Replica rows close to an actual row: share below the 5th percentile of "\
                  "actual-to-actual distances, or SDMetrics' DCR baseline/overfitting checks."
    unit = "share"

    @classmethod
    def unit_for(cls, params: Mapping[str, Any]) -> str | None:
        """A share in the default mode; 1 − an SDMetrics score (no unit) otherwise."""
        return cls.unit if params.get("mode", "share") == "share" else None

    class Params(ColumnsParams, IntervalParams, SampleParams):
        mode: Literal["share", "baseline", "overfitting"] = Field(
            "share", description="share: share below the actual-to-actual percentile; "
                                 "baseline / overfitting: SDMetrics' DCR protections.")
        percentile: float = Field(default=5.0, gt=0, lt=100,
                                  description="Percentile of actual-to-actual NN distances.")
        scale: Scale = Field(default="std",
                             description="std: divide columns by the actual's sd; none: raw.")
        search: Method = Field(
            "auto", description="Share mode's exact nearest search: kdtree, blas (blockwise "
            "‖a‖² + ‖b‖² − 2ab screening) or auto (the KD-tree up to 12 columns); all three "
            "give the same distances.")

    def control_use(self) -> ControlUse:
        return "required" if self.params.mode == "overfitting" else "none"

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if p.mode != "share":
            return self._protection(original, anonymized, ctx)
        X, Y, columns, _ = paired(original, anonymized, p, "DistanceToClosestRecord")
        if len(X) < 2:
            raise DataError("the original data needs at least two rows for actual-to-actual "
                            "nearest-neighbour distances")
        X, Y, _ = scale_pair(X, Y, p.scale, columns)
        rng = ctx.rng(7)
        x_rows, y_rows = p.sample_rows(len(X), rng), p.sample_rows(len(Y), rng)
        share, threshold, dcr, nn_actual, expected = dcr_share(X, Y, p.percentile, ctx,
                                                               x_rows, y_rows, p.search)
        q = np.percentile(dcr, [5, 50])
        reps = share_replicates(nn_actual, dcr, p.percentile, p.n_boot, ctx.rng(6))
        details: dict[str, Any] = {
            "threshold": threshold, "percentile": p.percentile, "expected_share": expected,
            "dcr_p5": float(q[0]), "dcr_median": float(q[1]),
            "actual_nn_median": float(np.median(nn_actual)),
            "exact_copies": int(np.count_nonzero(dcr == 0)),
            "search": choose_method(X.shape[1], p.search)}
        if x_rows is not None or y_rows is not None:
            details["sample"] = {"replica_rows": len(dcr), "of_replica_rows": len(Y),
                                 "actual_rows": len(nn_actual), "of_actual_rows": len(X)}
        return MeasureResult(value=share, ci=_ci(percentile_interval(reps, p.confidence_level)),
                             details=details)

    def _protection(self, original: Dataset | None, anonymized: Dataset | None,
                    ctx: Context) -> MeasureResult:
        p = self.params
        sides = [("original", original), ("anonymized", anonymized)]
        for role, data in sides:
            if not isinstance(data, Microdata) or len(data) == 0:
                raise DataError(f"DistanceToClosestRecord ({p.mode}) needs {role} microdata "
                                "with records")
        columns = p.columns or list(original.columns)
        for role, data in sides:
            data.require(columns, "DistanceToClosestRecord column")
            refuse_non_finite(data.frame, columns, f"{role} data",
                              f"DistanceToClosestRecord ({p.mode})", empty_ok=True)
        if p.mode == "overfitting":
            checked_control(ctx.control, columns, f"DistanceToClosestRecord ({p.mode})")
        real, syn = original.frame[columns], anonymized.frame[columns]
        rows = p.sample_rows(len(syn), ctx.rng(7))
        if rows is not None:
            syn = syn.iloc[rows]
        to_real = sdm_dcr(syn, real, columns, ctx)
        if p.mode == "baseline":
            random = uniform_like(real, len(syn), ctx.rng(5))
            to_random = sdm_dcr(random, real, columns, ctx)
            med_syn, med_rand = float(np.median(to_real)), float(np.median(to_random))
            details = {"median_DCR_to_real_data": {"synthetic_data": med_syn,
                                                   "random_data_baseline": med_rand}}
            if med_rand == 0:
                return MeasureResult(value=None, details={**details, "score": None},
                                     warnings=["the random baseline's median DCR is 0: the "
                                               "score is undefined"])
            score = min(med_syn / med_rand, 1.0)
            rng = ctx.rng(6)  # resample both medians; the score is capped at 1 as the value
            ratios = [float(np.median(to_real[rng.integers(0, len(to_real), len(to_real))]))
                      / max(float(np.median(to_random[rng.integers(0, len(to_random),
                                                                   len(to_random))])), 1e-300)
                      for _ in range(p.n_boot)]
            ends = percentile_interval(1 - np.minimum(ratios, 1.0), p.confidence_level)
        else:
            to_holdout = sdm_dcr(syn, ctx.control.frame[columns], columns, ctx)
            n_closer = int(np.count_nonzero(to_real < to_holdout))
            closer = n_closer / len(to_real)
            score = min(2 * (1 - closer), 1.0)
            low, high = wilson_interval(n_closer, len(to_real), p.confidence_level)
            ends = (1 - min(2 * (1 - low), 1.0), 1 - min(2 * (1 - high), 1.0))
            details = {"synthetic_data_percentages": {"closer_to_training": closer,
                                                      "closer_to_holdout": 1 - closer}}
            if len(ctx.control) < len(original) / 2:
                details["note"] = "the control set is smaller than half the original"
        if rows is not None:
            details["sample"] = {"released_rows": len(syn), "of_released_rows": len(anonymized)}
        return MeasureResult(value=1 - score, ci=_ci(ends),
                             details={"score": score, "mode": p.mode, **details})


def _ci(ends: tuple[float, float] | None) -> list[float] | None:
    return None if ends is None else [ends[0], ends[1]]

