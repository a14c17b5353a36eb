"""Base classes every plugin derives from, the result model and the evaluation context.

A plugin is a class with a ``name``, a one-line ``description``, a nested pydantic ``Params``
model and a typed compute method. Four kinds exist (the design card): risk measures, loss
measures, distances and synthesizers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from anoneval.core.progress import Progress

if TYPE_CHECKING:
    from anoneval.core.data import Dataset
    from anoneval.registry import Registry

KINDS = ("risk_measure", "loss_measure", "distance", "synthesizer")
Kind = Literal["risk_measure", "loss_measure", "distance", "synthesizer"]
#: Which datasets a measure needs: both sides, either one (the released side when both are
#: given: the anonymized one), or none (analytic measures).
Inputs = Literal["both", "either", "none"]
#: Whether a measure uses the control set (original records held out of the release):
#: "required" (a missing control set is a config error), "optional" or "none".
ControlUse = Literal["required", "optional", "none"]


class Params(BaseModel):
    """Base of every plugin's ``Params``: unknown keys are errors, assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class PluginRef(BaseModel):
    """A parameter that names another plugin, e.g. ``{"name": "Martinez2021", "params": {}}``.

    Declare it with :func:`plugin_ref`, which records the kind the name is resolved in.
    """

    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="Registered name of the plugin.")
    params: dict[str, Any] = Field(default_factory=dict, description="That plugin's params.")


def plugin_ref(kind: Kind, default: str, description: str) -> Any:
    """A ``Field`` for a :class:`PluginRef` param resolved and validated in ``kind``."""
    return Field(
        default_factory=lambda: PluginRef(name=default),
        description=description,
        json_schema_extra={"plugin_kind": kind},
    )


def repeated(values: Iterable[str]) -> list[str]:
    """The values that occur more than once, sorted (for "listed twice" errors)."""
    return sorted(v for v, n in Counter(values).items() if n > 1)


def released(original: Dataset | None, anonymized: Dataset | None) -> Dataset:
    """The dataset a one-sided ("either") measure assesses: the anonymized one when given."""
    data = anonymized if anonymized is not None else original
    if data is None:
        raise ValueError("this measure needs a dataset, but none was given")
    return data


class MeasureResult(BaseModel):
    """What a measure returns: the headline ``value`` and secondary ``details``.

    ``details`` may hold numbers, strings, lists, dicts, numpy values and DataFrames (per-cell or
    per-class tables); the report turns them into JSON.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    value: float | None = Field(description="The headline number.")
    details: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)


class SynthesisResult(BaseModel):
    """What a synthesizer returns: the generated dataset and details of the fitted model."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    data: Any = Field(description="The generated dataset (a Dataset of the original's kind).")
    details: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)


@dataclass
class Context:
    """What the evaluator hands a plugin besides the data.

    ``seed`` is the evaluation seed; :meth:`rng` gives a fresh generator from it, so a measure's
    result does not depend on its position in the config. ``prepared`` holds what the measure's
    :meth:`Measure.prepare` returned for the original (computed once per evaluator).
    ``base_dir`` is the config file's folder: resolve file paths in params with :meth:`path`.
    ``control`` is the control set (original records not used to make the release), when given.
    """

    seed: int = 0
    registry: Registry | None = None
    base_dir: Path | None = None
    show_progress: bool = False
    prepared: Any = None
    control: Dataset | None = None
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def path(self, value: str | Path) -> Path:
        """A file path from a param, relative to the config file's folder when there is one."""
        p = Path(value)
        return p if p.is_absolute() or self.base_dir is None else self.base_dir / p

    def rng(self, *salt: int) -> np.random.Generator:
        """A generator seeded by the evaluation seed, plus optional non-zero integer salt for
        independent streams (numpy ignores trailing zeros: ``rng(0)`` is ``rng()``)."""
        return np.random.default_rng([self.seed, *salt]) if salt else np.random.default_rng(
            self.seed
        )

    def progress(self, total: int, desc: str = "") -> Progress:
        """A progress counter, drawn on stderr when the evaluator shows progress."""
        return Progress(total, desc, enabled=self.show_progress)

    def warn(self, message: str) -> None:
        """Record a warning; it appears in the measure's report entry."""
        self.warnings.append(message)

    def create(self, kind: Kind, ref: PluginRef | Mapping[str, Any]) -> Plugin:
        """Instantiate a plugin named by a :class:`PluginRef` (nested params)."""
        from anoneval.registry import default_registry

        ref = ref if isinstance(ref, PluginRef) else PluginRef.model_validate(ref)
        registry = self.registry or default_registry()
        return registry.create(kind, ref.name, ref.params)


class Plugin:
    """Common part of all plugins: identity, params and construction."""

    kind: ClassVar[Kind]
    name: ClassVar[str]
    description: ClassVar[str]
    #: Data kinds the plugin accepts ("microdata", "table", "trajectories").
    accepts: ClassVar[tuple[str, ...]] = ("microdata",)

    class Params(Params):
        pass

    def __init__(self, params: Params | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        if isinstance(params, BaseModel):
            if not isinstance(params, self.Params):
                raise TypeError(f"{self.name}: expected {self.Params.__qualname__}")
            if kwargs:
                params = params.model_copy(update=kwargs)
                params = self.Params.model_validate(params.model_dump())
        else:
            params = self.Params.model_validate({**dict(params or {}), **kwargs})
        self.params = params

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params!r})"


class Measure(Plugin):
    """A risk or loss measure: ``compute(original, anonymized, ctx) -> MeasureResult``."""

    inputs: ClassVar[Inputs] = "both"
    #: Whether the measure uses the control set (see :meth:`control_use`).
    uses_control: ClassVar[ControlUse] = "none"
    #: True when a higher value is worse (riskier, or more loss), as for most measures.
    higher_is_worse: ClassVar[bool] = True

    def required_inputs(self) -> Inputs:
        """Which datasets this instance needs; params may change it (analytic vs empirical)."""
        return self.inputs

    def control_use(self) -> ControlUse:
        """Whether this instance uses the control set; params may change it."""
        return self.uses_control

    def prepare(self, original: Dataset | None, ctx: Context) -> Any:
        """Work that depends on the original alone; the result reaches ``ctx.prepared``.

        An evaluator reused over many anonymized variants calls this once per measure.
        """
        return None

    def compute(
        self, original: Dataset | None, anonymized: Dataset | None, ctx: Context
    ) -> MeasureResult:
        raise NotImplementedError

    def direction(self) -> str:
        """Human-readable direction of the value, as the report states it."""
        raise NotImplementedError


class RiskMeasure(Measure):
    """Disclosure risk: how well the data protects people."""

    kind: ClassVar[Kind] = "risk_measure"

    def direction(self) -> str:
        return "higher = riskier" if self.higher_is_worse else "higher = safer"


class LossMeasure(Measure):
    """Information loss: how much the data no longer tells analysts."""

    kind: ClassVar[Kind] = "loss_measure"

    def direction(self) -> str:
        return "higher = more loss" if self.higher_is_worse else "higher = less loss"


class Distance(Plugin):
    """A distance between records (or trajectories) of two datasets of one kind.

    ``fit`` learns data-dependent constants from the reference (original) data, e.g. scales or
    Martinez2021's λ; ``pairwise`` returns the ``len(rows) × len(cols)`` matrix between records
    ``rows`` of ``x`` and ``cols`` of ``y`` (all records when None). Callers chunk ``rows`` to
    bound memory.
    """

    kind: ClassVar[Kind] = "distance"

    def fit(self, reference: Dataset, ctx: Context) -> Distance:
        return self

    def pairwise(
        self,
        x: Dataset,
        y: Dataset,
        rows: np.ndarray | None = None,
        cols: np.ndarray | None = None,
    ) -> np.ndarray:
        raise NotImplementedError


class Synthesizer(Plugin):
    """Produces the anonymized side (a replica) from the original."""

    kind: ClassVar[Kind] = "synthesizer"

    def generate(self, original: Dataset, ctx: Context) -> SynthesisResult:
        raise NotImplementedError


def to_jsonable(obj: Any) -> Any:
    """Turn details (numpy, pandas, pydantic, nested containers) into plain JSON values.

    NaN becomes null; ±inf become the strings "inf"/"-inf" (JSON has no infinities).
    DataFrames become a list of row objects.
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, np.bool_):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        if math.isnan(f):
            return None
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(obj, pd.DataFrame):
        return [
            {str(k): to_jsonable(v) for k, v in row.items()}
            for row in obj.to_dict(orient="records")
        ]
    if isinstance(obj, pd.Series):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, BaseModel):
        return to_jsonable(obj.model_dump())
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (pd.Timestamp, np.datetime64)):
        return str(obj)
    if obj is pd.NA or obj is pd.NaT:
        return None
    return str(obj)
