"""ARX's height metric: the sum of the generalization levels of the quasi-identifiers."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, DataError, MeasureResult
from anoneval.plugins.generalization._cells import CellQualityModel, Cells, ColumnCells
from anoneval.plugins.microdata._common import pair_counts


class Height(CellQualityModel):
    """Height: Σ_j l_j, the generalization level of each quasi-identifier, normalized by Σ_j h_j.

    Source: ARX's ``MetricMDHeight`` (``Metric.createHeightMetric()``, Prasser et al. 2014),
    the lattice height of Samarati (2001) and Sweeney (2002). A cell's level is the lowest
    hierarchy level at which its raw value generalizes to the released value (the top for the
    token or the root); the level l_j of
    a column is the level of its non-suppressed cells (local recoding: the highest, with a
    warning listing the cells per level); suppressed records are ignored, as ARX scores the
    transformation, and a column without any other cell is at its top. The value is
    Σ l_j / Σ h_j ∈ [0, 1] (h_j = hierarchy height); details ``raw`` = Σ l_j (ARX's score),
    ``min`` 0, ``max`` Σ h_j and ``levels`` per attribute.
    Conventions as the family's (``anoneval.plugins.generalization._quality``).
    """

    name = "Height"
    description = "ARX height: sum of the generalization levels of the quasi-identifiers."

    def cell_loss(self, cells: Cells, ctx: Context) -> MeasureResult:
        levels: dict[str, int] = {}
        counts: dict[str, dict[int, int]] = {}
        for c in cells.columns:
            s = c.side
            per = cell_levels(c)
            counts[s.name] = per
            levels[s.name] = max(per) if per else s.table.height
            if len(per) > 1:
                ctx.warn(f"column {s.name!r} is released at several levels (cells per level: "
                         f"{per}); its height counts the highest")
        raw = sum(levels.values())
        top = sum(c.side.table.height for c in cells.columns)
        return MeasureResult(value=raw / top if top else 0.0, details={
            "raw": raw, "min": 0, "max": top, "levels": levels,
            "heights": {c.side.name: c.side.table.height for c in cells.columns},
            "cells_per_level": counts, "suppressed_records": cells.suppressed})


def cell_levels(c: ColumnCells) -> dict[int, int]:
    """Non-suppressed cells per level: the first level mapping the raw value to the released.

    A cell holding the token or the root is at the top level.
    """
    s = c.side
    s.require_known()
    rows = ~c.sup
    top = rows & s.rel_suppressed_value[s.rel]
    keep = rows & ~top
    a, b, w = pair_counts(s.orig[keep], len(s.orig_texts), s.rel[keep], len(s.rel_texts),
                          c.w[keep])
    t = s.table
    path = t.coded[s.orig_rows[a]]
    match = path == s.rel_pos[b][:, None]
    found = match.any(axis=1)
    if not found.all():
        i = int(np.flatnonzero(~found)[0])
        raise DataError(
            f"column {s.name!r}: released value {s.rel_texts[b[i]]!r} is not a generalization "
            f"of the raw value {s.orig_texts[a[i]]!r} in hierarchy {t.path} (its levels: "
            f"{', '.join(map(repr, t.matrix[s.orig_rows[a[i]]]))})")
    level = match.argmax(axis=1)
    per = np.bincount(level, weights=w, minlength=t.height + 1).astype(np.int64)
    per[t.height] += int(c.w[top].sum())
    return {int(lv): int(k) for lv, k in enumerate(per) if k}
