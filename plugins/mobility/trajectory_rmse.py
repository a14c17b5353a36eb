"""Root mean square distance between original trajectories and their anonymized versions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

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
    version_distances,
)


class TrajectoryRMSE(LossMeasure):
    """RMSE of the distances between each original trajectory and its anonymized version.

    Source: the mobility anonymizer's ``measures_methods/Rsme.py`` and ``docs/metrics/rsme.md``
    (reference/mobility_rappor.md §A5). Its code computes sqrt(Σ D(T_i, T'_i)² / N_anon) over
    the trajectory ids present in both datasets; its docs write (1/n)·sqrt(Σ D²). We use the
    root *mean* square over the matched pairs,

        RMSE = sqrt( (1/m) Σ_{i matched} D(T_i, T'_i)² ),

    m = number of original ids present in the anonymized data (equal ids; upstream's ground
    truth). It equals upstream's code when every anonymized trajectory has an original (the
    usual case, and the mock data: 684.7026 m); upstream's variant is in ``details.rmse_upstream``.
    Removed trajectories cannot be measured by a distance: they are counted in the details (see
    TrajectoriesRemoved for the loss they cause). The distance (default Martinez2021) is fitted
    on the original, as upstream. Units are the distance's (metres for Martinez2021).
    """

    name = "TrajectoryRMSE"
    description = "Root mean square distance between original and anonymized trajectories."

    @classmethod
    def unit_for(cls, params: Mapping[str, Any]) -> str | None:
        """The distance's unit: metres for the length-valued ones on the sphere."""
        return length_unit(params, "Martinez2021")
    accepts = ("trajectories",)

    class Params(Params):
        distance: PluginRef = plugin_ref(
            "distance", "Martinez2021", "Trajectory distance between an original and its "
            "anonymized version; fitted on the original.")

    def prepare(self, original: Dataset | None, ctx: Context) -> Distance | None:
        if not isinstance(original, Trajectories):
            return None
        return fit_trajectory_distance(self.params.distance, original, ctx)

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(original, Trajectories) and isinstance(anonymized, Trajectories)
        distance = ctx.prepared or self.prepare(original, ctx)
        pos = anonymized.index_of(original.trajectory_id)
        matched = np.flatnonzero(pos >= 0)
        if len(matched) == 0:
            raise DataError("no anonymized trajectory has the id of an original one; "
                            "TrajectoryRMSE pairs trajectories by trajectory_id")
        d = version_distances(distance, original, anonymized, matched, pos[matched])
        sq = float(np.sum(d * d))
        details = {
            "rmse_upstream": round(float(np.sqrt(sq / len(anonymized))), 4),
            "matched": len(matched),
            "original_missing_in_anonymized": len(original) - len(matched),
            "anonymized_without_original": len(anonymized) - len(matched),
            "max_distance": float(d.max()),
            "mean_distance": float(d.mean()),
        }
        warnings = []
        if len(matched) < len(original):
            warnings.append(f"{len(original) - len(matched)} original trajectories have no "
                            "anonymized version and are left out of the RMSE")
        return MeasureResult(value=float(np.sqrt(sq / len(matched))), details=details,
                             warnings=warnings)
