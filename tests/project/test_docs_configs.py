"""Every config the README, the docs and examples/ show runs on the shipped data (exit 0).

A JSON block that is not a whole evaluation config is marked by an HTML comment
``<!-- fragment: why -->`` on the line before its opening fence.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from anoneval.core.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"(?P<before>[^\n]*)\n```json\n(?P<body>.*?)\n```", re.S)


def shown_configs() -> list[tuple[str, str]]:
    out = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group("before").strip().startswith("<!-- fragment"):
                continue
            line = text[: match.start("body")].count("\n") + 1
            out.append((f"{doc.name}:{line}", match.group("body")))
    for example in sorted((ROOT / "examples").glob("*.json")):
        out.append((f"examples/{example.name}", example.read_text(encoding="utf-8")))
    return out


CONFIGS = shown_configs()
#: Examples whose run on the shipped data another test checks more closely (validated, no
#: measure error, and their figures); not run twice.
RUN_ELSEWHERE = {
    "examples/arx_quality_adult.json":
        "plugins/generalization/test_generalization.py::test_example_runs_and_every_model_can_be_the_ru_loss_axis",
    "examples/risk_census.json":
        "plugins/reidentification/test_arx_risk.py::test_risk_census_example_runs",
}
#: Examples run on the first rows of their data folder: their measures' cost grows with the rows
#: (pairwise distances, attacks), which the check that the config runs does not need.
FIRST_ROWS = {"examples/synthetic_adult.json": ("synthetic_adult", 2000)}


def data_folder(tmp_path: Path, where: str) -> None:
    """``tmp_path/data``: the shipped example data, with the folder :data:`FIRST_ROWS` names
    for ``where`` cut to its first rows (each file read whole, so all of it must parse)."""
    if where not in FIRST_ROWS:
        (tmp_path / "data").symlink_to(ROOT / "examples" / "data")
        return
    folder, rows = FIRST_ROWS[where]
    for item in (ROOT / "examples" / "data").iterdir():
        if item.name != folder:
            (tmp_path / "data" / item.name).parent.mkdir(exist_ok=True)
            (tmp_path / "data" / item.name).symlink_to(item)
    (tmp_path / "data" / folder).mkdir()
    for file in (ROOT / "examples" / "data" / folder).glob("*.parquet"):
        pd.read_parquet(file).head(rows).to_parquet(tmp_path / "data" / folder / file.name)


def test_the_readme_and_examples_show_configs() -> None:
    names = [name for name, _ in CONFIGS]
    assert any(n.startswith("README.md:") for n in names)
    assert "examples/quickstart.json" in names
    for where, (folder, _) in FIRST_ROWS.items():
        assert where in names and list((ROOT / "examples" / "data" / folder).glob("*.parquet"))


def test_examples_run_elsewhere_are_run_there() -> None:
    for where, test in RUN_ELSEWHERE.items():
        module, name = test.split("::")
        source = (ROOT / "tests" / module).read_text(encoding="utf-8")
        body = source[source.index(f"def {name}("):].split("\ndef ")[0]
        assert Path(where).name in body and "load_config" in body, where


RUN_HERE = [(where, text) for where, text in CONFIGS if where not in RUN_ELSEWHERE]


@pytest.mark.parametrize(("where", "text"), RUN_HERE, ids=[name for name, _ in RUN_HERE])
def test_shown_config_runs(where: str, text: str, tmp_path: Path, capsys) -> None:
    raw = json.loads(text)  # a block that is not JSON fails here, naming where it is
    data_folder(tmp_path, where)  # paths as in examples/
    config = tmp_path / "config.json"
    config.write_text(json.dumps(raw), encoding="utf-8")
    if "measures" in raw:
        assert main(["validate", str(config)]) == 0, capsys.readouterr().err
        code = main(["run", str(config), "-q", "-o", str(tmp_path / "report.json")])
    else:  # the information architecture workflow
        code = main(["architecture", str(config), "--no-plots", "-q"])
    assert code == 0, f"{where}: {capsys.readouterr().err}"


EXAMPLES = sorted((ROOT / "examples").glob("*.json"))


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_shipped_example_validates_unchanged_from_another_folder(
        example: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    # issue 23: the shipped file itself, named by a relative path from elsewhere; validate
    # checks every path param (hierarchies, populations) relative to the config's folder
    monkeypatch.chdir(tmp_path)
    assert main(["validate", os.path.relpath(example)]) == 0, capsys.readouterr().err


def test_validate_names_a_missing_hierarchy(tmp_path: Path, capsys) -> None:
    raw = json.loads((ROOT / "examples" / "quickstart.json").read_text(encoding="utf-8"))
    (tmp_path / "data").symlink_to(ROOT / "examples" / "data")
    where = next(i for i, m in enumerate(raw["measures"])
                 if isinstance(m, dict) and "hierarchies" in m.get("params", {}))
    column = sorted(raw["measures"][where]["params"]["hierarchies"])[0]
    raw["measures"][where]["params"]["hierarchies"][column] = "data/no_such_hierarchy.csv"
    (tmp_path / "c.json").write_text(json.dumps(raw), encoding="utf-8")
    assert main(["validate", str(tmp_path / "c.json")]) != 0
    err = capsys.readouterr().err
    assert f"measures[{where}].params.hierarchies.{column}" in err
    assert "no_such_hierarchy.csv" in err


def test_validate_names_a_missing_population(tmp_path: Path, capsys) -> None:
    (tmp_path / "data").symlink_to(ROOT / "examples" / "data")
    raw = {"original": {"path": "data/adult/adult.csv"},
           "anonymized": {"path": "data/adult_variants/L2_k5.parquet"},
           "measures": [{"name": "DeltaPresence", "params": {
               "quasi_identifiers": ["sex"], "population": "nowhere/pop.csv"}}]}
    (tmp_path / "c.json").write_text(json.dumps(raw), encoding="utf-8")
    assert main(["validate", str(tmp_path / "c.json")]) != 0
    err = capsys.readouterr().err
    assert "measures[0].params.population" in err and "nowhere" in err


def test_arx_example_runs_from_the_repository_root(tmp_path: Path, monkeypatch, capsys) -> None:
    # issue 23: `anoneval run examples/arx_quality_adult.json` from the root failed 50 of 65
    monkeypatch.chdir(ROOT)
    out = tmp_path / "r.json"
    assert main(["run", "examples/arx_quality_adult.json", "-q", "-o", str(out)]) == 0, \
        capsys.readouterr().err
    report = json.loads(out.read_text(encoding="utf-8"))
    errors = [m for v in report["variants"] for m in v["measures"] if m.get("error")]
    assert report["variants"] and not errors, errors[:2]
