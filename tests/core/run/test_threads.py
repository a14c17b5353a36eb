"""Evaluations run from several threads of one process at once (an embedder's thread pool)."""

from __future__ import annotations

import json
import threading

import numpy as np
import pandas as pd
import pytest
from _toy_plugins import Vandal

from anoneval.core import Evaluator, evaluate
from anoneval.registry import build_registry

QI = ["age", "zip", "sex"]
MEASURES = [{"name": "KAnonymity", "params": {"k": 5, "quasi_identifiers": QI}},
            {"name": "DM", "params": {"quasi_identifiers": QI}},
            {"name": "LDiversity", "params": {"quasi_identifiers": QI, "sensitive": "dis"}},
            "KSDistance", "RangeCoverageLoss", "CategoryCoverageLoss", "Vandal"]


def _frames() -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    rng = np.random.default_rng(0)
    n = 600
    original = pd.DataFrame({"age": rng.integers(18, 90, n), "zip": rng.choice(list("abcdef"), n),
                             "sex": rng.choice(["m", "f"], n), "inc": rng.normal(50, 10, n),
                             "dis": rng.choice(["x", "y", "z"], n)})
    releases = []
    for width in range(2, 8):
        release = original.copy()
        release["age"] = release["age"] // width * width
        release["inc"] = release["inc"] + rng.normal(0, 1, n)
        releases.append(release)
    return original, releases


@pytest.mark.parametrize("shared", [False, True])
def test_threads_evaluating_at_once_give_the_serial_reports_and_change_nothing(shared) -> None:
    # every plugin call switches pandas' process-wide copy-on-write on while it runs, in
    # overlapping calls too; a plugin writing into its data (Vandal) changes no input; each
    # thread calls evaluate(), or all call one Evaluator
    registry = build_registry(entry_points=False)
    registry.register(Vandal, source="tests")
    original, releases = _frames()
    kept = original.copy(), [r.copy() for r in releases]
    evaluator = Evaluator(original, MEASURES, registry=registry)

    def report(release: pd.DataFrame) -> str:
        measures = (evaluator.evaluate(release) if shared else
                    evaluate(original, release, MEASURES, registry=registry)).measures
        return json.dumps([(m.name, m.value, m.error, m.details) for m in measures],
                          default=str, sort_keys=True)

    serial = [report(r) for r in releases]
    threaded: list[str | None] = [None] * (3 * len(releases))

    def work(i: int) -> None:
        threaded[i] = report(releases[i % len(releases)])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(threaded))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert threaded == [serial[i % len(releases)] for i in range(len(threaded))]
    assert all(json.loads(s)[-1][2] is None for s in serial)  # Vandal ran and wrote
    pd.testing.assert_frame_equal(original, kept[0])
    for release, before in zip(releases, kept[1], strict=True):
        pd.testing.assert_frame_equal(release, before)
    if int(pd.__version__.split(".")[0]) < 3:
        assert pd.get_option("mode.copy_on_write") in (False, "warn")
