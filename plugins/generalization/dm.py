"""El Emam et al.'s discernibility metric DM (non-monotonic)."""

from __future__ import annotations

from anoneval.core.api import Context, Dataset, MeasureResult
from anoneval.plugins.generalization._classes import ClassLossMeasure, KParams


class DM(ClassLossMeasure):
    """Discernibility metric: DM = Σ_{f≥k} f² + Σ_{f<k} n·f + n·|S|.

    Source: El Emam et al. (2009), appendix D, derivation 1; ARX's
    ``MetricSDNMDiscernability`` and output-analysis ``QualityModelRowOrientedDiscernibility``.
    f are the sizes of the equivalence classes of non-suppressed records; a class with f < k
    (strict) is treated as suppressed, so each of its records costs n, and so does each
    suppressed record S (all quasi-identifiers equal to the token, or deleted). n counts all
    records. Bounds: [n, n²]. With the default k = 1 only explicitly suppressed records cost n
    (ARX's output analysis); El Emam's form needs the k the data was anonymized for.
    Missing quasi-identifier values are a value of their own (with a warning), or suppressed
    cells with ``missing="suppressed"``.
    """

    name = "DM"
    description = "Discernibility metric: Σ f² over classes, n per suppressed record."

    class Params(KParams):
        pass

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        t = self.class_sizes(original, anonymized, ctx)
        n = t.records
        small = t.where(t.sizes < p.k)
        large = t.where(t.sizes >= p.k)
        in_small = small.released
        dm = large.squares() + n * (in_small + t.suppressed_total)
        return MeasureResult(value=float(dm), details={
            "k": p.k,
            "records": n,
            "suppressed_records": t.suppressed,
            "deleted_records": t.deleted,
            "records_in_small_classes": in_small,
            "classes": t.n_classes,
            "classes_at_least_k": large.n_classes,
            "dm_exact": dm,
            "normalized": dm / (n * n) if n else 0.0,
        })
