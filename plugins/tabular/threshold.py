"""Threshold (minimum frequency) rule."""

from __future__ import annotations

from pydantic import Field

from anoneval.core.api import Context, Dataset, MeasureResult
from anoneval.plugins.tabular._cells import CellParams
from anoneval.plugins.tabular._rules import Rule
from anoneval.plugins.tabular._sensitivity import CellRiskMeasure, default_level


class Threshold(CellRiskMeasure):
    """Share of non-empty cells with fewer than ``min_contributors`` contributors.

    Operator: a cell is unsafe when 0 < contributors < min_contributors (strict, as tau-Argus
    ``FREQ(min)``; sdcTable's ``maxN = m`` flags counts <= m, i.e. ``min_contributors = m + 1``).
    Contributors are records, weighted records (Σw, as tau-Argus, unless ``frequency =
    "unweighted"``) or distinct ``contributor`` ids (holding level). ``magnitude`` is optional
    and only adds totals, top shares and the unsafe magnitude share to the details.
    """

    name = "Threshold"
    description = "Share of cells with fewer than min_contributors contributors."

    class Params(CellParams):
        min_contributors: int = Field(
            3, ge=1, description="A non-empty cell with fewer contributors (strictly) is unsafe.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        rule = Rule("freq", default_level(p), min_contributors=p.min_contributors)
        result = self.run(original, anonymized, [rule], ctx)
        result.details["operator"] = f"unsafe when 0 < contributors < {p.min_contributors}"
        return result
