"""pq rule (tau-Argus ``P(p,q,n)``)."""

from __future__ import annotations

from pydantic import Field, model_validator

from anoneval.core.api import Context, Dataset, MeasureResult
from anoneval.plugins.tabular._cells import CellParams
from anoneval.plugins.tabular._rules import Rule
from anoneval.plugins.tabular._sensitivity import CellRiskMeasure, default_level


class PQRule(CellRiskMeasure):
    """Share of non-empty cells failing the prior-posterior (pq) rule.

    Intruders know every contribution to within q %; a cell is unsafe when after publication
    they could estimate x_1 to within p %: X − Σ_{i<=n+1} x_i < (p/q)·x_1, with n intruders
    (tau-Argus ``P(p,q,n)``, libtauargus DataCell.cpp; sdcTable ``pq`` is the case n = 1). Only
    p/q matters. Equality is safe. Defaults p = 25, q = 50 (sdcTable's), n = 1.
    """

    name = "PQRule"
    description = "Share of cells where n intruders with q% prior knowledge learn x1 to p%."

    class Params(CellParams):
        p: float = Field(25.0, gt=0, lt=100, description="Posterior precision in %, in (0,100).")
        q: float = Field(50.0, gt=0, le=100, description="Prior precision in %, in (p,100].")
        n: int = Field(1, ge=1, description="Number of intruders in the coalition.")

        @model_validator(mode="after")
        def _p_below_q(self) -> PQRule.Params:
            if self.p >= self.q:
                raise ValueError(f"p ({self.p:g}) must be smaller than q ({self.q:g})")
            return self

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        rule = Rule("p", default_level(p), n=p.n, p=p.p, q=p.q)
        return self.run(original, anonymized, [rule], ctx)
