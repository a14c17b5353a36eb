"""The evaluator: runs measures on an original and one or many anonymized datasets.

Benchmarks embed this in loops, so per-call overhead is kept small: params are validated once,
the original's derived arrays and each measure's :meth:`~anoneval.core.api.Measure.prepare`
result are computed once per evaluator, and one failing measure never stops the others.

Plugins are contained: any exception, ``sys.exit()`` included, becomes the measure's ``error``;
a measure with a ``timeout`` that runs longer is reported as timed out; and plugins get the
data read-only (pandas copy-on-write frames, read-only numpy arrays), so one cannot change what
later measures and the report's input hash see.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from anoneval.core.api import Context, Measure, MeasureResult, SynthesisResult, Synthesizer
from anoneval.core.data.blocks import SERIAL_BLOCKS, Blocks, as_task, in_task
from anoneval.core.data.held import Held, pandas_option
from anoneval.core.data.kinds import (
    Dataset,
    FrameData,
    Microdata,
    align_dtypes,
    as_dataset,
    require_records,
    require_scalar_cells,
    unify_kinds,
)
from anoneval.core.data.partitioned import Partitioned
from anoneval.core.data.progress import progress_bar, step_done
from anoneval.core.data.summary import dataset_summarizer
from anoneval.core.errors import ConfigError, DataError
from anoneval.core.report.jsonable import non_finite
from anoneval.core.report.model import (
    MeasureReport,
    MultiReport,
    Report,
    build_risk_utility,
    checked_interval,
    interval_level,
)
from anoneval.core.run.config import PlannedMeasure, input_problems, plan_measures
from anoneval.core.run.engine import DaskEngine, new_recipe, open_engine
from anoneval.core.run.placement import fits_in_tasks, load_variant
from anoneval.core.run.scaled import Mode, ScaledRun, gather_limit, mode_of

if TYPE_CHECKING:  # the registry imports anoneval.core: import it lazily to avoid a cycle
    from anoneval.registry import Registry

MeasureLike = Measure | PlannedMeasure | str | Mapping[str, Any]
T = TypeVar("T")
#: pandas 3 always copies on write (the option is deprecated there); pandas 2 needs it switched on.
_COW_OPTION = int(pd.__version__.split(".")[0]) < 3
#: pandas copy-on-write while any plugin call runs, in any thread (see :class:`Held`).
_COW = Held(pandas_option("mode.copy_on_write", True))


def copy_on_write() -> contextlib.AbstractContextManager[Any]:
    """pandas copy-on-write while any plugin call runs: the option is one for the whole
    process, so it is held (:class:`~anoneval.core.data.held.Held`) rather than set per call,
    which would let a call that ends switch it off under another thread's call still running,
    whose writes would then reach the data."""
    return _COW() if _COW_OPTION else contextlib.nullcontext()


def _mode(measure: Measure) -> Mode:
    """How a measure runs on partitioned data; a failing ``summaries()`` fails in compute."""
    try:
        return mode_of(measure)
    except Exception:
        return "gathered"


class _NoBar:
    """The progress bar of an evaluation that shows none."""

    disable = True

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        pass

    def update(self, n: int = 1) -> None:
        pass


_NO_BAR = _NoBar()


class MeasureTimeout(Exception):
    """A measure ran longer than its ``timeout``."""


def read_only(data: Dataset | None) -> Dataset | None:
    """A fresh view of ``data`` for one plugin call: same cache, a shallow copy of each frame
    (written to under copy-on-write, it never changes ``data``), read-only numpy arrays."""
    if data is None:
        return None
    view = copy.copy(data)
    with copy_on_write():
        for name, value in vars(data).items():
            if isinstance(value, pd.DataFrame):
                setattr(view, name, value.copy(deep=False))
            elif isinstance(value, np.ndarray):
                frozen = value.view()
                frozen.flags.writeable = False
                setattr(view, name, frozen)
    return view


def _plugin_call(fn: Callable[[], T], timeout: float | None, what: str) -> T:
    """Run plugin code with pandas copy-on-write on, turning ``sys.exit()`` into an error;
    with a ``timeout``, give up waiting after that many seconds (the plugin keeps running in a
    daemon thread, as Python cannot stop a thread, and copy-on-write stays on until it ends, so
    its writes never reach the data)."""

    def run() -> T:
        try:
            return fn()
        except SystemExit as exc:  # sys.exit() in a plugin ends the measure, not the run
            raise RuntimeError(f"{what} called sys.exit({exc.code!r})") from exc

    with copy_on_write():
        if timeout is None:
            return run()
        outcome: dict[str, Any] = {}
        task = in_task()  # the plugin's thread is a task too when its caller is one

        def target() -> None:
            try:  # copy-on-write stays on until this thread ends, even after a timeout
                with copy_on_write(), as_task() if task else contextlib.nullcontext():
                    outcome["value"] = run()
            except Exception as exc:  # handed to the caller's thread
                outcome["error"] = exc

        worker = threading.Thread(target=target, name=f"anoneval {what}", daemon=True)
        worker.start()
        worker.join(timeout)
    if worker.is_alive():
        raise MeasureTimeout(f"{what} timed out after {timeout:g} s (it may still be running "
                             "in the background; the other measures went on)")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]


def control_overlap(original: Dataset | None, control: Dataset | None) -> int:
    """How many control records equal some original record (on the original's columns)."""
    if not (isinstance(original, Microdata) and isinstance(control, Microdata)):
        return 0
    columns = original.columns
    if not set(columns) <= set(control.columns) or not len(original) or not len(control):
        return 0
    key = ("row_hashes", tuple(columns))

    def hashes(data: Microdata) -> Any:
        return data.cached(key, lambda: pd.util.hash_pandas_object(
            data.frame[columns], index=False).to_numpy())

    return int(np.isin(hashes(control), hashes(original)).sum())


def _may_be_numbers(first: Any, values: Callable[[], pd.Series]) -> bool:
    """Whether an object column may be read as numbers (:func:`unify_kinds`: only when every
    present value is a number or text holding one), told by its first present value (the
    column's ``first`` cell, else the first present one of its ``values``): text that is no
    number, a boolean or bytes there rule it out without a scan of the column."""
    if first is None or (pd.api.types.is_scalar(first) and pd.isna(first)):
        cells = values().to_numpy()
        present = np.flatnonzero(pd.notna(cells))  # a scan only when the first is missing
        if not len(present):
            return True
        first = cells[present[0]]
    if isinstance(first, (bool, np.bool_, bytes)):
        return False
    if isinstance(first, str):
        try:
            float(first)
        except ValueError:
            return False
    return True


def _numbers_of(data: FrameData) -> frozenset[str]:
    """The columns of ``data`` that are or may be read as numbers (:func:`_may_be_numbers`)."""
    frame = data.frame  # column names are unique strings (FrameData)
    dtypes = data.dtypes
    if not len(frame) or all(d != np.dtype(object) for d in dtypes.values()):
        return frozenset(dtypes)
    first = frame.iloc[0].to_numpy()  # one row of every column, not a Series per column
    return frozenset(c for i, (c, dtype) in enumerate(dtypes.items())
                     if dtype != np.dtype(object)
                     or _may_be_numbers(first[i], lambda c=c: frame[c]))


def read_columns(measures: Sequence[PlannedMeasure], side: str, original: Dataset | None,
                 release: bool = True) -> frozenset[str] | None:
    """The columns of ``side`` that some of ``measures`` reads (:meth:`Measure.release_columns`
    when a release is given, else :meth:`Measure.columns`; for a measure reading only numbers,
    :meth:`Measure.numbers_only`, the ``original``'s columns that are or may become numbers: it
    picks its columns there), or None when one of them may read every column."""
    columns: set[str] = set()
    for planned in measures:
        try:
            measure = planned.measure
            reads = measure.release_columns() if release else measure.columns()
            numbers = reads is None and measure.numbers_only()
        except Exception:  # the measure reports its own error when it runs
            return None
        if numbers and isinstance(original, FrameData):
            columns.update(original.cached(("may_be_numbers",), lambda: _numbers_of(original)))
        elif reads is None or side not in reads:
            return None
        else:
            columns.update(map(str, reads[side]))
    return frozenset(columns)


class Evaluator:
    """Evaluate ``measures`` for one original against any number of anonymized datasets.

    ``control``, when given, is the control set: original records that were not used to make
    the release (attack baselines, overfitting checks); measures that need it say so.

    >>> ev = Evaluator(original_df, [{"name": "KAnonymity", "params": {...}}], seed=0)
    >>> ev.evaluate(anonymized_df).to_frame()
    """

    def __init__(
        self,
        original: Any,
        measures: Sequence[MeasureLike],
        *,
        seed: int = 0,
        registry: Registry | None = None,
        show_progress: bool = False,
        data_kind: str | None = None,
        base_dir: str | Path | None = None,
        timings: bool = True,
        control: Any = None,
    ) -> None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ConfigError([("seed", f"a non-negative integer (numpy's seed), got {seed!r}")])
        self.base_dir = Path(base_dir) if base_dir is not None else None
        from anoneval.registry import default_registry, own_version

        self.registry = registry or default_registry()
        self.data_kind = data_kind
        given = as_dataset(original, data_kind, "original")
        require_records(given, "original")
        given_control = as_dataset(control, data_kind or (given.data_kind if given else None),
                                   "control")
        require_records(given_control, "control")
        # measures planned from a validated config were checked there (inputs, data kinds)
        self.measures = plan_measures(measures, self.registry)
        #: The columns of the original the measures read (None: maybe every one) when a release
        #: is given, and when it is not ("alone": some read the original only then, surveyed
        #: at the first such evaluation): only those are validated and surveyed, a scan of the
        #: others would be a fixed cost of every call.
        self._reads = {"original": read_columns(self.measures, "original", given),
                       "alone": read_columns(self.measures, "original", given, release=False)}
        require_scalar_cells(given, "original", self._reads["original"])
        require_scalar_cells(given_control, "control", self._reads["original"])
        self._set_inputs(given, given_control)
        if self.control is None:  # a missing control set fails at once, as in a config
            missing = [(f"measures[{i}]", f"{p.measure.name} needs the control data (control=...:"
                                          " original records not used to make the release)")
                       for i, p in enumerate(self.measures)
                       if not p.inputs_checked and p.measure.control_use() == "required"]
            if missing:
                raise ConfigError(missing)
        self.seed = int(seed)
        self.show_progress = show_progress
        self.timings = timings
        self._prepared: dict[int, tuple[Any, BaseException | None]] = {}
        self._prepare_seconds: dict[int, float] = {}  # reported once, by the first evaluation
        self._aligned: dict[int, Evaluator] = {}  # by id of an original read with other dtypes
        self._alone: Evaluator | None = None  # see _without_release
        self._version = own_version()
        self._hook = self.registry.pm.hook
        self._overlap: int | None = None
        #: Runs the measures' blocks (``Context.map_blocks``); serial unless an engine sets it.
        self.block_runner: Blocks = SERIAL_BLOCKS
        self._scaled: ScaledRun | None = None  # set while the dask engine runs partitioned data
        self._bar: Any = None  # the progress bar of the run in progress (this process only)

    def _context(self, prepared: Any = None) -> Context:
        return Context(seed=self.seed, registry=self.registry, base_dir=self.base_dir,
                       show_progress=self.show_progress, prepared=prepared,
                       control=read_only(self.control), block_runner=self.block_runner)

    def control_overlap(self) -> int:
        """Control records equal to an original record (computed once)."""
        if self._overlap is None:
            self._overlap = control_overlap(self.original, self.control)
        return self._overlap

    def _set_inputs(self, original: Dataset | None, control: Dataset | None) -> None:
        """Keep the inputs as given (hashed in the report, shipped to workers) and as measured:
        each read with one kind of value per column, the control set's dtypes the original's."""
        self._given = original, control
        self._unified = not isinstance(original, Partitioned)  # see _unify_partitioned
        reads = self._reads["original"]
        self.original, self._notes = (unify_kinds(original, "original", reads) if self._unified
                                      else (original, []))
        self.control, notes = unify_kinds(control, "control", reads)
        self._notes += notes
        if self._unified and self.original is not None and self.control is not None:
            self.original, self.control, notes = align_dtypes(self.original, self.control,
                                                              "control", reads)
            self._notes += notes

    def _inputs(self, anonymized: Dataset | None = None, many: bool = False) -> dict[str, Any]:
        """The inputs as given (before any column was read as another kind)."""
        original, control = self._given
        inputs: dict[str, Any] = {
            "original": original.describe() if original is not None else None}
        if not many:
            inputs["anonymized"] = anonymized.describe() if anonymized is not None else None
        if control is not None:
            inputs["control"] = control.describe()
        return inputs

    def _prepare(self, i: int, planned: PlannedMeasure) -> tuple[Any, BaseException | None]:
        if i not in self._prepared:
            measure = planned.measure
            ctx, view = self._context(), read_only(self.original)
            started = time.perf_counter()
            try:
                self._prepared[i] = (_plugin_call(
                    lambda: measure.prepare(view, ctx), planned.timeout,
                    f"{measure.name}.prepare"), None)
            except Exception as exc:
                self._prepared[i] = (None, exc)
            self._prepare_seconds[i] = time.perf_counter() - started
        return self._prepared[i]

    def synthesize(self, synthesizer: Synthesizer) -> SynthesisResult:
        """Run a synthesizer on the original with the evaluation seed."""
        if self.original is None:
            raise ValueError("a synthesizer needs the original data")
        self._in_memory()
        view, ctx = read_only(self.original), self._context()
        return _plugin_call(lambda: synthesizer.generate(view, ctx), None, synthesizer.name)

    def run_measure(self, i: int, planned: PlannedMeasure,
                    anonymized: Dataset | None) -> MeasureReport:
        """Run one measure, turning any exception into the entry's ``error``."""
        measure = planned.measure
        scaled = self._scaled if self._partitioned(anonymized) else None
        mode = _mode(measure) if scaled is not None else None
        # a gathered measure prepares on the gathered original
        prepared, prep_error = (None, None) if mode == "gathered" else self._prepare(i, planned)
        ctx = self._context(prepared)
        ctx.summarize = dataset_summarizer(self.original, anonymized)
        if scaled is not None:
            ctx.summarize = scaled.summarizer(ctx.summarize, self.original, anonymized)
        result: MeasureResult | None = None
        error: str | None = None
        original, anon = read_only(self.original), read_only(anonymized)
        self._hook.before_measure(measure=measure, ctx=ctx)
        if self.control is not None and measure.control_use() != "none":
            overlap = self.control_overlap()
            if overlap:
                ctx.warn(f"{overlap} of {len(self.control)} control records equal a record of "
                         "the original: the control set should hold records not used to make "
                         "the release")
        try:
            if prep_error is not None:
                raise prep_error
            if not planned.inputs_checked:  # the config checked its own measures
                problems = input_problems(
                    measure, self.original.data_kind if self.original is not None else None,
                    {anonymized.data_kind} if anonymized is not None else set(),
                    self.control.data_kind if self.control is not None else None)
                if problems:
                    raise ValueError("; ".join(problems))
            def call() -> MeasureResult:
                if scaled is not None and mode == "partition-wise":
                    return scaled.partition_wise(measure, original, anon, ctx)
                if mode == "gathered":
                    return self._gathered(i, planned, anonymized, ctx)
                return measure.compute(original, anon, ctx)

            result = _plugin_call(call, planned.timeout, measure.name)
            if not isinstance(result, MeasureResult):
                raise TypeError(f"{measure.name}.compute returned {type(result).__name__}, "
                                "not MeasureResult")
        except Exception as exc:
            result = None
            error = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, MemoryError):
                error = (f"MemoryError: {measure.name} ran out of memory"
                         f"{f' ({exc})' if str(exc) else ''}; the other measures went on. "
                         "Give it a sample, fewer workers, or the Dask engine")
            ctx.extra["traceback"] = traceback.format_exc()
        finally:
            self._hook.after_measure(measure=measure, result=result, ctx=ctx)
        value = result.value if result is not None else None
        warnings = [*ctx.warnings, *(result.warnings if result is not None else [])]
        if value is not None and not math.isfinite(value):
            warnings.append(f"the value is {value} (not a finite number); reported as null")
            value = None
        if result is not None:
            bad = non_finite(result.details)
            if bad:
                warnings.append(f"details not finite (reported as null): {', '.join(bad[:10])}"
                                + (f" and {len(bad) - 10} more" if len(bad) > 10 else ""))
        ci = checked_interval(result.ci if result is not None else None, value, warnings)
        passed = None
        thr = planned.threshold
        if thr is not None:  # a threshold on no value (or no interval) FAILs (``--strict``)
            passed, why = thr.check(value, ci)
            if why is not None and error is None:
                warnings.append(why)
        params = measure.params.model_dump(mode="json")
        return MeasureReport(
            name=measure.name, label=planned.label, kind=measure.kind, value=value,
            direction=measure.direction(),
            details=result.details if result is not None else {},
            params=params, ci=ci, confidence_level=interval_level(params, ci),
            unit=type(measure).unit_for(params),
            seconds=(float(ctx.extra.get("seconds", 0.0)) + self._prepare_seconds.pop(i, 0.0)
                     if self.timings else 0.0), error=error,
            warnings=warnings,
            threshold=thr.model_dump() if thr is not None else None, passed=passed,
        )

    def evaluate(self, anonymized: Any = None, *, variant: str | None = None,
                 synthesizer: dict[str, Any] | None = None) -> Report:
        """Evaluate every measure on one anonymized dataset (None for analytic measures)."""
        side = f"anonymized variant {variant!r}" if variant else "anonymized"
        given = as_dataset(anonymized, self.data_kind
                           or (self.original.data_kind if self.original else None), side)
        if self._scaled is None:
            self._in_memory()
            if isinstance(given, Partitioned):
                given = given.cached(("loaded",), given.load)
        else:
            self._scaled.attach(self.original)
            self._scaled.attach(given)
            self._unify_partitioned()
        reads = (None if self._scaled is not None  # measures pick columns on the original
                 else read_columns(self.measures, "anonymized", self._given[0]))
        require_records(given, side)
        require_scalar_cells(given, side, reads)
        anon, notes = unify_kinds(given, side, reads)
        runner = self if anon is not None else self._without_release()
        if self.original is not None and anon is not None:
            # only the columns read on both sides need one kind of value on both
            both = (self._reads["original"] if reads is None
                    else reads if self._reads["original"] is None
                    else reads & self._reads["original"])
            original, anon, aligned = align_dtypes(self.original, anon, "anonymized", both)
            notes += aligned
            if original is not self.original:  # some columns read as text on both sides
                runner = self._aligned.setdefault(id(original), self._with_original(original))
                runner.block_runner = self.block_runner
        if self._scaled is not None:
            self._scaled.prefetch([p.measure for p in self.measures
                                   if _mode(p.measure) == "summaries"], runner.original, anon)
        entries = []
        with self._progress(len(self.measures)) as bar:
            for i, p in enumerate(self.measures):
                bar.set_postfix_str(f"{variant}: {p.label}" if variant else p.label,
                                    refresh=False)
                entries.append(runner.run_measure(i, p, anon))
                bar.update(1)
                step_done(1)
        for entry in entries:
            entry.warnings[:0] = [*runner._notes, *notes]
        return Report(
            anoneval_version=self._version, seed=self.seed, variant=variant,
            inputs=self._inputs(given),
            synthesizer=synthesizer, measures=entries,
        )

    @contextlib.contextmanager
    def _progress(self, steps: int) -> Iterator[Any]:
        """The run's progress bar (variants × measures, drawn after a few seconds), or a bar of
        ``steps`` measures when none is open (none made when no bar is shown: a tqdm object
        costs about 0.1 ms of every call)."""
        if self._bar is not None:
            yield self._bar
            return
        if not self.show_progress:
            yield _NO_BAR
            return
        with progress_bar(steps, "measures", enabled=self.show_progress) as bar:
            self._bar = bar
            try:
                yield bar
            finally:
                self._bar = None

    def _unify_partitioned(self) -> None:
        """A partitioned original, once on the cluster: its columns read as one kind each and
        the control set aligned with it, surveyed partition-wise (as :meth:`_set_inputs` does
        in memory)."""
        if self._unified:
            return
        self._unified = True
        self.original, notes = unify_kinds(self.original, "original")
        self._notes += notes
        if self.original is not None and self.control is not None:
            self.original, self.control, notes = align_dtypes(self.original, self.control,
                                                              "control")
            self._notes += notes

    def _partitioned(self, anonymized: Dataset | None) -> bool:
        return isinstance(self.original, Partitioned) or isinstance(anonymized, Partitioned)

    def _gathered(self, i: int, planned: PlannedMeasure, anonymized: Dataset | None,
                  ctx: Context) -> MeasureResult:
        """Run a measure without a partition-wise form on its columns gathered in memory."""
        assert self._scaled is not None
        original, anon, note = self._scaled.gather(planned.measure, self.original, anonymized)
        ctx.warn(note)
        if original is not None and anon is not None:
            original, anon, notes = align_dtypes(original, anon)
            for n in notes:
                ctx.warn(n)
        runner = self
        if original is not self.original and original is not None:
            runner = self._aligned.setdefault(id(original), self._with_original(original))
        ctx.prepared, error = runner._prepare(i, planned)
        if error is not None:
            raise error
        return planned.measure.compute(read_only(original), read_only(anon), ctx)

    def _in_memory(self) -> None:
        """Read partitioned inputs into memory (the local engine)."""
        if any(isinstance(d, Partitioned) for d in self._given):
            self._set_inputs(*(d.cached(("loaded",), d.load) if isinstance(d, Partitioned) else d
                               for d in self._given))

    def _without_release(self) -> Evaluator:
        """This evaluator for an evaluation without a release: with the original's columns
        that measures read only then (:meth:`Measure.release_columns`) checked and surveyed
        too, once (the same evaluator when there are none)."""
        if self._alone is None:
            reads = self._reads["alone"]
            if reads == self._reads["original"] or not self._unified:
                self._alone = self  # a partitioned original is surveyed whole
            else:
                original, control = self._given
                require_scalar_cells(original, "original", reads)
                require_scalar_cells(control, "control", reads)
                twin = copy.copy(self)
                twin._prepared, twin._aligned = {}, {}
                twin._reads = {**self._reads, "original": reads}
                twin._set_inputs(original, control)
                twin._alone = self._alone = twin
        return self._alone

    def _with_original(self, original: Dataset) -> Evaluator:
        """This evaluator with some columns of the original read as text (the control set's
        too, so that it stays aligned with the original)."""
        twin = copy.copy(self)
        twin.original, twin._prepared, twin._aligned = original, {}, {}
        if self.control is not None:
            twin.original, twin.control, notes = align_dtypes(original, self.control, "control",
                                                              self._reads["original"])
            twin._notes, twin._overlap = [*self._notes, *notes], None
        return twin

    def prepare(self) -> None:
        """Do all original-side work now: every measure's ``prepare`` and the original's hash.

        Optional: :meth:`evaluate` does it lazily; calling it first lets callers time it.
        """
        self._in_memory()
        for i, planned in enumerate(self.measures):
            self._prepare(i, planned)
        for given in self._given:
            if given is not None:
                given.content_hash()

    def evaluate_release(self, anonymized: Any = None, *, engine: Any = None) -> Report:
        """Evaluate one release (None for analytic measures) as the one unnamed variant of
        :meth:`evaluate_many`; the report's ``engine`` describes where it ran."""
        many = self.evaluate_many({"": anonymized}, engine=engine)
        return many.variants[0].model_copy(update={"variant": None, "engine": many.engine})

    def evaluate_many(self, variants: Mapping[str, Any],
                      ru_map: tuple[str, str] | None = None, *,
                      engine: Any = None) -> MultiReport:
        """Evaluate each named variant against the same original, reusing original-side work.

        This is the one place that decides where a run's tasks go. ``ru_map`` = (risk label,
        loss label) chooses the measures of the risk–utility table; by default the first risk
        and the first loss measure. ``engine`` (a name, an engine config dict or a
        ``distributed.Client``; default local and serial) runs the variants as independent
        tasks: in worker processes (``{"name": "local", "workers": 2}``) or on a Dask cluster;
        a single variant (a single release is the unnamed one) and partitioned data on a Dask
        cluster run here, and the engine runs the measures' blocks (``Context.map_blocks``); a
        config's files that fit a Dask worker are read whole by the variants' tasks
        (:mod:`anoneval.core.run.placement`). A
        variant may be data or a zero-argument callable loading it (called where the task
        runs). The reports equal a serial run's apart from timings.
        """
        if not isinstance(variants, Mapping):
            raise TypeError("variants: expected a mapping of variant name to data (a "
                            "DataFrame, an anoneval Dataset or a zero-argument loader), got "
                            f"{type(variants).__name__}")
        if not variants:
            raise DataError("no anonymized variants given; pass at least one")
        variants = _named_variants(variants)
        with open_engine(engine, tasks=len(variants) if len(variants) > 1 else None) as eng, \
                self._progress(len(variants) * len(self.measures)):
            if isinstance(eng, DaskEngine):
                variants = self._placed(eng, variants)
            scaled = isinstance(eng, DaskEngine) and (self._partitioned(None) or isinstance(
                self.control, Partitioned) or any(isinstance(v, Partitioned)
                                                  for v in variants.values()))
            if scaled or len(variants) == 1:
                # run here: partitioned data stays on the cluster (its reductions run there),
                # and the engine runs the measures' blocks
                self.block_runner = eng.blocks()
                try:
                    if scaled:
                        client = eng.client
                        self._scaled = ScaledRun(client, gather_limit(client, eng.gather_limit))
                        if isinstance(self.control, Partitioned):  # control measures read frames
                            self._set_inputs(self._given[0], self.control.cached(
                                ("loaded",), self.control.load))
                    reports = [self._evaluate_variant(name, data)
                               for name, data in variants.items()]
                finally:
                    self._scaled = None
                    self.block_runner = SERIAL_BLOCKS
            else:
                self._in_memory()
                recipe = new_recipe(type(self), self._given[0], self.measures, self.seed,
                                    self.data_kind, self.base_dir, self.timings, self._given[1])
                bar = self._bar
                reports = eng.run_variants(recipe, variants, self._evaluate_variant,
                                           bar.update if bar is not None and not bar.disable
                                           else None)
            inputs = self._inputs(many=True)
            described = eng.describe()
        risk, loss = ru_map if ru_map is not None else (None, None)
        return MultiReport(
            anoneval_version=self._version, seed=self.seed,
            inputs=inputs,
            engine=described, variants=reports,
            risk_utility=build_risk_utility(reports, risk, loss),
        )

    def _placed(self, engine: DaskEngine, variants: dict[str, Any]) -> dict[str, Any]:
        """``variants`` for the dask engine: when the inputs kept on disk fit a worker's task
        (:func:`~anoneval.core.run.placement.fits_in_tasks`), the original and the control set
        read here (sent to each worker once) and each partitioned variant a loader that reads
        its files in its task; otherwise as they are (partition-wise reductions)."""
        shared = [d for d in self._given if d is not None]
        if not any(isinstance(d, Partitioned) for d in [*shared, *variants.values()]):
            return variants
        if not fits_in_tasks(shared, variants.values(), engine.worker_memory()):
            return variants
        self._in_memory()
        return {name: functools.partial(load_variant, data, name)
                if isinstance(data, Partitioned) else data for name, data in variants.items()}

    def _evaluate_variant(self, name: str, data: Any) -> Report:
        return self.evaluate(data() if callable(data) else data, variant=name)


def _named_variants(variants: Mapping[Any, Any]) -> dict[str, Any]:
    """``variants`` keyed by strings, as reports name variants: other keys (e.g. integers) are
    converted with ``str``. Two keys with the same string are an error, and so is an empty
    name beside others (a lone empty name is how a single release is run)."""
    named: dict[str, Any] = {}
    for key, data in variants.items():
        name = key if isinstance(key, str) else str(key)
        if not name and len(variants) > 1:
            raise ConfigError([("variants", "a variant has an empty name; name every variant")])
        if name in named:
            raise ConfigError([("variants", f"two variants are named {name!r}")])
        named[name] = data
    return named


def evaluate(original: Any, anonymized: Any, measures: Sequence[MeasureLike], *, seed: int = 0,
             registry: Registry | None = None, data_kind: str | None = None,
             show_progress: bool = False, engine: Any = None,
             control: Any = None) -> Report:
    """Evaluate ``measures`` on DataFrames or datasets; see :class:`Evaluator`.

    The release is the one unnamed variant of :meth:`Evaluator.evaluate_many`; ``engine``
    runs its measures' blocks (see there); ``control`` is the control set.
    """
    return Evaluator(original, measures, seed=seed, registry=registry, data_kind=data_kind,
                     show_progress=show_progress, control=control).evaluate_release(
        anonymized, engine=engine)


def evaluate_many(original: Any, variants: Mapping[str, Any], measures: Sequence[MeasureLike],
                  *, seed: int = 0, registry: Registry | None = None,
                  data_kind: str | None = None,
                  show_progress: bool = False,
                  ru_map: tuple[str, str] | None = None, engine: Any = None,
                  control: Any = None) -> MultiReport:
    """Evaluate ``measures`` for each ``{name: anonymized}`` variant against one original.

    The original-side work runs once (per worker); ``ru_map`` = (risk label, loss label)
    chooses the risk–utility table's measures (default: the first of each kind); ``engine``
    runs the variants in parallel (see :meth:`Evaluator.evaluate_many`); ``control`` is the
    control set (original records not used to make the releases).
    """
    return Evaluator(original, measures, seed=seed, registry=registry, data_kind=data_kind,
                     show_progress=show_progress, control=control).evaluate_many(
        variants, ru_map=ru_map, engine=engine)


__all__ = ["Evaluator", "evaluate", "evaluate_many"]
