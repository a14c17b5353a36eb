"""The mobility anonymizer's ``PropensityScore``: can a classifier tell the release apart?"""

from __future__ import annotations

import importlib
from typing import Any, Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    IntervalParams,
    LossMeasure,
    MeasureResult,
    Params,
    PluginError,
    Trajectories,
    bootstrap_indices,
    percentile_interval,
)
from anoneval.plugins.mobility._tiles import Grid, TileSpec, make_grid


def tile_sequences(data: Trajectories, grid: Grid, interval: float | None,
                   t0: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Each trajectory's distinct (time-sliced) tile ids in first-visit order: the ids
    concatenated, their count per trajectory, and the largest possible id (tile + n_tiles ·
    ⌊(t − t0) / interval⌋ with time slices, up to the last slice any point of ``data``
    reaches)."""
    tile = grid.tile_of(data.lon, data.lat)
    max_id = grid.n_tiles - 1
    if interval is not None:
        slot = np.maximum(np.floor((data.t - t0) / interval).astype(np.int64), 0)
        tile = np.where(tile >= 0, tile + grid.n_tiles * slot, -1)
        max_id = grid.n_tiles * (int(slot.max()) + 1) - 1
    traj = np.repeat(np.arange(len(data)), data.lengths)
    keep = tile >= 0
    traj, tile = traj[keep], tile[keep]
    # the first occurrence of each (trajectory, id), kept in point order
    _, first = np.unique(traj.astype(np.int64) * (max_id + 1) + tile, return_index=True)
    first = np.sort(first)
    return tile[first], np.bincount(traj[first], minlength=len(data)), max_id


def feature_matrix(ids: np.ndarray, lengths: np.ndarray, max_id: int) -> np.ndarray:
    """Rows: each sequence of ``ids`` (``lengths`` per row) divided by ``max_id``,
    left-padded with 0 to the longest one."""
    width = max(int(lengths.max()) if len(lengths) else 0, 1)
    X = np.zeros((len(lengths), width))
    rows = np.repeat(np.arange(len(lengths)), lengths)
    starts = np.r_[0, np.cumsum(lengths)[:-1]]
    cols = width - lengths[rows] + (np.arange(len(ids)) - starts[rows])
    X[rows, cols] = ids / max(max_id, 1)
    return X


def propensity(prob: np.ndarray) -> float:
    """4 · mean((p̂ − ½)²): 0 when the classifier cannot tell the sides apart, 1 when sure."""
    return float(4.0 * np.mean((prob - 0.5) ** 2))


class PropensityScore(LossMeasure):
    """The MobiDataLab anonymizer's propensity score of trajectories (``PropensityScore``).

    Definition (``mdl-anonymizer`` ``measures_methods/PropensityScore.py``; the propensity idea
    of Woo et al. 2009, J. Privacy and Confidentiality 1(1)): square tiles of ``tile_size``
    EPSG:3857 units (upstream 200) over the ORIGINAL data's extent; each trajectory becomes the
    sequence of the distinct tiles it visits, in first-visit order (optionally sliced in time:
    id = tile + n_tiles · ⌊(t − t_min,orig) / time_interval⌋), each id divided by the largest
    possible id, left-padded with 0 to the longest sequence of both sides (points off the
    tiles are dropped). Rows are labelled 0 (original) and 1 (anonymized), shuffled and split
    75/25 (seeded); a gradient-boosted tree classifier is fitted on the 75 % and predicts
    p̂ = P(anonymized) for ALL rows; the value is 4 · mean((p̂ − ½)²) in [0, 1] (0: the sides
    are indistinguishable, 1: perfectly told apart).

    Differences from upstream, which are the reasons for the ``compat`` note: upstream fits
    XGBoost (``xgboost.XGBClassifier`` defaults); here it is scikit-learn's
    ``HistGradientBoostingClassifier`` (the same model family; the ``synthetic`` extra), so
    values agree in behaviour, not to the digit (upstream's own value moves with the XGBoost
    version, reference/mobility_rappor.md §A6). Upstream's ``run()`` ignores its
    ``tiles_size`` and ``time_interval`` parameters (it always uses 200 and no time slices):
    ``compat: "mdl"`` does the same; by default the parameters apply. Upstream's time slices
    number ``bisect_left − 1`` (the earliest instant in slice −1, ids colliding between
    slices); here slices are ⌊(t − t_min)/interval⌋, without collisions.

    ``ci`` is a bootstrap percentile interval over the rows of the per-row terms 4(p̂ − ½)²,
    for the fitted model (it does not refit); the details give the accuracies on the train,
    test and all rows. The model is fitted on one thread: a fit is small, and OpenMP threads
    on a shared machine cost more than they bring.
    """

    name = "PropensityScore"
    description = ("MobiDataLab's propensity score: 4·mean((p̂−½)²) of a classifier telling "
                   "anonymized from original tile sequences.")
    accepts = ("trajectories",)

    class Params(Params, IntervalParams):
        tile_size: float = Field(200.0, gt=0, description=(
            "Square tile side, EPSG:3857 units (upstream tiles_size, 200)."))
        time_interval: float | None = Field(None, gt=0, description=(
            "Seconds per time slice of the tile ids (upstream time_interval); null: none."))
        test_size: float = Field(0.25, gt=0, lt=1, description="Held-out share (upstream 25 %).")
        compat: Literal["mdl"] | None = Field(None, description=(
            "mdl: upstream's run(): tile_size 200 and no time slices whatever is given."))

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(original, Trajectories) and isinstance(anonymized, Trajectories)
        p = self.params
        for side, data in (("original", original), ("anonymized", anonymized)):
            if len(data) == 0 or data.n_points == 0:
                raise DataError(f"{self.name}: the {side} data has no trajectories")
        size, interval = (200.0, None) if p.compat == "mdl" else (p.tile_size, p.time_interval)
        grid = make_grid(TileSpec(size=size), original)
        assert isinstance(grid, Grid)
        t0 = int(original.t.min())
        ido, no, max_o = tile_sequences(original, grid, interval, t0)
        ida, na, max_a = tile_sequences(anonymized, grid, interval, t0)
        X = feature_matrix(np.r_[ido, ida], np.r_[no, na], max(max_o, max_a))
        y = np.r_[np.zeros(len(no), dtype=np.int64), np.ones(len(na), dtype=np.int64)]
        # rows in an order fixed by their values, so the seeded split ignores trajectory order
        canon = np.lexsort((*X.T[::-1], y))
        X, y = X[canon], y[canon]
        rng = ctx.rng(26)
        order = rng.permutation(len(y))
        n_test = int(np.ceil(p.test_size * len(y)))  # sklearn's train_test_split rounding
        if n_test >= len(y) or n_test < 1:
            raise DataError(f"{self.name}: {len(y)} trajectories cannot be split "
                            f"{1 - p.test_size:.0%}/{p.test_size:.0%}")
        test, train = order[:n_test], order[n_test:]
        if len(np.unique(y[train])) < 2:
            raise DataError(f"{self.name}: the training split holds one side only; give more "
                            "trajectories")
        ensemble = _sklearn("ensemble", self.name)
        model = ensemble.HistGradientBoostingClassifier(
            random_state=int(rng.integers(2**31 - 1)))
        threadpoolctl = importlib.import_module("threadpoolctl")  # a scikit-learn dependency
        with threadpoolctl.threadpool_limits(1):  # OpenMP threads spin on a busy machine
            model.fit(X[train], y[train])
            prob = model.predict_proba(X)[:, 1]
        terms = 4.0 * (prob - 0.5) ** 2
        value = propensity(prob)
        reps = terms[bootstrap_indices(ctx.rng(27), len(terms), p.n_boot)].mean(axis=1)
        pred = (prob > 0.5).astype(np.int64)
        details: dict[str, Any] = {
            "propensity": round(value, 4),  # upstream's result key and rounding
            "trajectories": {"original": len(no), "anonymized": len(na)},
            "sequence_length": int(X.shape[1]),
            "tiles": grid.describe(),
            "time_interval": interval,
            "accuracy": {"train": float(np.mean(pred[train] == y[train])),
                         "test": float(np.mean(pred[test] == y[test])),
                         "all": float(np.mean(pred == y))},
            "model": "sklearn HistGradientBoostingClassifier (upstream: XGBoost)",
            "ci_note": "bootstrap over rows for the fitted model (no refits)",
        }
        ci = percentile_interval(reps, p.confidence_level)
        return MeasureResult(value=value, details=details,
                             ci=list(ci) if ci is not None else None)


def _sklearn(module: str, measure: str) -> Any:
    try:
        return importlib.import_module(f"sklearn.{module}")
    except ImportError as exc:
        raise PluginError(f"{measure} needs scikit-learn; install it with "
                          "pip install 'anoneval[synthetic]'") from exc
