"""Small plugins that exercise the framework (not built-ins)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from pydantic import Field

from anoneval.core.api import (
    Context,
    Dataset,
    Distance,
    LossMeasure,
    MeasureResult,
    Microdata,
    Params,
    PluginRef,
    RiskMeasure,
    hookimpl,
    plugin_ref,
    released,
)


class ShareBelowK(RiskMeasure):
    """Share of records in classes smaller than k (brute-force simple, for framework tests)."""

    name = "ShareBelowK"
    description = "Share of records in classes smaller than k."
    inputs = "either"

    class Params(Params):
        quasi_identifiers: list[str] = Field(min_length=1, description="QI columns.")
        k: int = Field(2, ge=1, description="Smallest allowed class size.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        data = released(original, anonymized)
        assert isinstance(data, Microdata)
        data.require(self.params.quasi_identifiers, "quasi-identifier")
        ids, _ = data.group_ids(self.params.quasi_identifiers)
        small = data.group_sizes(self.params.quasi_identifiers)[ids] < self.params.k
        return MeasureResult(value=float(small.mean()), details={"records": len(data)})


class Boom(LossMeasure):
    """Always raises: one failing plugin must not stop the others."""

    name = "Boom"
    description = "Raises on purpose."

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        raise RuntimeError("kaput")


class NotANumber(RiskMeasure):
    """Returns NaN with a warning: a threshold on no value must FAIL, the warning must show."""

    name = "NotANumber"
    description = "Returns NaN on purpose."

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        return MeasureResult(value=float("nan"), warnings=["578 records could not be linked"])


class CountingPrepare(LossMeasure):
    """Counts how often ``prepare`` runs (original-side work must run once per evaluator)."""

    name = "CountingPrepare"
    description = "Row-count difference; counts prepare calls."
    calls: list[int] = []  # noqa: RUF012 - a test probe

    def prepare(self, original: Dataset | None, ctx: Context) -> Any:
        CountingPrepare.calls.append(1)
        return len(original) if original is not None else 0

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert anonymized is not None
        return MeasureResult(value=float(abs(ctx.prepared - len(anonymized))))


class RowDistance(Distance):
    """Absolute difference of one numeric column."""

    name = "RowDistance"
    description = "Absolute difference of a numeric column."

    class Params(Params):
        column: str = Field("x", description="Numeric column.")

    def pairwise(self, x: Dataset, y: Dataset, rows: np.ndarray | None = None,
                 cols: np.ndarray | None = None) -> np.ndarray:
        assert isinstance(x, Microdata) and isinstance(y, Microdata)
        a = x.frame[self.params.column].to_numpy(float)
        b = y.frame[self.params.column].to_numpy(float)
        a = a if rows is None else a[rows]
        b = b if cols is None else b[cols]
        return np.abs(a[:, None] - b[None, :])


class NearestMatch(RiskMeasure):
    """Share of records whose nearest anonymized record is their own (row-aligned)."""

    name = "NearestMatch"
    description = "Share of records linked to themselves by a nested distance."

    class Params(Params):
        distance: PluginRef = plugin_ref("distance", "RowDistance", "Distance to link with.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert original is not None and anonymized is not None
        dist = ctx.create("distance", self.params.distance)
        assert isinstance(dist, Distance)
        d = dist.fit(original, ctx).pairwise(original, anonymized)
        return MeasureResult(value=float((d.argmin(axis=1) == np.arange(len(d))).mean()))


class Analytic(RiskMeasure):
    """Needs no data: returns its param."""

    name = "Analytic"
    description = "Returns its param; needs no data."
    inputs = "none"

    class Params(Params):
        value: float = Field(0.5, ge=0, le=1, description="The value to return.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        return MeasureResult(value=self.params.value,
                             details={"draw": float(ctx.rng().random())})


TOYS = (ShareBelowK, Boom, NotANumber, CountingPrepare, RowDistance, NearestMatch, Analytic)


def toy_measure(name: str, value: Callable[[Any, Dataset | None, Dataset | None, Context], float],
                *, doc: str, module: str, inputs: str = "both",
                params: type[Params] | None = None) -> type[RiskMeasure]:
    """A risk measure class ``name`` (defined in ``module``) whose value is
    ``value(params, original, anonymized, ctx)``."""

    def compute(self: RiskMeasure, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        return MeasureResult(value=float(value(self.params, original, anonymized, ctx)))

    namespace: dict[str, Any] = {"__doc__": doc, "__module__": module, "__qualname__": name,
                                 "name": name, "description": doc, "inputs": inputs,
                                 "compute": compute}
    if params is not None:
        namespace["Params"] = params
    return type(name, (RiskMeasure,), namespace)


def compute_on_frames(measure: Any, original: Any,
                      anonymized: Any = None) -> tuple[float | None, dict[str, Any], list[str]]:
    """``measure.compute`` on DataFrames (each as Microdata; None stays None): the value, the
    details and the warnings."""
    ctx = Context()
    o = Microdata(original) if original is not None else None
    a = Microdata(anonymized) if anonymized is not None else None
    res = measure.compute(o, a, ctx)
    return res.value, res.details, ctx.warnings


def registry_with(*classes: type) -> Any:
    """A registry of the built-ins (no entry points) and ``classes``."""
    from anoneval.registry import build_registry

    registry = build_registry(entry_points=False)
    for cls in classes:
        registry.register(cls, source="tests")
    return registry


class LifecycleRecorder:
    """A pluggy plugin recording lifecycle hook calls."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    @hookimpl
    def before_measure(self, measure: Any, ctx: Context) -> None:
        self.events.append(("before", measure.name))

    @hookimpl
    def after_measure(self, measure: Any, result: Any, ctx: Context) -> None:
        self.events.append(("after", measure.name))
