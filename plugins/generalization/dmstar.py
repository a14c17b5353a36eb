"""El Emam et al.'s monotonic discernibility metric DM*."""

from __future__ import annotations

from anoneval.core.api import Context, Dataset, MeasureResult
from anoneval.plugins.generalization._classes import ClassLossMeasure
from anoneval.plugins.microdata._common import QIParams


class DMStar(ClassLossMeasure):
    """DM* = Σ_i f_i² over all equivalence classes, whatever their size.

    Source: El Emam et al. (2009), appendix D, derivation 2; ARX's
    ``MetricSDDiscernability``. Unlike :class:`DM` there is no k and small classes are not
    penalised, so DM* never falls when the data is coarsened. From a released table the
    suppressed records (all quasi-identifiers equal to the token, plus deleted records) are
    identical to each other, so they form one class of size |S| and add |S|² (ARX scores a
    transformation before suppression and keeps each suppressed class's own f², which the
    output no longer shows). Bounds [n, n²]; details also give Σ f² over the non-suppressed
    classes only. Missing quasi-identifier values are a value of their own (with a warning), or
    suppressed cells with ``missing="suppressed"``.
    """

    name = "DMStar"
    description = "Monotonic discernibility metric: Σ f² over all equivalence classes."

    class Params(QIParams):
        pass

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        t = self.class_sizes(original, anonymized, ctx)
        n = t.records
        released_part = t.squares()
        s = t.suppressed_total
        value = released_part + s * s
        return MeasureResult(value=float(value), details={
            "records": n,
            "classes": t.n_classes + (1 if s else 0),
            "suppressed_records": t.suppressed,
            "deleted_records": t.deleted,
            "released_classes_sum": released_part,
            "normalized": value / (n * n) if n else 0.0,
        })
