"""Re-identification risk under the prosecutor, journalist and marketer attacker models."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    MeasureResult,
    SummarySpec,
    released,
)
from anoneval.plugins.microdata._common import (
    ClassRiskMeasure,
    released_classes,
    released_summary,
    summary_specs,
)
from anoneval.plugins.microdata._population import PopulationParams, release_population
from anoneval.plugins.microdata._records import RecordTable
from anoneval.plugins.reidentification._summary import (
    merged,
    size_counts,
    warn_groups,
)


class ReidentificationRisk(ClassRiskMeasure):
    """Success rate of a re-identification attack (prosecutor, journalist or marketer).

    Source: El Emam & Dankar (2008), "Protecting privacy using k-anonymity", JAMIA 15(5); El
    Emam (2013), "Guide to the de-identification of personal health information"; ARX's
    ``RiskModelSampleSummary`` (Prasser et al.). Classes are the groups of identical
    quasi-identifier tuples among the n released records that are not suppressed (all
    quasi-identifiers equal ``suppression_token``); suppressed records are left out of every
    figure, as in ARX. For a class E of f_E released records and F_E population records:

    * ``prosecutor`` (the target is known to be in the release): success rate = #classes / n
      (the mean over records of 1/f_E); ``highest_risk`` = 1/min f_E; ``records_at_risk`` =
      Σ{f_E : 1/f_E > risk_threshold} / n (strict ``>``).
    * ``journalist`` (the target is any member of the population): ``highest_risk`` =
      1/min F_E; ``records_at_risk`` = Σ{f_E : 1/F_E > risk_threshold} / n; success rate =
      max(#classes / Σ F_E, Σ_E (f_E/F_E) / n).
    * ``marketer`` (re-identify as many as possible): success rate = Σ_E (f_E/F_E) / n;
      ``highest_risk`` and ``records_at_risk`` are the journalist's.

    The population (journalist, marketer) is the ``population`` file or the original
    dataset, generalized to the release's levels: each quasi-identifier with a hierarchy in
    ``hierarchies`` is generalized to the level its released values are at (or ``levels``);
    the others are compared as text. Its rows need not align with the release's; all its
    records count (ARX counts suppressed records of the superset too). Without a population
    file, ``population_size`` N estimates each class's population size as F_E = f_E / π with
    the sampling fraction π = n_all / N (n_all: every record of the data, suppressed ones
    included): the expected count under simple random sampling (El Emam 2013, ch. "Measuring
    the probability of re-identification", the sampling-fraction estimate; Horvitz &
    Thompson 1952). Then f_E / F_E = π in every class, so marketer = journalist = π ·
    #classes / n (the prosecutor's rate times π) and ``highest_risk`` = π / min f_E; F_E need
    not be an integer. Without a population
    the journalist equals the prosecutor in ARX; here it is an error. ``levels`` and
    ``population`` given to the prosecutor are an error, not ignored: its classes are the
    released values as they are (``hierarchies`` are accepted, unused, so one set of ARX
    params serves every attacker). value = the success rate;
    details add ``records_at_risk_count`` and, with ``per_record``, a table aligned with the
    released rows (class size f, population size F, risk 1/f or 1/F; null when suppressed).

    The prosecutor and the estimated population (``population_size``), without
    ``per_record`` and ``id``, need only the class-size histogram: it is computed from the
    released side's class summary on every engine (on Dask reduced part by part, counts of
    classes by size). A ``population`` file is generalized and matched record by record, so
    the journalist and marketer against one read the records.
    """

    name = "ReidentificationRisk"
    description = "Success rate of a prosecutor, journalist or marketer re-identification attack."

    class Params(PopulationParams):
        attacker: Literal["prosecutor", "journalist", "marketer"] = Field(
            "prosecutor", description="Attacker model: prosecutor, journalist or marketer.")
        risk_threshold: float = Field(
            0.2, gt=0, le=1, description="Records whose risk exceeds this (strict >) are at "
                                         "risk; 0.2 = classes smaller than 5.")
        per_record: bool = Field(False, description="Add a per-record table to details.")
        population_size: int | None = Field(
            None, ge=1, strict=True,
            description="journalist, marketer: the size N of the population the data was "
                        "drawn from, given instead of a population table; each class's population "
                        "size is then estimated as f / (n / N).")

        @model_validator(mode="after")
        def _prosecutor_has_no_population(self) -> ReidentificationRisk.Params:
            if self.population_size is not None and (self.population or self.levels):
                raise ValueError("give either 'population_size' (estimated class sizes) or a "
                                 "'population' file (with 'levels'), not both")
            given = [k for k in ("levels", "population", "population_size")
                     if getattr(self, k)]
            if self.attacker == "prosecutor" and given:
                raise ValueError(
                    f"{' and '.join(given)} apply to the journalist and marketer attackers "
                    "(they generalize the population); the prosecutor's classes are the "
                    "released values as they are: remove them or choose another attacker")
            return self

    def summaries(self) -> list[SummarySpec] | None:
        p = self.params
        if p.per_record or (p.attacker != "prosecutor" and p.population_size is None):
            return None
        return summary_specs(p)

    def records_reason(self) -> str | None:
        p = self.params
        why = [text for on, text in (
            (p.attacker != "prosecutor" and p.population_size is None,
             f"the {p.attacker} attacker generalizes a population table and matches it with "
             "the release record by record (population_size instead estimates each class's "
             "population size from the sampling fraction)"),
            (p.per_record, "per_record lists every record"),
            (p.id is not None, "id aligns the records of both sides")) if on]
        if not why:
            return None
        return (f"ReidentificationRisk reads the records because {'; '.join(why)}; without "
                "those params it runs from class summaries at any size")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if self.summaries() is not None:
            return self._from_summary(original, anonymized, ctx)
        if p.attacker == "prosecutor":  # the original matters only to align deleted ids
            data, cl = released_classes(original if p.id is not None else None,
                                        released(original, anonymized), p, ctx)
            F = None
        elif p.population_size is not None:
            data, cl = released_classes(original if p.id is not None else None,
                                        released(original, anonymized), p, ctx)
            if p.population_size < cl.records:
                raise DataError(f"population_size {p.population_size} is smaller than the "
                                f"{cl.records} records of the data: it is the size of the "
                                "population the data was drawn from")
            fraction = cl.records / p.population_size
            F = cl.sizes / fraction  # the expected population size of each class
        else:
            data, cl, counts = release_population(original, anonymized, p, ctx,
                                                  f"the {p.attacker} attacker")
            F = counts.F
        f = cl.sizes
        n = int(f.sum())
        details: dict[str, object] = {
            "attacker": p.attacker,
            "records": cl.records,
            "released_records": n,
            "suppressed_records": cl.suppressed_total,
            "classes": len(f),
            "risk_threshold": p.risk_threshold,
        }
        if n == 0:
            ctx.warn("every record is suppressed: no class, no re-identification risk")
            details.update(success_rate=0.0, highest_risk=0.0, records_at_risk=0.0,
                           records_at_risk_count=0)
            return MeasureResult(value=0.0, details=details)
        size = f if F is None else F
        at_risk = 1.0 / size > p.risk_threshold
        if F is None:
            success = len(f) / n
        else:
            marketer = float((f / F).sum()) / n
            success = marketer if p.attacker == "marketer" else max(len(f) / F.sum(), marketer)
            if p.population_size is None:
                details["population_records"] = counts.population_records
                details["population_in_release_classes"] = int(F.sum())
                details["levels"] = counts.levels
            else:
                details["population_records"] = p.population_size
                details["sampling_fraction"] = cl.records / p.population_size
        details.update(
            success_rate=success,
            highest_risk=1.0 / float(size.min()),
            records_at_risk=float(f[at_risk].sum()) / n,
            records_at_risk_count=int(f[at_risk].sum()),
        )
        if p.per_record:
            table = RecordTable(data, cl, p.id)
            if F is not None and p.population_size is not None:
                table.add_float("population_size", F)
            elif F is not None:
                table.add_int("population_size", F)
            table.add_float("risk", 1.0 / size)
            details["per_record"] = table.frame()
        return MeasureResult(value=success, details=details)


    def _from_summary(self, original: Dataset | None, anonymized: Dataset | None,
                      ctx: Context) -> MeasureResult:
        """The record path's result from the classes by size of the released side's summary
        (the original is not read: without ``id`` nothing aligns the sides)."""
        p = self.params
        summary = released_summary(original, anonymized, p, ctx, check_rows=False)[0]
        found = size_counts(summary, p, p.missing)
        n_missing = found.missing
        whole = merged(summary, p, p.missing, n_missing)
        if whole is not None:
            found = size_counts(whole, p, p.missing)
        warn_groups(ctx, p.quasi_identifiers, n_missing, p.missing, "anonymized")
        f, counts = found.sizes, found.counts
        n = found.released
        details: dict[str, object] = {
            "attacker": p.attacker,
            "records": found.records,
            "released_records": n,
            "suppressed_records": found.suppressed,
            "classes": found.classes,
            "risk_threshold": p.risk_threshold,
        }
        if p.population_size is not None and p.population_size < found.records:
            raise DataError(f"population_size {p.population_size} is smaller than the "
                            f"{found.records} records of the data: it is the size of the "
                            "population the data was drawn from")
        if n == 0:
            ctx.warn("every record is suppressed: no class, no re-identification risk")
            details.update(success_rate=0.0, highest_risk=0.0, records_at_risk=0.0,
                           records_at_risk_count=0)
            return MeasureResult(value=0.0, details=details)
        if p.population_size is None:
            size = f.astype(np.float64)
            success = found.classes / n
        else:
            fraction = found.records / p.population_size
            size = f / fraction  # the expected population size of each class
            marketer = float(counts @ (f / size)) / n
            success = (marketer if p.attacker == "marketer" else
                       max(found.classes / float(counts @ size), marketer))
            details["population_records"] = p.population_size
            details["sampling_fraction"] = fraction
        at_risk = 1.0 / size > p.risk_threshold
        records_at_risk = int(counts[at_risk] @ f[at_risk])
        details.update(
            success_rate=success,
            highest_risk=1.0 / float(size.min()),
            records_at_risk=records_at_risk / n,
            records_at_risk_count=records_at_risk,
        )
        return MeasureResult(value=success, details=details)
