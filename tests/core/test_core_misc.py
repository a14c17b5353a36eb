"""Progress bar and the pytest fixtures shipped for plugin authors."""

from __future__ import annotations

import io

import pandas as pd
from _toy_plugins import ShareBelowK

from anoneval.core import Context
from anoneval.core.data.progress import progress_bar, progress_wanted


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_a_tqdm_bar_drawn_only_when_enabled() -> None:
    from tqdm.auto import tqdm

    out = io.StringIO()
    with progress_bar(4, "linking", enabled=True, stream=out, delay=0) as bar:
        for _ in range(4):
            bar.update()
    assert isinstance(bar, tqdm)
    text = out.getvalue()
    assert "linking" in text and "| 0/4 [" in text and bar.n == 4
    short = io.StringIO()  # by default a bar is drawn only after a few seconds of work
    with progress_bar(4, "linking", enabled=True, stream=short) as bar:
        bar.update(4)
    assert short.getvalue() == "" and bar.n == 4
    silent = io.StringIO()
    with progress_bar(4, "linking", enabled=False, stream=silent) as bar:
        bar.update(4)
    assert silent.getvalue() == "" and bar.disable
    # the plugin-facing API hands out the same bars
    with Context(show_progress=False).progress(3, "x") as bar:
        bar.update(3)
    assert isinstance(bar, tqdm) and bar.disable


def test_progress_only_on_a_terminal_and_not_quiet() -> None:
    assert progress_wanted(stream=FakeTTY()) is True
    assert progress_wanted(quiet=True, stream=FakeTTY()) is False
    assert progress_wanted(stream=io.StringIO()) is False


def test_testing_fixtures_give_an_isolated_registry(anoneval_registry, anoneval_evaluate) -> None:
    assert "KAnonymity" in anoneval_registry.names("risk_measure")
    anoneval_registry.register(ShareBelowK)
    df = pd.DataFrame({"a": [1, 2, 2]})
    report = anoneval_evaluate(None, df, [{"name": "ShareBelowK",
                                           "params": {"quasi_identifiers": ["a"]}}])
    assert report["ShareBelowK"].value == 1 / 3
    from anoneval.registry import default_registry

    assert "ShareBelowK" not in default_registry().names("risk_measure")
