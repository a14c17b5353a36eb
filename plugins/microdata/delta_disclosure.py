"""δ-disclosure privacy as a risk: the share of records in classes with a log-ratio of δ or more."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import Context, Dataset, MeasureResult, RiskMeasure
from anoneval.plugins.microdata._sensitive import (
    SensitiveParams,
    class_key,
    class_max,
    distribution,
    prepare,
    result,
)

#: Relative tolerance of the comparison with δ (rounding of the logarithm).
TOLERANCE = 1e-12


class DeltaDisclosure(RiskMeasure):
    """Share of records in equivalence classes that are not δ-disclosure private.

    Source: Brickell & Shmatikov (2008), "The cost of privacy: destruction of data-mining
    utility in anonymized data publishing", KDD, definition 4; ARX's ``DDisclosurePrivacy``.
    With q_v the share of sensitive value v in class E and p_v in the whole table (all records,
    suppressed ones included): E is δ-disclosure private when |log(q_v / p_v)| < δ for every
    value v present in E (strict ``<``, as the publication and ARX: a class at exactly δ
    violates; within 1e-12 relative of δ counts as equal). Values absent from E are not
    constrained. ``log_base``: ``e`` (natural log, the
    publication's and pyCANON's) or ``2`` (ARX's ``log2``).

    Missing sensitive values are a value of their own (with a warning); missing
    quasi-identifier values too, or suppressed cells with ``missing="suppressed"``.

    value = records in violating classes / n (n counts suppressed records, in no class).
    details: ``achieved_delta`` = the largest |log(q/p)| over classes and present values (δ
    must exceed it), per attribute under ``per_attribute``; ``per_record`` adds each released
    row's class maximum.
    """

    name = "DeltaDisclosure"
    description = "Share of records in classes that are not delta-disclosure private."
    unit = "share"
    accepts = ("microdata",)
    inputs = "either"

    class Params(SensitiveParams):
        delta: float = Field(1.0, gt=0, description="δ: classes with |log(q/p)| >= δ for a "
                                                    "present value violate.")
        log_base: Literal["e", "2"] = Field(
            "e", description="Logarithm: e (natural, Brickell & Shmatikov, pyCANON) or 2 "
                             "(ARX).")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        data, cl = prepare(original, anonymized, p, ctx)
        n_classes = len(cl.sizes)
        worst = np.zeros(n_classes)
        per_attribute = {}
        scale = 1.0 if p.log_base == "e" else 1.0 / math.log(2.0)
        for sa in p.sensitive:
            d = distribution(data, cl, sa, ctx, class_key(p))
            ratio = np.abs(np.log(d.q / d.p[d.pair_value])) * scale
            stat = class_max(d.pair_class, ratio, n_classes, 0.0)
            worst = np.maximum(worst, stat)
            per_attribute[sa] = {"achieved_delta": float(stat.max()) if n_classes else None}
        violates = worst >= p.delta * (1 - TOLERANCE)
        return result(data, cl, violates, worst, "delta", p, {
            "delta": p.delta, "log_base": p.log_base,
            "achieved_delta": float(worst.max()) if n_classes else None,
            "per_attribute": per_attribute,
        })
