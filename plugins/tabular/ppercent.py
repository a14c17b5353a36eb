"""p% rule (tau-Argus ``P(p,n)``)."""

from __future__ import annotations

from pydantic import Field

from anoneval.core.api import Context, Dataset, MeasureResult
from anoneval.plugins.tabular._cells import CellParams
from anoneval.plugins.tabular._rules import Rule
from anoneval.plugins.tabular._sensitivity import CellRiskMeasure, default_level


class PPercent(CellRiskMeasure):
    """Share of non-empty cells where a coalition could estimate x_1 to within p %.

    A cell is unsafe when X − Σ_{i<=n+1} x_i < (p/100)·x_1: the n intruders (the 2nd to the
    (n+1)-th largest contributors) subtract their own values from the total X and learn x_1 to
    within less than p % (tau-Argus ``P(p,n)``, libtauargus DataCell.cpp; with n = 1 this is
    sdcTable's ``X − x1 − x2 < p/100·x1``). Equality is safe. Default p = 10, n = 1, the
    tau-Argus manual's suggestion. Cells, weights, holdings and negative values follow
    :mod:`anoneval.plugins.tabular._cells`.
    """

    name = "PPercent"
    description = "Share of cells where n intruders could estimate the largest contribution to p%."

    class Params(CellParams):
        p: float = Field(10.0, gt=0, lt=100, description="Required precision in %, in (0,100).")
        n: int = Field(1, ge=1, description="Number of intruders in the coalition.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        rule = Rule("p", default_level(p), n=p.n, p=p.p, q=100.0)
        return self.run(original, anonymized, [rule], ctx)
