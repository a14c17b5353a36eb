"""(n,k)-dominance rule, optionally combined with a minimum number of contributors."""

from __future__ import annotations

from pydantic import Field

from anoneval.core.api import Context, Dataset, MeasureResult
from anoneval.plugins.tabular._cells import CellParams
from anoneval.plugins.tabular._rules import Rule
from anoneval.plugins.tabular._sensitivity import CellRiskMeasure, default_level


class Dominance(CellRiskMeasure):
    """Share of non-empty cells whose n largest contributions exceed k % of the cell total.

    A cell is unsafe when Σ_{i<=n} x_i > (k/100)·X, with x_1 >= x_2 >= ... its contributions and
    X its total (sdcTable ``domRule``; tau-Argus ``NK(n,k)``). Equality is safe. Defaults:
    n = 1, k = 75. Dominance is combined with a minimum number of contributors, so a cell
    with fewer than ``min_contributors`` contributors (0 < count < min) is unsafe too. Cells,
    weights, holdings and negative values follow :mod:`anoneval.plugins.tabular._cells`.
    ``value``: unsafe cells / non-empty cells; details: per-cell table and the share of the total
    magnitude in unsafe cells.
    """

    name = "Dominance"
    description = "Share of cells where the n largest contributions exceed k% of the total."

    class Params(CellParams):
        n: int = Field(1, ge=1, description="Number of largest contributions summed.")
        k: float = Field(75.0, gt=0, le=100, description="Percentage of the cell total (0,100].")
        min_contributors: int = Field(
            1, ge=1, description="A non-empty cell with fewer contributors is unsafe too "
                                 "(1 switches this off).")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        level = default_level(p)
        rules = [Rule("nk", level, n=p.n, k=p.k)]
        if p.min_contributors > 1:
            rules.append(Rule("freq", level, min_contributors=p.min_contributors))
        return self.run(original, anonymized, rules, ctx)
