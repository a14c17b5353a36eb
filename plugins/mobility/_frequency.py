"""Shared params of the frequency-vector attacks: the tolerance τ."""

from __future__ import annotations

from pydantic import Field

from anoneval.plugins.mobility._risk import AttackParams


class ToleranceParams(AttackParams):
    tolerance: float = Field(0.0, ge=0, le=1, description=(
        "τ: a value matches when v(1−τ) ≤ value ≤ v(1+τ) (skmob's default 0: equality)."))
