"""δ-disclosure privacy as a risk: the share of records in classes with a log-ratio of δ or more."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field

from anoneval.core.api import Context, Dataset, MeasureResult
from anoneval.plugins.microdata._sensitive import (
    TOLERANCE,
    Distribution,
    SensitiveParams,
    SensitiveRisk,
    class_max,
    prepare,
    result,
    worst_per_class,
)


class DeltaDisclosure(SensitiveRisk):
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
        scale = 1.0 if p.log_base == "e" else 1.0 / math.log(2.0)

        def log_ratio(_: str, d: Distribution) -> np.ndarray:
            ratio = np.abs(np.log(d.q / d.p[d.pair_value])) * scale
            return class_max(d.pair_class, ratio, len(cl.sizes), 0.0)

        worst, per_attribute, achieved = worst_per_class(data, cl, p, ctx, "achieved_delta",
                                                         log_ratio)
        violates = worst >= p.delta * (1 - TOLERANCE)  # strict: a class at δ violates
        return result(data, cl, violates, worst, "delta", p, {
            "delta": p.delta, "log_base": p.log_base,
            "achieved_delta": achieved,
            "per_attribute": per_attribute,
        })
