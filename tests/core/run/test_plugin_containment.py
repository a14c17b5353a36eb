"""Plugins that misbehave: sys.exit(), in-place writes to the data, hanging, and timings."""

from __future__ import annotations

import json
import pickle
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _toy_plugins import (
    RELEASE,
    Exits,
    ExitsInPrepare,
    Hangs,
    Quick,
    Reader,
    TrajectoryVandal,
    Vandal,
)

from anoneval.core import Evaluator, evaluate, load
from anoneval.core.api import (
    ConfigError,
    Direction,
    LossMeasure,
    MeasureResult,
    Microdata,
    RiskMeasure,
)
from anoneval.core.run.config import load_config
from anoneval.core.run.evaluator import read_only
from anoneval.core.run.runner import run_plan
from anoneval.registry import build_registry

FRAME = pd.DataFrame({"age": [30, 30, 40, 40, 50], "zip": ["a", "a", "b", "b", "c"]})
PANDAS_2 = pytest.mark.skipif(int(pd.__version__.split(".")[0]) >= 3,
                              reason="pandas >= 3 always copies on write: no option to switch")


@pytest.fixture
def registry():
    registry = build_registry(entry_points=False)
    for cls in (Exits, ExitsInPrepare, Vandal, Reader, Hangs, Quick, TrajectoryVandal):
        registry.register(cls, source="tests")
    return registry


def test_sys_exit_in_a_plugin_is_the_measure_error_and_the_run_goes_on(registry) -> None:
    report = evaluate(FRAME, FRAME, ["Exits", "ExitsInPrepare", "Reader"], registry=registry)
    assert report["Exits"].error == "RuntimeError: Exits called sys.exit(3)"
    assert report["ExitsInPrepare"].error == ("RuntimeError: ExitsInPrepare.prepare called "
                                              "sys.exit('bye')")
    assert report["Reader"].error is None and report["Reader"].value == 190.0


def test_keyboard_interrupt_is_not_contained(registry) -> None:
    class Interrupted(RiskMeasure):
        name = "Interrupted"
        description = "Ctrl-C while computing."

        def compute(self, original, anonymized, ctx):
            raise KeyboardInterrupt

    registry.register(Interrupted, source="tests")
    with pytest.raises(KeyboardInterrupt):
        evaluate(FRAME, FRAME, ["Interrupted"], registry=registry)


def test_a_plugin_writing_into_the_data_changes_nothing_for_others(registry) -> None:
    original, anonymized = Microdata(FRAME.copy()), Microdata(FRAME.copy())
    before = original.describe()["hash"], anonymized.describe()["hash"]
    ev = Evaluator(original, ["Vandal", "Reader"], registry=registry)
    report = ev.evaluate(anonymized)
    assert report["Vandal"].error is None and report["Vandal"].value == 2.0
    assert report["Reader"].value == 190.0
    assert report["Reader"].details == {"zips": ["a", "b", "c"], "rows": 5, "groups": 3}
    assert (original.describe()["hash"], anonymized.describe()["hash"]) == before
    assert report.inputs["original"]["hash"] == before[0]
    pd.testing.assert_frame_equal(original.frame, FRAME)
    pd.testing.assert_frame_equal(anonymized.frame, FRAME)


@PANDAS_2
def test_copy_on_write_is_only_on_inside_plugin_calls(registry) -> None:
    evaluate(FRAME, FRAME, ["Vandal"], registry=registry)
    assert pd.get_option("mode.copy_on_write") in (False, "warn")


@PANDAS_2
def test_a_timed_out_measure_cannot_write_into_the_data_after_the_run(registry) -> None:
    # its thread goes on after the run returned; its writes still copy, and the option
    # is restored when the thread ends
    release, done = threading.Event(), threading.Event()

    class WritesLate(LossMeasure):
        name = "WritesLate"
        description = "Writes into its data after its timeout."

        def compute(self, original, anonymized, ctx):
            release.wait(30)
            anonymized.frame.loc[0, "age"] = -1
            anonymized.frame.iloc[1, 1] = "HACKED"
            done.set()
            return MeasureResult(value=1.0)

    registry.register(WritesLate, source="tests")
    anonymized = FRAME.copy()
    try:
        report = evaluate(FRAME, anonymized, [{"name": "WritesLate", "timeout": 0.2}],
                          registry=registry)
    finally:
        release.set()
    assert report["WritesLate"].error.startswith("MeasureTimeout")
    assert done.wait(30)
    for thread in threading.enumerate():
        if thread.name == "anoneval WritesLate":
            thread.join(30)
    pd.testing.assert_frame_equal(anonymized, FRAME)
    assert pd.get_option("mode.copy_on_write") in (False, "warn")


def test_trajectory_arrays_are_read_only_for_plugins(registry, data_dir: Path) -> None:
    traj = load(data_dir / "mobility" / "mock_dataset.csv", "trajectories")
    report = evaluate(traj, None, ["TrajectoryVandal"], registry=registry,
                      data_kind="trajectories")
    assert report["TrajectoryVandal"].error is None
    assert traj.lon.flags.writeable


def test_a_hanging_measure_times_out_and_the_others_complete(registry) -> None:
    RELEASE.clear()
    try:
        start = time.perf_counter()
        report = evaluate(FRAME, FRAME, [{"name": "Hangs", "timeout": 0.3}, "Quick"],
                          registry=registry)
        assert time.perf_counter() - start < 5
        assert report["Hangs"].value is None
        assert report["Hangs"].error.startswith("MeasureTimeout: Hangs timed out after 0.3 s")
        assert report["Quick"].value == 0.5 and report["Quick"].error is None
    finally:
        RELEASE.set()


def test_a_timeout_that_is_not_reached_changes_nothing(registry) -> None:
    report = evaluate(FRAME, FRAME, [{"name": "Exits", "timeout": 10}, {"name": "Quick",
                                                                         "timeout": 10}],
                      registry=registry)
    assert report["Exits"].error == "RuntimeError: Exits called sys.exit(3)"
    assert report["Quick"].value == 0.5


@pytest.mark.parametrize("bad", [0, -1, True, "5", float("nan")])
def test_timeout_must_be_positive_seconds(registry, bad) -> None:
    with pytest.raises(ConfigError, match=r"measures\[0\]\.timeout"):
        evaluate(FRAME, FRAME, [{"name": "Quick", "timeout": bad}], registry=registry)


def test_timeout_in_a_config_file(registry, tmp_path: Path) -> None:
    FRAME.to_csv(tmp_path / "o.csv", index=False)
    config = {"original": {"path": "o.csv"}, "anonymized": {"path": "o.csv"},
              "measures": [{"name": "Hangs", "timeout": 0.2}, {"name": "Quick"}]}
    (tmp_path / "c.json").write_text(json.dumps(config))
    RELEASE.clear()
    try:
        report = run_plan(load_config(tmp_path / "c.json", registry))
    finally:
        RELEASE.set()
    assert "timed out after 0.2 s" in report["Hangs"].error
    assert report["Quick"].value == 0.5


def test_direction_is_one_enum_end_to_end(registry) -> None:
    report = evaluate(FRAME, FRAME, ["Reader", "Quick"], registry=registry)
    assert report["Reader"].direction is Direction.RISKIER
    assert report["Quick"].direction is Direction.LESS_LOSS
    assert not report["Quick"].direction.higher_is_worse
    assert report.to_dict()["measures"][1]["direction"] == "higher = less loss"
    assert f"{Direction.MORE_LOSS}" == "higher = more loss"


def test_timings_off_are_never_measured(registry, tmp_path: Path) -> None:
    seen: list[float] = []

    class Spy:
        from anoneval.core.api import hookimpl

        @hookimpl(trylast=True)
        def after_measure(self, measure, result, ctx):
            seen.append(ctx.extra.get("seconds"))

    registry.pm.register(Spy())
    off = Evaluator(FRAME, ["Quick"], registry=registry, timings=False).evaluate(FRAME)
    assert off["Quick"].seconds == 0.0
    on = Evaluator(FRAME, ["Quick"], registry=registry).evaluate(FRAME)
    assert on["Quick"].seconds > 0.0
    assert all(s is not None and s > 0 for s in seen)  # the hook saw the real time both times


def test_a_validated_config_is_not_checked_again(registry, tmp_path: Path,
                                                 monkeypatch) -> None:
    FRAME.to_csv(tmp_path / "o.csv", index=False)
    (tmp_path / "c.json").write_text(json.dumps(
        {"original": {"path": "o.csv"}, "anonymized": {"path": "o.csv"},
         "measures": [{"name": "Quick"}]}))
    plan = load_config(tmp_path / "c.json", registry)

    def fail(*args, **kwargs):
        raise AssertionError("checked twice")

    monkeypatch.setattr("anoneval.core.run.evaluator.input_problems", fail)
    assert run_plan(plan)["Quick"].value == 0.5
    # the Python API, which has no config, still checks
    monkeypatch.undo()
    calls: list[str] = []
    monkeypatch.setattr("anoneval.core.run.evaluator.input_problems",
                        lambda m, *args: calls.append(m.name) or [])
    evaluate(FRAME, FRAME, ["Quick"], registry=registry)
    assert calls == ["Quick"]


def test_cached_arrays_are_read_only() -> None:
    data = Microdata(FRAME.copy())
    ids, _ = data.group_ids(["age"])
    codes, _ = data.codes("zip")
    assert not ids.flags.writeable and not codes.flags.writeable
    assert np.array_equal(ids, [0, 0, 1, 1, 2])


def test_plugin_views_share_the_cache() -> None:
    # every measure gets a fresh view of the data; work cached through one view serves the next
    data = Microdata(FRAME.copy())
    calls: list[int] = []
    for _ in range(3):
        view = read_only(data)
        assert view is not data and view.frame is not data.frame
        view.cached(("test.shared",), lambda: calls.append(1) or 7)
    assert calls == [1]
    # pickling (to a worker process) still drops the cache
    assert pickle.loads(pickle.dumps(data))._cache == {}
