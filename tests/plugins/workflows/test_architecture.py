"""``anoneval architecture``: tasks 1-16, the six decision nodes, release and rejection."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _toy_plugins import NoColumns, ShiftedNormal

from anoneval.core.api import (
    ConfigError,
    DataError,
)
from anoneval.core.cli.main import main
from anoneval.core.report.plots import PlotDependencyError
from anoneval.plugins._shared.continuous import (
    normal_entropy,
)
from anoneval.plugins.workflows.architecture.run import run_architecture
from anoneval.registry import build_registry

ROOT = Path(__file__).resolve().parents[3]


def make() -> pd.DataFrame:
    """The example's deterministic mortgage-like data (examples/make_mortgage_like.py)."""
    spec = importlib.util.spec_from_file_location("make_mortgage_like",
                                                  ROOT / "examples" / "make_mortgage_like.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make()


@pytest.fixture
def registry():
    reg = build_registry(entry_points=False)
    reg.register(ShiftedNormal, source="tests")
    reg.register(NoColumns, source="tests")
    return reg


@pytest.fixture
def mortgage(tmp_path) -> Path:
    path = tmp_path / "mortgage.csv"
    make().to_csv(path, index=False)
    return path


def config(tmp_path: Path, data: Path, **changes) -> dict:
    cfg = {
        "data": str(data), "columns": ["loan", "income"], "transform": "log",
        "synthesizer": {"name": "MaxEntNormal", "params": {}},
        "energy_resamples": 99, "max_attempts": 3,
        "thresholds": {"moment_tolerance": 3.0},
        "output": {"released": str(tmp_path / "out" / "released.csv"),
                   "report": str(tmp_path / "out" / "report.json"), "plots": None},
    }
    cfg.update(changes)
    return cfg


def test_accepts_a_lognormal_sample_and_releases_it(tmp_path, mortgage, registry):
    cfg = config(tmp_path, mortgage)
    cfg["output"]["plots"] = str(tmp_path / "out" / "plots")
    report = run_architecture(cfg, registry=registry)
    assert report["status"] == "released" and report["failed_node"] is None
    released = pd.read_csv(tmp_path / "out" / "released.csv")
    assert list(released.columns) == ["loan", "income"] and len(released) == 400
    assert (released > 0).all().all()
    assert [t["task"] for t in report["tasks"]] == list(range(1, 17))
    assert [(n["node"], n["task"], n["passed"]) for n in report["nodes"]] == [
        (1, 7, True), (2, 9, True), (3, 11, True), (4, 12, True), (5, 14, True), (6, 16, True)]
    tasks = {t["task"]: t for t in report["tasks"]}
    # Task 2: the log transform; Task 8: MaxEntNormal's fitted normal ME model
    assert tasks[2]["figures"]["transforms"][0] == {"column": "loan", "transform": "log"}
    assert tasks[8]["figures"]["model"] == "normal"
    mean = tasks[8]["figures"]["parameters"]["mean"]
    x = np.log(pd.read_csv(mortgage)[["loan", "income"]].to_numpy())
    assert mean == pytest.approx(x.mean(axis=0).tolist(), rel=1e-12)
    # Table 1's figures: the grid entropy of f* (eq. 26) matches the normal closed form (31)
    h_model = tasks[9]["figures"]["divergences"]["joint"]["entropy_model"]
    assert h_model == pytest.approx(normal_entropy(np.cov(x, rowvar=False, ddof=0)), abs=5e-3)
    # Table 3's figures for both models: MI, M index, coin index
    info = tasks[16]["figures"]["information"]["actual_model"]
    rho = np.corrcoef(x, rowvar=False)[0, 1]
    assert info["m_index"] == pytest.approx(rho**2, rel=1e-9)
    assert info["coin_index"] == pytest.approx(0.5 * (1 + abs(rho)), rel=1e-9)
    # the report on disk is the returned one; the four figures are PNG files
    on_disk = json.loads((tmp_path / "out" / "report.json").read_text())
    assert on_disk["status"] == "released" and on_disk["nodes"] == report["nodes"]
    assert sorted(report["plots"]) == ["figure2_exploration", "figure3_replica",
                                       "figure4_cdfs", "figure5_contours"]
    for path in report["plots"].values():
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list((tmp_path / "out").glob(".*tmp"))


def test_rejects_a_wrong_model_at_node_2(tmp_path, mortgage, registry):
    # a normal model on the dollar scale of lognormal data: K(f̃ : f*) is large
    report = run_architecture(config(tmp_path, mortgage, transform="identity"),
                              registry=registry)
    assert report["status"] == "rejected" and report["released"] is None
    assert report["failed_node"]["node"] == 2 and report["failed_node"]["task"] == 9
    assert "K(f̃ : f*)" in report["message"] and "node 2" in report["message"]
    assert not (tmp_path / "out" / "released.csv").exists()
    assert [t["task"] for t in report["tasks"]] == list(range(1, 10))


def test_numbers_written_as_text_are_numbers(tmp_path, registry):
    # JSON lines holding some amounts as strings ("41839") read as one numeric column
    frame = make().astype(object)
    frame.loc[::3, "loan"] = frame.loc[::3, "loan"].map(str)
    frame.to_json(tmp_path / "mortgage.jsonl", orient="records", lines=True)
    report = run_architecture(config(tmp_path, tmp_path / "mortgage.jsonl",
                                     transform="identity"), registry=registry)
    assert report["failed_node"]["node"] == 2  # as test_rejects_a_wrong_model_at_node_2
    assert report["tasks"][0]["figures"]["rows"] == len(frame)
    assert any(w.startswith("data: column 'loan' mixes values of types int, str; read as "
                            "numbers (int64)") for w in report["warnings"])


def test_rejects_a_replica_drawn_from_a_wrong_model(tmp_path, mortgage, registry):
    cfg = config(tmp_path, mortgage, synthesizer={"name": "ShiftedNormal",
                                                  "params": {"shift": 0.6}}, seed=5)
    report = run_architecture(cfg, registry=registry)
    assert report["status"] == "rejected"
    assert report["failed_node"]["node"] == 3
    assert "energy-test p-value < 0.05" in report["failed_node"]["reason"]
    assert [a["seed"] for a in report["attempts"]] == [5, 6, 7]  # max_attempts regenerations
    assert all(a["nodes"][-1]["node"] == 3 for a in report["attempts"])
    assert not (tmp_path / "out" / "released.csv").exists()


def test_regenerates_until_a_replica_passes(tmp_path, mortgage, registry):
    cfg = config(tmp_path, mortgage, synthesizer={"name": "ShiftedNormal", "params": {
        "shift": 0.6, "good_from_seed": 1}})
    report = run_architecture(cfg, registry=registry)
    assert report["status"] == "released"
    assert [a["seed"] for a in report["attempts"]] == [0, 1]
    assert report["attempts"][0]["nodes"][-1] == {
        **report["attempts"][0]["nodes"][-1], "node": 3, "passed": False}


def test_a_copy_of_the_data_is_rejected_at_node_4(tmp_path, mortgage, registry):
    cfg = config(tmp_path, mortgage, synthesizer={"name": "ShiftedNormal",
                                                  "params": {"copy_rows": True}},
                 max_attempts=1)
    cfg["thresholds"]["close_pairs_epsilon"] = 0.002
    report = run_architecture(cfg, registry=registry)
    assert report["failed_node"]["node"] == 4
    assert "π_d" in report["failed_node"]["reason"]
    pi = next(t for t in report["tasks"] if t["task"] == 12)["figures"]["pi_d"]
    assert pi >= 1 / 400  # every row pairs with its own copy at distance 0
    assert not (tmp_path / "out" / "released.csv").exists()


def test_config_errors_name_the_path(tmp_path, mortgage, registry):
    bad = config(tmp_path, mortgage)
    bad["thresholds"]["energy_alpha"] = 2
    with pytest.raises(ConfigError, match=r"thresholds\.energy_alpha"):
        run_architecture(bad, registry=registry)
    dup = config(tmp_path, mortgage, synthesizer={"name": "MaxEntNormal",
                                                  "params": {"transform": "log"}})
    with pytest.raises(ConfigError, match=r"synthesizer\.params\.transform"):
        run_architecture(dup, registry=registry)
    other = config(tmp_path, mortgage, synthesizer={"name": "NoColumns", "params": {}})
    with pytest.raises(ConfigError, match="ME synthesizer"):
        run_architecture(other, registry=registry)
    negative = tmp_path / "negative.csv"
    pd.read_csv(mortgage).assign(loan=lambda f: f["loan"] - 50_000).to_csv(negative, index=False)
    with pytest.raises(DataError, match=r"column 'loan': log transform needs positive"):
        run_architecture(config(tmp_path, negative), registry=registry)
    typo = config(tmp_path, mortgage, synthesizer={"name": "MaxEntNormal",
                                                   "params": {"adjust_moment": True}})
    with pytest.raises(ConfigError, match=r"synthesizer\.params"):
        run_architecture(typo, registry=registry)


def test_missing_matplotlib_is_a_clear_error(tmp_path, mortgage, registry, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    cfg = config(tmp_path, mortgage)
    cfg["output"]["plots"] = str(tmp_path / "plots")
    with pytest.raises(PlotDependencyError, match=r"anoneval\[report\]"):
        run_architecture(cfg, registry=registry)
    assert not (tmp_path / "out").exists()  # nothing ran, nothing written


def test_cli_subcommand_exit_codes(tmp_path, mortgage, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(config(tmp_path, mortgage)))
    assert main(["architecture", str(good), "--no-plots"]) == 0
    assert "node 6 (task 16): pass" in capsys.readouterr().out
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(config(tmp_path, mortgage, transform="identity")))
    assert main(["architecture", str(wrong), "-q"]) == 1
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**config(tmp_path, mortgage), "max_attempts": 0}))
    assert main(["architecture", str(broken)]) == 2
    assert "max_attempts" in capsys.readouterr().err


def test_example_config_is_valid_and_module_import_is_cheap():
    from anoneval.plugins.workflows.architecture.config import load_architecture_config

    cfg, base = load_architecture_config(ROOT / "examples" / "architecture.json")
    assert (base / cfg.data).exists() and cfg.synthesizer.name == "MaxEntNormal"
    code = ("import sys; from anoneval.registry import build_registry; "
            "from anoneval.core.cli.main import build_cli; "
            "cli = build_cli(build_registry(entry_points=False)); "
            "print('matplotlib' in sys.modules, 'scipy.spatial' in sys.modules, "
            "'architecture' in cli.commands)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False", "True"]
