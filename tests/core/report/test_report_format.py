"""Numbers for people: the terminal summary, sweep tables, units and Jupyter's HTML."""

from __future__ import annotations

import math
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anoneval.core import evaluate, evaluate_many
from anoneval.core.report.model import MultiReport, Report
from anoneval.core.report.numbers import ZERO_NOTE, fmt_value
from anoneval.plugins.workflows._sweep import sweep
from anoneval.registry import build_registry


@pytest.mark.parametrize(("value", "unit", "shown"), [
    (6.4e-16, None, "0"), (-3e-13, "bits", "0 bits"), (0.0, "share", "0 %"),
    (0.0516, "share", "5.16 %"), (1 / 3, "share", "33.33 %"), (1.0, "share", "100 %"),
    (2e-6, "share", "0.0002 %"), (12345, None, "12,345"), (1234567.0, None, "1,234,567"),
    (12345.678, None, "12,345.7"), (2020, None, "2020"), (6032.4, None, "6032.4"),
    (0.72134, "bits", "0.72134 bits"),
    (5.0, "metres", "5 metres"), (3e-7, None, "3e-07"), (None, "share", "–"),
    (True, None, "true"), (math.inf, None, "∞")])
def test_fmt_value(value: object, unit: str | None, shown: str) -> None:
    assert fmt_value(value, unit) == shown


@pytest.fixture(scope="module")
def registry():
    return build_registry(entry_points=False)


def frames(n: int = 5000) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(3)
    p = [0.3, 0.2, 0.15, 0.1, 0.1, 0.05, 0.05, 0.05]
    df = pd.DataFrame({"a": rng.choice(list("abcdefgh"), n, p=p),
                       "b": rng.choice(list("xyz"), n)})
    return df, df.assign(b="*")


def test_summary_shows_shares_in_percent_counts_with_separators(registry) -> None:
    orig, anon = frames()
    measures = [{"name": "KAnonymity", "params": {"quasi_identifiers": ["a", "b"], "k": 600}},
                {"name": "DM", "params": {"quasi_identifiers": ["a", "b"]}}]
    report = evaluate(orig, anon, measures, registry=registry)
    text = report.summary(registry)
    share = report["KAnonymity"].value
    dm = report["DM"].value
    assert 0 < share < 1 and dm >= 1e6  # a share and a count
    assert f"{100 * share:.4g} %" in text
    assert f"{int(dm):,}" in text and str(int(dm)) not in text
    # timings are recorded: the seconds column is there; without them it is not
    assert "seconds" in text.splitlines()[0]
    report.measures[0].seconds = report.measures[1].seconds = 0.0
    assert "seconds" not in report.summary(registry).splitlines()[0]


def test_round_off_is_zero_with_the_tolerance_stated(registry) -> None:
    orig, anon = frames(50)
    report = evaluate(orig, anon, [{"name": "KAnonymity",
                                    "params": {"quasi_identifiers": ["a"]}}],
                      registry=registry)
    report.measures[0].value = 6.4e-16
    text = report.summary(registry)
    assert "e-16" not in text and " 0 %" in text and ZERO_NOTE in text


def test_measures_declare_units(registry) -> None:
    units = [registry.get(kind, name).unit_for(params) for kind, name, params in [
        ("risk_measure", "KAnonymity", {}), ("risk_measure", "MILeakage", {}),
        ("risk_measure", "MILeakage", {"base": math.e}),
        ("loss_measure", "NonUniformEntropy", {}),
        ("loss_measure", "NonUniformEntropy", {"normalized": True}),
        ("loss_measure", "KLDivergence", {}), ("loss_measure", "TrajectoryRMSE", {})]]
    assert units == ["share", "bits", "nats", "bits", None, "nats", "metres"]
    assert registry.get("distance", "Martinez2021").unit == "metres"


def test_sweep_table_has_no_error_column_when_nothing_failed(root: Path) -> None:
    result = sweep(root / "examples" / "rappor_sweep.json", "measures[*].params.gamma",
                   "0:1:0.25")
    text = result.summary()
    head = text.splitlines()[0].split()
    assert head == ["measures[*].params.gamma", "label", "value", "status"]
    assert "None" not in text and "e-1" not in text
    # m = 2, γ = 0.5 leaks nothing: 0 bits
    row = next(line for line in text.splitlines() if line.split()[:2] == ["0.5", "m=2"])
    assert row.split()[2:4] == ["0", "bits"]
    # round-off in a sweep is 0 with the tolerance stated
    result.runs[2].report.measures[0].value = 6.4e-16
    text = result.summary()
    assert "e-16" not in text and ZERO_NOTE in text


class Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text += data


def test_jupyter_html_and_frames_escape_and_mark_pareto(registry) -> None:
    orig, anon = frames(200)
    measures = [{"name": "KAnonymity", "label": "<script>x</script>",
                 "params": {"quasi_identifiers": ["a", "b"]}},
                {"name": "DM", "params": {"quasi_identifiers": ["a", "b"]}}]
    multi = evaluate_many(orig, {"<b>raw</b>": orig, "generalized": anon}, measures,
                          registry=registry)
    assert isinstance(multi, MultiReport) and multi.risk_utility is not None
    page = multi._repr_html_()
    doc = Text()
    doc.feed(page)
    assert "script" not in doc.tags and "b" not in doc.tags
    assert "<script>x</script>" in doc.text and "<b>raw</b>" in doc.text
    assert set(doc.tags) <= {"table", "thead", "tbody", "tr", "th", "td", "p"}
    ru = multi.risk_utility.to_frame()
    assert list(ru.columns) == ["variant", "risk", "loss", "pareto", "risk_low", "risk_high",
                                "loss_low", "loss_high"]
    assert ru["variant"].tolist() == ["<b>raw</b>", "generalized"]
    assert ru["pareto"].tolist() == [p.pareto for p in multi.risk_utility.points]
    assert ru["pareto"].any()
    single = multi["generalized"]
    assert isinstance(single, Report)
    doc = Text()
    doc.feed(single._repr_html_())
    assert "<script>x</script>" in doc.text and "script" not in doc.tags
    assert len(single.to_frame()) == 2
    # the JSON report keeps its format: no unit or frame leaks into it
    assert "unit" not in single.to_dict()["measures"][0]


def test_sweep_html_escapes_labels_and_errors(root: Path) -> None:
    from anoneval.plugins.workflows._sweep import sweep_html

    result = sweep(root / "examples" / "rappor_sweep.json", "measures[*].params.gamma", [0.5])
    entry = result.runs[0].report.measures[0]
    entry.label = "<script>alert(1)</script>"
    entry.error = "<img src=x onerror=alert(2)>"
    page = sweep_html(result, None)
    doc = Text()
    doc.feed(page)
    assert "script" not in doc.tags and "img" not in doc.tags
    assert "<script>alert(1)</script>" in doc.text and "<img src=x onerror=alert(2)>" in doc.text
    assert "Content-Security-Policy" in page
