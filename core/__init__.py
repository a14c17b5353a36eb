"""anoneval's Python API: evaluate datasets and read the report (plugins: ``anoneval.core.api``).

The Python API benchmarks embed::

    from anoneval.core import evaluate
    report = evaluate(original_df, anonymized_df, measures=[{"name": "DM", "params": {...}}])
    report.to_frame()
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
#: The modules the names of ``__all__`` come from (as imported above for type checkers), read
#: at the first use of a name: importing anoneval.core, or a module in it, imports nothing
#: more, so that the ``anoneval`` command can start its worker processes before its imports.
_HOMES = ("anoneval.core.api", "anoneval.core.data.given", "anoneval.core.data.kinds",
          "anoneval.core.data.partitioned", "anoneval.core.report.model",
          "anoneval.core.run.evaluator")


def __getattr__(name: str) -> Any:
    if name in __all__:
        for home in _HOMES:
            module = importlib.import_module(home)
            if name in vars(module):
                globals()[name] = value = vars(module)[name]
                return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
