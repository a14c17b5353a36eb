"""Running sensitivity rules: the base class of the rule measures and the cells of their
details (status, reason, shares, protection levels).

Every rule's ``details["cells"]`` has the key columns, ``contributors`` (and ``records`` and
``holdings`` when rules run at both levels), the signed ``total``, ``top1_share``, ... (T(j)/X),
``protection_level`` (tau-Argus's upper protection level of the most demanding failing magnitude
rule), ``status`` (safe/unsafe/empty) and ``reason`` (the failing rules).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from anoneval.core.api import (
    Context,
    Dataset,
    MeasureResult,
    RiskMeasure,
    SummarySpec,
    Table,
    released,
)
from anoneval.plugins.tabular._cells import CellParams, build_cells, cell_specs
from anoneval.plugins.tabular._rules import Level, Rule


def default_level(p: CellParams) -> Level:
    """Single rules run on contributors (holdings) when ``contributor`` is given."""
    return "holding" if p.contributor else "record"


class CellRiskMeasure(RiskMeasure):
    """Base of the sensitivity rules: the share of unsafe cells among the non-empty ones.

    On microdata the cells come from the released side's class summary (spanning variables,
    contributor, magnitude and weight as keys: every record's contribution survives, so the
    top contributions, totals and counts are exact), which an engine computes without
    gathering the data; a table dataset is the cell table already and is read as it is.
    """

    unit = "share"
    accepts = ("microdata", "table")
    inputs = "either"
    params: CellParams

    def summaries(self) -> list[SummarySpec] | None:
        return cell_specs(self.params)

    def run(self, original: Dataset | None, anonymized: Dataset | None, rules: list[Rule],
            ctx: Context) -> MeasureResult:
        """:func:`run_rules` on the released side."""
        return run_rules(original, anonymized, self.params, rules, self.name, ctx)


def run_rules(original: Dataset | None, anonymized: Dataset | None, p: CellParams,
              rules: list[Rule], owner: str, ctx: Context) -> MeasureResult:
    """Apply ``rules`` (a cell failing any is unsafe) to the released side and build the
    result."""
    data = released(original, anonymized)
    side = "anonymized" if anonymized is not None else "original"
    need_magnitude = any(r.kind != "freq" for r in rules)
    has_magnitude = need_magnitude or bool(p.magnitude) or (
        isinstance(data, Table) and bool(data.total or p.total_column))
    depths: dict[str, int] = {}
    for r in rules:
        depths[r.level] = max(depths.get(r.level, 0), r.depth)
    if has_magnitude:
        main = rules[0].level
        if isinstance(data, Table):
            n_contrib = len(data.contributions or p.contribution_columns)
            depths[main] = max(depths.get(main, 0), min(2, n_contrib))
        else:
            depths[main] = max(depths.get(main, 0), 2)
    table = build_cells(data, p, depths, need_magnitude, owner,
                        ctx.with_summaries(original, anonymized), side)
    empty = table.empty
    unsafe = np.zeros(len(empty), dtype=bool)
    reason = np.full(len(empty), "", dtype=object)
    by_rule: dict[str, int] = {}
    protection = np.full(len(empty), np.nan)
    for r in rules:
        fail = r.unsafe(table.levels[r.level]) & ~empty
        by_rule[r.label] = int(fail.sum())
        if r.kind != "freq":
            level = np.where(fail, r.protection(table.levels[r.level]), np.nan)
            protection = np.fmax(protection, level)
        reason = np.where(fail, np.where(reason == "", r.label, reason + "; " + r.label), reason)
        unsafe |= fail
    n_nonempty = int((~empty).sum())
    n_unsafe = int(unsafe.sum())

    cells = table.keys.copy()
    main = table.levels[rules[0].level]
    cells["contributors"] = main.contributors
    if len(table.levels) == 2:  # rules at both levels: show both counts
        cells["records"] = table.levels["record"].contributors
        cells["holdings"] = table.levels["holding"].contributors
    share_total = None
    if has_magnitude:
        cells["total"] = table.signed_total
        x_total = main.total
        with np.errstate(divide="ignore", invalid="ignore"):
            for j in range(main.top.shape[1]):
                cells[f"top{j + 1}_share"] = np.where(x_total > 0, main.top[:, j] / x_total,
                                                      np.nan)
        if need_magnitude:
            cells["protection_level"] = protection
        whole = float(x_total[~empty].sum())
        share_total = float(x_total[unsafe].sum()) / whole if whole > 0 else None
    cells["status"] = np.where(empty, "empty", np.where(unsafe, "unsafe", "safe"))
    cells["reason"] = np.where(empty, "empty", reason)
    truncated = p.max_rows is not None and len(cells) > p.max_rows
    if truncated:
        order = np.argsort(~unsafe, kind="stable")[: p.max_rows]
        cells = cells.iloc[np.sort(order)].reset_index(drop=True)
    details: dict[str, Any] = {
        "rules": [r.label for r in rules],
        "keys": [str(c) for c in table.keys.columns],
        "n_cells": len(empty),
        "n_empty": int(empty.sum()),
        "n_nonempty": n_nonempty,
        "n_unsafe": n_unsafe,
        "unsafe_by_rule": by_rule,
        "unsafe_magnitude_share": share_total,
        "cells": cells,
        "cells_truncated": bool(truncated),
    }
    warnings = []
    if n_nonempty == 0:
        warnings.append("the table has no non-empty cell; the share of unsafe cells is undefined")
    return MeasureResult(value=n_unsafe / n_nonempty if n_nonempty else None, details=details,
                         warnings=warnings)
