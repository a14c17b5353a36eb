"""``anoneval sweep``: a config evaluated over a grid of one param."""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _toy_plugins import GammaParams, Shift, registry_with, toy_measure

from anoneval.core.api import (
    ConfigError,
    released,
)
from anoneval.core.cli.main import main
from anoneval.core.report.model import FRAME_COLUMNS
from anoneval.core.report.plots import sweep_figure
from anoneval.core.run import runner as runner_module
from anoneval.core.run.config import validate_config
from anoneval.plugins.workflows._sweep import (
    EVERY,
    param_text,
    parse_param,
    parse_values,
    run_point,
    set_param,
    sweep,
)

Gamma = toy_measure("Gamma", lambda p, o, a, ctx: p.gamma * len(released(o, a)),
                    doc="gamma times the row count of the released data (worked out by hand).",
                    module=__name__, inputs="either", params=GammaParams)
Draw = toy_measure("Draw", lambda p, o, a, ctx: ctx.rng().random(), module=__name__,
                   doc="One uniform draw from the evaluation seed's generator.", inputs="none")
MeanA = toy_measure("MeanA", lambda p, o, a, ctx: released(o, a).frame["a"].mean(),
                    doc="Mean of column a of the released data.", module=__name__,
                    inputs="either")


@pytest.fixture
def registry():
    return registry_with(Gamma, Draw, Shift, MeanA)


def config(tmp_path: Path, variants: bool = False) -> dict[str, Any]:
    pd.DataFrame({"a": range(12)}).to_csv(tmp_path / "orig.csv", index=False)
    pd.DataFrame({"a": range(10)}).to_csv(tmp_path / "anon.csv", index=False)
    raw: dict[str, Any] = {"original": {"path": "orig.csv"},
                           "measures": [{"name": "Gamma"}, {"name": "Draw"}]}
    raw["anonymized"] = ([{"name": "ten", "path": "anon.csv"},
                          {"name": "twelve", "path": "orig.csv"}] if variants
                         else {"path": "anon.csv"})
    return raw


# -- parsing -----------------------------------------------------------------------------------


def test_parse_values_grids_lists_and_json() -> None:
    assert parse_values("0:1:0.25") == [0.0, 0.25, 0.5, 0.75, 1.0]
    grid = parse_values("0:1:0.05")
    assert len(grid) == 21 and grid[3] == 0.15 and grid[-1] == 1.0  # stop included, no 0.1500…1
    assert parse_values("2:10:4") == [2, 6, 10] and all(type(v) is int for v in [2, 6, 10])
    assert parse_values("0:1:0.3") == [0.0, 0.3, 0.6, 0.9]  # stop off the grid: not included
    assert parse_values("1, 2.5,true,abc") == [1, 2.5, True, "abc"]
    assert parse_values('["x", {"a": 1}]') == ["x", {"a": 1}]


@pytest.mark.parametrize(("text", "message"), [
    ("0:1:0", "step must be > 0"),
    ("1:0:0.1", "stop 0 is below start 1"),
    ("a:1:0.1", "start, stop and step must be numbers"),
    ("0:1:1e-6", "1000001 grid points; at most 10000"),
    ("[1, 2", "invalid JSON array"),
    (" , ", "no values"),
])
def test_parse_values_rejects_bad_grids(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)) as err:
        parse_values(text)
    assert err.value.problems[0][0] == "--values"


def test_parse_param_accepts_measure_synthesizer_params_and_seed() -> None:
    assert parse_param("measures[0].params.gamma") == ["measures", 0, "params", "gamma"]
    assert parse_param("measures[2].params.distance.params.lam") == [
        "measures", 2, "params", "distance", "params", "lam"]
    assert parse_param("synthesizer.params.epsilon") == ["synthesizer", "params", "epsilon"]
    assert parse_param("seed") == ["seed"]
    assert parse_param("measures[*].params.gamma") == ["measures", EVERY, "params", "gamma"]
    assert param_text(parse_param("measures[*].params.a[2]")) == "measures[*].params.a[2]"
    for bad in ("original.path", "measures[0].k", "measures.0.params.k", "measures[x].params.k",
                "measures[0].params.", "", "measures.*.params.k", "synthesizer.params[*]",
                "measures[0].params.a[*]"):
        with pytest.raises(ConfigError, match="allowed: measures"):
            parse_param(bad)


def test_set_param_copies_and_creates_missing_objects() -> None:
    raw = {"measures": [{"name": "Gamma"}]}
    out = set_param(raw, ["measures", 0, "params", "gamma"], 0.2)
    assert out == {"measures": [{"name": "Gamma", "params": {"gamma": 0.2}}]}
    assert raw == {"measures": [{"name": "Gamma"}]}
    with pytest.raises(ConfigError, match=r"measures\[3\]: the config has 1 entries there"):
        set_param(raw, ["measures", 3, "params", "gamma"], 1)
    two = {"measures": [{"name": "A"}, {"name": "B", "params": {"gamma": 1, "k": 2}}]}
    assert set_param(two, ["measures", EVERY, "params", "gamma"], 0.3) == {"measures": [
        {"name": "A", "params": {"gamma": 0.3}},
        {"name": "B", "params": {"gamma": 0.3, "k": 2}}]}
    with pytest.raises(ConfigError, match=r"measures\[1\]\.params: not an object"):
        set_param({"measures": [{}, {"params": 3}]}, ["measures", EVERY, "params", "g"], 1)


# -- running -----------------------------------------------------------------------------------


def test_sweep_values_match_hand_computation_and_inputs_load_once(registry, tmp_path: Path,
                                                                  monkeypatch) -> None:
    loads: list[str] = []
    real = runner_module.load_input

    def counting(item: Any) -> Any:
        loads.append(item.given)
        return real(item)

    monkeypatch.setattr(runner_module, "load_input", counting)
    result = sweep(config(tmp_path), "measures[0].params.gamma", "0:1:0.25", base_dir=tmp_path,
                   registry=registry)
    assert sorted(loads) == ["anon.csv", "orig.csv"]  # once each for five grid values
    assert result.values == [0.0, 0.25, 0.5, 0.75, 1.0]
    # Gamma = gamma × 10 anonymized rows: 0, 2.5, 5, 7.5, 10
    assert [r.report["Gamma"].value for r in result.runs] == [0.0, 2.5, 5.0, 7.5, 10.0]
    assert [r.report["Gamma"].params["gamma"] for r in result.runs] == result.values
    frame = result.to_frame()
    assert list(frame.columns) == ["param_value", *FRAME_COLUMNS]
    assert frame[frame["label"] == "Gamma"]["value"].tolist() == [0.0, 2.5, 5.0, 7.5, 10.0]


def test_points_of_one_token_load_their_inputs_once_per_process(registry, tmp_path: Path,
                                                                monkeypatch) -> None:
    loads: list[str] = []
    real = runner_module.load_input

    def counting(item: Any, *lazy: bool) -> Any:
        loads.append(item.given)
        return real(item, *lazy)

    monkeypatch.setattr(runner_module, "load_input", counting)
    plan = validate_config(config(tmp_path), tmp_path, registry)
    first, again = run_point(plan, inputs="sweep-1"), run_point(plan, inputs="sweep-1")
    assert sorted(loads) == ["anon.csv", "orig.csv"]
    assert first.to_dict() | {"measures": None} == again.to_dict() | {"measures": None}
    assert [m.value for m in first.measures] == [m.value for m in again.measures]
    run_point(plan, inputs="sweep-2")  # another sweep's points load their own
    assert sorted(loads) == ["anon.csv", "anon.csv", "orig.csv", "orig.csv"]
    run_point(plan)  # no token: nothing kept
    assert len(loads) == 6


def test_sweep_over_the_seed(registry, tmp_path: Path) -> None:
    result = sweep(config(tmp_path), "seed", [0, 1, 2], base_dir=tmp_path, registry=registry)
    draws = [r.report["Draw"].value for r in result.runs]
    assert draws == [float(np.random.default_rng(s).random()) for s in (0, 1, 2)]


def test_a_value_outside_the_params_bounds_fails_before_anything_runs(registry,
                                                                      tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        sweep(config(tmp_path), "measures[0].params.gamma", [0.5, 1.5], base_dir=tmp_path,
              registry=registry)
    (path, msg), = err.value.problems
    assert path == "measures[0].params.gamma = 1.5: measures[0].params.gamma"
    assert "less than or equal to 1" in msg


def registry_file(tmp_path: Path) -> Path:
    here = Path(__file__).resolve()
    path = tmp_path / "registry.json"
    path.write_text(json.dumps({"risk_measure": {"Gamma": {"class": f"{here}:Gamma"},
                                                 "Draw": {"class": f"{here}:Draw"}}}))
    return path


def test_cli_sweep_writes_json_csv_png_and_html(tmp_path: Path, capsys) -> None:
    (tmp_path / "c.json").write_text(json.dumps(config(tmp_path, variants=True)))
    prefix = tmp_path / "out" / "gamma"
    code = main(["sweep", str(tmp_path / "c.json"), "--param", "measures[0].params.gamma",
                 "--values", "0:1:0.5", "-o", str(prefix), "--registry",
                 str(registry_file(tmp_path))])
    assert code == 0
    printed = capsys.readouterr().out
    assert "written:" in printed and "twelve" in printed
    saved = json.loads(prefix.with_suffix(".json").read_text())
    assert saved["param"] == "measures[0].params.gamma" and saved["values"] == [0.0, 0.5, 1.0]
    got = {(r["value"], v["variant"]): v["measures"][0]["value"]
           for r in saved["runs"] for v in r["report"]["variants"]}
    # gamma × rows: "ten" has 10 rows, "twelve" 12
    assert got == {(0.0, "ten"): 0.0, (0.0, "twelve"): 0.0, (0.5, "ten"): 5.0,
                   (0.5, "twelve"): 6.0, (1.0, "ten"): 10.0, (1.0, "twelve"): 12.0}
    csv = pd.read_csv(prefix.with_suffix(".csv"))
    assert list(csv.columns) == ["param_value", *FRAME_COLUMNS]
    gamma = csv[csv["label"] == "Gamma"]
    assert {(r.param_value, r.variant): r.value for r in gamma.itertuples()} == got
    png = prefix.with_suffix(".png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    page = prefix.with_suffix(".html").read_text()
    assert f"data:image/png;base64,{base64.b64encode(png).decode()}" in page
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert "<th>Gamma [twelve]</th>" in page


def test_cli_sweep_bad_arguments_exit_2_without_output(tmp_path: Path, capsys) -> None:
    (tmp_path / "c.json").write_text(json.dumps(config(tmp_path)))
    reg = str(registry_file(tmp_path))
    base = ["sweep", str(tmp_path / "c.json"), "--registry", reg, "-o", str(tmp_path / "s")]
    assert main([*base, "--param", "original.path", "--values", "1,2"]) == 2
    assert "allowed: measures[<i>].params.<name>" in capsys.readouterr().err
    assert main([*base, "--param", "measures[0].params.gamma", "--values", "1:0:1"]) == 2
    assert "--values: stop 0 is below start 1" in capsys.readouterr().err
    assert main([*base, "--param", "measures[0].params.gamma", "--values", "0,2"]) == 2
    assert "measures[0].params.gamma = 2: measures[0].params.gamma" in capsys.readouterr().err
    assert not list(tmp_path.glob("s.*"))


def test_a_measure_param_sweep_runs_that_measure_alone(registry, tmp_path: Path) -> None:
    raw = config(tmp_path)
    raw["measures"] = [{"name": "Draw"}, {"name": "Gamma", "label": "g"}]
    alone = sweep(raw, "measures[1].params.gamma", [0.1], base_dir=tmp_path, registry=registry)
    assert [m.label for m in alone.runs[0].report.measures] == ["g"]
    assert alone.runs[0].report["g"].value == pytest.approx(1.0)  # 0.1 × 10 rows
    both = sweep(raw, "measures[1].params.gamma", [0.1], base_dir=tmp_path, registry=registry,
                 all_measures=True)
    assert [m.label for m in both.runs[0].report.measures] == ["Draw", "g"]
    with pytest.raises(ConfigError) as err:
        sweep(raw, "measures[1].params.gamma", [-1], base_dir=tmp_path, registry=registry)
    assert err.value.problems[0][0] == "measures[1].params.gamma = -1: measures[1].params.gamma"
    with pytest.raises(ConfigError, match=r"measures\[5\]: the config has 2 measures"):
        sweep(raw, "measures[5].params.gamma", [0.1], base_dir=tmp_path, registry=registry)


def direct_leakage_bits(m: int, gamma: float) -> float:
    """I(C;C') of RAPPOR's direct representation, uniform prior, by hand: C' = C with
    probability γ, else each other category with (1−γ)/(m−1); I = H(C') − H(C'|C) =
    log2 m + γ log2 γ + (1−γ) log2((1−γ)/(m−1)), with 0·log 0 = 0."""
    stay = gamma * math.log2(gamma) if gamma > 0 else 0.0
    move = (1 - gamma) * math.log2((1 - gamma) / (m - 1)) if gamma < 1 else 0.0
    return math.log2(m) + stay + move


def test_rappor_figure_sweep_matches_the_leakage_formula(root: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "fig1"
    assert main(["sweep", str(root / "examples" / "rappor_sweep.json"), "--param",
                 "measures[*].params.gamma", "--values", "0:1:0.25", "--overlay", "-o",
                 str(prefix), "-q"]) == 0
    frame = pd.read_csv(prefix.with_suffix(".csv"))
    assert frame["error"].isna().all()
    assert len(frame) == 4 * 5  # m = 2..5 at five gammas
    for row in frame.itertuples():
        m = int(row.label.removeprefix("m="))
        assert row.value == pytest.approx(direct_leakage_bits(m, row.param_value), abs=1e-9)
    # m = 2, γ = 0.5: a fair coin, no leakage; γ = 1: the category itself, log2 m bits
    at = {(r.label, r.param_value): r.value for r in frame.itertuples()}
    assert at[("m=2", 0.5)] == pytest.approx(0.0, abs=1e-12)
    assert at[("m=5", 1.0)] == pytest.approx(math.log2(5))
    assert prefix.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"


def test_sweep_figure_panels_and_overlay() -> None:
    frame = pd.DataFrame({"param_value": [0, 1, 0, 1], "variant": [None] * 4,
                          "label": ["a", "a", "b", "b"], "value": [1.0, 2.0, 3.0, 5.0]})
    panels = [ax for ax in sweep_figure(frame, "p").axes if ax.axison]
    assert [ax.get_title() for ax in panels] == ["a", "b"]
    assert [len(ax.lines) for ax in panels] == [1, 1]
    (one,) = sweep_figure(frame, "p", overlay=True).axes
    assert [line.get_label() for line in one.lines] == ["a", "b"]
    assert one.lines[1].get_ydata().tolist() == [3.0, 5.0]


def test_sweep_over_a_synthesizer_param_regenerates_the_replica(registry, tmp_path: Path,
                                                                monkeypatch) -> None:
    loads: list[str] = []
    real = runner_module.load_input
    monkeypatch.setattr(runner_module, "load_input", lambda item: loads.append(item.given)
                        or real(item))
    raw = config(tmp_path)
    del raw["anonymized"]
    raw["synthesizer"] = {"name": "Shift"}
    raw["measures"] = [{"name": "MeanA"}]
    result = sweep(raw, "synthesizer.params.shift", [0, 2, -1.5], base_dir=tmp_path,
                   registry=registry)
    assert loads == ["orig.csv"]
    # mean of a = 0..11 is 5.5; the replica adds the shift
    assert [r.report["MeanA"].value for r in result.runs] == [5.5, 7.5, 4.0]
    assert [r.report.synthesizer["params"]["shift"] for r in result.runs] == [0, 2, -1.5]
