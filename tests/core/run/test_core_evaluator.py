"""The Python API: evaluate, evaluate_many, failures, determinism and report writing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from _toy_plugins import CountingPrepare, ShareBelowK

from anoneval.core import Evaluator, evaluate, evaluate_many
from anoneval.core.api import ConfigError
from anoneval.core.report.atomic import write_atomic

ORIG = pd.DataFrame({"a": [1, 1, 2, 3, 3, 3], "x": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]})
ANON = pd.DataFrame({"a": [1, 1, 2, 2, 3, 3], "x": [0.1, 1.1, 2.1, 2.9, 4.2, 5.0]})
QI = {"name": "ShareBelowK", "params": {"quasi_identifiers": ["a"], "k": 2}}


def test_evaluate_dataframes(toy_registry) -> None:
    report = evaluate(ORIG, ANON, [QI], registry=toy_registry)
    entry = report["ShareBelowK"]
    # ANON classes: {1: 2, 2: 2, 3: 2} -> nobody below k=2
    assert entry.value == 0.0 and entry.error is None
    assert entry.direction == "higher = riskier" and entry.kind == "risk_measure"
    assert entry.params == {"quasi_identifiers": ["a"], "k": 2}
    assert report.inputs["original"]["rows"] == 6


def test_failing_measure_does_not_stop_the_others(toy_registry) -> None:
    report = evaluate(ORIG, ANON, ["Boom", QI], registry=toy_registry)
    assert report["Boom"].error == "RuntimeError: kaput" and report["Boom"].value is None
    assert report["ShareBelowK"].value == 0.0
    assert not report.ok
    frame = report.to_frame()
    assert list(frame["label"]) == ["Boom", "ShareBelowK"]
    assert frame["error"].iloc[0] == "RuntimeError: kaput" and frame["error"].isna().iloc[1]


def test_measure_instances_and_kwargs(toy_registry) -> None:
    m = ShareBelowK(quasi_identifiers=["a"], k=3)
    # ORIG classes {1: 2, 2: 1, 3: 3}: rows in classes < 3 are 2 + 1 = 3 of 6
    assert evaluate(None, ORIG, [m], registry=toy_registry)["ShareBelowK"].value == 0.5


def test_bad_measure_spec_raises_config_error(toy_registry) -> None:
    with pytest.raises(ConfigError, match=r"measures\[0\].params.k"):
        evaluate(ORIG, ANON, [{"name": "ShareBelowK", "params": {"quasi_identifiers": ["a"],
                                                                  "k": "many"}}],
                 registry=toy_registry)


def test_missing_inputs_become_a_measure_error(toy_registry) -> None:
    report = evaluate(ORIG, None, ["CountingPrepare", "Analytic"], registry=toy_registry)
    assert "needs 'anonymized' data" in report["CountingPrepare"].error
    assert report["Analytic"].value == 0.5


def test_analytic_measure_needs_no_data(toy_registry) -> None:
    report = evaluate(None, None, [{"name": "Analytic", "params": {"value": 0.25}}],
                      registry=toy_registry)
    assert report["Analytic"].value == 0.25
    assert report.inputs == {"original": None, "anonymized": None}


def test_same_inputs_and_seed_give_the_same_report(toy_registry) -> None:
    def run(seed: int) -> dict:
        d = evaluate(ORIG, ANON, [QI, "Analytic"], seed=seed, registry=toy_registry).to_dict()
        for m in d["measures"]:
            m.pop("seconds")
        return d

    assert run(3) == run(3)
    assert run(3) != run(4)  # the Analytic toy draws from ctx.rng()


def test_evaluate_many_prepares_the_original_once(toy_registry) -> None:
    CountingPrepare.calls.clear()
    variants = {f"v{i}": ANON.iloc[: 6 - i] for i in range(4)}
    multi = evaluate_many(ORIG, variants, ["CountingPrepare", QI], registry=toy_registry)
    assert len(CountingPrepare.calls) == 1
    assert [r.variant for r in multi.variants] == ["v0", "v1", "v2", "v3"]
    assert [multi[f"v{i}"]["CountingPrepare"].value for i in range(4)] == [0, 1, 2, 3]
    frame = multi.to_frame()
    assert len(frame) == 8 and set(frame["variant"]) == set(variants)


def test_evaluator_reuses_original_side_arrays(toy_registry) -> None:
    ev = Evaluator(ORIG, [QI], registry=toy_registry)
    ev.evaluate(ANON)
    first = ev.original.group_ids(["a"])  # type: ignore[union-attr]
    ev.evaluate(ANON)
    assert ev.original.group_ids(["a"]) is first  # type: ignore[union-attr]


def test_json_is_strict_and_round_trips(toy_registry) -> None:
    report = evaluate(ORIG, ANON, [QI, "Boom"], registry=toy_registry)
    parsed = json.loads(report.to_json())
    assert [m["name"] for m in parsed["measures"]] == ["ShareBelowK", "Boom"]
    assert set(parsed["measures"][0]) >= {"name", "kind", "value", "details", "direction",
                                          "params", "seconds", "error"}
    assert parsed["inputs"]["anonymized"]["hash"].startswith("sha256:")


def test_write_atomic_keeps_the_old_file_when_writing_fails(tmp_path: Path,
                                                           monkeypatch) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # no temp file left
    monkeypatch.undo()
    write_atomic(target, "new")
    assert target.read_text() == "new"


def test_threshold_pass_and_fail(toy_registry) -> None:
    report = evaluate(ORIG, ORIG, [
        {"name": "ShareBelowK", "label": "k2", "params": {"quasi_identifiers": ["a"]},
         "threshold": {"max": 0.1}},
        {"name": "ShareBelowK", "label": "k3", "params": {"quasi_identifiers": ["a"], "k": 3},
         "threshold": {"max": 0.5}},
    ], registry=toy_registry)
    # ORIG classes {1: 2, 2: 1, 3: 3}: k=2 -> 1/6 > 0.1 fails; k=3 -> 3/6 <= 0.5 passes
    assert report["k2"].passed is False and report["k3"].passed is True


def test_atomic_writes_get_the_usual_permissions(tmp_path: Path) -> None:
    import pandas as pd

    from anoneval.core.report.atomic import write_bytes_atomic, write_frame_atomic

    mask = os.umask(0o022)
    try:
        write_atomic(tmp_path / "a.json", "{}")
        write_bytes_atomic(tmp_path / "b.png", b"\x89PNG")
        write_frame_atomic(pd.DataFrame({"x": [1]}), tmp_path / "c.csv")
    finally:
        os.umask(mask)
    for name in ("a.json", "b.png", "c.csv"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b.png").read_bytes() == b"\x89PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.png", "c.csv"]


def test_api_and_config_resolve_measures_alike(toy_registry, tmp_path: Path) -> None:
    from anoneval.core.run.config import validate_config

    bad = {"name": "Analytic", "threshold": {"mx": 1}}
    with pytest.raises(ConfigError) as api:
        evaluate(None, None, [bad], registry=toy_registry)
    with pytest.raises(ConfigError) as cfg:
        validate_config({"measures": [bad]}, tmp_path, toy_registry)
    expected = [("measures[0].threshold.mx",
                 "unknown key; did you mean 'max'? Allowed: max, min, on")]
    assert api.value.problems == expected
    assert cfg.value.problems == expected  # reported once, not by both checks
