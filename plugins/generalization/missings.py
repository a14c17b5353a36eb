"""ARX's missings: the share of released cells that are missing or suppressed."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import Context, MeasureResult
from anoneval.plugins.generalization._cells import CellQualityModel, Cells
from anoneval.plugins.generalization._quality import ColumnParams
from anoneval.plugins.generalization._results import column_result
from anoneval.plugins.microdata._common import NULL_TEXT


class Missings(CellQualityModel):
    """Missings: per attribute the share of cells that are suppressed, missing or the root.

    Source: ARX's ``StatisticsQuality.getMissings`` (Prasser et al. 2016). A cell counts when
    its record is suppressed, or it equals the suppression token, ARX's ``NULL`` (a missing
    value) or its hierarchy's root. ARX stores 1 − share with bounds [0, 1], so its getter
    ``getMissings().getArithmeticMean()`` already returns the mean share; the value is that
    share (in [0, 1], higher = more cells lost); details ``quality``, ``aggregates`` and
    ``per_attribute`` are ARX's getters as they are (shares; ARX's geometric mean is
    1 − G(1 − share) and its max the smallest share), ``raw`` ARX's stored 1 − share, and
    ``metric_aggregates`` the mean, Π(s+1)^(1/m) − 1 and max of the shares (``aggregate``
    picks the value: 'arithmetic' is ARX's getter). Conventions as the family's
    (``anoneval.plugins.generalization._quality``); a missing released value (NaN/None, ARX's
    ``NULL``) always counts.
    """

    name = "Missings"
    description = "ARX missings: share of released cells that are suppressed or missing."

    class Params(ColumnParams):
        pass

    def cell_loss(self, cells: Cells, ctx: Context) -> MeasureResult:
        p = self.params
        n_sup = cells.suppressed
        share = []
        for c in cells.columns:
            s = c.side
            lost = s.rel_suppressed_value | (s.rel_texts == NULL_TEXT)  # NULL even if listed
            share.append((c.kept("none")[lost].sum() + n_sup) / cells.n)
        share_a = np.array(share, dtype=float)
        kept = 1.0 - share_a  # what ARX stores, with bounds [0, 1]
        res = column_result(p.quasi_identifiers, kept, np.zeros_like(kept), np.ones_like(kept),
                            "arithmetic", ctx, {"records": cells.n, "suppressed_records": n_sup})
        d = res.details
        qi = p.quasi_identifiers
        # ARX's getters return 1 − normalized(stored): the shares themselves
        d["aggregates"] = {k: None if v is None else 1.0 - v for k, v in d["aggregates"].items()}
        d["per_attribute"] = dict(zip(qi, map(float, share_a), strict=True))
        geo = float(np.prod(share_a + 1) ** (1 / len(share_a)) - 1)
        d["metric_aggregates"] = {"arithmetic": float(share_a.mean()), "geometric": geo,
                                  "max": float(share_a.max())}
        d["aggregate"] = p.aggregate
        d["quality"] = d["aggregates"]["arithmetic"]
        value = (d["aggregates"]["arithmetic"] if p.aggregate == "arithmetic"
                 else d["metric_aggregates"][p.aggregate])
        return MeasureResult(value=value, details=d)
