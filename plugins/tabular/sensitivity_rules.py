"""Several primary sensitivity rules combined as tau-Argus does: a cell failing any is unsafe."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    MeasureResult,
    Params,
    repeated,
)
from anoneval.plugins.tabular._cells import CellParams
from anoneval.plugins.tabular._rules import Rule
from anoneval.plugins.tabular._sensitivity import CellRiskMeasure, default_level

LEVEL_DESCRIPTION = ("'record' or 'holding' (contributions summed per 'contributor'); default: "
                     "'holding' when 'contributor' is given, else 'record'.")


class NKSpec(Params):
    rule: Literal["nk"] = Field(description="(n,k)-dominance.")
    n: int = Field(ge=1, description="Number of largest contributions summed.")
    k: float = Field(gt=0, le=100, description="Percentage of the cell total (0,100].")
    level: Literal["record", "holding"] | None = Field(None, description=LEVEL_DESCRIPTION)


class PSpec(Params):
    rule: Literal["p"] = Field(description="p% rule.")
    p: float = Field(gt=0, lt=100, description="Required precision in %, in (0,100).")
    n: int = Field(1, ge=1, description="Number of intruders.")
    level: Literal["record", "holding"] | None = Field(None, description=LEVEL_DESCRIPTION)


class PQSpec(Params):
    rule: Literal["pq"] = Field(description="pq (prior-posterior) rule.")
    p: float = Field(gt=0, lt=100, description="Posterior precision in %, in (0,100).")
    q: float = Field(gt=0, le=100, description="Prior precision in %, in (p,100].")
    n: int = Field(1, ge=1, description="Number of intruders.")
    level: Literal["record", "holding"] | None = Field(None, description=LEVEL_DESCRIPTION)

    @model_validator(mode="after")
    def _p_below_q(self) -> PQSpec:
        if self.p >= self.q:
            raise ValueError(f"p ({self.p:g}) must be smaller than q ({self.q:g})")
        return self


class FreqSpec(Params):
    rule: Literal["freq"] = Field(description="Threshold: 0 < contributors < min_contributors.")
    min_contributors: int = Field(ge=1, description="Minimum number of contributors.")
    level: Literal["record", "holding"] | None = Field(None, description=LEVEL_DESCRIPTION)


RuleSpec = Annotated[NKSpec | PSpec | PQSpec | FreqSpec, Field(discriminator="rule")]


class SensitivityRules(CellRiskMeasure):
    """Share of non-empty cells failing any of a list of primary rules, with the reason per cell.

    tau-Argus combines a table's rules (up to two per level, record and holding) so that a cell
    failing any of them is unsafe (libtauargus Table.cpp; manual §4.2). Each rule is one of
    ``{"rule": "nk", "n", "k"}``, ``{"rule": "p", "p", "n"}``, ``{"rule": "pq", "p", "q", "n"}``
    or ``{"rule": "freq", "min_contributors"}`` with an optional ``level``; definitions as in
    Dominance, PPercent, PQRule and Threshold. Unlike tau-Argus, any number of rules may be
    given (tau-Argus: two of each kind per level), and where tau-Argus records only the first
    failing rule, ``reason`` lists every failing rule in the order given (UserSupport #174 asks to
    tell 1-dominant from 2-dominant cells); ``details['unsafe_by_rule']`` counts each.
    """

    name = "SensitivityRules"
    description = "Share of cells failing any of several sensitivity rules, with the reason."

    class Params(CellParams):
        rules: list[RuleSpec] = Field(
            default_factory=lambda: [NKSpec(rule="nk", n=1, k=75),
                                     FreqSpec(rule="freq", min_contributors=3)],
            min_length=1,
            description="Rules, each {'rule': 'nk'|'p'|'pq'|'freq', ...}; default: nk(1,75) "
                        "and at least 3 contributors.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        rules: list[Rule] = []
        for i, spec in enumerate(p.rules):
            level = spec.level or default_level(p)
            if level == "holding" and not p.contributor:
                raise DataError(f"rules[{i}]: level 'holding' needs the 'contributor' param")
            if isinstance(spec, NKSpec):
                rules.append(Rule("nk", level, n=spec.n, k=spec.k))
            elif isinstance(spec, PSpec):
                rules.append(Rule("p", level, n=spec.n, p=spec.p, q=100.0))
            elif isinstance(spec, PQSpec):
                rules.append(Rule("p", level, n=spec.n, p=spec.p, q=spec.q))
            else:
                rules.append(Rule("freq", level, min_contributors=spec.min_contributors))
        labels = [r.label for r in rules]
        dups = repeated(labels)
        if dups:
            raise DataError(f"rules repeat {dups}; give each rule once")
        return self.run(original, anonymized, rules, ctx)
