"""An example third-party anoneval plugin, packaged on its own with an entry point.

``SampleUniques`` is the share of records whose quasi-identifier combination occurs once in the
released data: the records a prosecutor re-identifies with certainty (El Emam & Dankar 2008,
"sample uniques"). Missing values count as a value of their own.
"""

from __future__ import annotations

from pydantic import Field

from anoneval.core.api import (
    Context,
    Dataset,
    MeasureResult,
    Microdata,
    Params,
    RiskMeasure,
    hookimpl,
    released,
)


class SampleUniques(RiskMeasure):
    """Share of records that are unique on the quasi-identifiers (class size 1)."""

    name = "SampleUniques"
    description = "Share of records that are unique on the quasi-identifiers."
    accepts = ("microdata",)
    inputs = "either"

    class Params(Params):
        quasi_identifiers: list[str] = Field(min_length=1,
                                             description="Columns an intruder may know.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        data = released(original, anonymized)
        assert isinstance(data, Microdata)
        qi = self.params.quasi_identifiers
        data.require(qi, "quasi-identifier")
        ids, _ = data.group_ids(qi)
        uniques = int((data.group_sizes(qi)[ids] == 1).sum())
        return MeasureResult(value=uniques / len(data) if len(data) else 0.0,
                             details={"uniques": uniques, "records": len(data)})


@hookimpl
def risk_measure(register):  # type: ignore[no-untyped-def]
    register(SampleUniques)
