"""Running a validated config: load inputs, synthesize, evaluate, write the report."""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Any

from anoneval.core.api import Context
from anoneval.core.data.given import hash_now
from anoneval.core.data.kinds import Dataset, load
from anoneval.core.data.memory import MEMORY_HINT, human_bytes
from anoneval.core.data.parampaths import param_paths
from anoneval.core.data.sources import locate
from anoneval.core.errors import DataError
from anoneval.core.report.atomic import write_frame_atomic
from anoneval.core.report.model import MultiReport, Report
from anoneval.core.report.outputs import check_outputs
from anoneval.core.run.config import Input, Plan
from anoneval.core.run.engine import check_engine, engine_spec
from anoneval.core.run.evaluator import Evaluator
from anoneval.core.run.placement import FileInput


def load_input(item: Input, lazy: bool = False) -> Dataset:
    """Load one input of a plan (``lazy``: kept on disk for the dask engine, as partitions
    or read whole by its tasks); errors name the file."""
    try:
        if lazy:  # read whole by the tasks when it fits a worker (run.placement)
            return FileInput(item.path, item.kind, item.format, item.options)
        return load(item.path, item.kind, item.format, item.options)
    except DataError as exc:
        raise DataError(f"{item.side}: {exc}") from exc


def plan_inputs(plan: Plan) -> list[tuple[str, Path]]:
    """Every file a plan reads, named as in the config: the data, each plugin's path params
    (hierarchies, populations, ...), the registry files and plugin sources, and the source
    files of its plugins' classes (so no output can overwrite any of them)."""
    out = [("original.path", plan.original.path)] if plan.original else []
    if plan.control:
        out.append(("control.path", plan.control.path))
    for v in plan.anonymized:
        out.append((f"anonymized variant {v.name!r}" if v.name else "anonymized.path", v.path))
    for given in [plan.original, plan.control, *plan.anonymized]:
        id_map = getattr(given.options, "id_map", None) if given is not None else None
        if id_map is not None:
            out.append((f"{given.side} options.id_map", Path(id_map)))
    plugins: list[tuple[str, Any]] = [
        (f"measures[{i}] ({pm.label})", pm.measure) for i, pm in enumerate(plan.measures)]
    if plan.synthesizer is not None:
        plugins.append(("synthesizer", plan.synthesizer))
    ctx = Context(base_dir=plan.base_dir)
    for where, plugin in plugins:
        for name, value in param_paths(plugin.params):
            out.append((f"{where}.params.{name}", ctx.path(value)))
        source = _source_file(type(plugin))
        if source is not None:
            out.append((f"source of plugin {plugin.name!r}", source))
    if plan.registry is not None:
        out.extend(plan.registry.read_paths())
    return out


def _source_file(cls: type) -> Path | None:
    try:
        file = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return None
    return Path(file) if file else None


def plan_outputs(plan: Plan) -> list[tuple[str, Path]]:
    """The files :func:`run_plan` writes (the report is its caller's)."""
    return ([("synthesizer.output", plan.synthesizer_output)]
            if plan.synthesizer_output is not None else [])


def _cached(datasets: dict[str, Dataset] | None, key: str, item: Input,
            lazy: bool = False) -> Dataset:
    if datasets is None:
        return load_input(item, lazy)
    if key not in datasets:
        datasets[key] = load_input(item)
    return datasets[key]


def _variant(datasets: dict[str, Dataset] | None, key: str, item: Input, lazy: bool) -> Any:
    """A variant's data: loaded now (into the cache, or as partitions), else a loader that
    loads it where its task runs."""
    if datasets is not None or lazy:
        return _cached(datasets, key, item, lazy)
    return functools.partial(load_input, item)


def run_plan(plan: Plan, show_progress: bool = False,
             datasets: dict[str, Dataset] | None = None,
             engine: Any = None) -> Report | MultiReport:
    """Evaluate a plan. Input errors raise :class:`DataError`; measure errors go in the report.

    ``datasets``, when given, caches the inputs: those it holds are reused, the others are
    loaded into it, under "original", "control", "anonymized" (also a synthesizer's output) and
    "variant:<name>", so the HTML report can plot the data and a sweep loads files once.
    A synthesizer output that would overwrite an input is refused before anything runs.
    With ``report.timings: false`` the measures' run times are written as 0. ``engine``
    overrides the config's ``engine`` section (a name, a dict or a ``distributed.Client``).
    """
    check_outputs(plan_inputs(plan), plan_outputs(plan))
    spec = engine if engine is not None else plan.config.engine
    if spec is not None:
        check_engine(spec)  # Dask installed, scheduler allowed: before any input is read
    try:
        report = _run(plan, show_progress, datasets, spec)
        # the report's input hashes, while the inputs are in memory (see data.given)
        for part in (report, *getattr(report, "variants", [])):
            hash_now(part.inputs)
        return report
    except MemoryError:  # outside the measures (each measure's is its own error)
        raise DataError(out_of_memory(plan)) from None


def out_of_memory(plan: Plan) -> str:
    """The error for a run that ran out of memory outside the measures, naming the inputs
    and their sizes on disk."""
    sizes = []
    for name, path in plan_inputs(plan):
        try:
            size = human_bytes(sum(f.stat().st_size for f in locate(path).files))
        except (DataError, OSError):
            size = "size unknown"
        sizes.append(f"{name} {path}: {size}")
    return (f"ran out of memory holding the inputs ({'; '.join(sizes)}) while loading or "
            f"preparing them; {MEMORY_HINT}")


def _many(plan: Plan) -> bool:
    """Whether the plan evaluates named variants (a multi-variant report); a single release is
    the one unnamed variant."""
    return plan.synthesizer is None and (len(plan.anonymized) > 1 or bool(
        plan.anonymized and plan.anonymized[0].name is not None))


def _lazy(plan: Plan, engine: Any) -> bool:
    """Whether the inputs stay on disk as partitions (the dask engine, no synthesizer)."""
    return engine_spec(engine)[0].name == "dask" and plan.synthesizer is None


def _run(plan: Plan, show_progress: bool, datasets: dict[str, Dataset] | None,
         engine: Any) -> Report | MultiReport:
    """Load the inputs and evaluate the plan's variants with
    :meth:`Evaluator.evaluate_many`, which alone decides where the tasks run."""
    lazy = _lazy(plan, engine)
    original = _cached(datasets, "original", plan.original, lazy) if plan.original else None
    control = _cached(datasets, "control", plan.control, lazy) if plan.control else None
    evaluator = Evaluator(original, plan.measures, seed=plan.seed, registry=plan.registry,
                          show_progress=show_progress, base_dir=plan.base_dir, control=control,
                          timings=plan.config.report is None or plan.config.report.timings)
    if plan.synthesizer is not None:
        synthesized: dict[str, Any] = {}
        release = functools.partial(_synthesize, plan, evaluator, datasets, synthesized)
        report = evaluator.evaluate_release(release, engine=engine)
        return report.model_copy(update={"synthesizer": synthesized["info"]})
    if not _many(plan):
        release = (_variant(datasets, "anonymized", plan.anonymized[0], lazy)
                   if plan.anonymized else None)
        return evaluator.evaluate_release(release, engine=engine)
    variants = {v.name or "": _variant(datasets, f"variant:{v.name}", v, lazy)
                for v in plan.anonymized}
    ru = plan.config.report.ru_map if plan.config.report else None
    return evaluator.evaluate_many(variants, ru_map=(ru.risk, ru.loss) if ru else None,
                                   engine=engine)


def _synthesize(plan: Plan, evaluator: Evaluator, datasets: dict[str, Dataset] | None,
                synthesized: dict[str, Any]) -> Dataset:
    """The release a plan's synthesizer makes (a variant's loader, run where the engine runs
    it); its report section goes in ``synthesized["info"]`` and the data, when the plan says
    so, in ``synthesizer.output``."""
    assert plan.synthesizer is not None
    synth = plan.synthesizer
    try:
        made = evaluator.synthesize(synth)
    except Exception as exc:
        raise DataError(f"synthesizer {synth.name} failed: {type(exc).__name__}: "
                        f"{exc}") from exc
    synthesized["info"] = {"name": synth.name, "params": synth.params.model_dump(mode="json"),
                           "details": made.details, "warnings": made.warnings,
                           "output": str(plan.synthesizer_output)
                           if plan.synthesizer_output else None}
    data: Dataset = made.data
    if datasets is not None:
        datasets["anonymized"] = data
    if plan.synthesizer_output is not None:
        frame = data.to_frame() if hasattr(data, "to_frame") else data.frame  # type: ignore
        write_frame_atomic(frame, plan.synthesizer_output)
    return data
