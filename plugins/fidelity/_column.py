"""Base of the fidelity measures scored column by column (SDMetrics' single-column metrics)."""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from anoneval.core.api import Context, Dataset, LossMeasure, MeasureResult, Microdata
from anoneval.plugins.fidelity._common import (
    FidelityParams,
    choose,
    is_categorical,
    numeric_columns,
    pair,
    result,
)


class ColumnFidelity(LossMeasure):
    """A fidelity measure scored column by column: :meth:`score` gives each column's row of
    the breakdown (with ``score``) and, when the score is undefined, a warning."""

    #: Columns taken by default: ``numeric`` (numeric on both sides), ``categorical`` or
    #: ``any``.
    column_kind: ClassVar[str] = "categorical"

    class Params(FidelityParams):
        pass

    def score(self, column: str, real: pd.Series, released: pd.Series
              ) -> tuple[dict[str, Any], str | None]:
        raise NotImplementedError

    def score_column(self, column: str, original: Microdata, released: Microdata
                     ) -> tuple[dict[str, Any], str | None]:
        """:meth:`score` of one column; measures that keep per-column summaries of a side on
        the dataset (computed once per input object) override this."""
        return self.score(column, original.frame[column], released.frame[column])

    def numbers_only(self) -> bool:
        """By default a numeric measure takes the columns of a numeric (or date) dtype."""
        return self.column_kind == "numeric"

    def extra(self) -> dict[str, Any]:
        """Details beside the score and the breakdown."""
        return {}

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        ori, syn = pair(original, anonymized, self.name)
        if self.column_kind == "numeric":
            columns = numeric_columns(ori, syn, self.params.columns, self.name)
        elif self.column_kind == "any":
            columns = choose(ori, syn, self.params.columns, lambda s: True, self.name, "")
        else:
            columns = choose(ori, syn, self.params.columns, is_categorical, self.name,
                             "categorical")
        rows, warnings = [], []
        for c in columns:
            row, warning = self.score_column(c, ori, syn)
            rows.append({"column": c, **row})
            if warning:
                warnings.append(f"column {c!r}: {warning}")
        return result(rows, "columns", warnings, self.extra())
