"""β-likeness as a risk: the share of records in classes where a value's relative gain exceeds β."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import Context, Dataset, MeasureResult
from anoneval.plugins.microdata._sensitive import (
    TOLERANCE,
    SensitiveParams,
    SensitiveRisk,
    class_key,
    class_max,
    distribution,
    prepare,
    result,
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
    """

    name = "BetaLikeness"
    description = "Share of records in classes where a sensitive value gains more than beta."

    class Params(SensitiveParams):
        beta: float = Field(1.0, gt=0, description="β: largest relative gain allowed.")
        variant: Literal["basic", "enhanced"] = Field(
            "basic", description="basic (D <= β) or enhanced (D <= min(β, -ln p)).")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        data, cl = prepare(original, anonymized, p, ctx)
        n_classes = len(cl.sizes)
        worst = np.full(n_classes, -np.inf)
        violates = np.zeros(n_classes, dtype=bool)
        per_attribute: dict[str, dict[str, float | None]] = {}
        achievable = True
        for sa in p.sensitive:
            d = distribution(data, cl, sa, ctx, class_key(p))
            pv = d.p[d.pair_value]
            gain = (d.q - pv) / pv
            stat = class_max(d.pair_class, gain, n_classes)
            worst = np.maximum(worst, stat)
            entry: dict[str, float | None] = {
                "achieved_beta": float(stat.max()) if n_classes else None}
            if p.variant == "basic":
                bad = gain > p.beta * (1 + TOLERANCE)
            else:
                cap = -np.log(pv)
                bad = gain > np.minimum(p.beta, cap) * (1 + TOLERANCE)
                over = gain > cap
                if over.any():
                    achievable = False
                    entry["achieved_beta"] = None
                present = d.p[d.p > 0]
                entry["pycanon_enhanced_beta"] = (
                    min(float(stat.max()), float(-np.log(present.min())))
                    if len(gain) else None)
            violates |= np.bincount(d.pair_class[bad], minlength=n_classes) > 0
            per_attribute[sa] = entry
        achieved = float(worst.max()) if n_classes and achievable else None
        details: dict[str, object] = {"beta": p.beta, "variant": p.variant,
                                      "achieved_beta": achieved, "per_attribute": per_attribute}
        if p.variant == "enhanced" and not achievable:
            details["reason"] = ("some value's gain exceeds -ln p: no beta makes the table "
                                 "enhanced-beta-like")
        return result(data, cl, violates, worst, "beta", p, details)
