"""β-likeness as a risk: the share of records in classes where a value's relative gain exceeds β."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np
from pydantic import Field

from anoneval.plugins.microdata._sensitive import (
    TOLERANCE,
    Distribution,
    Judged,
    SensitiveParams,
    SensitiveRisk,
    Tally,
    class_max,
)


class BetaLikeness(SensitiveRisk):
    """Share of records in equivalence classes that violate β-likeness.

    Source: Cao & Karras (2012), "Publishing microdata with a robust privacy guarantee", PVLDB
    5(11), definitions 2 (basic) and 3 (enhanced); ARX's ``BasicBLikeness`` and
    ``EnhancedBLikeness``. With q_v the share of sensitive value v in class E and p_v in the
    whole table (all records, suppressed ones included), the relative gain of a value present
    in E is D_v = (q_v − p_v) / p_v (only gains count: values with q_v ≤ p_v never violate).

    * ``basic``: E violates when D_v > β for some present v;
    * ``enhanced``: E violates when D_v > min(β, −ln p_v) for some present v (natural log).

    Inequalities as ARX (``>`` violates; equality holds; within 1e-12 relative counts as
    equal, against rounding). Missing sensitive values are a value of their own (with a
    warning); missing quasi-identifier values too, or suppressed cells with
    ``missing="suppressed"``.

    value = records in violating classes / n (n counts suppressed records, in no class).
    details: ``achieved_beta`` = the largest D_v
    (the tightest β that holds); for ``enhanced`` it is null when some D_v > −ln p_v (no β
    makes the table enhanced-β-like), and ``pycanon_enhanced_beta`` = min(max D_v,
    max_v −ln p_v) (what pyCANON's ``enhanced_beta_likeness`` returns); ``per_record`` adds
    each released row's class maximum of D_v.

    Computed from the released side's class summary (the one ``LDiversity`` reads: quasi-
    identifiers → sensitive-value histograms), so it runs on data an engine never gathers,
    except with ``per_record`` (a row table) or ``id`` (deleted records are found by comparing
    both sides' rows), which read the records.
    """

    name = "BetaLikeness"
    description = "Share of records in classes where a sensitive value gains more than beta."

    class Params(SensitiveParams):
        beta: float = Field(1.0, gt=0, description="β: largest relative gain allowed.")
        variant: Literal["basic", "enhanced"] = Field(
            "basic", description="basic (D <= β) or enhanced (D <= min(β, -ln p)).")

    stat_name = "beta"

    def judge(self, dists: Mapping[str, Distribution], sizes: np.ndarray,
              shared: None) -> Judged:
        p = self.params
        n_classes = len(sizes)
        stat = {}
        violates = np.zeros(n_classes, dtype=bool)
        flags = {}
        for sa, d in dists.items():
            pv = d.p[d.pair_value]
            gain = (d.q - pv) / pv
            stat[sa] = class_max(d.pair_class, gain, n_classes)
            if p.variant == "basic":
                bad = gain > p.beta * (1 + TOLERANCE)
            else:
                cap = -np.log(pv)
                bad = gain > np.minimum(p.beta, cap) * (1 + TOLERANCE)
                flags[sa] = bool((gain > cap).any())  # no β makes the class enhanced-β-like
            violates |= np.bincount(d.pair_class[bad], minlength=n_classes) > 0
        worst = np.full(n_classes, -np.inf)
        for value in stat.values():
            worst = np.maximum(worst, value)
        return Judged(stat, worst, violates, flags)

    def report(self, tally: Tally, p_values: Mapping[str, np.ndarray]) -> dict[str, object]:
        p = self.params
        per_attribute: dict[str, dict[str, float | None]] = {}
        for sa, largest in tally.largest.items():
            entry: dict[str, float | None] = {"achieved_beta": largest}
            if p.variant == "enhanced":
                if tally.flags.get(sa):
                    entry["achieved_beta"] = None
                present = p_values[sa][p_values[sa] > 0]
                entry["pycanon_enhanced_beta"] = (
                    None if largest is None else min(largest, float(-np.log(present.min()))))
            per_attribute[sa] = entry
        achievable = not any(tally.flags.values())
        details: dict[str, object] = {"beta": p.beta, "variant": p.variant,
                                      "achieved_beta": tally.worst if achievable else None,
                                      "per_attribute": per_attribute}
        if not achievable:
            details["reason"] = ("some value's gain exceeds -ln p: no beta makes the table "
                                 "enhanced-beta-like")
        return details
