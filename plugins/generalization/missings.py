"""ARX's missings: the share of released cells that are missing or suppressed."""

from __future__ import annotations

import numpy as np

from anoneval.core.base import Context, LossMeasure, MeasureResult
from anoneval.core.data import Dataset
from anoneval.plugins.generalization._quality import (
    ColumnParams,
    column_result,
    nonsuppressed_counts,
    quality_inputs,
)
from anoneval.plugins.microdata._common import NULL_TEXT


class Missings(LossMeasure):
    """Missings: per attribute the share of cells that are suppressed, missing or the root.

    Source: ARX's ``StatisticsQuality.getMissings`` (Prasser et al. 2016). A cell counts when
    its record is suppressed, or it equals the suppression token, ARX's ``NULL`` (a missing
    value) or its hierarchy's root. ARX stores 1 − share with bounds [0, 1], so its getter
    ``getMissings().getArithmeticMean()`` already returns the mean share; the value is that
    share (in [0, 1], higher = more cells lost) and details ``quality`` repeats ARX's getter,
    ``raw`` ARX's stored 1 − share. Conventions as the family's
    (``anoneval.plugins.generalization._quality``); missing released values need
    ``missing="suppressed"`` or a ``NULL`` row in the hierarchy.
    """

    name = "Missings"
    description = "ARX missings: share of released cells that are suppressed or missing."
    accepts = ("microdata",)
    inputs = "both"

    class Params(ColumnParams):
        pass

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        inputs = quality_inputs(original, anonymized, p, ctx)
        sup = inputs.row_sup
        n_sup = int(sup.sum())
        share = []
        for s in inputs.columns:
            lost = s.rel_suppressed_value | (s.rel_texts == NULL_TEXT)
            share.append((nonsuppressed_counts(inputs, s, sup)[lost].sum() + n_sup) / inputs.n)
        share_a = np.array(share, dtype=float)
        res = column_result(p.quasi_identifiers, share_a, np.zeros_like(share_a),
                            np.ones_like(share_a), p.aggregate, ctx,
                            {"records": inputs.n, "suppressed_records": n_sup})
        d = res.details
        d["raw"] = {c: 1.0 - v for c, v in d["raw"].items()}
        d["quality"] = res.value  # ARX's getter returns the share itself
        d["quality_per_attribute"] = dict(d["per_attribute"])
        return res
