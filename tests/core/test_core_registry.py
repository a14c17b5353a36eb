"""Registry: built-ins by name, entry points, user files, duplicates, unknown and broken plugins."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from _toy_plugins import TOYS, LifecycleRecorder, ShareBelowK

from anoneval.core import evaluate
from anoneval.core.api import PLUGIN_KINDS, PluginError, RiskMeasure, UnknownPluginError
from anoneval.core.data.parampaths import path_fields
from anoneval.registry import BUILTIN_CONFIG, build_registry, import_class


def test_builtins_come_from_config_json(root: Path) -> None:
    config = json.loads((root / "config.json").read_text())
    registry = build_registry(entry_points=False)
    for kind in PLUGIN_KINDS:
        assert registry.names(kind) == sorted(config[kind])
    assert BUILTIN_CONFIG.resolve() == (root / "config.json").resolve()


def test_every_builtin_imports_and_declares_its_name_and_kind() -> None:
    registry = build_registry(entry_points=False)
    for entry in registry.entries():
        cls = entry.load()  # checks name, kind and description
        assert cls.name == entry.name and cls.kind == entry.kind
        assert cls.description and "\n" not in cls.description
        for fname, field in cls.Params.model_fields.items():
            assert field.description, f"{entry.name}.Params.{fname} has no description"
        assert cls.Params.model_config.get("extra") == "forbid"


def test_duplicate_name_names_both_sources(tmp_path: Path) -> None:
    user = tmp_path / "mine.json"
    user.write_text(json.dumps({"loss_measure": {"DM": {"class": "x.y.DM"}}}))
    with pytest.raises(PluginError) as err:
        build_registry(entry_points=False, user_file=user)
    msg = str(err.value)
    assert "duplicate loss_measure name 'DM'" in msg
    assert "anoneval (built-in)" in msg and str(user) in msg


def test_duplicate_registered_class() -> None:
    registry = build_registry(builtins=False, entry_points=False)
    registry.register(ShareBelowK, source="first")
    with pytest.raises(PluginError, match="registered by first and by second"):
        registry.register(ShareBelowK, source="second")


def test_same_name_in_two_kinds_is_allowed(toy_registry) -> None:
    class Boom2(RiskMeasure):
        name = "Boom"
        description = "A risk measure sharing a loss measure's name."

    toy_registry.register(Boom2)
    assert toy_registry.kinds_of("Boom") == ["risk_measure", "loss_measure"]


def test_unknown_name_has_kind_known_names_suggestion_and_hint() -> None:
    registry = build_registry(entry_points=False)
    with pytest.raises(UnknownPluginError) as err:
        registry.get("risk_measure", "KAnonimity")
    msg = str(err.value)
    assert "unknown risk_measure 'KAnonimity'" in msg
    assert "Did you mean 'KAnonymity'" in msg
    assert "LDiversity" in msg  # known names are listed
    assert "may not be installed" in msg


def test_unknown_name_is_a_key_error() -> None:
    registry = build_registry(entry_points=False)
    with pytest.raises(KeyError):
        registry.get("distance", "nope")


def _fake_distribution(site: Path, dist: str, module: str, value: str) -> None:
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[anoneval]\n{module} = {value}\n")


def _plugin_package(site: Path, dist: str, module: str, source: str) -> None:
    """An installed distribution ``dist`` whose entry point is module ``module``."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    _fake_distribution(site, dist, module.split("_")[0], module)


def _risk_measure_package(site: Path, dist: str, module: str, cls: str, base: str) -> None:
    """A package whose ``risk_measure`` hook registers class ``cls``, a subclass of ``base``."""
    _plugin_package(site, dist, module, f"""
        from anoneval.core.api import hookimpl, {base}

        class {cls}({base}):
            name = "{cls}"
            description = "A third-party {base}."

        @hookimpl
        def risk_measure(register):
            register({cls})
    """)


@pytest.mark.entry_points
def test_broken_entry_point_is_reported_and_others_still_load(tmp_path: Path,
                                                              monkeypatch) -> None:
    site = tmp_path / "site"
    _fake_distribution(site, "broken-plugin", "broken", "no_such_module_xyz")
    _risk_measure_package(site, "good-plugin", "good_toy_plugin", "GoodToy", "RiskMeasure")
    monkeypatch.syspath_prepend(str(site))
    registry = build_registry()
    assert any("'broken-plugin'" in e and "no_such_module_xyz" in e
               for e in registry.load_errors)
    assert "GoodToy" in registry.names("risk_measure")
    assert registry.entry("risk_measure", "GoodToy").distribution == "good-plugin"
    assert "KAnonymity" in registry.names("risk_measure")
    with pytest.raises(UnknownPluginError, match="broken-plugin"):
        registry.get("risk_measure", "Missing")


@pytest.mark.entry_points
def test_entry_point_registering_a_wrong_kind_is_reported(tmp_path: Path, monkeypatch) -> None:
    site = tmp_path / "site"
    # a loss measure registered as a risk measure
    _risk_measure_package(site, "wrong-plugin", "wrong_kind_plugin", "Wrong", "LossMeasure")
    monkeypatch.syspath_prepend(str(site))
    registry = build_registry()
    assert any("wrong-plugin" in e and "declares kind 'loss_measure'" in e
               for e in registry.load_errors)
    assert "Wrong" not in registry.names("risk_measure")


@pytest.mark.entry_points
def test_misspelt_hookimpl_fails_loudly(tmp_path: Path, monkeypatch) -> None:
    site = tmp_path / "site"
    _plugin_package(site, "typo-plugin", "typo_plugin", """
        from anoneval.core.api import hookimpl

        @hookimpl
        def risk_measures(register):
            pass
    """)
    monkeypatch.syspath_prepend(str(site))
    registry = build_registry()
    assert any("typo-plugin" in e and "risk_measures" in e for e in registry.load_errors)


@pytest.mark.entry_points
def test_load_plugins_allow_list(tmp_path: Path, monkeypatch) -> None:
    site = tmp_path / "site"
    for dist, module in (("one-plugin", "one_toy_plugin"), ("two-plugin", "two_toy_plugin")):
        cls = module.split("_")[0].title() + "Toy"
        _plugin_package(site, dist, module, f"""
            from anoneval.core.api import hookimpl, RiskMeasure

            class {cls}(RiskMeasure):
                name = "{cls}"
                description = "A third-party measure."

            @hookimpl
            def risk_measure(register):
                register({cls})
        """)
    monkeypatch.syspath_prepend(str(site))
    assert {"OneToy", "TwoToy"} <= set(build_registry().names("risk_measure"))
    monkeypatch.setenv("ANONEVAL_LOAD_PLUGINS", "two-plugin")
    names = build_registry().names("risk_measure")
    assert "TwoToy" in names and "OneToy" not in names
    monkeypatch.setenv("ANONEVAL_LOAD_PLUGINS", "")
    names = build_registry().names("risk_measure")
    assert "OneToy" not in names and "TwoToy" not in names and "KAnonymity" in names


def test_user_registry_file_with_a_local_class(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "my_measures.py").write_text(textwrap.dedent("""
        from anoneval.core.api import MeasureResult, RiskMeasure

        class Constant(RiskMeasure):
            name = "Constant"
            description = "Always 0.25."
            inputs = "none"

            def compute(self, original, anonymized, ctx):
                return MeasureResult(value=0.25)
    """))
    reg_file = tmp_path / "registry.json"
    reg_file.write_text(json.dumps(
        {"risk_measure": {"Constant": {"class": "my_measures.py:Constant"}}}))
    monkeypatch.setenv("ANONEVAL_REGISTRY", str(reg_file))
    from anoneval.registry import default_registry

    registry = default_registry()
    assert registry.entry("risk_measure", "Constant").source == f"registry file {reg_file}"
    report = evaluate(None, None, ["Constant"])
    assert report["Constant"].value == 0.25


def test_class_whose_name_differs_from_its_key_is_rejected(tmp_path: Path) -> None:
    reg_file = tmp_path / "r.json"
    reg_file.write_text(json.dumps(
        {"risk_measure": {"Other": {"class": "_toy_plugins.ShareBelowK"}}}))
    registry = build_registry(builtins=False, entry_points=False, user_file=reg_file)
    with pytest.raises(PluginError, match="declares name = 'ShareBelowK'"):
        registry.get("risk_measure", "Other")


def test_class_of_the_wrong_base_is_rejected(tmp_path: Path) -> None:
    reg_file = tmp_path / "r.json"
    reg_file.write_text(json.dumps(
        {"distance": {"ShareBelowK": {"class": "_toy_plugins:ShareBelowK"}}}))
    registry = build_registry(builtins=False, entry_points=False, user_file=reg_file)
    expected = re.escape("not a subclass of anoneval.core.api.Distance")
    with pytest.raises(PluginError, match=expected):
        registry.get("distance", "ShareBelowK")


@pytest.mark.parametrize("path, message", [
    ("nodots", "must look like"),
    ("no_such_pkg_xyz.Thing", "cannot import 'no_such_pkg_xyz'"),
    ("_toy_plugins.Nope", "has no attribute 'Nope'"),
    ("missing_file.py:Thing", "not found"),
])
def test_import_class_errors(path: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(PluginError, match=message):
        import_class(path, tmp_path)


def test_lifecycle_hooks_run_around_every_measure(toy_registry) -> None:
    recorder = LifecycleRecorder()
    toy_registry.pm.register(recorder)
    import pandas as pd

    df = pd.DataFrame({"a": [1, 1, 2]})
    report = evaluate(df, df, [{"name": "ShareBelowK", "params": {"quasi_identifiers": ["a"]}},
                               "Boom"], registry=toy_registry)
    assert recorder.events == [("before", "ShareBelowK"), ("after", "ShareBelowK"),
                               ("before", "Boom"), ("after", "Boom")]
    assert all(m.seconds >= 0 for m in report.measures)


def test_toys_cover_every_kind_used_by_the_tests() -> None:
    assert {cls.kind for cls in TOYS} == {"risk_measure", "loss_measure", "distance"}


def test_config_json_is_the_one_list_of_built_in_modules(root) -> None:
    import json as _json

    from anoneval.core.run.preload import MODULES
    from anoneval.registry import BUILTIN_HOOK_PLUGINS, build_registry

    listed = _json.loads((root / "config.json").read_text(encoding="utf-8"))["hook_plugins"]
    assert listed and listed == BUILTIN_HOOK_PLUGINS
    # the local engine preloads the modules config.json names, no other plugin module
    assert [m for m in MODULES if m.startswith("anoneval.plugins.")] == [
        path.partition(":")[0] for path in listed.values()]
    reg = build_registry(entry_points=False)
    for name in listed:
        assert reg.pm.has_plugin(name)
def test_every_builtin_file_param_is_a_param_path() -> None:
    # issue 23: a file param typed ParamPath is checked by validate, refused as an output and
    # resolved once (Context.path); a plain str for a file would escape all three
    registry = build_registry(entry_points=False)
    found = set()
    for entry in registry.entries():
        cls = entry.load()
        typed = set(path_fields(cls.Params))
        for fname, field in cls.Params.model_fields.items():
            text = f"{fname} {field.description}".lower()
            looks_like_file = any(w in text for w in ("path", " file", "csv"))
            if looks_like_file and fname not in {"paths"}:
                assert fname in typed, f"{entry.name}.Params.{fname} names a file: type it " \
                                       "ParamPath"
            if fname in typed:
                found.add(fname)
    assert {"hierarchies", "population"} <= found
