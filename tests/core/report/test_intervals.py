"""Intervals end to end: the JSON report, frames, console, HTML, thresholds on an interval's end."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _toy_plugins import registry_with
from pydantic import Field

from anoneval.core import evaluate, evaluate_many
from anoneval.core.api import (
    ConfigError,
    Context,
    Dataset,
    IntervalParams,
    LossMeasure,
    MeasureResult,
    Microdata,
    Params,
    RiskMeasure,
    released,
)
from anoneval.core.cli.main import main
from anoneval.core.report.html import render_html, shared_notices
from anoneval.core.report.model import checked_interval, format_risk_utility
from anoneval.core.report.numbers import fmt_value

ORIG = pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.4], "g": list("aabb")})


class ToyShare(RiskMeasure):
    """The mean of column ``x`` (a share) with the interval ``[value - below, value + above]``
    (None when ``give_ci`` is false)."""

    name = "ToyShare"
    description = "Toy share with an interval."
    unit = "share"
    inputs = "either"

    class Params(Params, IntervalParams):
        below: float = 0.05
        above: float = 0.1
        give_ci: bool = True
        notice: str | None = Field(None, description="A warning to give.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        data = released(original, anonymized)
        assert isinstance(data, Microdata)
        v = float(data.frame["x"].mean())
        p = self.params
        ci = [max(v - p.below, 0.0), v + p.above] if p.give_ci else None
        return MeasureResult(value=v, ci=ci,
                             warnings=[p.notice] if p.notice else [])


class ToyExact(LossMeasure):
    """Rows + Σ y − Σ x (Σ y when there is no y): exact, so no interval and no
    ``confidence_level``."""

    name = "ToyExact"
    description = "Toy exact count."
    inputs = "either"

    class Params(Params):
        notice: str | None = None

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        data = released(original, anonymized)
        y = float(data.frame["y"].sum()) if "y" in data.frame else 2 * float(data.frame["x"].sum())
        return MeasureResult(value=float(len(data)) + y - float(data.frame["x"].sum()),
                             warnings=[self.params.notice] if self.params.notice else [])


@pytest.fixture(scope="module")
def registry():
    return registry_with(ToyShare, ToyExact)


def test_fmt_value_writes_the_interval_with_the_unit_once() -> None:
    assert fmt_value(0.12, None, [0.08, 0.17]) == "0.12 [0.08, 0.17]"
    assert fmt_value(0.123, "share", [0.08, 0.17]) == "12.3 [8, 17] %"
    assert fmt_value(40.0, "metres", [31, 52.5]) == "40 [31, 52.5] metres"
    assert fmt_value(0.5, "share") == "50 %"
    assert fmt_value(0.5, None, [0.6, 0.4]) == "0.5"  # not an interval: left out
    assert fmt_value(None, None, [0.1, 0.2]) == "–"


def test_checked_interval_keeps_good_ones_and_says_why_it_drops_others() -> None:
    notes: list[str] = []
    assert checked_interval([0.1, 0.2], 0.15, notes) == [0.1, 0.2] and notes == []
    assert checked_interval(None, 0.15, notes) is None and notes == []
    assert checked_interval([0.1, 0.2], None, notes) is None and notes == []
    assert checked_interval([0.3, float("nan")], 0.2, notes) is None
    assert checked_interval([0.3, 0.1], 0.2, notes) is None
    assert len(notes) == 2 and all("not two finite numbers" in n for n in notes)


def test_json_frame_and_console_carry_the_interval(registry) -> None:
    rep = evaluate(ORIG, ORIG, [{"name": "ToyShare", "params": {"confidence_level": 0.9}},
                                "ToyExact"], registry=registry)
    share, exact = rep["ToyShare"], rep["ToyExact"]
    assert share.value == pytest.approx(0.25)
    assert share.ci == pytest.approx([0.2, 0.35]) and share.confidence_level == 0.9
    assert exact.ci is None and exact.confidence_level is None
    data = json.loads(rep.to_json())
    m0, m1 = data["measures"]
    assert m0["ci"] == pytest.approx([0.2, 0.35]) and m0["confidence_level"] == 0.9
    assert m1["ci"] is None and m1["confidence_level"] is None
    frame = rep.to_frame()
    assert frame.loc[0, ["ci_low", "ci_high"]].tolist() == pytest.approx([0.2, 0.35])
    assert frame.loc[1, ["ci_low", "ci_high"]].isna().all()
    text = rep.summary()
    assert "25 [20, 35] %" in text
    exact_line = next(line for line in text.splitlines() if line.startswith("ToyExact"))
    assert " 5 " in exact_line and "[" not in exact_line  # 4 rows + sum of x: exact


def test_threshold_on_an_interval_end(registry) -> None:
    def passed(threshold: dict[str, Any], **params: Any) -> tuple[bool | None, list[str]]:
        rep = evaluate(ORIG, ORIG, [{"name": "ToyShare", "params": params,
                                     "threshold": threshold}], registry=registry)
        return rep["ToyShare"].passed, rep["ToyShare"].warnings

    # value 0.25, ci [0.2, 0.35]
    assert passed({"max": 0.3})[0] is True
    assert passed({"max": 0.3, "on": "upper"})[0] is False
    assert passed({"max": 0.36, "on": "upper"})[0] is True
    assert passed({"min": 0.22, "on": "lower"})[0] is False
    assert passed({"min": 0.2, "on": "lower"})[0] is True
    assert passed({"min": 0.22, "on": "value"})[0] is True
    ok, notes = passed({"max": 1.0, "on": "upper"}, give_ci=False)
    assert ok is False and any("gave no interval (ci)" in n for n in notes)


def test_threshold_on_is_validated_with_its_path(registry) -> None:
    with pytest.raises(ConfigError) as bad:
        evaluate(ORIG, ORIG, [{"name": "ToyShare", "threshold": {"max": 0.1, "on": "top"}}],
                 registry=registry)
    (path, msg), = bad.value.problems
    assert path == "measures[0].threshold.on"
    assert msg == "Input should be 'value', 'lower' or 'upper' (got 'top')"
    with pytest.raises(ConfigError) as exact:
        evaluate(ORIG, ORIG, [{"name": "ToyExact", "threshold": {"max": 1, "on": "upper"}}],
                 registry=registry)
    (path, msg), = exact.value.problems
    assert path == "measures[0].threshold.on" and "reports no interval" in msg


def test_strict_run_fails_on_the_upper_end(tmp_path: Path, registry, monkeypatch,
                                           capsys) -> None:
    ORIG.to_csv(tmp_path / "o.csv", index=False)
    cfg = {"original": {"path": "o.csv"}, "anonymized": {"path": "o.csv"},
           "measures": [{"name": "ToyShare", "threshold": {"max": 0.3, "on": "upper"}}]}
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    reg = tmp_path / "reg.json"
    reg.write_text(json.dumps({"risk_measure": {"ToyShare": {"class": "test_intervals:ToyShare"}}}))
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    code = main(["run", str(tmp_path / "c.json"), "--registry", str(reg), "--strict",
                 "-o", str(tmp_path / "r.json")])
    out = capsys.readouterr()
    assert code == 3, out
    assert "threshold FAIL: ToyShare = 0.25 ci [0.2, 0.35" in out.err
    assert "25 [20, 35] %" in out.out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["measures"][0]["threshold"] == {"max": 0.3, "min": None, "on": "upper"}


def test_multi_report_risk_utility_and_html_show_intervals(registry) -> None:
    variants = {f"v{i}": ORIG.assign(x=ORIG["x"] * (1 + i / 10)) for i in range(3)}
    multi = evaluate_many(ORIG, variants, ["ToyShare", "ToyExact"], registry=registry)
    ru = multi.risk_utility
    assert ru is not None
    assert [p.risk_ci for p in ru.points] == [m["ToyShare"].ci for m in multi.variants]
    assert all(p.loss_ci is None for p in ru.points)
    frame = ru.to_frame()
    assert frame["risk_high"].tolist() == pytest.approx(
        [m["ToyShare"].ci[1] for m in multi.variants])
    text = format_risk_utility(ru, {"ToyShare": "share"})
    assert "25 [20, 35] %" in text
    page = render_html(multi, registry=registry)
    assert 'data-ci="[0.2' in page and "25 [20, 35] %" in page
    assert "95 % interval" in page
    fig = multi.risk_utility_figure(registry)
    ax = fig.axes[0]
    bars = [c for c in ax.containers if c.__class__.__name__ == "ErrorbarContainer"]
    assert len(bars) == 1  # the risk intervals, drawn
    segments = bars[0].lines[2][0].get_segments()
    assert len(segments) == 3
    assert {round(abs(s[1][0] - s[0][0]), 6) for s in segments} == {15.0}  # 35 % − 20 %


def test_a_notice_repeated_on_measures_is_shown_once(registry) -> None:
    note = "the control set overlaps the original (toy)"
    variants = {"a": ORIG, "b": ORIG}
    measures = [{"name": "ToyShare", "params": {"notice": note}},
                {"name": "ToyExact", "params": {"notice": note}},
                {"name": "ToyShare", "label": "own", "params": {"notice": "only mine"}}]
    multi = evaluate_many(ORIG, variants, measures, registry=registry)
    notices = shared_notices(multi.to_dict()["variants"])
    assert notices == [{"text": note, "labels": "ToyShare, ToyExact", "variants": ["a", "b"],
                        "where": "every variant"}]
    page = render_html(multi, registry=registry)
    assert page.count(f'<div class="warning notice">{note} ') == 1  # once for both variants
    assert page.count(f'<div class="warning">{note}') == 0  # not in the measures' sections
    assert page.count('<div class="warning">only mine') == 2  # a measure's own stays there
    assert page.count("1 notice shared with other measures") == 4
    assert 'id="notices-section"' in page


def test_repelled_labels_never_overlap_at_60_variants() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    from anoneval.core.report.model import pareto_optimal
    from anoneval.core.report.plots import ru_map

    rng = np.random.default_rng(7)
    n = 60
    risk, loss = rng.uniform(0, 0.3, n), rng.uniform(0, 1, n)
    risk[:10] = 0.1  # a tight cluster
    loss[:10] = np.linspace(0.5, 0.52, 10)
    pareto = pareto_optimal(list(zip(risk, loss, strict=True)))
    ru = {"risk": "R", "loss": "L", "risk_direction": "higher = riskier",
          "loss_direction": "higher = more loss",
          "points": [{"variant": f"variant-number-{i:02d}", "risk": float(risk[i]),
                      "loss": float(loss[i]), "pareto": pareto[i],
                      "risk_ci": [float(risk[i]) - 0.01, float(risk[i]) + 0.02],
                      "loss_ci": None} for i in range(n)]}
    fig, caption = ru_map(ru, "share", None)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    ax = fig.axes[0]
    labels = [t for t in ax.texts if t.get_text().startswith("variant-number")]
    boxes = [Text.get_window_extent(t, renderer) for t in labels]  # the text, not its line
    assert len(labels) >= 20
    for i, a in enumerate(boxes):
        assert not any(a.overlaps(b) for b in boxes[i + 1:]), labels[i].get_text()
        frame = ax.get_window_extent(renderer)
        assert frame.x0 <= a.x0 and a.x1 <= frame.x1 and frame.y0 <= a.y0 and a.y1 <= frame.y1
    shown = {t.get_text() for t in labels}
    assert all(f"variant-number-{i:02d}" in shown for i in range(n) if pareto[i])
    assert f"{n - len(labels)} variants unlabelled" in caption


# -- 60 variants × 15 measures in headless Chromium ---------------------------------------------

RISKS = ["SinglingOut", "Linkability", "AttributeInference", "MembershipInference",
         "DistanceToClosestRecord", "NNDR", "IndividualRisk", "Unicity", "RecordLinkage"]
LABELS = [*RISKS, "PropensityMSE", "MLEfficacy", "DM", "KLDivergence", "CorrelationDifference",
          "TVDistance"]
LAYOUT_CHECK = """<script>
window.addEventListener("load", function () {
  var wide = document.querySelector("#summary-section .wide");
  var heads = Array.from(document.querySelectorAll("#summary thead tr:first-child th"));
  var first = document.querySelector("#summary tbody tr th");
  var out = {heads: heads.map(function (h) {
      var r = h.getBoundingClientRect();
      return {text: h.textContent, width: r.width, height: r.height};
    }),
    lineHeight: parseFloat(getComputedStyle(heads[1]).lineHeight) || 20,
    scrollWidth: wide.scrollWidth, clientWidth: wide.clientWidth};
  wide.scrollLeft = 600;
  out.scrolled = wide.scrollLeft;
  out.firstLeft = first.getBoundingClientRect().left;
  out.wideLeft = wide.getBoundingClientRect().left;
  var pre = document.createElement("pre");
  pre.id = "layout-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def big_report(registry: Any) -> Any:
    """60 variants × 15 measures (intervals on about half), a notice on every measure."""
    rng = np.random.default_rng(11)
    base = pd.DataFrame({"x": rng.uniform(0, 0.4, 40), "g": rng.choice(list("ab"), 40)})
    variants = {}
    for e in (0.5, 1, 2, 4, 8, 16):
        for k in range(2, 12):  # risk falls with k, loss grows with it, give or take
            x = (base["x"] * rng.uniform(0.2, 1.2) / np.sqrt(k)).clip(0, 1)
            variants[f"release-eps{e}-k{k}"] = base.assign(
                x=x, y=rng.uniform(0, 0.05 * k + 0.2 * e / 16, len(base)))
    measures = [{"name": "ToyShare" if label in RISKS else "ToyExact", "label": label,
                 "params": {"notice": "the control set shares 3 rows with the original"}}
                for label in LABELS]
    return evaluate_many(base, variants, measures, registry=registry)


def test_big_report_layout_and_screenshots_in_chromium(registry, tmp_path: Path) -> None:
    from test_html import CSP, find_chromium

    browser = find_chromium()
    multi = big_report(registry)
    assert len(multi.variants) == 60 and len(multi.variants[0].measures) == 15
    page = render_html(multi, registry=registry)
    assert page.count('<div class="warning notice">the control set shares 3 rows') == 1
    assert "all measures; every variant" in page
    (tmp_path / "report.html").write_text(page)
    probe = tmp_path / "probe.html"
    probe.write_text(CSP.sub("", page).replace("</body>", LAYOUT_CHECK + "</body>"))

    def chromium(*args: str) -> str:
        import subprocess

        return subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--disable-background-networking", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}", *args],
            capture_output=True, text=True, timeout=180, check=True).stdout

    dom = chromium("--window-size=1280,900", "--virtual-time-budget=10000", "--dump-dom",
                   probe.as_uri())
    found = re.search(r'<pre id="layout-check">(.*?)</pre>', dom, re.S)
    assert found, "the page did not finish loading"
    check = json.loads(found.group(1).replace("&amp;", "&").replace("&quot;", '"'))
    heads = check["heads"]
    assert [h["text"] for h in heads] == ["variant", *LABELS]
    for h in heads:  # one line each: no header is broken letter by letter
        assert h["height"] < 2 * check["lineHeight"] + 12, h
    assert check["scrollWidth"] > check["clientWidth"]  # the wide summary scrolls ...
    assert check["scrolled"] > 0
    assert abs(check["firstLeft"] - check["wideLeft"]) < 1.5  # ... with its first column
    # the risk–utility section at the top of the window: the page without the sections above
    ru_page = tmp_path / "ru.html"
    ru_page.write_text(re.sub(r"<nav>.*?</nav>|<section id=\"summary-section\">.*?</section>"
                              r"|<div class=\"wide\"><table id=\"risk-utility\">.*?</div>",
                              "", page, flags=re.S))
    shots = {"report-summary.png": ("1280,900", (tmp_path / "report.html").as_uri()),
             "report-risk-utility.png": ("1280,900", ru_page.as_uri())}
    keep = os.environ.get("ANONEVAL_SCREENSHOTS")  # a folder: keep them (docs/img)
    for name, (size, uri) in shots.items():
        shot = tmp_path / name
        chromium(f"--window-size={size}", f"--screenshot={shot}", uri)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
        if keep:
            Path(keep, name).write_bytes(shot.read_bytes())


def test_the_interval_example_of_writing_plugins_runs_as_written() -> None:
    from anoneval.core.api import wilson_interval

    text = (Path(__file__).resolve().parents[3] / "docs" / "writing-plugins.md").read_text()
    code = text.split("## A value's interval")[1].split("```python")[1].split("```")[0]
    ns: dict[str, Any] = {}
    exec(code, ns)  # the documented example, as printed
    orig = pd.DataFrame({"a": [1, 2, 3, 4], "b": list("xyzw")})
    m = evaluate(orig, orig.assign(a=[1, 2, 9, 9]), [ns["SharedShare"]()]).measures[0]
    assert m.error is None and m.value == 0.5  # two of four rows copied
    assert m.ci == pytest.approx(list(wilson_interval(2, 4))) and m.confidence_level == 0.95


def test_sweep_table_and_variants_chart_show_intervals(registry) -> None:
    from anoneval.core.report.model import format_sweep
    from anoneval.core.report.plots import variants_figure

    multi = evaluate_many(ORIG, {"a": ORIG, "b": ORIG.assign(x=ORIG["x"] / 2)},
                          ["ToyShare", "ToyExact"], registry=registry)
    frame = multi.to_frame().assign(param_value=0.5)
    text = format_sweep(frame, "gamma", {"ToyShare": "share"})
    assert "25 [20, 35] %" in text and "12.5 [7.5, 22.5] %" in text
    # the chart across variants: an error bar per interval, FAIL colours from `passed`
    html = variants_figure("ToyShare", ["a", "b"], [0.25, 0.125], {"max": 0.2, "on": "upper"},
                           "higher = riskier", "share", cis=[[0.2, 0.35], None],
                           passed=[False, True])
    assert "bars: each value&#39;s interval" in html or "bars: each value's interval" in html

    from anoneval.core.report.plots import sweep_figure

    swept = pd.concat([frame.assign(param_value=g, ci_low=frame["ci_low"] * g,
                                    ci_high=frame["ci_high"] * g) for g in (1.0, 2.0)])
    ax = sweep_figure(swept, "gamma").axes[0]
    bands = [c for c in ax.collections if c.__class__.__name__ == "FillBetweenPolyCollection"
             or c.__class__.__name__ == "PolyCollection"]
    assert len(bands) == 2  # one band per variant of the measure with an interval
    ends = np.vstack([b.get_paths()[0].vertices for b in bands])
    assert ends[:, 1].max() == pytest.approx(0.7)  # variant a's high end at gamma 2
