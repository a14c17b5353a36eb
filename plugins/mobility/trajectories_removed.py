"""Share of original trajectories (and points) missing from the anonymized data."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, Dataset, LossMeasure, MeasureResult, Params, Trajectories


class TrajectoriesRemoved(LossMeasure):
    """Share of the original trajectories that the anonymized data no longer contains.

    Source: the mobility anonymizer's ``measures_methods/TrajectoriesRemoved.py``
    (reference/mobility_rappor.md §A6). Upstream divides the *difference of the counts*,
    (N_orig − N_anon)/N_orig, which is negative when trajectories are added and blind to
    replaced ids. Our value is the share of original trajectory ids absent from the anonymized
    data (in [0, 1]); it equals upstream's when no new ids appear. The details keep upstream's
    two percentages, rounded to 2 decimals as upstream: ``percen_traj_removed`` =
    100·(N_orig − N_anon)/N_orig and ``percen_loc_removed`` = 100·(P_orig − P_anon)/P_orig over
    the points (negative when the anonymized data has more points; mock data: 0.0 and −1.04).
    """

    name = "TrajectoriesRemoved"
    description = "Share of original trajectories missing from the anonymized data."
    unit = "share"
    accepts = ("trajectories",)

    class Params(Params):
        pass

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(original, Trajectories) and isinstance(anonymized, Trajectories)
        n_orig, n_anon = len(original), len(anonymized)
        p_orig, p_anon = original.n_points, anonymized.n_points
        removed = int(np.sum(anonymized.index_of(original.trajectory_id) < 0))
        added = int(np.sum(original.index_of(anonymized.trajectory_id) < 0))
        details = {
            "percen_traj_removed": round(100 * (n_orig - n_anon) / n_orig, 2) if n_orig else 0.0,
            "percen_loc_removed": round(100 * (p_orig - p_anon) / p_orig, 2) if p_orig else 0.0,
            "removed_trajectories": removed,
            "added_trajectories": added,
            "original_trajectories": n_orig,
            "anonymized_trajectories": n_anon,
            "original_points": p_orig,
            "anonymized_points": p_anon,
        }
        return MeasureResult(value=removed / n_orig if n_orig else 0.0, details=details)
