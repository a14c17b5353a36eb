"""ARX's ambiguity: how many raw tuples each released record could stand for."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, MeasureResult, Microdata
from anoneval.plugins.generalization._quality import Inputs, QualityModel, group_area
from anoneval.plugins.generalization._results import row_result


class Ambiguity(QualityModel):
    """Ambiguity: Σ_rows Π_j share_j·D_j, the number of raw tuples a record could be.

    Source: Goldberger & Tassa (2010), "Efficient anonymizations with enhanced utility"
    (ambiguity metric); ARX's ``QualityModelRowOrientedAmbiguity`` and ``MetricSDNMAmbiguity``.
    share_j·D_j is the number of raw values under the released value (1 for a raw value, D_j
    for the root or the token, so a suppressed record counts Π_j D_j). min = n (nothing
    generalized), max = n·Π_j D_j; the value is clamp((raw − min)/(max − min)) = 1 − ARX's
    ``getAmbiguity().getValue()``. Conventions as the family's
    (``anoneval.plugins.generalization._quality``).
    """

    name = "Ambiguity"
    description = "ARX ambiguity: raw tuples each released record could stand for."

    def loss(self, inputs: Inputs, original: Microdata, ctx: Context) -> MeasureResult:
        area = group_area(inputs)
        raw = float(inputs.group_sizes @ area)
        domain = float(np.prod([float(s.table.domain) for s in inputs.columns]))
        return row_result(raw, float(inputs.n), inputs.n * domain, ctx,
                          {"records": inputs.n, "suppressed_records": inputs.suppressed})

