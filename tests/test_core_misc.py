"""Progress bar and the pytest fixtures shipped for plugin authors."""

from __future__ import annotations

import io

import pandas as pd
from _toy_plugins import ShareBelowK

from anoneval.core.progress import Progress, progress_wanted


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_drawn_only_when_enabled() -> None:
    out = io.StringIO()
    with Progress(4, "linking", enabled=True, stream=out) as bar:
        for _ in range(4):
            bar.update()
    text = out.getvalue()
    assert "linking" in text and "100.0%" in text and text.endswith("\n")
    silent = io.StringIO()
    with Progress(4, "linking", enabled=False, stream=silent) as bar:
        bar.update(4)
    assert silent.getvalue() == "" and bar.done == 4


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
