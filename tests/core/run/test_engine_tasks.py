"""Variants as whole tasks on the engines (issue 30) and their per-measure progress (issue 29)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _bars import CountingBar

from anoneval.core import evaluate_many
from anoneval.core.data.partitioned import Partitioned
from anoneval.core.run import engine as engine_module
from anoneval.core.run import evaluator as evaluator_module
from anoneval.core.run import placement
from anoneval.core.run.config import validate_config
from anoneval.core.run.engine import TASK_WORK, chunked
from anoneval.core.run.placement import FileInput, estimated_bytes, fits_in_tasks
from anoneval.core.run.runner import run_plan

MEASURES = [{"name": "KAnonymity", "params": {"quasi_identifiers": ["age", "zip"], "k": 2}},
            {"name": "DM", "params": {"quasi_identifiers": ["age", "zip"]}}]


def frames(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(seed)
    original = pd.DataFrame({"age": rng.integers(20, 60, n).astype(str),
                             "zip": rng.choice(["1000", "1001", "2000", "2001"], n),
                             "income": rng.normal(3000, 500, n).round(1)})
    variants = {}
    for i, width in enumerate((5, 10, 20)):
        v = original.copy()
        lo = (original["age"].astype(int) // width) * width
        v["age"] = lo.astype(str) + "-" + (lo + width - 1).astype(str)
        v["zip"] = v["zip"].str[: 3 - i] + "*"
        variants[f"w{width}"] = v
    return original, variants


def without_engine(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "engine"}


# -- the placement rule ----------------------------------------------------------------------


def test_estimate_is_an_upper_bound_of_the_memory_read(tmp_path: Path) -> None:
    original, _ = frames(2_000)
    original.to_parquet(tmp_path / "o.parquet")
    original.to_csv(tmp_path / "o.csv", index=False)
    in_memory = pd.read_csv(tmp_path / "o.csv", dtype=str).memory_usage(deep=True).sum()
    for name in ("o.parquet", "o.csv"):
        estimate = estimated_bytes(FileInput(tmp_path / name))
        assert in_memory <= estimate <= 12 * in_memory, (name, estimate, in_memory)


def test_fits_in_tasks_rule(tmp_path: Path) -> None:
    original, variants = frames(2_000)
    original.to_parquet(tmp_path / "o.parquet")
    variants["w5"].to_parquet(tmp_path / "v.parquet")
    o, v = FileInput(tmp_path / "o.parquet"), FileInput(tmp_path / "v.parquet")
    need = estimated_bytes(o) + estimated_bytes(v)
    assert fits_in_tasks([o], [v, v], int(need / placement.TASK_SHARE) + 1)
    assert not fits_in_tasks([o], [v, v], int(need / placement.TASK_SHARE) - 1)
    assert fits_in_tasks([o], [v], None)  # no memory limit: tasks
    assert fits_in_tasks([original], [variants["w5"]], 1)  # in memory already: here anyway
    # partitions a caller asked for stay partitions
    assert not fits_in_tasks([Partitioned(tmp_path / "o.parquet")], [v], None)


def test_chunks_group_tiny_variants_only() -> None:
    names = [f"v{i}" for i in range(100)]
    assert chunked(names, None, 2) == [[n] for n in names]  # unknown size: one per task
    assert chunked(names, TASK_WORK, 2) == [[n] for n in names]  # large enough alone
    tiny = chunked(names, 1_000, 2)
    assert [n for c in tiny for n in c] == names  # order kept, every variant once
    # 4 tasks per worker at the least; the last ones half the remaining share each
    assert [len(c) for c in tiny] == [12] * 7 + [8, 4, 2, 1, 1]
    assert [len(c) for c in chunked(names, TASK_WORK / 4, 2)] == [4] * 24 + [2, 1, 1]
    assert [len(c) for c in chunked(names[:7], TASK_WORK / 4, 3)] == [1] * 7


# -- file variants on dask: tasks, the same report as serial ------------------------------


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    original, variants = frames()
    original.to_csv(tmp_path / "original.csv", index=False)
    for name, frame in variants.items():
        frame.to_parquet(tmp_path / f"{name}.parquet")
    config = {"original": {"path": "original.csv"},
              "anonymized": [{"name": n, "path": f"{n}.parquet"} for n in variants],
              "measures": MEASURES, "seed": 3, "report": {"timings": False}}
    (tmp_path / "c.json").write_text(json.dumps(config))
    return tmp_path


def test_file_variants_on_dask_run_as_tasks_with_the_serial_report(config_dir: Path, cluster,
                                                                   monkeypatch) -> None:
    plan = validate_config(json.loads((config_dir / "c.json").read_text()),
                           base_dir=config_dir)
    serial = run_plan(plan).to_dict()
    scaled = []
    original_reduce = Partitioned.reduce
    monkeypatch.setattr(Partitioned, "class_summaries",
                        lambda self, specs: scaled.append(self) or None)
    monkeypatch.setattr(Partitioned, "reduce",
                        lambda self, *a: scaled.append(self) or original_reduce(self, *a))
    tasks = run_plan(plan, engine=cluster).to_dict()
    assert not scaled  # no partition-wise work: each variant was one task
    assert tasks["engine"]["name"] == "dask"
    assert without_engine(tasks) == without_engine(serial)  # hashes included
    monkeypatch.undo()
    # larger than a worker's share: partition-wise, the same values
    monkeypatch.setattr(placement, "TASK_SHARE", 0.0)
    parts = run_plan(plan, engine=cluster)
    assert all(v.inputs["anonymized"]["hash"].startswith("partitioned-sha256:")
               for v in parts.variants)
    assert [[m.value for m in v.measures] for v in parts.variants] == \
        [[m["value"] for m in v["measures"]] for v in serial["variants"]]


# -- progress per measure ------------------------------------------------------------------


@pytest.fixture
def counting_bar(monkeypatch) -> type[CountingBar]:
    CountingBar.instances = []
    monkeypatch.setattr(evaluator_module, "progress_bar", CountingBar)
    return CountingBar


def _pool_first(monkeypatch) -> None:
    """The local engine's processes started before it takes variants (this process would
    otherwise evaluate the few variants of a test itself while they start)."""
    start = engine_module._start_in_background

    def started(*args: Any, **kwargs: Any) -> Any:
        future = start(*args, **kwargs)
        future.result()
        return future

    monkeypatch.setattr(engine_module, "_start_in_background", started)


@pytest.mark.parametrize("engine", ["serial", "local", "dask"])
def test_progress_advances_per_measure_on_every_engine(engine: str, counting_bar, cluster,
                                                       monkeypatch) -> None:
    original, variants = frames()
    spec: Any = {"serial": None, "local": {"name": "local", "workers": 2},
                 "dask": cluster}[engine]
    if engine == "local":
        _pool_first(monkeypatch)
    report = evaluate_many(original, variants, MEASURES, engine=spec, show_progress=True)
    assert report.ok
    [bar] = counting_bar.instances
    assert bar.total == 6
    assert bar.updates == [1] * 6  # 3 variants x 2 measures, one step per finished measure


def test_a_local_cluster_started_for_a_config_run(config_dir: Path, counting_bar) -> None:
    """Variants evaluated here while the cluster starts, the rest as tasks on it: the serial
    report, and one progress step per measure wherever it ran."""
    plan = validate_config(json.loads((config_dir / "c.json").read_text()),
                           base_dir=config_dir)
    serial = run_plan(plan).to_dict()
    counting_bar.instances.clear()
    started = run_plan(plan, engine={"name": "dask", "workers": 2}, show_progress=True)
    assert started.engine["name"] == "dask" and started.engine["workers"] == 2
    assert without_engine(started.to_dict()) == without_engine(serial)
    [bar] = counting_bar.instances
    assert bar.updates == [1] * 6


# -- workers that outlive a run; a config given by a relative path -----------------------------


def _recipe(original: pd.DataFrame, measures: list[dict[str, Any]], seed: int = 0,
            base_dir: Path | None = None) -> engine_module.Recipe:
    from anoneval.core import Evaluator

    ev = Evaluator(original, measures, seed=seed, base_dir=base_dir)
    return engine_module.new_recipe(Evaluator, ev._given[0], ev.measures, ev.seed, None,
                                    ev.base_dir, True)


def test_content_token_names_what_the_evaluator_is_built_from(tmp_path: Path) -> None:
    original, _ = frames()
    hierarchy = tmp_path / "zip.csv"
    pd.DataFrame({"0": ["1000", "1001", "2000", "2001"], "1": ["1", "1", "2", "2"]}).to_csv(
        hierarchy, index=False, header=False, sep=";")
    measures = [*MEASURES, {"name": "NonUniformEntropy", "params": {
        "quasi_identifiers": ["zip"], "hierarchies": {"zip": "zip.csv"}}}]
    token = engine_module.content_token
    first = _recipe(original, measures, base_dir=tmp_path)
    again = _recipe(original, measures, base_dir=tmp_path)
    assert first.token != again.token  # fresh per run ...
    before = token(first)
    assert token(again) == before  # ... the same content
    assert token(_recipe(original, measures, seed=1, base_dir=tmp_path)) != before
    changed = original.copy()
    changed.loc[0, "income"] += 1
    assert token(_recipe(changed, measures, base_dir=tmp_path)) != before
    assert token(_recipe(original, measures[:2], base_dir=tmp_path)) != before
    stat = hierarchy.stat()  # a hierarchy file rewritten: the prepared one is stale
    os.utime(hierarchy, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert token(again) != before


def test_content_token_changes_when_an_input_file_is_rewritten_in_place(tmp_path: Path) -> None:
    from anoneval.core import Evaluator

    original, _ = frames()
    path = tmp_path / "original.csv"
    original.to_csv(path, index=False)
    ev = Evaluator(original, MEASURES)

    def token() -> str:
        return engine_module.content_token(engine_module.new_recipe(
            Evaluator, FileInput(str(path)), ev.measures, 0, None, tmp_path, True))

    before = token()
    assert token() == before
    text = path.read_text()
    stat = path.stat()
    path.write_text(text.replace("1", "2", 1))  # same size, another value
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert path.stat().st_size == stat.st_size
    assert token() != before  # a worker must not keep the evaluator of the old file


def test_lasting_workers_keep_their_evaluator_for_the_next_run(cluster) -> None:
    original, variants = frames()

    def evaluators() -> dict[str, int]:
        from anoneval.core.run import engine

        return {t: id(e) for t, e in engine._EVALUATORS.items()}

    first = evaluate_many(original, variants, MEASURES, engine=cluster)
    held = cluster.run(evaluators)
    second = evaluate_many(original, variants, MEASURES, engine=cluster)
    assert cluster.run(evaluators) == held  # the same evaluator objects: not built again
    assert all(t.startswith("content-") for w in held.values() for t in w)
    def results(report: Any) -> list[Any]:  # all but the timings
        return [(v.inputs, [(m.label, m.value, m.error, m.warnings) for m in v.measures])
                for v in report.variants]

    assert results(first) == results(second)
    assert results(second) == results(evaluate_many(original, variants, MEASURES))


def test_a_config_given_by_a_relative_path_runs_on_workers_elsewhere(config_dir: Path,
                                                                     cluster, monkeypatch
                                                                     ) -> None:
    """The session cluster's worker processes work in the folder the tests started in; the
    config and its files are named relative to another one."""
    from anoneval.core.run.config import load_config

    config = json.loads((config_dir / "c.json").read_text())
    config["measures"].append({"name": "NonUniformEntropy", "params": {
        "quasi_identifiers": ["zip"], "hierarchies": {"zip": "zip.csv"}}})
    zips = pd.Series(["1000", "1001", "2000", "2001"])
    pd.DataFrame({i: zips.str[: 4 - i] + "*" * (i > 0) for i in range(4)}).assign(
        top="*").to_csv(config_dir / "zip.csv", index=False, header=False, sep=";")
    (config_dir / "c.json").write_text(json.dumps(config))
    workers_cwd = set(cluster.run(os.getcwd).values())
    monkeypatch.chdir(config_dir)
    assert str(config_dir) not in workers_cwd
    plan = load_config("c.json")
    serial = run_plan(plan).to_dict()
    assert all(m["error"] is None for v in serial["variants"] for m in v["measures"])
    tasks = run_plan(plan, engine=cluster).to_dict()
    assert without_engine(tasks) == without_engine(serial)
    assert tasks["variants"][0]["inputs"]["anonymized"]["path"] == "w5.parquet"
