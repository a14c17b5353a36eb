"""New-row synthesis: the share of released records that copy no original record."""

from __future__ import annotations

from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    IntervalParams,
    MeasureResult,
    Microdata,
    Params,
    RiskMeasure,
    wilson_interval,
)
from anoneval.plugins.similarity.copied_rows import copied


class NewRowSynthesis(RiskMeasure):
    """SDMetrics' NewRowSynthesis: the share of released records that match no original
    record (higher = safer).

    SDMetrics 0.32 (``NewRowSynthesis``): a released record matches an original one when
    every column matches, categories (and booleans, text) equal, numbers within
    ``|original − released| <= |tolerance · released|`` (its ``numerical_match_tolerance``,
    0.01 by default; 0 asks for exact copies), a missing value matching only a missing value;
    the value is #{released records with no match} / m. Columns: those of the original
    (``columns`` to choose; SDMetrics compares the columns its metadata calls numerical,
    datetime, categorical, boolean or ordinal). The match is exact and vectorised (the same
    search as :class:`~anoneval.plugins.similarity.copied_rows.CopiedRows`, whose value is
    1 − this one); SDMetrics runs one pandas query per released row. ``synthetic_sample_size``
    checks a seeded sample of that many released records, as SDMetrics' parameter of that name
    (unseeded there). ``ci``: the Wilson (1927) interval of the share, the released records
    taken as a sample of what the generator makes (with ``synthetic_sample_size``, of the
    release itself). details: ``num_new_rows``, ``num_matched_rows``, ``n_checked``.
    """

    name = "NewRowSynthesis"
    description = "SDMetrics' NewRowSynthesis: share of released records that copy no "\
                  "original record (numeric tolerance)."
    accepts = ("microdata",)
    higher_is_worse = False
    unit = "share"

    class Params(IntervalParams, Params):
        tolerance: float = Field(0.01, ge=0, description="Relative tolerance of numeric matches "
                                                         "(SDMetrics' numerical_match_tolerance; "
                                                         "0 = exact).")
        columns: list[str] | None = Field(None, min_length=1,
                                          description="Columns compared; null: all of the "
                                                      "original's.")
        synthetic_sample_size: int | None = Field(
            None, ge=1, description="Released records checked (a seeded sample); null: all.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if not isinstance(original, Microdata) or not isinstance(anonymized, Microdata):
            raise DataError("NewRowSynthesis compares microdata: give the original and the "
                            "anonymized data")
        if len(original) == 0 or len(anonymized) == 0:
            raise DataError("NewRowSynthesis needs records on both sides")
        columns = p.columns or list(original.columns)
        original.require(columns, "NewRowSynthesis column")
        anonymized.require(columns, "NewRowSynthesis column")
        released = anonymized.frame[columns]
        warnings = []
        if p.synthetic_sample_size is not None:
            if p.synthetic_sample_size < len(released):
                rows = ctx.rng(30).choice(len(released), p.synthetic_sample_size, replace=False)
                released = released.iloc[rows]
            else:
                warnings.append(f"synthetic_sample_size {p.synthetic_sample_size} is not "
                                f"below the {len(released)} released records: all checked")
        match = copied(original.frame[columns], released, p.tolerance)
        n = len(released)
        new = n - int(match.sum())
        return MeasureResult(
            value=new / n, ci=list(wilson_interval(new, n, p.confidence_level)),
            details={"num_new_rows": new, "num_matched_rows": n - new, "n_checked": n,
                     "tolerance": p.tolerance}, warnings=warnings)
