"""Information loss of a cell-suppression pattern: suppressed cells and suppressed values."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, DataError, Dataset, LossMeasure, MeasureResult, Side
from anoneval.plugins.tabular.suppression_audit import TableParams, load_table


class SuppressionLoss(LossMeasure):
    """Share of the inner-cell total that is suppressed, with the counts and sums of suppression.

    The loss figures of a suppression pattern used by tau-Argus and sdcTable (``nrPrimSupps``,
    ``nrSecondSupps``; Hundepool et al. 2012, *Statistical Disclosure Control*, §4.3): numbers
    and shares of suppressed cells (all, primary, secondary, inner), the sum of suppressed values
    (all and secondary only) and value = Σ suppressed inner values / Σ inner values (inner cells:
    leaf codes in every dimension). Suppressed cells need their true values in the table.
    """

    name = "SuppressionLoss"
    description = "Share of the inner-cell total suppressed, with counts of suppressed cells."
    unit = "share"
    accepts = ("microdata", "table")
    inputs = "either"

    class Params(TableParams):
        pass

    def columns(self) -> dict[Side, list[str]]:
        cols = self.params.table_columns()
        return {"original": cols, "anonymized": cols}

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        data = anonymized if anonymized is not None else original
        if data is None:
            raise DataError("SuppressionLoss needs the protected table")
        _, dims, _, _, _, values, roles = load_table(data, self.params, ctx)
        sup = roles != "published"
        if np.isnan(values[sup]).any():
            raise DataError(f"column {self.params.value_column!r}: suppressed cells need their "
                            "true values for the loss")
        leaf_axes = [np.isin(np.arange(len(d.codes)), [d.codes.index(c) for c in d.leaves])
                     for d in dims]
        inner = np.ones(1, dtype=bool)
        for ax in leaf_axes:
            inner = np.multiply.outer(inner, ax)
        inner = inner.reshape(-1)
        size = len(values)
        inner_total = float(values[inner].sum())
        inner_sup = float(values[inner & sup].sum())
        second = roles == "secondary"
        return MeasureResult(
            value=inner_sup / inner_total if inner_total > 0 else 0.0,
            details={
                "n_cells": size, "n_suppressed": int(sup.sum()),
                "n_primary": int((roles == "primary").sum()), "n_secondary": int(second.sum()),
                "n_inner": int(inner.sum()), "n_inner_suppressed": int((inner & sup).sum()),
                "share_suppressed": float(sup.mean()),
                "share_inner_suppressed": float((inner & sup).sum() / inner.sum()),
                "sum_suppressed": float(values[sup].sum()),
                "sum_secondary": float(values[second].sum()),
                "inner_total": inner_total, "inner_suppressed_total": inner_sup,
            })
