"""No output of a run may overwrite an input, the config or another output of the same run.

Every case is refused before anything runs (exit 2, a config error naming both paths) and
leaves every file as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pandas as pd
import pytest
from _toy_plugins import TOYS

from anoneval.core.cli.main import main
from anoneval.core.errors import ConfigError
from anoneval.core.run.config import validate_config
from anoneval.core.run.runner import run_plan

QI = {"name": "ShareBelowK", "params": {"quasi_identifiers": ["a"]}}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    df = pd.DataFrame({"a": [1, 1, 2, 3, 3, 3], "x": [0.0, 1, 2, 3, 4, 5]})
    df.to_csv(tmp_path / "orig.csv", index=False)
    df.to_csv(tmp_path / "anon.csv", index=False)
    kinds: dict[str, dict] = {}
    for cls in TOYS:
        kinds.setdefault(cls.kind, {})[cls.name] = {"class": f"_toy_plugins.{cls.__name__}"}
    (tmp_path / "toys.json").write_text(json.dumps(kinds))
    monkeypatch.setenv("ANONEVAL_REGISTRY", str(tmp_path / "toys.json"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_config(folder: Path, **extra) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cfg = {"original": {"path": "orig.csv"}, "anonymized": {"path": "anon.csv"},
           "measures": [QI], **extra}
    path = folder / "config.json"
    path.write_text(json.dumps(cfg))
    return path


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(args: list[str], capsys: pytest.CaptureFixture[str], folder: Path,
            *names: str) -> str:
    """Run the CLI; assert exit 2, no file touched or added, and every path named."""
    before = digests(folder)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert digests(folder) == before
    assert "invalid configuration" in err
    for name in names:
        assert name in err, err
    return err


def test_report_and_html_on_the_same_path(workdir: Path, capsys) -> None:
    cfg = write_config(workdir)
    err = refused(["run", str(cfg), "-o", "out.x", "--html", "out.x"], capsys, workdir,
                  "report (-o)", "HTML report (--html)")
    assert err.count("out.x") >= 2


@pytest.mark.parametrize("flag", ["-o", "--html"])
def test_an_output_on_an_input(workdir: Path, capsys, flag: str) -> None:
    cfg = write_config(workdir)
    refused(["run", str(cfg), flag, "orig.csv"], capsys, workdir, "orig.csv",
            "original.path")
    refused(["run", str(cfg), flag, str(cfg)], capsys, workdir, "config")


def test_config_output_on_its_own_config_or_an_input(workdir: Path, capsys) -> None:
    cfg = write_config(workdir, output="config.json")
    refused(["run", str(cfg)], capsys, workdir, "output", "config")
    refused(["validate", str(cfg)], capsys, workdir, "output", "config")
    cfg = write_config(workdir, output="anon.csv")
    refused(["run", str(cfg)], capsys, workdir, "anonymized.path")


def test_paths_are_compared_after_resolving(workdir: Path, capsys) -> None:
    # the config's paths are relative to its folder, -o to the working directory
    cfg = write_config(workdir / "sub", original={"path": "../orig.csv"},
                       anonymized={"path": "../anon.csv"})
    refused(["run", str(cfg), "-o", "sub/../orig.csv"], capsys, workdir, "original.path")
    refused(["run", str(cfg), "-o", "./anon.csv"], capsys, workdir, "anonymized.path")
    os.symlink(workdir / "orig.csv", workdir / "link.json")
    refused(["run", str(cfg), "-o", "link.json"], capsys, workdir, "link.json", "orig.csv")
    os.link(workdir / "anon.csv", workdir / "hard.json")
    refused(["run", str(cfg), "-o", "hard.json"], capsys, workdir, "hard.json")
    cfg2 = write_config(workdir / "sub", original={"path": "../orig.csv"},
                        anonymized={"path": "../anon.csv"}, output="../orig.csv")
    refused(["run", str(cfg2)], capsys, workdir, "output")


def test_variants_and_synthesizer_output(workdir: Path, capsys, toy_registry) -> None:
    cfg = write_config(workdir, anonymized=[{"name": "v1", "path": "anon.csv"}],
                       output="report.json")
    refused(["run", str(cfg), "--html", "anon.csv"], capsys, workdir, "variant 'v1'")
    raw = {"original": {"path": "orig.csv"}, "measures": [QI],
           "synthesizer": {"name": "GaussianCopula", "output": "orig.csv"}}
    plan = validate_config(raw, workdir, toy_registry)
    before = digests(workdir)
    with pytest.raises(ConfigError, match=r"synthesizer\.output.*orig\.csv"):
        run_plan(plan)
    assert digests(workdir) == before
    (workdir / "synth.json").write_text(json.dumps(raw))
    refused(["run", "synth.json"], capsys, workdir, "synthesizer.output", "original.path")
    raw["synthesizer"]["output"] = "made.csv"
    (workdir / "synth.json").write_text(json.dumps(raw))
    refused(["run", "synth.json", "-o", "made.csv"], capsys, workdir, "synthesizer.output",
            "report (-o)")


def test_a_sweep_output_on_an_input(workdir: Path, capsys) -> None:
    cfg = write_config(workdir)
    # PREFIX.csv would be the original
    refused(["sweep", str(cfg), "--param", "seed", "--values", "1,2", "-o", "orig",
             "--plot", "none"], capsys, workdir, "orig.csv", "original.path")
    (workdir / "c.json").write_text(cfg.read_text())
    refused(["sweep", "c.json", "--param", "seed", "--values", "1,2", "-o", "c",
             "--plot", "none"], capsys, workdir, "c.json", "config")


def test_outputs_elsewhere_still_run(workdir: Path) -> None:
    cfg = write_config(workdir)
    assert main(["run", str(cfg), "-q", "-o", "r.json"]) == 0
    assert json.loads((workdir / "r.json").read_text())["measures"][0]["value"] > 0


# issue 23: every file the run reads is an input, not only the data paths; every output must
# be a regular file or a new path


def hierarchy_config(folder: Path) -> Path:
    """A config whose measure reads a hierarchy and a population file."""
    (folder / "h_a.csv").write_text("1;*\n2;*\n3;*\n")
    pd.DataFrame({"a": [1, 1, 2, 2, 3, 3, 3]}).to_csv(folder / "pop.csv", index=False)
    cfg = {"original": {"path": "orig.csv"}, "anonymized": {"path": "anon.csv"},
           "measures": [{"name": "DeltaPresence", "params": {
               "quasi_identifiers": ["a"], "hierarchies": {"a": "h_a.csv"},
               "population": "pop.csv"}}]}
    path = folder / "hier.json"
    path.write_text(json.dumps(cfg))
    return path


@pytest.mark.parametrize("flag", ["-o", "--html"])
def test_an_output_on_a_param_file(workdir: Path, capsys, flag: str) -> None:
    cfg = hierarchy_config(workdir)
    assert main(["run", str(cfg), "-q", "-o", "ok.json"]) == 0, capsys.readouterr().err
    (workdir / "ok.json").unlink()
    refused(["run", str(cfg), flag, "h_a.csv"], capsys, workdir, "h_a.csv",
            "params.hierarchies.a")
    refused(["run", str(cfg), flag, "pop.csv"], capsys, workdir, "pop.csv",
            "params.population")
    refused(["sweep", str(cfg), "--param", "seed", "--values", "1,2", "-o", "pop",
             "--plot", "none"], capsys, workdir, "pop.csv", "params.population")
    raw = json.loads(cfg.read_text())
    raw["output"] = "h_a.csv"
    cfg.write_text(json.dumps(raw))
    refused(["validate", str(cfg)], capsys, workdir, "h_a.csv", "params.hierarchies.a")


def test_an_output_on_a_registry_file_or_plugin_source(workdir: Path, capsys) -> None:
    cfg = write_config(workdir)
    refused(["run", str(cfg), "--html", "toys.json"], capsys, workdir, "toys.json",
            "registry file")
    (workdir / "myplug.py").write_text(
        "from _toy_plugins import ShareBelowK\n\n\nclass Mine(ShareBelowK):\n"
        "    name = 'Mine'\n")
    (workdir / "reg.json").write_text(json.dumps(
        {"risk_measure": {"Mine": {"class": "myplug.py:Mine"}}}))
    raw = json.loads(cfg.read_text())
    raw["measures"] = [{"name": "Mine", "params": {"quasi_identifiers": ["a"]}}]
    (workdir / "mine.json").write_text(json.dumps(raw))
    args = ["run", "mine.json", "--registry", "reg.json"]
    assert main([*args, "-q", "-o", "r.json"]) == 0, capsys.readouterr().err
    (workdir / "r.json").unlink()
    refused([*args, "-o", "reg.json"], capsys, workdir, "reg.json", "registry file")
    refused([*args, "--html", "myplug.py"], capsys, workdir, "myplug.py", "source of")
    import _toy_plugins

    refused(["run", str(cfg), "-o", _toy_plugins.__file__], capsys, workdir,
            "source of plugin 'ShareBelowK'")


def test_an_output_inside_a_dataset_folder_or_glob(workdir: Path, capsys) -> None:
    (workdir / "ds").mkdir()
    pd.read_csv(workdir / "orig.csv").to_parquet(workdir / "ds" / "part-0.parquet")
    (workdir / "parts").mkdir()
    pd.read_csv(workdir / "anon.csv").to_csv(workdir / "parts" / "p1.csv", index=False)
    cfg = write_config(workdir, original={"path": "ds", "format": "parquet"},
                       anonymized={"path": "parts/*.csv"})
    refused(["run", str(cfg), "-o", "ds/part-0.parquet"], capsys, workdir, "original.path")
    refused(["run", str(cfg), "-o", "ds/report.json"], capsys, workdir, "inside")
    refused(["run", str(cfg), "--html", "parts/p1.csv"], capsys, workdir, "anonymized.path")
    refused(["run", str(cfg), "-o", "parts/p2.csv"], capsys, workdir, "inside")


def test_an_output_that_is_not_a_regular_file(workdir: Path, capsys) -> None:
    cfg = write_config(workdir)
    refused(["run", str(cfg), "-o", "."], capsys, workdir, "is a folder")
    refused(["run", str(cfg), "--html", str(workdir)], capsys, workdir, "is a folder")
    refused(["run", str(cfg), "-o", os.devnull], capsys, workdir, "character device")
    assert Path(os.devnull).is_char_device()
    os.mkfifo(workdir / "fifo")
    refused(["run", str(cfg), "-o", "fifo"], capsys, workdir, "FIFO")
    assert stat.S_ISFIFO(os.stat(workdir / "fifo").st_mode)


def test_atomic_writes_refuse_a_non_regular_target(tmp_path: Path) -> None:
    from anoneval.core.errors import AnonevalError
    from anoneval.core.report.atomic import write_atomic

    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(AnonevalError, match="FIFO"):
        write_atomic(tmp_path / "fifo", "x")
    with pytest.raises(AnonevalError, match="folder"):
        write_atomic(tmp_path, "x")
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


def test_a_250_character_output_name(workdir: Path, capsys) -> None:
    cfg = write_config(workdir)
    name = "r" * 245 + ".json"
    assert main(["run", str(cfg), "-q", "-o", name, "--html", "h" * 245 + ".html"]) == 0, \
        capsys.readouterr().err
    assert json.loads((workdir / name).read_text())["measures"][0]["value"] > 0
    assert not [p for p in workdir.iterdir() if p.name.endswith(".tmp")]


def test_architecture_outputs_on_a_registry_file_or_a_device(workdir: Path, capsys) -> None:
    root = Path(__file__).resolve().parents[3]
    raw = json.loads((root / "examples" / "architecture.json").read_text())
    raw["data"] = str(root / "examples" / "data" / "mortgage_like.csv")
    raw["output"] = {"released": "rel.csv", "report": "toys.json"}
    (workdir / "a.json").write_text(json.dumps(raw))
    refused(["architecture", "a.json", "--no-plots", "-q"], capsys, workdir, "output.report",
            "registry file", "toys.json")
    raw["output"] = {"released": os.devnull, "report": "."}
    (workdir / "a.json").write_text(json.dumps(raw))
    refused(["validate", "a.json"], capsys, workdir, "output.released", "character device",
            "output.report", "is a folder")
