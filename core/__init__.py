"""anoneval's Python API: evaluate datasets and read the report (plugins: ``anoneval.core.api``).

The Python API benchmarks embed::

    from anoneval.core import evaluate
    report = evaluate(original_df, anonymized_df, measures=[{"name": "DM", "params": {...}}])
    report.to_frame()
"""

from anoneval.core.api import (
    AnonevalError,
    ConfigError,
    Context,
    DataError,
    Dataset,
    Distance,
    LossMeasure,
    Measure,
    MeasureResult,
    Microdata,
    Params,
    Plugin,
    PluginError,
    PluginRef,
    RiskMeasure,
    SynthesisResult,
    Synthesizer,
    Table,
    Trajectories,
    UnknownPluginError,
    hookimpl,
    plugin_ref,
    released,
)
from anoneval.core.data.given import forget
from anoneval.core.data.kinds import load
from anoneval.core.data.partitioned import Partitioned
from anoneval.core.report.model import MeasureReport, MultiReport, Report
from anoneval.core.run.evaluator import Evaluator, evaluate, evaluate_many

__all__ = [
    "AnonevalError", "ConfigError", "Context", "DataError", "Dataset", "Distance", "Evaluator",
    "LossMeasure", "Measure", "MeasureReport", "MeasureResult", "Microdata", "MultiReport",
    "Params", "Partitioned", "Plugin", "PluginError", "PluginRef", "Report", "RiskMeasure",
    "SynthesisResult", "Synthesizer", "Table", "Trajectories", "UnknownPluginError", "evaluate",
    "evaluate_many", "forget", "hookimpl", "load", "plugin_ref", "released",
]
