"""Distance to the closest record: replica rows suspiciously close to an actual row."""

from __future__ import annotations

import numpy as np
from pydantic import Field
from scipy.spatial import cKDTree

from anoneval.core.api import Context, DataError, MeasureResult, RiskMeasure
from anoneval.plugins._continuous import ColumnsParams, Scale, paired, scale_pair


def dcr_share(X: np.ndarray, Y: np.ndarray, percentile: float = 5.0
              ) -> tuple[float, float, np.ndarray, np.ndarray]:
    """#{h: DCR(x*_h) < t}/m on already scaled samples (X needs two rows or more).

    Returns the share, the threshold t (the ``percentile``-th percentile of actual-to-actual
    nearest-neighbour distances), the DCRs of the replica rows and those NN distances.
    """
    tree = cKDTree(X)
    # k=2: the nearest row is the row itself (or an exact duplicate at distance 0 either way)
    nn_actual = tree.query(X, k=2)[0][:, 1]
    threshold = float(np.percentile(nn_actual, percentile))
    dcr = tree.query(Y, k=1)[0]
    return float(np.count_nonzero(dcr < threshold) / len(Y)), threshold, dcr, nn_actual


class DistanceToClosestRecord(RiskMeasure):
    """Share of replica rows closer to an actual row than actual rows are to each other.

    DCR(x*_h) = min_i ‖x*_h − x_i‖ (Euclidean, transformed scale, by default standardized by
    the actual's standard deviations). The threshold t is the ``percentile``-th percentile
    (default 5th; numpy's linear interpolation) of the actual-to-actual nearest-neighbour
    distances, each actual row's distance to its nearest *other* actual row (duplicates give
    0). The value is #{h: DCR(x*_h) < t}/m (strict ``<``; the literature's table-GAN /
    CTAB-GAN reference of DCR(real→real)). About ``percentile``% is expected of a replica
    drawn from the actual's distribution; much more flags memorization. KD-trees throughout;
    the reference side is never subsampled. details: t, DCR quantiles, exact copies.
    """

    name = "DistanceToClosestRecord"
    description = "Share of replica rows closer to an actual row than the 5th percentile of "\
                  "actual-to-actual nearest-neighbour distances."
    unit = "share"
    accepts = ("microdata",)
    inputs = "both"

    class Params(ColumnsParams):
        percentile: float = Field(default=5.0, gt=0, lt=100,
                                  description="Percentile of actual-to-actual NN distances.")
        scale: Scale = Field(default="std",
                             description="std: divide columns by the actual's sd; none: raw.")

    def compute(self, original, anonymized, ctx: Context) -> MeasureResult:
        p = self.params
        X, Y, columns, _ = paired(original, anonymized, p, "DistanceToClosestRecord")
        if len(X) < 2:
            raise DataError("the original data needs at least two rows for actual-to-actual "
                            "nearest-neighbour distances")
        X, Y, _ = scale_pair(X, Y, p.scale, columns)
        share, threshold, dcr, nn_actual = dcr_share(X, Y, p.percentile)
        q = np.percentile(dcr, [5, 50])
        return MeasureResult(
            value=share,
            details={"threshold": threshold, "percentile": p.percentile,
                     "expected_share": p.percentile / 100,
                     "dcr_p5": float(q[0]), "dcr_median": float(q[1]),
                     "actual_nn_median": float(np.median(nn_actual)),
                     "exact_copies": int(np.count_nonzero(dcr == 0))},
        )
