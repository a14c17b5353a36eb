"""δ-presence as a risk: the share of records in classes whose membership is too revealing."""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from anoneval.core.api import (
    ClassSummary,
    Context,
    DataError,
    Dataset,
    MeasureResult,
    Microdata,
    Side,
    SummarySpec,
    cogrouped,
)
from anoneval.plugins.microdata._common import (
    ClassRiskMeasure,
    Column,
    released_summary,
    warn_missing,
)
from anoneval.plugins.microdata._hierarchy import read_hierarchies, text_levels
from anoneval.plugins.microdata._population import (
    PopulationParams,
    Presence,
    ReleaseFacts,
    first_found,
    population_dataset,
    population_rows,
    presence,
    release_facts,
    release_population,
    release_rows,
    release_texts,
)
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

    It reads the class summaries of the release and the population (the original's, or the
    ``population`` file's, read into this process) on every engine, so it runs on data an
    engine never gathers: a release class's key and each population class's key generalized
    to the release's levels become rows keyed by the tuple's texts (two independent 64-bit
    hashes of them, so a row is 40 bytes whatever the values), hash-partitioned together on it
    (on Dask, a second shuffle of the parts where they lie:
    :func:`~anoneval.core.api.cogrouped`), and each group of rows gives F_E and its classes'
    figures. Values are matched as text (``39`` and ``"39"`` read alike); release classes that
    differ only by such a type (a column mixing numbers and text) are an error naming them.
    Only ``per_record`` (a table of the rows) reads the records (gathered on Dask under
    ``engine.gather_limit``, else an error saying so).
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

    def summaries(self) -> list[SummarySpec] | None:
        """Both sides' summaries over the quasi-identifiers (the release's and, without a
        ``population`` file, the population's), or None for ``per_record`` (a row table)."""
        if self.params.per_record:
            return None
        qi = tuple(self.params.quasi_identifiers)
        return [SummarySpec("anonymized", qi), SummarySpec("original", qi)]

    def records_reason(self) -> str | None:
        """Why this instance reads the records (said when they exceed the gather limit)."""
        if not self.params.per_record:
            return None
        return ("per_record lists every released row, so DeltaPresence reads the records; drop "
                "per_record (or raise engine.gather_limit) to compute from the class summaries "
                "on the workers")

    def release_columns(self) -> Mapping[Side, Collection[str]] | None:
        """Both sides' quasi-identifiers: the original is the population."""
        return self.columns()

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if self.summaries() is not None:
            return self._from_summaries(original, anonymized, ctx)
        data, cl, counts = release_population(original, anonymized, p, ctx, "DeltaPresence")
        delta = cl.sizes / np.maximum(counts.F, 1)
        violates = (delta < p.delta_min) | (delta > p.delta_max)
        has = len(delta) > 0
        lowest = float(delta.min()) if has else None
        if counts.outside:
            lowest = 0.0
            if p.delta_min > 0:
                ctx.warn(_outside_warning(counts.outside, p.delta_min))
        return result(data, cl, violates, delta, "delta", p.per_record, p.id, {
            "delta_min": p.delta_min, "delta_max": p.delta_max,
            "achieved_delta_min": lowest,
            "achieved_delta_max": float(delta.max()) if has else None,
            "population_records": counts.population_records,
            "population_outside_release": counts.outside,
            "levels": counts.levels,
        })

    def _from_summaries(self, original: Dataset | None, anonymized: Dataset | None,
                        ctx: Context) -> MeasureResult:
        """The record path's result from the class summaries of the release and the
        population, joined by the generalized tuple where their parts lie."""
        p = self.params
        qi = tuple(p.quasi_identifiers)
        if anonymized is None and p.population is None:
            raise DataError("DeltaPresence needs a population besides the release: give the "
                            "original and the anonymized data, or 'population'")
        summary, side = released_summary(original, anonymized, p, ctx, check_rows=False)
        ctx = ctx.with_summaries(original, anonymized)
        if p.population is not None:
            pop = population_dataset(None, p, ctx, "DeltaPresence")
            pop.require(qi, "quasi-identifier")
            population = ClassSummary.of_frame(pop, SummarySpec("original", qi))
        elif original is None:
            raise DataError("DeltaPresence needs a population: give the original dataset or "
                            "the 'population' param (a file of raw records)")
        else:
            if isinstance(original, Microdata):
                original.require(qi, "quasi-identifier")
            population = ctx.class_summary(SummarySpec("original", qi))
        hs = read_hierarchies({c: v for c, v in p.hierarchies.items() if c in qi}, ctx,
                              p.suppression_token)
        facts = summary.reduce(functools.partial(
            release_facts, qi=qi, token=p.suppression_token, missing=p.missing,
            leveled=tuple(hs)), ReleaseFacts.combine)
        empty = np.zeros(0, dtype=np.int64)
        warn_missing(ctx, qi, [Column(empty, empty.astype(object), -1, m)
                               for m in facts.missing], p.missing, side)
        if population.n_records < facts.records:
            raise DataError(f"the population has {population.n_records} records, fewer than "
                            f"the {facts.records} released records (population smaller than "
                            "the sample)")
        levels = text_levels(facts.texts, list(qi), hs, p.levels, p.suppression_token)
        meta = pd.DataFrame({"h0": np.zeros(0, dtype=np.uint64),
                             "h1": np.zeros(0, dtype=np.uint64),
                             "f": np.zeros(0, dtype=np.int64), "F": np.zeros(0, dtype=np.int64),
                             "kind": np.zeros(0, dtype=np.uint64)})
        rules = {"qi": qi, "token": p.suppression_token, "missing": p.missing}
        found = cogrouped(
            [(summary, functools.partial(release_rows, **rules)),
             (population, functools.partial(population_rows, **rules, hierarchies=hs,
                                            levels=levels))],
            ["h0", "h1"], meta,
            functools.partial(presence, delta_min=p.delta_min, delta_max=p.delta_max),
            Presence.combine)

        def texts(key: tuple[int, int]) -> dict[str, str]:
            found = summary.reduce(functools.partial(release_texts, key=key, **rules),
                                   first_found)
            return dict(zip(qi, found or ("?",) * len(qi), strict=True))

        if found.clash is not None:
            raise DataError(
                f"release classes {texts(found.clash)} differ by the type "
                "of a value that reads alike as text (e.g. 39 and '39'); the population is "
                "matched to the release's classes by text, so it cannot tell them apart: "
                "give the column one type")
        if found.short is not None:
            key, f, F = found.short
            shown = texts(key)
            if F == 0:
                plain = [q for q in qi if q not in hs]
                raise DataError(
                    f"no population record falls into release class {shown}: the population "
                    "is generalized to the release's levels with 'hierarchies', and "
                    "quasi-identifiers without one "
                    f"({', '.join(plain) or 'none'}) are compared as text, so a generalized "
                    "value never meets a raw one. Give 'hierarchies' for the generalized "
                    "quasi-identifiers, or a 'population' file at the release's levels")
            raise DataError(f"release class {shown} has {f} records but the population only "
                            f"{F} (population smaller than the sample; levels used: {levels})")
        lowest = found.lowest
        if found.outside:
            lowest = 0.0
            if p.delta_min > 0:
                ctx.warn(_outside_warning(found.outside, p.delta_min))
        n = facts.records
        return MeasureResult(value=found.in_violating / n if n else 0.0, details={
            "records": n, "suppressed_records": facts.suppressed, "classes": found.classes,
            "violating_classes": found.violating,
            "records_in_violating_classes": found.in_violating,
            "delta_min": p.delta_min, "delta_max": p.delta_max,
            "achieved_delta_min": lowest, "achieved_delta_max": found.highest,
            "population_records": population.n_records,
            "population_outside_release": found.outside,
            "levels": levels,
        })


def _outside_warning(outside: int, delta_min: float) -> str:
    return (f"{outside} population records are in classes without released records "
            f"(delta = 0 < delta_min {delta_min})")
