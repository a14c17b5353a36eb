"""The control dataset: config, Python API, report inputs, overlap warning."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from _toy_plugins import _ControlKinds, _ControlVandal

from anoneval.core import ConfigError, Evaluator, api, evaluate, evaluate_many
from anoneval.core.api import DataError
from anoneval.core.data.kinds import Microdata
from anoneval.core.run.config import load_config, validate_config
from anoneval.core.run.evaluator import control_overlap
from anoneval.core.run.runner import run_plan

DATA = Path(__file__).resolve().parents[2] / "data" / "synthetic"
LINK = {"name": "Linkability", "params": {"n_attacks": 100,
                                          "aux_cols": [["age", "job"], ["income", "region"]]}}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    for n in ("original", "released", "control"):
        shutil.copy(DATA / f"{n}.csv", tmp_path / f"{n}.csv")
    return tmp_path


def write(folder: Path, config: dict) -> Path:
    path = folder / "config.json"
    path.write_text(json.dumps(config))
    return path


def test_config_control_is_loaded_and_recorded(files: Path) -> None:
    plan = load_config(write(files, {
        "original": {"path": "original.csv"}, "anonymized": {"path": "released.csv"},
        "control": {"path": "control.csv", "options": {}}, "measures": [LINK, "TVDistance"]}))
    assert plan.control is not None and plan.control.path == files / "control.csv"
    assert plan.control.kind == "microdata"
    datasets: dict = {}
    report = run_plan(plan, datasets=datasets)
    assert report.ok
    control = report.inputs["control"]
    assert control["rows"] == 1000
    assert control["hash"] == Microdata(pd.read_csv(files / "control.csv")).content_hash()
    assert "control" in datasets


def test_config_without_control_names_the_measure(files: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write(files, {
            "original": {"path": "original.csv"}, "anonymized": {"path": "released.csv"},
            "measures": ["TVDistance", LINK]}))
    assert "measures[1]: Linkability needs the 'control' data" in str(err.value)
    assert "measures[0]" not in str(err.value)


def test_config_control_file_problems_have_paths(files: Path) -> None:
    with pytest.raises(ConfigError) as err:
        validate_config({"original": {"path": "original.csv"},
                         "anonymized": {"path": "released.csv"},
                         "control": {"path": "nope.csv", "options": {"bogus": 1}},
                         "measures": [LINK]}, files)
    text = str(err.value)
    assert "control.path: file not found" in text
    assert "control.options.bogus" in text


def test_many_variants_share_the_control(files: Path) -> None:
    ori, syn, ctl = (pd.read_csv(files / f"{n}.csv") for n in ("original", "released",
                                                               "control"))
    many = evaluate_many(ori, {"a": syn, "b": ctl.iloc[:500]}, [LINK, "TVDistance"],
                         control=ctl)
    assert many.inputs["control"]["rows"] == 1000
    for r in many.variants:
        assert r.inputs["control"]["rows"] == 1000
    from anoneval.core.report.html import _inputs

    assert [role for role, _ in _inputs(many)["rows"]] == ["original", "control", "variant a",
                                                           "variant b"]
    assert "control" in [role for role, _ in _inputs(many.variants[0])["rows"]]
    assert many.variants[0]["Linkability"].value > many.variants[1]["Linkability"].value


def test_evaluator_api_and_no_control_for_plain_measures(files: Path) -> None:
    ori, syn, ctl = (pd.read_csv(files / f"{n}.csv") for n in ("original", "released",
                                                               "control"))
    ev = Evaluator(ori, [LINK], control=ctl, seed=1)
    assert ev.evaluate(syn)["Linkability"].value == \
        evaluate(ori, syn, [LINK], control=ctl, seed=1)["Linkability"].value
    report = evaluate(ori, syn, ["TVDistance"])
    assert "control" not in report.inputs
    with pytest.raises(ConfigError, match=r"measures\[0\]: Linkability needs the control"):
        Evaluator(ori, [LINK])


def test_overlap_counts_identical_rows() -> None:
    ori = Microdata(pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}))
    ctl = Microdata(pd.DataFrame({"b": ["y", "y", "q", "z"], "a": [2, 2, 1, 3]}))
    assert control_overlap(ori, ctl) == 3  # column order does not matter
    report = evaluate(ori, ori, [{"name": "SinglingOut", "params": {"mode": "univariate"}}],
                      control=ctl)
    assert any(w.startswith("3 of 4 control records equal a record of the original")
               for w in report.measures[0].warnings)
    report = evaluate(ori, ori, ["TVDistance"], control=ctl)
    assert not any("control" in w for w in report.measures[0].warnings)


def test_example_config_validates() -> None:
    root = Path(__file__).resolve().parents[3]
    plan = load_config(root / "examples" / "synthetic_adult.json")
    assert plan.control is not None and plan.control.path.is_file()
    assert [v.name for v in plan.anonymized] == ["gaussian_copula", "maxent"]
    assert all(v.path.is_file() for v in plan.anonymized)


def test_attack_rates_section_in_the_html_report() -> None:
    pytest.importorskip("matplotlib")
    from anoneval.core.report.html import plugin_fragments
    from anoneval.registry import build_registry

    registry = build_registry(entry_points=False)
    registry.load_report_sections()
    assert registry.pm.has_plugin("anoneval.plugins.attacks._report")
    rate = {"value": 0.3, "error": 0.05}
    entry = {"name": "Linkability", "label": "Linkability", "value": 0.2, "error": None,
             "details": {"attack_rate": rate, "control_rate": rate, "baseline_rate": rate,
                         "risk_ci": [0.1, 0.3], "n_attacks": 100, "confidence_level": 0.95}}
    fragments = plugin_fragments(registry, entry, {})
    assert all(f["error"] is None for f in fragments)
    html = "".join(f["html"] for f in fragments)
    assert "attack success rates" in html and "data:image/png;base64," in html
    assert plugin_fragments(registry, {**entry, "details": {}}, {}) == []


def test_the_control_set_is_read_only_for_plugins() -> None:
    from anoneval.registry import build_registry

    registry = build_registry(entry_points=False)
    registry.register(_ControlVandal, source="tests")
    ori = pd.DataFrame({"a": [1, 2, 3]})
    ctl = Microdata(pd.DataFrame({"a": [4, 5, 6]}))
    report = evaluate(ori, ori, ["ControlVandal", {"name": "ControlVandal", "label": "again"}],
                      control=ctl,
                      registry=registry)
    assert [m.error for m in report.measures] == [None, None]
    assert [m.value for m in report.measures] == [-100 + 11, -100 + 11]  # each saw a fresh view
    assert ctl.frame["a"].tolist() == [4, 5, 6]
    assert "ControlUse" in api.__all__


def test_no_output_may_overwrite_the_control_set(files: Path, capsys) -> None:
    from anoneval.core.cli.main import main

    before = (files / "control.csv").read_bytes()
    cfg = write(files, {"original": {"path": "original.csv"},
                        "anonymized": {"path": "released.csv"},
                        "control": {"path": "control.csv"}, "measures": ["TVDistance"],
                        "output": "control.csv"})
    assert main(["run", str(cfg), "-q"]) == 2
    assert "control.path" in capsys.readouterr().err
    assert (files / "control.csv").read_bytes() == before


def test_an_empty_control_set_is_an_error() -> None:
    ori = pd.read_csv(DATA / "original.csv")
    with pytest.raises(DataError, match=r"control.*no records"):
        Evaluator(ori, ["TVDistance"], control=ori.iloc[:0])


def test_the_control_set_takes_the_original_options(files: Path) -> None:
    (files / "original.tsv").write_text((files / "original.csv").read_text().replace(",", "\t"))
    (files / "control.tsv").write_text((files / "control.csv").read_text().replace(",", "\t"))
    plan = load_config(write(files, {
        "original": {"path": "original.tsv", "format": "csv", "options": {"sep": "\t"}},
        "anonymized": {"path": "released.csv", "options": {"sep": ","}},
        "control": {"path": "control.tsv", "format": "csv"}, "measures": [LINK]}))
    assert plan.control is not None and plan.control.options.sep == "\t"
    report = run_plan(plan)
    assert report.ok and report.inputs["control"]["rows"] == 1000


def test_worker_processes_get_the_control_set(files: Path) -> None:
    ori, syn, ctl = (pd.read_csv(files / f"{n}.csv") for n in ("original", "released",
                                                               "control"))
    variants = {"a": syn, "b": ctl.iloc[:500]}
    serial = evaluate_many(ori, variants, [LINK], control=ctl, seed=3)
    parallel = evaluate_many(ori, variants, [LINK], control=ctl, seed=3,
                             engine={"name": "local", "workers": 2})
    assert parallel.engine["workers"] == 2
    for s, p in zip(serial.variants, parallel.variants, strict=True):
        assert p.inputs["control"] == s.inputs["control"]
        assert p["Linkability"].details == s["Linkability"].details


def test_the_control_set_is_read_with_the_original_dtypes(tmp_path: Path) -> None:
    from anoneval.registry import build_registry

    registry = build_registry(entry_points=False)
    registry.register(_ControlKinds, source="tests")
    ori = pd.DataFrame({"age": [39, 40], "job": ["a", "b"]})
    (tmp_path / "c.jsonl").write_text('{"age": "39", "job": "a"}\n{"age": "41", "job": 7}\n')
    ctl = api.load(tmp_path / "c.jsonl")
    report = evaluate(ori, ori, ["ControlKinds"], control=ctl, registry=registry)
    entry = report["ControlKinds"]
    assert entry.details["control"] == {"age": ["int64", [39, 41]], "job": ["object", ["a", "7"]]}
    assert entry.details["original"]["age"] == ["int64", [39, 40]]
    assert entry.warnings[:2] == [
        "control: column 'job' mixes values of types int, str; read as text, numbers as "
        'written (39 → "39")',
        "column 'age' holds number values in the original and text in the control data: the "
        "control side was read as the original's (int64)"]
    assert entry.warnings[2].startswith("1 of 2 control records equal a record of the original")
    assert report.inputs["control"]["hash"] == ctl.content_hash()  # hashed as given
    # a column the anonymized side makes text is text in the control set too
    anon = pd.DataFrame({"age": ["30-39", "40-49"], "job": ["a", "b"]})
    entry = evaluate(ori, anon, ["ControlKinds"], control=ctl, registry=registry)["ControlKinds"]
    assert entry.details["original"]["age"] == ["object", ["39", "40"]]
    assert entry.details["control"]["age"] == ["object", ["39", "41"]]
    assert any("'age' holds text values in the original and number in the control" in w
               for w in entry.warnings)
    many = evaluate_many(ori, {"v": anon}, ["ControlKinds"], control=ctl, registry=registry)
    assert many.variants[0]["ControlKinds"].details == entry.details
