"""anoneval's core: plugin base classes, data kinds, the evaluator and the report.

The Python API benchmarks embed::

    from anoneval.core import evaluate
    report = evaluate(original_df, anonymized_df, measures=[{"name": "DM", "params": {...}}])
    report.to_frame()
"""

from anoneval.core.base import (
    Context,
    Distance,
    LossMeasure,
    Measure,
    MeasureResult,
    Params,
    Plugin,
    PluginRef,
    RiskMeasure,
    SynthesisResult,
    Synthesizer,
    plugin_ref,
    released,
)
from anoneval.core.data import Dataset, Microdata, Table, Trajectories, load
from anoneval.core.errors import (
    AnonevalError,
    ConfigError,
    DataError,
    PluginError,
    UnknownPluginError,
)
from anoneval.core.evaluator import Evaluator, evaluate, evaluate_many
from anoneval.core.hookspecs import hookimpl
from anoneval.core.report import MeasureReport, MultiReport, Report

__all__ = [
    "AnonevalError", "ConfigError", "Context", "DataError", "Dataset", "Distance", "Evaluator",
    "LossMeasure", "Measure", "MeasureReport", "MeasureResult", "Microdata", "MultiReport",
    "Params", "Plugin", "PluginError", "PluginRef", "Report", "RiskMeasure", "SynthesisResult",
    "Synthesizer", "Table", "Trajectories", "UnknownPluginError", "evaluate", "evaluate_many",
    "hookimpl", "load", "plugin_ref", "released",
]
