"""Base of the loss measures computed from the released side's equivalence classes alone."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from pydantic import Field

from anoneval.core.api import Context, Dataset, LossMeasure, Side, SummarySpec
from anoneval.plugins.microdata._common import (
    ClassSizes,
    QIParams,
    no_figures,
    reduce_classes,
    release_only_columns,
    released_classes,
    summary_specs,
)


class KParams(QIParams):
    """Quasi-identifier params with the k below which a class counts as suppressed."""

    k: int = Field(1, ge=1, description="Classes smaller than k count as suppressed.")


class ClassLossMeasure(LossMeasure):
    """A loss measure of the class sizes of the released microdata.

    It reads the released side's class summary by size (see :meth:`class_sizes`), so it runs
    on data an engine never gathers, at any number of classes; with ``id`` (deleted records
    are found by comparing both sides' rows) it reads the records.
    """

    inputs = "either"
    params: QIParams

    def summaries(self) -> list[SummarySpec] | None:
        return summary_specs(self.params)

    def release_columns(self) -> Mapping[Side, Collection[str]] | None:
        return release_only_columns(self)

    def class_sizes(self, original: Dataset | None, anonymized: Dataset | None,
                    ctx: Context) -> ClassSizes:
        """The equivalence classes of the released side by size (from a sharded summary,
        reduced on the workers: no class comes to this process)."""
        if self.summaries() is None:
            return ClassSizes.of(released_classes(original, anonymized, self.params, ctx)[1])
        return reduce_classes(original, anonymized, self.params, ctx, no_figures, list)[0]
