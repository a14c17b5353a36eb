"""Average equivalence class size (LeFevre et al. 2006; El Emam et al. 2009)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Literal

from pydantic import Field

from anoneval.core.api import Context, Dataset, MeasureResult, Side, SummarySpec
from anoneval.plugins.generalization._classes import ClassLossMeasure, KParams


class AECS(ClassLossMeasure):
    """Average equivalence class size, in either of ARX's two definitions.

    ``suppressed="one_class"`` (default): n / (#classes of size ≥ k + 1 if any record is
    suppressed), ARX's optimisation metric ``MetricSDAECS`` (``Metric.createAECSMetric()``):
    all suppressed records (all quasi-identifiers equal to the token, deleted records, and the
    records of classes smaller than ``k``, strict ``<``) count as one extra class; n counts
    all records. ``suppressed="ignore"``: the mean size of the classes of size ≥ k alone, ARX's
    output analysis ``QualityModelRowOrientedAECS`` (``StatisticsQuality
    .getAverageClassSize()``; its bounds, the original's mean class size and n, and ARX's
    quality are in details ``min``, ``max``, ``quality`` when the original is given). Not
    divided by k, as in ARX; LeFevre et al.'s normalized form C_AVG = value / k is in details
    (``normalized``), with ``released_mean`` = the mean size of the classes of size ≥ k
    alone (ARX's output-analysis AECS) and pyCANON's ``average_ecsize`` = released records /
    (#classes · achieved k) over all non-suppressed classes (``pycanon_form``; pyCANON deletes
    suppressed records and divides by the smallest class size, not by the k asked for).
    Missing quasi-identifier values are a value of their own (with a warning), or suppressed
    cells with ``missing="suppressed"``.
    """

    name = "AECS"
    description = "Average equivalence class size (ARX's AECS metric or quality model)."

    class Params(KParams):
        suppressed: Literal["one_class", "ignore"] = Field(
            "one_class", description="Suppressed records form one extra class (ARX's AECS "
                                     "metric) or are left out (ARX's quality model).")

    def release_columns(self) -> Mapping[Side, Collection[str]] | None:
        """Both sides' quasi-identifiers: the bounds read the original's mean class size."""
        return self.columns()

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        t = self.class_sizes(original, anonymized, ctx)
        n = t.records
        kept = t.where(t.sizes >= p.k)
        suppressed = n - kept.released
        classes = kept.n_classes + (1 if suppressed else 0)
        value = n / classes if classes else 0.0
        released_mean = kept.released / kept.n_classes if kept.n_classes else 0.0
        details: dict[str, object] = {}
        if original is not None and anonymized is not None:
            raw = ctx.with_summaries(original, anonymized).class_summary(
                SummarySpec("original", tuple(p.quasi_identifiers)))  # its mean class size
            lo = raw.n_records / raw.n_classes if raw.n_classes else 0.0
            span = n - lo
            details = {"min": lo, "max": float(n), "quality": (
                1.0 - min(max((released_mean - lo) / span, 0.0), 1.0) if span > 0 else None)}
        if p.suppressed == "ignore":
            value = released_mean
        return MeasureResult(value=value, details={
            **details,
            "suppressed": p.suppressed,
            "k": p.k,
            "records": n,
            "classes": classes,
            "suppressed_records": suppressed,
            "normalized": value / p.k,
            "released_mean": released_mean,
            "pycanon_form": (t.released / (t.n_classes * t.smallest)) if t.smallest else 0.0,
        })
