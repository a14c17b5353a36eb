"""δ-presence as a risk: the share of records in classes whose membership is too revealing."""

from __future__ import annotations

import numpy as np
from pydantic import Field, model_validator

from anoneval.core.api import Context, Dataset, MeasureResult
from anoneval.plugins.microdata._common import ClassRiskMeasure
from anoneval.plugins.microdata._population import PopulationParams, release_population
from anoneval.plugins.microdata._sensitive import result


class DeltaPresence(ClassRiskMeasure):
    """Share of released records in classes whose membership probability leaves [δmin, δmax].

    Source: Nergiz, Atzori & Clifton (2007), "Hiding the presence of individuals from shared
    databases", SIGMOD; ARX's ``DPresence``. The release is a sample of a population (the
    ``population`` file or the original dataset; rows need not align). The population is
    generalized to the release's levels (quasi-identifiers with a hierarchy in
    ``hierarchies``; level detected from the released values or given in ``levels``; others
    compared as text). For a release class E with f_E released records and F_E population
    records, δ_E = f_E / F_E = P(a population member of E is in the release); E violates when
    δ_E < ``delta_min`` or δ_E > ``delta_max`` (bounds inclusive, as ARX). Population records
    whose generalized tuple is in no release class form classes with δ = 0 (Nergiz et al.
    bound every population tuple; ARX checks those classes too): they violate any
    ``delta_min`` > 0 and make ``achieved_delta_min`` 0.

    value = released records in violating classes / n (n counts suppressed records, in no
    class); the population records of δ = 0 classes are not released and are reported as
    ``population_outside_release`` (with a warning when they violate). details:
    ``achieved_delta_min`` / ``achieved_delta_max`` (the smallest and largest δ: the tightest
    bounds that hold); ``per_record`` adds each released row's δ.

    It reads the records of both sides (on Dask, gathered under ``engine.gather_limit``): F_E
    joins the population, generalized value by value to the release's levels, with the
    release's classes, and the population's class summary is grouped (and on a cluster
    hash-partitioned) by the raw values, so one release class's population lies in many
    parts; counting it there would take a second shuffle by the generalized tuple.
    """

    name = "DeltaPresence"
    description = "Share of released records in classes with a presence probability out of bounds."

    class Params(PopulationParams):
        delta_min: float = Field(0.0, ge=0, le=1, description="Smallest δ allowed.")
        delta_max: float = Field(0.5, ge=0, le=1, description="Largest δ allowed.")
        per_record: bool = Field(False, description="Add a per-record table to details.")

        @model_validator(mode="after")
        def _ordered(self) -> DeltaPresence.Params:
            if self.delta_min > self.delta_max:
                raise ValueError(f"delta_min {self.delta_min} exceeds delta_max "
                                 f"{self.delta_max}")
            return self

    def records_reason(self) -> str:
        """Why the measure reads the records (said when they exceed the gather limit)."""
        return ("DeltaPresence generalizes every population record to the release's levels and "
                "counts them per release class, a join of both sides' records that the class "
                "summaries (grouped by the raw values) do not give; raise engine.gather_limit "
                "or run it on the local engine")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        data, cl, counts = release_population(original, anonymized, p, ctx, "DeltaPresence")
        delta = cl.sizes / np.maximum(counts.F, 1)
        violates = (delta < p.delta_min) | (delta > p.delta_max)
        has = len(delta) > 0
        lowest = float(delta.min()) if has else None
        if counts.outside:
            lowest = 0.0
            if p.delta_min > 0:
                ctx.warn(f"{counts.outside} population records are in classes without released "
                         f"records (delta = 0 < delta_min {p.delta_min})")
        return result(data, cl, violates, delta, "delta", p.per_record, p.id, {
            "delta_min": p.delta_min, "delta_max": p.delta_max,
            "achieved_delta_min": lowest,
            "achieved_delta_max": float(delta.max()) if has else None,
            "population_records": counts.population_records,
            "population_outside_release": counts.outside,
            "levels": counts.levels,
        })
