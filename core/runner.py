"""Running a validated config: load inputs, synthesize, evaluate, write the report."""

from __future__ import annotations

from typing import Any

from anoneval.core.config import Input, Plan
from anoneval.core.data import Dataset, load
from anoneval.core.errors import DataError
from anoneval.core.evaluator import Evaluator
from anoneval.core.report import MultiReport, Report, write_frame_atomic


def load_input(item: Input) -> Dataset:
    """Load one input of a plan; errors name the file."""
    try:
        return load(item.path, item.kind, item.format, item.options)
    except DataError as exc:
        where = f"anonymized variant {item.name!r}" if item.name else item.given
        raise DataError(f"{where}: {exc}") from exc


def run_plan(plan: Plan, show_progress: bool = False) -> Report | MultiReport:
    """Evaluate a plan. Input errors raise :class:`DataError`; measure errors go in the report."""
    original = load_input(plan.original) if plan.original else None
    evaluator = Evaluator(original, plan.measures, seed=plan.seed, registry=plan.registry,
                          show_progress=show_progress, base_dir=plan.base_dir)
    if plan.synthesizer is not None:
        synth = plan.synthesizer
        try:
            made = evaluator.synthesize(synth)
        except Exception as exc:
            raise DataError(f"synthesizer {synth.name} failed: {type(exc).__name__}: "
                            f"{exc}") from exc
        info: dict[str, Any] = {"name": synth.name,
                                "params": synth.params.model_dump(mode="json"),
                                "details": made.details, "warnings": made.warnings,
                                "output": str(plan.synthesizer_output)
                                if plan.synthesizer_output else None}
        data: Dataset = made.data
        if plan.synthesizer_output is not None:
            frame = data.to_frame() if hasattr(data, "to_frame") else data.frame  # type: ignore
            write_frame_atomic(frame, plan.synthesizer_output)
        return evaluator.evaluate(data, synthesizer=info)
    if len(plan.anonymized) > 1 or (plan.anonymized and plan.anonymized[0].name is not None):
        variants = {v.name or "": load_input(v) for v in plan.anonymized}
        return evaluator.evaluate_many(variants)
    anonymized = load_input(plan.anonymized[0]) if plan.anonymized else None
    return evaluator.evaluate(anonymized)
