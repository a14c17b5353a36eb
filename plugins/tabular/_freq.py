"""Frequency tables for the entropy risk and the utility measures of perturbed tables.

A frequency table comes from microdata (records counted over the ``cells`` variables) or from a
ready ``table`` dataset (its key columns and count column, set through the load options or the
``cells`` and ``count_column`` params).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from anoneval.core.api import (
    ClassSummary,
    Context,
    DataError,
    Dataset,
    FrameData,
    LossMeasure,
    Microdata,
    SummarySpec,
    Table,
    data_row,
    released,
)
from anoneval.plugins.tabular._cells import (
    SpanParams,
    _first_rows,
    _numeric,
    _show,
    table_count,
    table_keys,
)


class FreqParams(SpanParams):
    """Params of every frequency-table measure."""


def freq_specs(p: FreqParams) -> list[SummarySpec] | None:
    """The class summaries (anonymized, original) the frequency table of microdata comes
    from, or None for a table's params."""
    if not p.cells or p.count_column:
        return None
    return [SummarySpec(side, tuple(p.cells)) for side in ("anonymized", "original")]


class FrequencySummaries:
    """Mixin of the measures of one frequency table: on microdata the counts come from the
    released side's class summary over ``cells`` (see :func:`released_frequencies`)."""

    params: FreqParams

    def summaries(self) -> list[SummarySpec] | None:
        return freq_specs(self.params)


def released_frequencies(original: Dataset | None, anonymized: Dataset | None, p: FreqParams,
                         owner: str, ctx: Context) -> tuple[Dataset, pd.DataFrame, np.ndarray]:
    """The released dataset and its :func:`frequency_table`, from its class summary when it
    is microdata and ``p`` names the cells."""
    data = released(original, anonymized)
    specs = freq_specs(p)
    summary = None
    if specs is not None and isinstance(data, Microdata):
        data.require(p.cells, "column")
        summary = ctx.with_summaries(original, anonymized).class_summary(
            specs[0] if anonymized is not None else specs[1])
    return data, *frequency_table(data, p, owner, summary)


def frequency_table(data: Dataset, p: FreqParams, owner: str,
                    summary: ClassSummary | None = None) -> tuple[pd.DataFrame, np.ndarray]:
    """Key columns and counts of the observed cells (microdata; from ``summary``, the data's
    class summary over ``p.cells``, when given) or of the table's rows."""
    if isinstance(data, Table):
        keys = table_keys(data, p.cells)
        count_col = table_count(data, p.count_column)
        counts = _numeric(data.frame, count_col, "count")
        if (counts < 0).any():
            row = int(np.flatnonzero(counts < 0)[0])
            raise DataError(f"{owner}: counts must be >= 0; {data_row(row)} of count column "
                            f"{count_col!r} holds {_show(counts[row])}")
        return data.frame[keys].reset_index(drop=True), counts
    if not isinstance(data, Microdata):
        raise DataError(f"{owner} accepts microdata or table data, not {data.data_kind}")
    if not p.cells:
        raise DataError(f"{owner}: 'cells' (the spanning variables) is required for microdata")
    if p.count_column:
        raise DataError(f"{owner}: 'count_column' applies to table data only; this is microdata")
    data.require(p.cells, "column")
    if summary is not None:
        return summary.keys[p.cells], summary.counts.astype(np.float64)
    ids, n_cells = data.group_ids(p.cells)
    counts = np.bincount(ids, minlength=n_cells).astype(np.float64)
    rows = _first_rows(ids, n_cells)
    keys = pd.DataFrame({c: data.frame[c].to_numpy()[rows] for c in p.cells})
    return keys, counts


def product_size(data: Dataset, keys: pd.DataFrame) -> int:
    """Number of cells of the full cross product of the key variables' categories.

    A categorical column (by the data's column type) contributes all its categories (observed
    or not); any other column its distinct values among ``keys``, the observed cells. Missing
    values count as one more category.
    """
    size = 1
    for col in keys.columns:
        dtype = data.frame[col].dtype if isinstance(data, FrameData) else keys[col].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            card = len(dtype.categories) + int(keys[col].isna().any())
        else:
            card = int(keys[col].nunique(dropna=False))
        size *= max(card, 1)
    return size


def aligned_counts(original: Dataset, anonymized: Dataset, p: FreqParams, owner: str,
                   prepared: tuple[pd.DataFrame, np.ndarray] | None = None
                   ) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Counts of both tables on the union of their cells (a cell missing on one side is 0).

    ``prepared`` is the original's :func:`frequency_table` when a measure's ``prepare`` made it.
    """
    keys_o, f = prepared if prepared is not None else frequency_table(original, p, owner)
    keys_a, g = frequency_table(anonymized, p, owner)
    if list(keys_o.columns) != list(keys_a.columns):
        raise DataError(f"{owner}: the tables have different key columns: original "
                        f"{list(keys_o.columns)}, anonymized {list(keys_a.columns)}")
    cols = list(keys_o.columns)
    try:
        merged = keys_o.assign(_f=f).merge(keys_a.assign(_g=g), on=cols, how="outer")
    except ValueError as exc:
        raise DataError(f"{owner}: cannot align the cells of the two tables on {cols}: {exc}; "
                        "give the key columns the same types") from exc
    return (merged[cols], merged["_f"].fillna(0.0).to_numpy(np.float64),
            merged["_g"].fillna(0.0).to_numpy(np.float64))


class FrequencyLoss(LossMeasure):
    """Base of the loss measures that compare an original and a perturbed frequency table."""

    accepts = ("microdata", "table")

    class Params(FreqParams):
        pass

    def prepare(self, original: Dataset | None, ctx: Context) -> Any:
        """The original's frequency table, built once however many variants follow."""
        return None if original is None else frequency_table(original, self.params, self.name)

    def aligned(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
        """Keys and counts of both tables on the union of their cells (see aligned_counts)."""
        assert original is not None and anonymized is not None
        return aligned_counts(original, anonymized, self.params, self.name, ctx.prepared)
