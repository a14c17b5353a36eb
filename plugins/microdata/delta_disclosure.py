"""δ-disclosure privacy as a risk: the share of records in classes with a log-ratio of δ or more."""

from __future__ import annotations

import math
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
    worst_of,
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

    Computed from the released side's class summary (the one ``LDiversity`` reads: quasi-
    identifiers → sensitive-value histograms), so it runs on data an engine never gathers,
    except with ``per_record`` (a row table) or ``id`` (deleted records are found by comparing
    both sides' rows), which read the records.
    """

    name = "DeltaDisclosure"
    description = "Share of records in classes that are not delta-disclosure private."

    class Params(SensitiveParams):
        delta: float = Field(1.0, gt=0, description="δ: classes with |log(q/p)| >= δ for a "
                                                    "present value violate.")
        log_base: Literal["e", "2"] = Field(
            "e", description="Logarithm: e (natural, Brickell & Shmatikov, pyCANON) or 2 "
                             "(ARX).")

    stat_name = "delta"

    def judge(self, dists: Mapping[str, Distribution], sizes: np.ndarray,
              shared: None) -> Judged:
        p = self.params
        scale = 1.0 if p.log_base == "e" else 1.0 / math.log(2.0)
        stat = {sa: class_max(d.pair_class, np.abs(np.log(d.q / d.p[d.pair_value])) * scale,
                              len(sizes), 0.0) for sa, d in dists.items()}
        worst = worst_of(stat, len(sizes))
        return Judged(stat, worst, worst >= p.delta * (1 - TOLERANCE))  # a class at δ violates

    def report(self, tally: Tally, p_values: Mapping[str, np.ndarray]) -> dict[str, object]:
        p = self.params
        return {"delta": p.delta, "log_base": p.log_base, "achieved_delta": tally.worst,
                "per_attribute": {sa: {"achieved_delta": v} for sa, v in tally.largest.items()}}
