"""Distance between each original trajectory and its anonymized version, summarised."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    Distance,
    LossMeasure,
    MeasureResult,
    Params,
    PluginRef,
    Trajectories,
    plugin_ref,
)
from anoneval.plugins.mobility._pairing import (
    fit_trajectory_distance,
    length_unit,
    pair_by_id,
    version_distances,
)

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


class TrajectoryDistortion(LossMeasure):
    """How far each anonymized trajectory is from its original, by any trajectory distance.

    For every trajectory id present on both sides, D(T_i, T'_i) with the ``distance`` plugin
    (fitted on the original); the value is the ``statistic`` of these distances (mean, median or
    max; the mean by default). Details: the quantiles 5, 25, 50, 75, 95 % (numpy's linear
    interpolation), the counts of ids missing on either side (with a warning: a removed
    trajectory has no distance; see TrajectoriesRemoved), and with ``per_pair`` the distance of
    every id. The per-pair distance is the usual utility view of trajectory anonymization
    (e.g. Abul, Bonchi & Nanni 2008, "Never walk alone", ICDE: the distortion of W4M).
    """

    name = "TrajectoryDistortion"
    description = "Statistic of the distance between each trajectory and its anonymized version."
    accepts = ("trajectories",)

    class Params(Params):
        distance: PluginRef = plugin_ref(
            "distance", "SSPD", "Trajectory distance between an original and its anonymized "
            "version (e.g. SSPD, Frechet, DTW with params); fitted on the original.")
        statistic: Literal["mean", "median", "max"] = Field(
            "mean", description="Summary of the per-trajectory distances.")
        per_pair: bool = Field(False, description="Add {trajectory_id: distance} to details.")

    @classmethod
    def unit_for(cls, params: Mapping[str, Any]) -> str | None:
        """The distance's unit: metres for the length-valued ones on the sphere."""
        return length_unit(params, "SSPD")

    def prepare(self, original: Dataset | None, ctx: Context) -> Distance | None:
        if not isinstance(original, Trajectories):
            return None
        return fit_trajectory_distance(self.params.distance, original, ctx)

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        if not isinstance(original, Trajectories) or not isinstance(anonymized, Trajectories):
            raise DataError("TrajectoryDistortion needs trajectories on both sides")
        distance = ctx.prepared or self.prepare(original, ctx)
        xi, yi, warnings, counts = pair_by_id(original, anonymized, self.name)
        d = version_distances(distance, original, anonymized, xi, yi)
        stat = {"mean": np.mean, "median": np.median, "max": np.max}[self.params.statistic]
        details: dict[str, Any] = {
            **counts,
            "mean": float(d.mean()), "max": float(d.max()),
            "quantiles": {f"{q:g}": float(v) for q, v in zip(QUANTILES, np.quantile(d, QUANTILES),
                                                             strict=True)},
        }
        if self.params.per_pair:
            details["per_pair"] = {str(k): float(v)
                                   for k, v in zip(original.trajectory_id[xi], d, strict=True)}
        return MeasureResult(value=float(stat(d)), details=details, warnings=warnings)
