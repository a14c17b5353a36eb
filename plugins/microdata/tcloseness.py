"""t-closeness as a risk: the share of records in classes whose distribution is farther than t."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from anoneval.core.api import Context, DataError, ParamPath
from anoneval.plugins.microdata._common import as_text, hierarchy_rows
from anoneval.plugins.microdata._hierarchy import Hierarchy, read_hierarchy
from anoneval.plugins.microdata._sensitive import (
    TOLERANCE,
    Distribution,
    Judged,
    SensitiveParams,
    SensitiveRisk,
    Tally,
    worst_of,
)

#: Cells of the dense class × value blocks of the ordered and hierarchical distances.
BLOCK_CELLS = 4_000_000


class TCloseness(SensitiveRisk):
    """Share of records in equivalence classes whose sensitive distribution is farther than t.

    Source: Li, Li & Venkatasubramanian (2007), "t-closeness: privacy beyond k-anonymity and
    l-diversity", ICDE, §4 (Earth Mover's Distance); ARX's ``EqualDistanceTCloseness``,
    ``OrderedDistanceTCloseness`` and ``HierarchicalDistanceTCloseness``. With q the
    distribution of the sensitive attribute in class E and p in the whole table (all records,
    suppressed ones included, as ARX), m distinct values in the table:

    * ``equal``: D = ½·Σ_v |q_v − p_v| (every pair of values at distance 1);
    * ``ordered``: D = Σ_{i=1..m} |Σ_{j≤i} (q_j − p_j)| / (m − 1), values in ascending order
      (numeric when the column is numeric, else by text); 0 when m = 1;
    * ``hierarchical`` (the sensitive attribute's ARX hierarchy in ``hierarchies``, height H =
      columns − 1): leaves get extra = q − p; an inner node N at level L gets pos (sum of its
      children's positive extras) and neg (of the negative ones), extra(N) = pos − neg and
      cost(N) = (L/H)·min(pos, neg); D = Σ_N cost(N).

    A class violates when D > t (ARX: satisfied when D ≤ t; within 1e-12 counts as equal).
    Missing sensitive values are a value of their own (with a warning); missing
    quasi-identifier values too, or suppressed cells with ``missing="suppressed"``.

    value = records in violating classes / n (n counts suppressed records, in no class).
    details: ``achieved_t`` = the largest D (the tightest t that holds), per attribute under
    ``per_attribute``; ``per_record`` adds each released row's class distance.

    Computed from the released side's class summary (the one ``LDiversity`` reads: quasi-
    identifiers → sensitive-value histograms), so it runs on data an engine never gathers,
    except with ``per_record`` (a row table) or ``id`` (deleted records are found by comparing
    both sides' rows), which read the records.
    """

    name = "TCloseness"
    description = "Share of records in classes whose sensitive distribution is farther than t."

    class Params(SensitiveParams):
        t: float = Field(0.2, ge=0, le=1, description="Largest distance allowed (D > t "
                                                      "violates).")
        distance: Literal["equal", "ordered", "hierarchical"] = Field(
            "equal", description="Ground distance: equal, ordered (numeric or text order) or "
                                 "hierarchical (needs 'hierarchies' for the sensitive "
                                 "attribute).")
        hierarchies: dict[str, ParamPath] = Field(
            default_factory=dict, description="ARX hierarchy CSV per sensitive attribute (for "
                                              "the hierarchical distance).")

        @model_validator(mode="after")
        def _hierarchies(self) -> TCloseness.Params:
            unknown = sorted(set(self.hierarchies) - set(self.sensitive))
            if unknown:
                raise ValueError(f"hierarchies given for {unknown}, which are not sensitive "
                                 f"attributes {self.sensitive}")
            if self.distance == "hierarchical":
                lacking = [s for s in self.sensitive if s not in self.hierarchies]
                if lacking:
                    raise ValueError(f"the hierarchical distance needs a hierarchy for {lacking}"
                                     " in 'hierarchies'")
            return self

    stat_name = "distance"

    def columns(self) -> dict[str, list[str]]:
        """The quasi-identifiers, sensitive attributes and the id column, of both sides."""
        p = self.params
        cols = [*p.quasi_identifiers, *p.sensitive, *([p.id] if p.id else [])]
        return {"original": cols, "anonymized": cols}

    def shared(self, values: Mapping[str, pd.Index], ctx: Context) -> dict[str, Hierarchy]:
        """The hierarchies of the hierarchical distance, checked against every value."""
        p = self.params
        if p.distance != "hierarchical":
            return {}
        found = {sa: read_hierarchy(ctx.path(p.hierarchies[sa]), p.suppression_token)
                 for sa in p.sensitive}
        for sa, h in found.items():
            hierarchy_rows(h, as_text(values[sa]), sa)  # names the values it lacks, here
        return found

    def judge(self, dists: Mapping[str, Distribution], sizes: np.ndarray,
              shared: dict[str, Hierarchy]) -> Judged:
        p = self.params
        n_classes = len(sizes)
        stat = {}
        for sa, d in dists.items():
            if p.distance == "equal":
                stat[sa] = _equal(d, n_classes)
            elif p.distance == "ordered":
                stat[sa] = _ordered(d, n_classes)
            else:
                stat[sa] = _hierarchical(d, n_classes, shared[sa], sa)
        worst = worst_of(stat, n_classes)
        return Judged(stat, worst, worst > p.t + TOLERANCE)  # a class at t holds

    def report(self, tally: Tally, p_values: Mapping[str, np.ndarray]) -> dict[str, object]:
        p = self.params
        return {"t": p.t, "distance": p.distance, "achieved_t": tally.worst,
                "per_attribute": {sa: {"achieved_t": v} for sa, v in tally.largest.items()}}


def _equal(d: Distribution, n_classes: int) -> np.ndarray:
    """½·Σ|q − p| per class from the sparse pairs: ½·(1 + Σ_{v in E}(|q_v − p_v| − p_v))."""
    pv = d.p[d.pair_value]
    part = np.bincount(d.pair_class, weights=np.abs(d.q - pv) - pv, minlength=n_classes)
    return np.clip(0.5 * (1.0 + part), 0.0, 1.0)


def _blocks(n_classes: int, width: int) -> list[tuple[int, int]]:
    """Class ranges whose dense class × width block stays under ``BLOCK_CELLS``."""
    step = max(1, BLOCK_CELLS // max(width, 1))
    return [(a, min(a + step, n_classes)) for a in range(0, n_classes, step)]


def _dense(d: Distribution, lo: int, hi: int, column_of: np.ndarray,
           width: int) -> np.ndarray:
    """q − p for classes lo..hi−1 as a dense block over ``width`` columns."""
    a, b = np.searchsorted(d.pair_class, [lo, hi])
    block = np.zeros((hi - lo, width))
    block[d.pair_class[a:b] - lo, column_of[d.pair_value[a:b]]] = d.q[a:b]
    p_cols = np.zeros(width)
    np.add.at(p_cols, column_of, d.p)
    return block - p_cols


def _ordered(d: Distribution, n_classes: int) -> np.ndarray:
    """Ordered EMD per class (values sorted ascending; m = distinct values in the table)."""
    present = np.flatnonzero(d.p > 0)
    m = len(present)
    if m <= 1 or n_classes == 0:
        return np.zeros(n_classes)
    vals = d.values[present]
    try:
        order = np.argsort(np.asarray(vals, dtype=float), kind="stable")
    except (TypeError, ValueError):
        order = np.argsort(as_text(vals), kind="stable")
    column_of = np.zeros(len(d.values), dtype=np.int64)
    column_of[present[order]] = np.arange(m)
    out = np.empty(n_classes)
    for lo, hi in _blocks(n_classes, m):
        diff = _dense(d, lo, hi, column_of, m)
        out[lo:hi] = np.abs(np.cumsum(diff, axis=1)).sum(axis=1) / (m - 1)
    return out


def _hierarchical(d: Distribution, n_classes: int, h: Hierarchy, sa: str) -> np.ndarray:
    """Li et al.'s hierarchical EMD per class, level by level on dense blocks."""
    rows = hierarchy_rows(h, as_text(d.values), sa)
    if n_classes == 0:
        return np.zeros(0)
    height = h.height
    if height == 0:
        return np.zeros(n_classes)
    leaves = len(h.rows)
    # per level: node index of each hierarchy row, and each node's parent at the next level
    node_of = []
    for lev in range(height + 1):
        _, inv = np.unique(h.codes[:, lev], return_inverse=True)
        node_of.append(inv.reshape(-1))
    out = np.zeros(n_classes)
    for lo, hi in _blocks(n_classes, leaves):
        extra = _dense(d, lo, hi, rows, leaves)  # leaf level: one column per hierarchy row
        for lev in range(1, height + 1):
            child_nodes = node_of[lev - 1]
            n_child = int(child_nodes.max()) + 1
            parent_of_child = np.zeros(n_child, dtype=np.int64)
            parent_of_child[child_nodes] = node_of[lev]
            n_parent = int(node_of[lev].max()) + 1
            onehot = np.zeros((n_child, n_parent))
            onehot[np.arange(n_child), parent_of_child] = 1.0
            pos = np.maximum(extra, 0.0) @ onehot
            neg = np.maximum(-extra, 0.0) @ onehot
            out[lo:hi] += (lev / height) * np.minimum(pos, neg).sum(axis=1)
            extra = pos - neg
    if not np.isfinite(out).all():
        raise DataError(f"sensitive attribute {sa!r}: hierarchical distance is not finite")
    return out
