"""Progress: one bar across variants and measures for a run longer than a few seconds (stderr,
off unless asked), and every long measure reports its own through ``Context.progress``
(issue 29)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import anoneval.core.data.progress as progress
from anoneval.core import evaluate, evaluate_many
from anoneval.core.api import Context

KANON = {"name": "KAnonymity", "params": {"quasi_identifiers": ["a"]}}


def _frames(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.integers(0, 5, n), "b": rng.choice(["p", "q", "r"], n),
                         "x": rng.normal(size=n).round(2), "y": rng.choice(["u", "v"], n)})


def _recorded(monkeypatch: pytest.MonkeyPatch, module: str) -> list:
    """The bars ``module`` makes from now on (kept for their counts after closing)."""
    bars: list = []

    def making(*args, **kwargs):
        bars.append(progress.progress_bar(*args, **kwargs))
        return bars[-1]

    monkeypatch.setattr(f"{module}.progress_bar", making)
    return bars


def test_one_bar_across_variants_and_measures(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(progress, "DELAY", 0.0)
    bars = _recorded(monkeypatch, "anoneval.core.run.evaluator")
    frame = _frames()
    evaluate_many(frame, {"v1": frame, "v2": frame, "v3": frame},
                  [KANON, {"name": "DM", "params": {"quasi_identifiers": ["a"]}}],
                  show_progress=True)
    assert [(b.total, b.n) for b in bars] == [(6, 6)]  # 3 variants x 2 measures, one bar
    assert "v3: DM" in bars[0].postfix
    assert "/6" in capsys.readouterr().err


def test_no_bar_for_a_short_run_or_when_not_asked(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _frames()
    evaluate_many(frame, {"v1": frame, "v2": frame}, [KANON], show_progress=True)
    assert capsys.readouterr().err == ""  # well under progress.DELAY seconds
    monkeypatch.setattr(progress, "DELAY", 0.0)
    evaluate_many(frame, {"v1": frame, "v2": frame}, [KANON], show_progress=False)
    assert capsys.readouterr().err == ""


def test_cli_has_no_bar_when_not_a_terminal_or_quiet() -> None:
    import io

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert progress.progress_wanted(False, Tty())
    assert not progress.progress_wanted(True, Tty())
    assert not progress.progress_wanted(False, io.StringIO())


def test_map_blocks_reports_each_block(monkeypatch: pytest.MonkeyPatch) -> None:
    bars = _recorded(monkeypatch, "anoneval.core.api")
    counts: list[int] = []

    def adding(shared: int, block: int) -> int:
        counts.append(bars[-1].n)  # the bar has counted the blocks before this one
        return shared + block

    ctx = Context(show_progress=True)
    assert ctx.map_blocks(adding, [1, 2, 3, 4], 10, desc="blocks") == [11, 12, 13, 14]
    assert counts == [0, 1, 2, 3] and (bars[-1].total, bars[-1].n) == (4, 4)
    assert Context().map_blocks(_add, [1, 2], 1, desc="quiet") == [2, 3]
    assert len(bars) == 1  # no bar when progress is off


def _add(shared: int, block: int) -> int:
    return shared + block


LONG = [
    {"name": "SinglingOut", "params": {"n_attacks": 10, "n_cols": 2}},
    {"name": "Linkability", "params": {"n_attacks": 10, "aux_cols": [["a"], ["b", "x"]]}},
    {"name": "AttributeInference", "params": {"n_attacks": 10, "secret": "y",
                                              "aux_cols": ["a", "b"]}},
    {"name": "MembershipInference", "params": {"n_attacks": 10}},
    {"name": "DistanceToClosestRecord", "params": {"columns": ["a", "x"]}},
    {"name": "NNDR"},
    {"name": "MLEfficacy", "params": {"target": "y", "model": "tree"}},
    {"name": "PropensityMSE", "params": {"model": "cart", "n_permutations": 3}},
]


@pytest.mark.parametrize("spec", LONG, ids=[m["name"] for m in LONG])
def test_every_long_measure_reports_progress(spec: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sklearn")
    seen: list[tuple[str, int, int]] = []
    original = Context.progress

    def recording(self: Context, total: int, desc: str = ""):
        bar = original(self, total, desc)
        seen.append((desc, total, 0))
        update = bar.update

        def counted(n: float = 1) -> bool | None:
            desc_, total_, done = seen[-1]
            seen[-1] = (desc_, total_, done + int(n))
            return update(n)

        bar.update = counted
        return bar

    monkeypatch.setattr(Context, "progress", recording)
    report = evaluate(_frames(), _frames(seed=1), [spec], control=_frames(seed=2),
                      show_progress=True)
    assert report.measures[0].error is None, report.measures[0].error
    assert seen and all(desc.startswith(spec["name"]) or desc == "NNDR" for desc, _, _ in seen
                        if desc != "measures")
    mine = [s for s in seen if s[0] != "measures"]
    assert mine and all(done == total for _, total, done in mine)  # each bar completes
