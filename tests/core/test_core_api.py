"""The public contract module: what it exports, and the two meanings of "kind" kept apart."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

import anoneval.core.api as api


def test_all_names_exist_and_are_the_contract() -> None:
    assert sorted(api.__all__) == sorted(set(api.__all__))
    for name in api.__all__:
        assert getattr(api, name) is not None
    for name in ("Plugin", "Measure", "RiskMeasure", "LossMeasure", "Distance", "Synthesizer",
                 "Params", "PluginRef", "plugin_ref", "MeasureResult", "SynthesisResult",
                 "Context", "hookimpl", "ConfigError", "DataError", "PluginError",
                 "UnknownPluginError", "Dataset", "Microdata", "Table", "Trajectories"):
        assert name in api.__all__


def test_the_old_base_module_is_gone() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("anoneval.core.base")


def test_table_is_not_microdata() -> None:
    assert not issubclass(api.Table, api.Microdata)
    assert issubclass(api.Table, api.FrameData) and issubclass(api.Microdata, api.FrameData)


def test_plugin_kind_and_data_kind_are_distinct_names(root: Path) -> None:
    assert api.Microdata.data_kind == "microdata" and api.Table.data_kind == "table"
    assert api.Trajectories.data_kind == "trajectories"
    assert not hasattr(api.Microdata, "kind")
    assert api.RiskMeasure.kind == "risk_measure"
    assert set(api.DATA_KINDS) == {"microdata", "table", "trajectories"}
    config = json.loads((root / "config.json").read_text())
    kinds = [k for k in config if k not in ("description", "report_sections", "hook_plugins")]
    assert kinds == list(api.PLUGIN_KINDS)


def test_a_context_creates_plugins_from_any_plugin_factory() -> None:
    # Context.registry is typed by a protocol of the contract (api.PluginFactory), not by the
    # registry module: anything with ``create(kind, name, params)`` will do
    made: list[tuple[str, str, Any]] = []

    class Factory:
        def create(self, kind: str, name: str, params: Any = None) -> api.Plugin:
            made.append((kind, name, params))
            return api.Plugin()

    factory = Factory()
    assert isinstance(factory, api.PluginFactory)
    plugin = api.Context(registry=factory).create("distance", {"name": "D", "params": {"a": 1}})
    assert isinstance(plugin, api.Plugin)
    assert made == [("distance", "D", {"a": 1})]
    assert not isinstance(object(), api.PluginFactory)
def test_context_path_resolves_once_relative_to_the_config(tmp_path, monkeypatch) -> None:
    # issue 23: a relative config folder joined twice gave examples/examples/data/...
    from anoneval.core.api import Context

    monkeypatch.chdir(tmp_path)
    ctx = Context(base_dir=Path("examples"))
    once = ctx.path("data/h.csv")
    assert once == tmp_path / "examples" / "data" / "h.csv"
    assert ctx.path(once) == once and ctx.path(str(once)) == once
    assert Context().path("h.csv") == tmp_path / "h.csv"
