"""The public contract for plugin authors: import everything a plugin needs from here.

A plugin is a class with a ``name``, a one-line ``description``, a nested pydantic ``Params``
model and a typed compute method. Four plugin kinds exist: risk measures, loss measures,
distances and synthesizers. Plugins receive data kinds (:class:`Microdata`, :class:`Table`,
:class:`Trajectories`) read-only. Every other module of ``anoneval`` is private.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from anoneval.core.data.blocks import SERIAL_BLOCKS, Blocks, spans, task_threads
from anoneval.core.data.duplicates import distinct, repeated
from anoneval.core.data.files import read_json, read_text, regular_file
from anoneval.core.data.inputs import ControlUse, Inputs, released
from anoneval.core.data.intervals import (
    IntervalParams,
    bootstrap_indices,
    clopper_pearson,
    percentile_interval,
    wilson_interval,
)
from anoneval.core.data.kinds import (
    DATA_KINDS,
    DataKind,
    Dataset,
    FrameData,
    Microdata,
    Table,
    Trajectories,
    data_row,
    load,
    refuse_infinite,
    separators_fitting,
    sniff_separator,
)
from anoneval.core.data.pairs import DELETED, align_ids, pair_datasets, row_count_error
from anoneval.core.data.parampaths import ParamPath
from anoneval.core.data.progress import progress_bar
from anoneval.core.data.records import FrameRecords, Records
from anoneval.core.data.sharded import cogrouped, regrouped
from anoneval.core.data.summary import (
    ClassSummary,
    RowClasses,
    Side,
    SummarySpec,
    dataset_classes,
    dataset_summarizer,
)
from anoneval.core.errors import (
    AnonevalError,
    ConfigError,
    DataError,
    PluginError,
    UnknownPluginError,
)
from anoneval.core.hookspecs import hookimpl

if TYPE_CHECKING:
    from tqdm.auto import tqdm

#: The plugin kinds, which are also the top-level keys of a registry file (``config.json``).
PluginKind = Literal["risk_measure", "loss_measure", "distance", "synthesizer"]
PLUGIN_KINDS: tuple[PluginKind, ...] = ("risk_measure", "loss_measure", "distance", "synthesizer")
#: The methods of a partition-wise measure (all three or none).
PARTITION_WISE = ("partial", "combine", "finalize")


class Direction(str, Enum):
    """Which way a measure's value gets worse, as the report states it."""

    RISKIER = "higher = riskier"
    SAFER = "higher = safer"
    MORE_LOSS = "higher = more loss"
    LESS_LOSS = "higher = less loss"

    def __str__(self) -> str:  # the text, on every Python version (3.12 changed the default)
        return self.value

    @property
    def higher_is_worse(self) -> bool:
        """True when a higher value is worse (more risk or more loss)."""
        return self in (Direction.RISKIER, Direction.MORE_LOSS)


class Params(BaseModel):
    """Base of every plugin's ``Params``: unknown keys are errors, assignments are validated.

    Types are strict: a count takes an integer (not ``true``, ``2.5`` or ``"3"``), a flag a
    boolean, a number an integer or a float (not a string); NaN and infinities are refused.
    numpy scalars given through the Python API count as the Python values they hold.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True, strict=True,
                              allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _numpy_scalars(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            return {k: _plain_value(v) for k, v in data.items()}
        return data


class PluginRef(BaseModel):
    """A parameter that names another plugin, e.g. ``{"name": "Martinez2021", "params": {}}``.

    Declare it with :func:`plugin_ref`, which records the kind the name is resolved in.
    """

    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="Registered name of the plugin.")
    params: dict[str, Any] = Field(default_factory=dict, description="That plugin's params.")


def _plain_value(value: Any) -> Any:
    """numpy scalars (also inside lists and dicts) as the Python values they hold."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list):
        return [_plain_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain_value(v) for k, v in value.items()}
    return value


def plugin_ref(kind: PluginKind, default: str, description: str) -> Any:
    """A ``Field`` for a :class:`PluginRef` param resolved and validated in ``kind``."""
    return Field(
        default_factory=lambda: PluginRef(name=default),
        description=description,
        json_schema_extra={"plugin_kind": kind},
    )


class MeasureResult(BaseModel):
    """What a measure returns: the headline ``value``, its interval and secondary ``details``.

    ``ci`` is ``[low, high]``, the interval of ``value`` at the measure's ``confidence_level``
    (see :class:`IntervalParams`) when the value is an estimate from sampling or a fitted model;
    None when the value is exact. ``details`` may hold numbers, strings, lists, dicts, numpy
    values and DataFrames (per-cell or per-class tables); the report turns them into JSON.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    value: float | None = Field(description="The headline number.")
    ci: list[float] | None = Field(None, description="[low, high]: the interval of value, or "
                                                     "None when value is exact.")
    details: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)


class SynthesisResult(BaseModel):
    """What a synthesizer returns: the generated dataset and details of the fitted model."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    data: Any = Field(description="The generated dataset (a Dataset of the original's kind).")
    details: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)


@runtime_checkable
class PluginFactory(Protocol):
    """What a :class:`Context` needs of a registry (``anoneval.registry.Registry`` is one):
    creating a plugin of a kind by name with its params."""

    def create(self, kind: str, name: str, params: Any = None) -> Plugin: ...


@dataclass
class Context:
    """What the evaluator hands a plugin besides the data.

    ``seed`` is the evaluation seed; :meth:`rng` gives a fresh generator from it, so a measure's
    result does not depend on its position in the config. ``prepared`` holds what the measure's
    :meth:`Measure.prepare` returned for the original (computed once per evaluator).
    ``base_dir`` is the config file's folder: resolve file paths in params with :meth:`path`.
    ``control`` is the control set (original records not used to make the release), when given.
    ``block_runner`` runs :meth:`map_blocks` (the engine's; serial by default).
    ``summarize`` computes an equivalence-class summary (see :meth:`class_summary`); the
    evaluator or engine sets it. ``records``, in a paired partition-wise measure's
    :meth:`Measure.finalize`, are the paired records its partials were made of, for further
    passes where they lie (:class:`Records`: block by block, or class by class after a shuffle
    on keys); None elsewhere.
    """

    seed: int = 0
    registry: PluginFactory | None = None
    base_dir: Path | None = None
    show_progress: bool = False
    prepared: Any = None
    control: Dataset | None = None
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    summarize: Callable[[SummarySpec], ClassSummary] | None = None
    block_runner: Blocks = SERIAL_BLOCKS
    records: Records | None = None

    def class_summary(self, spec: SummarySpec) -> ClassSummary:
        """The equivalence-class summary of ``spec`` over the whole ``spec.side`` dataset,
        computed once per dataset and spec and shared by every measure of the run."""
        if self.summarize is None:
            raise PluginError("this Context cannot compute class summaries: the evaluator sets "
                              "Context.summarize (outside one pass Context(summarize="
                              "dataset_summarizer(original, anonymized)))")
        return self.summarize(spec)

    def with_summaries(self, original: Dataset | None, anonymized: Dataset | None) -> Context:
        """This context, or when no evaluator or engine set :attr:`summarize` (a measure called
        directly, as in tests) a copy (sharing warnings) that summarizes the given datasets."""
        if self.summarize is not None:
            return self
        return replace(self, summarize=dataset_summarizer(original, anonymized))

    def map_blocks(self, fn: Callable[[Any, Any], Any], blocks: Iterable[Any],
                   shared: Any = None, desc: str | None = None) -> list[Any]:
        """``[fn(shared, block) for block in blocks]`` on the engine: in this process, in the
        local engine's worker processes or on Dask workers (``shared`` shipped once per worker).

        ``fn`` must be a picklable top-level function and the blocks independent; results come
        in block order, so combining them in that order gives the same result on every engine.
        Size blocks from the data and a memory budget, never from :attr:`parallelism`, or the
        result (float sums) would depend on the worker count. ``desc`` shows a progress bar
        over the blocks (see :meth:`progress`): block by block when they run here one after
        the other, at the end when they run in parallel.
        """
        items = list(blocks)
        if desc is None or not self.show_progress:
            return self.block_runner.map(fn, items, shared)
        with self.progress(len(items), desc) as bar:
            if self.block_runner.parallelism > 1:
                out = self.block_runner.map(fn, items, shared)
                bar.update(len(items))
                return out
            out = []
            for item in items:
                out.extend(self.block_runner.map(fn, [item], shared))
                bar.update(1)
            return out

    @property
    def parallelism(self) -> int:
        """How many blocks of :meth:`map_blocks` can run at once."""
        return self.block_runner.parallelism

    def path(self, value: str | Path) -> Path:
        """The absolute path of a :data:`ParamPath` param, relative to the config file's
        folder when there is one (else the working folder); an absolute path is returned
        unchanged, so resolving a path twice gives the same file."""
        p = Path(value).expanduser()
        if not p.is_absolute():
            p = (self.base_dir if self.base_dir is not None else Path()) / p
        return Path(os.path.abspath(p))

    def rng(self, *salt: int) -> np.random.Generator:
        """A generator seeded by the evaluation seed, plus optional non-zero integer salt for
        independent streams (numpy ignores trailing zeros: ``rng(0)`` is ``rng()``)."""
        return np.random.default_rng([self.seed, *salt]) if salt else np.random.default_rng(
            self.seed
        )

    def progress(self, total: int, desc: str = "") -> tqdm:
        """A progress bar (:class:`tqdm.auto.tqdm`: ``update(n)``, a context manager), drawn
        on stderr, or as a notebook widget, when the evaluator shows progress."""
        return progress_bar(total, desc, enabled=self.show_progress)

    def warn(self, message: str) -> None:
        """Record a warning; it appears in the measure's report entry."""
        self.warnings.append(message)

    def create(self, kind: PluginKind, ref: PluginRef | Mapping[str, Any]) -> Plugin:
        """Instantiate a plugin named by a :class:`PluginRef` (nested params) from
        :attr:`registry`, which the evaluator sets (in a test: ``Context(registry=...)``)."""
        if self.registry is None:
            raise PluginError(f"cannot create {kind} plugins: this Context has no registry "
                              "(the evaluator sets one; in a test pass "
                              "Context(registry=anoneval.registry.build_registry()))")
        ref = ref if isinstance(ref, PluginRef) else PluginRef.model_validate(ref)
        return self.registry.create(kind, ref.name, ref.params)


#: Params that name columns a measure reads: a name, a list of names or a list of lists.
COLUMN_PARAMS = ("quasi_identifiers", "sensitive", "columns", "features", "target", "secret",
                 "aux_cols", "id", "weights", "weight", "household", "cells", "count_column",
                 "magnitude", "contributor", "total_column", "contribution_columns",
                 "variables", "original_column", "randomized_column")
#: Column params whose null value means every column (or columns named by load options).
_EVERY_WHEN_NULL = ("columns", "features", "count_column")


def _names(value: Any) -> list[str]:
    """The column names in a param value (text values only: weights may also be numbers)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [n for v in value for n in _names(v)]
    return []


def param_columns(params: BaseModel) -> dict[Side, list[str]] | None:
    """The columns ``params`` name (:data:`COLUMN_PARAMS`), for both sides; None when they may
    read every column (see :meth:`Measure.columns`)."""
    fields = type(params).model_fields
    if any(isinstance(getattr(params, f), PluginRef) for f in fields):
        return None
    named = [f for f in COLUMN_PARAMS if f in fields]
    if not named:
        return None
    cols: list[str] = []
    for f in named:
        value = getattr(params, f)
        if (value is None and f in _EVERY_WHEN_NULL) or (f == "cells" and not value):
            return None
        cols.extend(c for c in _names(value) if c not in cols)
    return {"original": cols, "anonymized": list(cols)}


class Plugin:
    """Common part of all plugins: identity, params and construction."""

    kind: ClassVar[PluginKind]
    name: ClassVar[str]
    description: ClassVar[str]
    #: Data kinds the plugin accepts ("microdata", "table", "trajectories").
    accepts: ClassVar[tuple[DataKind, ...]] = ("microdata",)

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
    #: Unit of the value for people: ``"share"`` (a proportion in [0, 1], shown in %),
    #: ``"bits"``, ``"nats"``, ``"metres"``, ...; None for a plain number. Display only: the
    #: JSON report keeps the value as computed.
    unit: ClassVar[str | None] = None

    @classmethod
    def unit_for(cls, params: Mapping[str, Any]) -> str | None:
        """The unit of the value under ``params`` (a report entry's params); default
        :attr:`unit`. Override when a param changes it (a logarithm base, a distance)."""
        return cls.unit

    def required_inputs(self) -> Inputs:
        """Which datasets this instance needs; params may change it (analytic vs empirical)."""
        return self.inputs

    def control_use(self) -> ControlUse:
        """Whether this instance uses the control set; params may change it."""
        return self.uses_control

    def summaries(self) -> Sequence[SummarySpec] | None:
        """The class summaries this instance needs, or None (the default) when it reads the data.

        A measure returning specs promises that :meth:`compute` reads the data only through
        ``ctx.class_summary(spec)`` for those specs (it may test which sides are given, never
        their rows), so an engine can run it on data it never gathers. Specs of a side that
        is not given are never asked for.
        """
        return None

    def columns(self) -> Mapping[Side, Collection[str]] | None:
        """The columns this instance reads of each side, or None (every column).

        An engine reading partitioned data reads only these (those a side has); a side the
        mapping leaves out is read whole when the measure reads it. The default is the columns
        of :meth:`summaries` when the measure has them, else those its params name
        (:data:`COLUMN_PARAMS`, on both sides), else None: a measure with a nested plugin
        (a distance), with a null ``columns``/``features``/``count_column`` or an empty
        ``cells`` (every column, or columns its data's load options name), or with no param
        naming columns reads every column. Override it when the measure reads columns its
        params do not name.
        """
        specs = self.summaries()
        if specs is None:
            return param_columns(self.params)
        out: dict[Side, list[str]] = {}
        for spec in specs:
            cols = out.setdefault(spec.side, [])
            cols.extend(c for c in spec.columns if c not in cols)
        return out

    def release_columns(self) -> Mapping[Side, Collection[str]] | None:
        """The columns this instance reads of each side when an anonymized dataset is given
        (as :meth:`columns`; the default is :meth:`columns`).

        A measure of the released data alone that reads the original only when no release is
        given (``inputs = "either"``) returns no column of the original here: evaluating a
        release then neither surveys nor aligns the original's columns, nor does an engine
        summarize them.
        """
        return self.columns()

    def records_reason(self) -> str | None:
        """Why this instance reads the records rather than class summaries or partitions (and
        what to do instead), or None: an engine that cannot gather them names it in its error."""
        return None

    def numbers_only(self) -> bool:
        """True when, with :meth:`columns` None, this instance reads only columns whose dtype
        holds numbers, booleans or dates (it picks its columns by dtype): the evaluator then
        surveys for it only the object columns that may be read as numbers (39 and "39"), not
        those of text, a scan each that would be a fixed cost of every evaluation."""
        return False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = [m for m in PARTITION_WISE if getattr(cls, m) is not getattr(Measure, m, None)]
        if own and len(own) < len(PARTITION_WISE):
            raise TypeError(f"{cls.__name__} defines {', '.join(own)} but not "
                            f"{', '.join(m for m in PARTITION_WISE if m not in own)}: a "
                            "partition-wise measure defines partial, combine and finalize")

    #: True when :meth:`partial` compares each original record with its anonymized version:
    #: its frame is then a paired frame (:mod:`anoneval.core.data.pairs`) of both sides' declared
    #: :meth:`columns`, records paired by row order or by :meth:`pair_key`.
    paired: ClassVar[bool] = False

    def pair_key(self) -> str | None:
        """The key column pairing the records of a :attr:`paired` measure (None: row order)."""
        return None

    @classmethod
    def partition_wise(cls) -> bool:
        """True when the measure defines :meth:`partial`, :meth:`combine` and
        :meth:`finalize`."""
        return cls.partial is not Measure.partial

    def partial(self, frame: pd.DataFrame, ctx: Context) -> Any:
        """A partial result of one block of rows of the released data (the anonymized side,
        else the original), with the columns :meth:`columns` names for that side; of a
        :attr:`paired` measure, one block of the paired records. Partials must pickle: an
        engine computes them where the rows are."""
        raise NotImplementedError

    def combine(self, parts: Sequence[Any]) -> Any:
        """One partial from several (associative: partials of partials give the same)."""
        raise NotImplementedError

    def finalize(self, combined: Any, ctx: Context) -> MeasureResult:
        """The result from the combined partial of every block; a :attr:`paired` measure may
        pass over its records again through ``ctx.records``."""
        raise NotImplementedError

    def prepare(self, original: Dataset | None, ctx: Context) -> Any:
        """Work that depends on the original alone; the result reaches ``ctx.prepared``.

        An evaluator reused over many anonymized variants calls this once per measure.
        """
        return None

    def compute(
        self, original: Dataset | None, anonymized: Dataset | None, ctx: Context
    ) -> MeasureResult:
        """The result. A partition-wise measure need not define it: by default it runs
        :meth:`partial` on the whole released frame as one block, then finalizes."""
        if not self.partition_wise():
            raise NotImplementedError
        if self.paired:
            if not (isinstance(original, FrameData) and isinstance(anonymized, FrameData)):
                raise DataError(f"{self.name} pairs the records of the original and the "
                                "anonymized microdata: give both")
            frame = pair_datasets(original, anonymized, self.columns() or {}, self.pair_key())
            return self.finalize(self.combine([self.partial(frame, ctx)]),
                                 replace(ctx, records=FrameRecords(frame)))
        data = released(original, anonymized)
        if not isinstance(data, FrameData):
            raise DataError(f"{self.name} runs partition-wise on microdata or a table, not "
                            f"{data.data_kind}")
        return self.finalize(self.combine([self.partial(data.frame, ctx)]), ctx)

    def direction(self) -> Direction:
        """Which way the value gets worse, from :attr:`higher_is_worse`."""
        raise NotImplementedError


class RiskMeasure(Measure):
    """Disclosure risk: how well the data protects people."""

    kind: ClassVar[PluginKind] = "risk_measure"

    def direction(self) -> Direction:
        return Direction.RISKIER if self.higher_is_worse else Direction.SAFER


class LossMeasure(Measure):
    """Information loss: how much the data no longer tells analysts."""

    kind: ClassVar[PluginKind] = "loss_measure"

    def direction(self) -> Direction:
        return Direction.MORE_LOSS if self.higher_is_worse else Direction.LESS_LOSS


class Distance(Plugin):
    """A distance between records (or trajectories) of two datasets of one kind.

    ``fit`` learns data-dependent constants from the reference (original) data, e.g. scales or
    Martinez2021's λ; ``pairwise`` returns the ``len(rows) × len(cols)`` matrix between records
    ``rows`` of ``x`` and ``cols`` of ``y`` (all records when None). Callers chunk ``rows`` to
    bound memory.
    """

    #: Unit of a distance (``"metres"``, ...), None for a unitless one.
    unit: ClassVar[str | None] = None

    kind: ClassVar[PluginKind] = "distance"

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

    kind: ClassVar[PluginKind] = "synthesizer"

    def generate(self, original: Dataset, ctx: Context) -> SynthesisResult:
        raise NotImplementedError


__all__ = [
    "DATA_KINDS",
    "DELETED",  # the deleted-record column of a paired frame
    "PLUGIN_KINDS",
    "AnonevalError",
    "ClassSummary",
    "ConfigError",
    "Context",
    "ControlUse",
    "DataError",
    "DataKind",
    "Dataset",
    "Direction",
    "Distance",
    "FrameData",
    "FrameRecords",  # records in memory, one block (Context.records of the local engine)
    "Inputs",
    "IntervalParams",  # params mixin: confidence_level and n_boot of a value's interval
    "LossMeasure",
    "Measure",
    "MeasureResult",
    "Microdata",
    "ParamPath",  # a param naming a file the plugin reads (relative to the config)
    "Params",
    "Plugin",
    "PluginError",
    "PluginFactory",  # what Context.registry is: anything that creates plugins by name
    "PluginKind",
    "PluginRef",
    "Records",  # passes over records where they lie (Context.records)
    "RiskMeasure",
    "RowClasses",
    "SummarySpec",
    "SynthesisResult",
    "Synthesizer",
    "Table",
    "Trajectories",
    "UnknownPluginError",
    "align_ids",  # helper: row of the anonymized data for each original record, by a key
    "bootstrap_indices",  # helper: bootstrap row indices, one replicate per row
    "clopper_pearson",  # helper: exact binomial interval
    "cogrouped",  # helper: a join of class summaries' parts by other keys (Dask's shuffle)
    "data_row",  # helper: how a message names a record (1-based)
    "dataset_classes",  # helper: a dataset's rows grouped into classes, once per run
    "dataset_summarizer",  # helper: Context.summarize over in-memory datasets
    "distinct",  # helper: a params validator refusing repeated values
    "hookimpl",
    "load",  # helper: read a plugin's own data file (e.g. a population)
    "pair_datasets",  # helper: the paired frame of two in-memory datasets
    "percentile_interval",  # helper: bootstrap percentile interval
    "plugin_ref",
    "read_json",  # helper: a plugin's own JSON file, read strictly (no repeated keys)
    "read_text",  # helper: a plugin's own text file (regular files only, UTF-8, no BOM)
    "refuse_infinite",  # helper: the error for ±inf in a column that needs finite numbers
    "regrouped",  # helper: a class summary with classes merged by mapped keys (Dask's shuffle)
    "regular_file",  # helper: refuse a FIFO, a device or a folder where a file is expected
    "released",
    "repeated",  # helper: values listed twice
    "row_count_error",  # helper: the error for sides of different lengths paired by order
    "separators_fitting",  # helper: every separator that splits a file's lines alike
    "sniff_separator",  # helper: the separator of a plugin's own delimited file
    "spans",  # helper: block bounds for Context.map_blocks
    "task_threads",  # helper: threads a plugin may use where it runs
    "wilson_interval",  # helper: Wilson score interval of a proportion
]
