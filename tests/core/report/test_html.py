"""The self-contained HTML report: content, plugin sections, determinism, headless Chromium."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _toy_plugins import (
    PAYLOADS,
    HostileCells,
    HostileFails,
    HostileSection,
    MeasureOnly,
    Noise,
    RefreshSection,
    ThirdParty,
    ToyCells,
    ToyClasses,
    ToyCurve,
    ToyLinkage,
    ToyLoss,
    registry_with,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import evaluate, evaluate_many
from anoneval.core.api import (
    Dataset,
)
from anoneval.core.cli.main import main
from anoneval.core.report.html import details_html, render_html, write_html
from anoneval.core.report.plots import PlotDependencyError
from anoneval.core.run.config import load_config
from anoneval.core.run.runner import run_plan
from anoneval.registry import build_registry

ROOT = Path(__file__).resolve().parents[3]

# -- toy measures whose details trigger every built-in plot -----------------------------------


TOYS = (ToyClasses, ToyCells, ToyLinkage, ToyCurve, ToyLoss, Noise)
MEASURES: list[Any] = [
    {"name": "ToyClasses", "params": {"qi": ["region", "sector"]}, "threshold": {"max": 0.3}},
    {"name": "ToyCells"},
    {"name": "ToyLinkage", "threshold": {"max": 0.5}},
    {"name": "ToyCurve"},
    {"name": "ToyLoss"},
]


@pytest.fixture
def registry():
    return registry_with(*TOYS)


def frames(n: int = 60, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    orig = pd.DataFrame({"region": rng.choice(["north", "south", "east", "west"], n),
                         "sector": rng.choice(["s1", "s2", "s3"], n, p=[0.6, 0.35, 0.05]),
                         "x": rng.normal(0, 3, n).round(2), "y": rng.normal(5, 2, n).round(2)})
    anon = orig.assign(x=orig["x"] + rng.normal(0, 0.5, n).round(2))
    return orig, anon


# -- parsing helpers ---------------------------------------------------------------------------


class Collector(HTMLParser):
    """Collects <img> srcs/alts and the summary value cells with their text."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict[str, str]] = []
        self.cells: list[dict[str, str]] = []
        self._cell: dict[str, str] | None = None
        self._depth = 0
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "img":
            self.images.append(a)
        if tag == "td" and "data-label" in a:
            self._cell = {**a, "text": ""}
            self._depth = 0
        elif self._cell is not None and tag == "span" and self._depth == 0 and \
                a.get("class") == "v":
            self._depth = 1

    def handle_endtag(self, tag: str) -> None:
        if self._cell is not None and tag == "span" and self._depth == 1:
            self._depth = 2
        if tag == "td" and self._cell is not None:
            self.cells.append(self._cell)
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None and self._depth == 1:
            self._cell["text"] += data


def parse(html_text: str) -> Collector:
    c = Collector()
    c.feed(html_text)
    return c


def png_size(data_uri: str) -> tuple[int, int]:
    """Width and height from a base64 PNG data URI (checks the signature and IHDR)."""
    prefix = "data:image/png;base64,"
    assert data_uri.startswith(prefix)
    raw = base64.b64decode(data_uri[len(prefix):], validate=True)
    assert raw[:8] == b"\x89PNG\r\n\x1a\n" and raw[12:16] == b"IHDR"
    return struct.unpack(">II", raw[16:24])


def strip_volatile(text: str) -> str:
    return re.sub(r'<span class="volatile">[^<]*</span>', "", text)


def shown_number(text: str) -> float:
    """The number a value cell shows: "5.16 %" is 0.0516, "12,345 bits" is 12345."""
    number, _, unit = text.replace(",", "").partition(" ")
    return float(number) / 100 if unit == "%" else float(number)


def check_summary(cells: list[dict[str, str]], report: dict[str, Any]) -> int:
    """Every summary cell's value, shown text and status match the JSON report."""
    variants = report.get("variants", [report])
    expected = {(v["variant"] or "", m["label"]): m for v in variants for m in v["measures"]}
    assert {(c["data-variant"], c["data-label"]) for c in cells} == set(expected)
    for c in cells:
        m = expected[(c["data-variant"], c["data-label"])]
        assert json.loads(c["data-value"]) == m["value"]
        if m["value"] is None:
            assert c["text"] == "–"
        else:
            assert shown_number(c["text"]) == pytest.approx(m["value"], rel=1e-3, abs=1e-12)
        status = "ERROR" if m["error"] else {True: "pass", False: "FAIL"}.get(m["passed"], "ok")
        assert c["data-status"] == status
    return len(cells)


# -- content -----------------------------------------------------------------------------------


def test_single_report_has_summary_inputs_sections_and_every_builtin_plot(registry) -> None:
    orig, anon = frames()
    report = evaluate(orig, anon, MEASURES, registry=registry)
    page = render_html(report, registry=registry, max_rows=7)
    doc = parse(page)
    data = report.to_dict()
    assert check_summary(doc.cells, data) == len(MEASURES)
    # ToyClasses: 1/min size; ToyLinkage threshold 0.5 → statuses come from the report
    assert {"summary", "inputs"} <= set(doc.ids)
    assert all(f"m-{i}" in doc.ids for i in range(len(MEASURES)))
    alts = [img["alt"] for img in doc.images]
    assert alts == ["ToyClasses: class-size histogram", "ToyCells: map of unsafe cells",
                    "ToyLinkage: linked vs unlinked distances", "ToyCurve: curve"]
    for img in doc.images:
        w, h = png_size(img["src"])
        assert w > 100 and h > 100
    # inputs: rows and the content hash of both sides
    for side in ("original", "anonymized"):
        assert data["inputs"][side]["hash"] in page
    assert "<th>rows</th>" in page
    # details: the 60-row table is cut to max_rows with a note; nested dicts render as tables
    assert "showing the first 7 of 60 rows" in page
    section = page[page.index('id="m-4"'):]
    assert section.count("<tr><td class=\"num\">") == 7
    assert "<h4>nested</h4>" in section and "<th>b</th>" in section
    assert '<details class="detail"><summary><b>per_record</b> (60 entries)' in section
    # the cell map's caption counts cells by status exactly as the details do
    cells = data["measures"][1]["details"]["cells"]
    statuses = pd.Series([c["status"] for c in cells]).value_counts()
    caption = (f"{len(cells)} cells by region, sector: {statuses.get('safe', 0)} safe, "
               f"{statuses.get('empty', 0)} empty, {statuses.get('unsafe', 0)} unsafe.")
    assert caption in page


def test_page_is_self_contained(registry) -> None:
    orig, anon = frames()
    page = render_html(evaluate(orig, anon, MEASURES, registry=registry), registry=registry)
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "<script" not in page and "@import" not in page
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", page)
    srcs = re.findall(r'<img[^>]*src="([^"]*)"', page)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)


def test_measure_error_and_warning_are_shown(registry) -> None:
    orig, anon = frames()
    report = evaluate(orig, anon.drop(columns=["x"]), [{"name": "ToyLoss"}], registry=registry)
    page = render_html(report, registry=registry)
    assert report.measures[0].error is not None
    assert "KeyError" in report.measures[0].error
    assert 'class="errorbox">KeyError' in page
    assert check_summary(parse(page).cells, report.to_dict()) == 1


def test_third_party_hookimpl_fragments_appear_in_their_measure_section(registry) -> None:
    registry.pm.register(ThirdParty(), name="third-party")
    registry.pm.register(MeasureOnly(), name="measure-only")
    orig, anon = frames()
    report = evaluate_many(orig, {"v1": anon, "v2": orig}, MEASURES, registry=registry)
    page = render_html(report, registry=registry)
    loss = page[page.index('id="m-4"'):]
    worst = report["v1"]["ToyLoss"].details["worst"]
    assert f'<p id="third-party">worst is {worst:.2f} in variant v1</p>' in loss
    assert '<p id="third-party">worst is 0.00 in variant v2</p>' in loss
    assert 'data-plugin="third-party"' in loss
    curve = page[page.index('id="m-3"'):page.index('id="m-4"')]
    assert curve.count('<p id="measure-only">hello</p>') == 2
    cells = page[page.index('id="m-1"'):page.index('id="m-2"')]
    assert "plugin third-party could not render this section: ValueError: cannot draw" in cells
    # the failing plugin did not stop the built-in map
    assert cells.count("map of unsafe cells") == 2


def test_synthesizer_section_plots_actual_against_replica(registry, tmp_path: Path) -> None:
    orig, _ = frames(200)
    orig.to_csv(tmp_path / "orig.csv", index=False)
    cfg = {"original": {"path": "orig.csv"}, "synthesizer": {"name": "Noise"},
           "measures": [{"name": "ToyLoss"}]}
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    plan = load_config(tmp_path / "c.json", registry)
    datasets: dict[str, Dataset] = {}
    report = run_plan(plan, datasets=datasets)
    assert set(datasets) == {"original", "anonymized"}
    page = render_html(report, plan, datasets=datasets)
    alts = [i["alt"] for i in parse(page).images]
    assert alts == ["ECDFs of actual and replica", "Q-Q scatter of actual against replica",
                    "scatter of actual and replica", "category frequencies of actual and replica"]
    assert "<h2>Synthesizer</h2>" in page and "noise_sd" in page
    without = render_html(report, plan)
    assert "plots of actual against replica need the data" in without


def test_missing_matplotlib_is_a_clear_error(registry, tmp_path: Path, monkeypatch,
                                             capsys) -> None:
    orig, anon = frames()
    report = evaluate(orig, anon, [{"name": "ToyLoss"}], registry=registry)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(PlotDependencyError, match=r"pip install 'anoneval\[report\]'"):
        render_html(report, registry=registry)
    orig.to_csv(tmp_path / "o.csv", index=False)
    cfg = {"original": {"path": "o.csv"}, "anonymized": {"path": "o.csv"},
           "measures": [{"name": "KAnonymity", "params": {"quasi_identifiers": ["region"]}}],
           "output": "r.json"}
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    code = main(["run", str(tmp_path / "c.json"), "--html", str(tmp_path / "r.html"), "-q"])
    assert code == 2
    assert "matplotlib" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "r.html").exists()


# -- the adult benchmark: determinism and headless Chromium ------------------------------------


@pytest.fixture(scope="module")
def adult_config(adult_benchmark, tmp_path_factory) -> Path:
    """The shipped benchmark config, run on variants generated into a temporary folder."""
    return adult_benchmark(tmp_path_factory.mktemp("adult"))


@pytest.fixture(scope="module")
def adult_html(adult_config: Path) -> tuple[Path, dict[str, Any]]:
    out = adult_config.with_name("report.html")
    assert main(["run", str(adult_config), "--html", str(out), "-q"]) == 0
    return out, json.loads(adult_config.with_name("report.json").read_text())


def test_same_inputs_and_seed_give_same_json_and_html_up_to_timestamps(adult_config: Path,
                                                                       adult_html) -> None:
    first_html, first_json = adult_html
    again = adult_config.with_name("again.json")
    assert main(["run", str(adult_config), "-o", str(again), "-q"]) == 0
    # the benchmark config sets report.timings = false: the JSON is byte-identical
    assert again.read_bytes() == adult_config.with_name("report.json").read_bytes()
    a = first_html.read_text()
    # timings off: no run times are shown, only the generation time varies
    assert a.count('<span class="volatile">') == 1 and "computed in" not in a
    spans = re.findall(r'<span class="volatile">([^<]*)</span>', a)
    assert spans[0].endswith("UTC")
    # a second run with timings: every entry records its seconds, and only those differ
    # between the runs, in the JSON and in the page (images included, byte for byte)
    plan = load_config(adult_config)
    plan.config.report.timings = True
    datasets: dict[str, Dataset] = {}
    report = run_plan(plan, datasets=datasets)
    write_html(report, adult_config.with_name("timed.html"), plan, datasets=datasets)
    timed = report.to_dict()
    assert any(m["seconds"] > 0 for v in timed["variants"] for m in v["measures"])
    for v in timed["variants"]:
        for m in v["measures"]:
            m["seconds"] = 0.0
    assert timed == first_json
    timed_html = adult_config.with_name("timed.html").read_text()
    assert timed_html.count("computed in") == 5 * 4  # 5 variants × 4 measures
    timing_note = (r' <span class="note">\(computed in <span class="volatile">[^<]*</span>'
                   r' s\)</span>')
    assert strip_volatile(re.sub(timing_note, "", timed_html)) == strip_volatile(a)


CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser",
                                                          "google-chrome")) if p), None)
#: Set to 1 (as .ci/run does) to make a missing Chromium a failure instead of a skip.
REQUIRE_BROWSER = "ANONEVAL_REQUIRE_BROWSER"
IMAGE_CHECK = """<script>
window.addEventListener("load", function () {
  var out = Array.from(document.images).map(function (im) {
    return {alt: im.alt, width: im.naturalWidth, height: im.naturalHeight,
            complete: im.complete};
  });
  var inputs = document.getElementById("inputs");
  var pre = document.createElement("pre");
  pre.id = "image-check";
  pre.textContent = JSON.stringify(out);
  pre.dataset.pageWidth = document.documentElement.clientWidth;
  pre.dataset.inputsWidth = inputs ? inputs.getBoundingClientRect().right : 0;
  document.body.appendChild(pre);
});
</script>"""
CSP = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>')


def find_chromium(found: str | None = CHROMIUM) -> str:
    """The browser, or a skip with the reason (a failure with ANONEVAL_REQUIRE_BROWSER=1)."""
    if found:
        return found
    if os.environ.get(REQUIRE_BROWSER) == "1":
        pytest.fail(f"{REQUIRE_BROWSER}=1 but no chromium on PATH: apt-get install -y chromium")
    pytest.skip(f"headless Chromium not found (apt-get install -y chromium; "
                f"{REQUIRE_BROWSER}=1 makes this a failure)")


def test_missing_browser_skips_with_the_reason_unless_required(monkeypatch) -> None:
    monkeypatch.delenv(REQUIRE_BROWSER, raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y chromium"):
        find_chromium(None)
    monkeypatch.setenv(REQUIRE_BROWSER, "1")
    with pytest.raises(pytest.fail.Exception, match="no chromium on PATH"):
        find_chromium(None)
    assert find_chromium("/usr/bin/chromium") == "/usr/bin/chromium"


@pytest.fixture
def browser() -> str:
    """Chromium's path; asked first, so a test skips before it builds anything."""
    return find_chromium()


def chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [find_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--hide-scrollbars", f"--user-data-dir={tmp / 'profile'}", *args],
        capture_output=True, text=True, timeout=180, check=True)


def probe(page: str) -> str:
    """The page with the image check added (and its no-script policy lifted for it)."""
    return CSP.sub("", page).replace("</body>", IMAGE_CHECK + "</body>")


def image_check(dom: str) -> list[dict[str, Any]]:
    m = re.search(r'<pre id="image-check"[^>]*>(.*?)</pre>', dom, re.S)
    assert m, "the page did not finish loading"
    return json.loads(m.group(1).replace("&amp;", "&").replace("&lt;", "<")
                      .replace("&gt;", ">").replace("&quot;", '"'))


def test_report_renders_in_headless_chromium(browser, adult_html, tmp_path: Path) -> None:
    page_path, report = adult_html
    page = page_path.read_text()
    probe_path = tmp_path / "probe.html"
    probe_path.write_text(probe(page))
    dom = chromium(tmp_path, "--virtual-time-budget=10000", "--dump-dom",
                   probe_path.as_uri()).stdout
    images = image_check(dom)
    n_img = page.count("<img ")
    assert len(images) == n_img >= 6  # the R-U map + a class-size histogram per variant
    assert all(i["complete"] and i["width"] > 0 and i["height"] > 0 for i in images), images
    assert images[0]["alt"] == "risk–utility map"
    # the summary as the browser parsed it matches the JSON report
    assert check_summary(parse(dom).cells, report) == 5 * 4
    pareto = dict(re.findall(r'<tr data-variant="([^"]+)" data-pareto="(True|False)">', dom))
    assert pareto == {p["variant"]: str(p["pareto"]) for p in report["risk_utility"]["points"]}
    # the check itself can fail: a corrupt image has no natural width
    broken = tmp_path / "broken.html"
    broken.write_text('<html><body><img alt="x" src="data:image/png;base64,iVBORw0KGgoAAAA">'
                      + IMAGE_CHECK + "</body></html>")
    dom = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom",
                   broken.as_uri()).stdout
    assert image_check(dom)[0]["width"] == 0
    # and a screenshot a person can look at, kept under the test's tmp dir
    shot = tmp_path / "report.png"
    chromium(tmp_path, "--window-size=1280,2000", f"--screenshot={shot}", page_path.as_uri())
    assert png_size("data:image/png;base64," + base64.b64encode(shot.read_bytes()).decode()) \
        == (1280, 2000)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=5),
    max_leaves=25)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6), st.integers(1, 5))
def test_any_details_render_as_escaped_html(details: dict[str, Any], max_rows: int) -> None:
    hostile = {**details, "<script>x</script>": "<img src=x onerror=alert(1)>",
               "rows": [{"<b>": "</table>"}] * 3}
    out = details_html(hostile, max_rows)
    assert "<script" not in out and "<img" not in out and "<b>" not in out
    assert "&lt;script&gt;x&lt;/script&gt;" in out
    assert out.count("<table>") == out.count("</table>")  # well nested, nothing injected


# -- hostile strings: nothing a config, the data or a plugin says runs in the browser ---------


class TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attrs += [(tag, k, v) for k, v in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def hostile_page(tmp_path: Path) -> tuple[str, TextCollector]:
    reg = build_registry(entry_points=False)
    for cls in (HostileCells, HostileFails, ToyLoss):
        reg.register(cls, source="tests")
    reg.pm.register(HostileSection(), name=PAYLOADS[3])
    orig, anon = frames(30)
    cols = {"region": PAYLOADS[0], "sector": PAYLOADS[4]}
    orig = orig.rename(columns=cols)
    anon = anon.rename(columns=cols)
    orig[PAYLOADS[0]] = orig[PAYLOADS[0]].where(orig.index % 2 == 0, PAYLOADS[1])
    data = tmp_path / "data"
    data.mkdir()
    orig.to_csv(data / "o.csv", index=False)
    anon.to_csv(data / "a.csv", index=False)
    cfg = {"description": PAYLOADS[0] + PAYLOADS[2],
           "original": {"path": "data/o.csv"},
           "anonymized": [{"name": PAYLOADS[i], "path": "data/a.csv"} for i in (1, 3)],
           "measures": [{"name": "HostileCells", "label": PAYLOADS[4],
                         "params": {"cells": [PAYLOADS[0], PAYLOADS[3]]}},
                        {"name": "HostileFails", "label": PAYLOADS[1]},
                        {"name": "ToyLoss", "label": PAYLOADS[2]}]}
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    plan = load_config(tmp_path / "c.json", reg)
    datasets: dict[str, Dataset] = {}
    report = run_plan(plan, datasets=datasets)
    page = render_html(report, plan, datasets=datasets)
    text = TextCollector()
    text.feed(page)
    return page, text


def test_hostile_strings_are_text_in_the_page(tmp_path: Path) -> None:
    page, doc = hostile_page(tmp_path)
    shown = "".join(doc.text)
    for p in PAYLOADS:
        assert p in shown  # visible as text
    # the missing key columns named by the config are in the map's note, escaped
    assert "cannot draw the cell map: key columns" in shown
    # no element or attribute that the payloads would create exists
    tags = {t for t, _, _ in doc.attrs}
    assert "svg" not in tags and "script" not in tags
    assert not [a for a in doc.attrs if a[1] in ("autofocus", "x", "onmouseover", "onload")]
    assert not [a for a in doc.attrs if a[1] in ("href", "src")
                and (a[2] or "").strip().lower().startswith("javascript")]
    # the third-party fragment's raw markup is filtered out (core/report/sanitize.py), and
    # the page's policy forbids every script besides
    assert not [a for a in doc.attrs if a[1].startswith("on")]
    assert "<script" not in page and '<p class="tp">' in page
    assert "script-src" not in CSP.search(page).group(0)
    assert "default-src 'none'" in CSP.search(page).group(0)


def test_hostile_report_runs_no_script_in_chromium(browser, tmp_path: Path) -> None:
    page, _ = hostile_page(tmp_path)
    path = tmp_path / "hostile.html"
    path.write_text(page)
    dom = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", path.as_uri()).stdout
    html_tag = re.search(r"<html[^>]*>", dom)
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert html_tag and title and "data-pwned" not in html_tag.group(0)
    assert 'data-pwned="1"' not in dom and title.group(1) != "PWNED"
    assert title.group(1).startswith("anoneval report: &lt;script&gt;")
    text = TextCollector()
    text.feed(dom)
    for p in PAYLOADS:
        assert p in "".join(text.text)
    # the check can fail: the same fragment in a page without the policy runs
    control = tmp_path / "control.html"
    control.write_text(f"<html><head><title>t</title></head><body>{PAYLOADS[1]}</body></html>")
    dom = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom",
                   control.as_uri()).stdout
    assert re.search(r'<html data-pwned="1"', dom)
    assert "<title>PWNED</title>" in dom


def refresh_page(tmp_path: Path) -> tuple[str, Path]:
    away = tmp_path / "away.html"
    away.write_text("<html><head><title>away</title></head><body><p>MOVED AWAY</p></body></html>")
    reg = build_registry(entry_points=False)
    reg.register(ToyLoss, source="tests")
    reg.pm.register(RefreshSection(away.as_uri()), name="refresh-section")
    orig, anon = frames(30)
    report = evaluate(orig, anon, ["ToyLoss"], registry=reg)
    return render_html(report, registry=reg), away


def test_a_fragment_cannot_refresh_redirect_or_post(tmp_path: Path) -> None:
    page, away = refresh_page(tmp_path)
    doc = TextCollector()
    doc.feed(page)
    assert '<p class="tp">shown</p>' in page and "go" in "".join(doc.text)
    tags = {t for t, _, _ in doc.attrs}
    assert "base" not in tags and "form" not in tags
    assert [v for t, k, v in doc.attrs if t == "meta" and k == "http-equiv"] \
        == ["Content-Security-Policy"]  # the page's own, nothing from the fragment
    assert away.as_uri() not in page
    policy = CSP.search(page).group(0)
    assert all(d in policy for d in ("form-action 'none'", "base-uri 'none'",
                                      "navigate-to 'none'"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(
    ["<meta http-equiv=refresh content='0;url=x'>", "<base href=//e>", "<form action=//e>",
     "</form>", "<script>", "</script>", "<svg onload=x>", "<p onclick=x class=c>", "</p>",
     "<a href='javascript:x'>", "<a href='#ok'>", "</a>", "<img src=x onerror=y>",
     "<img src='data:image/png;base64,AA'>", "<table>", "<td>", "</table>", "<!-- c -->",
     "<style>", "</style>", "<iframe src=//e>", "text & <", "<div style='background:url(x)'>",
     "<input formaction=//e>", "<object data=x>", "<title>", "</title>"]), max_size=12))
def test_sanitized_fragments_hold_only_allowed_markup(parts: list[str]) -> None:
    from anoneval.core.report.sanitize import ALLOWED, sanitize_fragment

    out = sanitize_fragment("".join(parts))
    doc = TextCollector()
    doc.feed(out)
    doc.close()
    assert {t for t, _, _ in doc.attrs} <= ALLOWED
    assert not [a for a in doc.attrs if a[1].startswith("on") or a[1] in (
        "http-equiv", "action", "formaction", "target")]
    assert all(v.startswith(("#", "data:image/png")) for t, k, v in doc.attrs
               if k in ("href", "src"))
    assert not [v for _, k, v in doc.attrs if k == "style" and "url(" in (v or "")]
    assert sanitize_fragment(out) == out  # what it keeps is kept as is


def test_a_fragment_refresh_does_not_navigate_in_chromium(browser, tmp_path: Path) -> None:
    page, away = refresh_page(tmp_path)
    path = tmp_path / "report.html"
    path.write_text(page)
    dom = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", path.as_uri()).stdout
    assert "MOVED AWAY" not in dom and '<p class="tp">shown</p>' in dom
    assert re.search(r"<title>anoneval report", dom)
    # the check can fail: the same refresh in a page without the filter navigates away
    control = tmp_path / "control.html"
    control.write_text(page.replace('<p class="tp">shown</p>', '<p class="tp">shown</p>'
                                    f'<meta http-equiv="refresh" content="0;url={away.as_uri()}">'))
    dom = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom",
                   control.as_uri()).stdout
    assert "MOVED AWAY" in dom


# -- many variants: one chart per measure, per-variant plots optional ----------------------------


def many(n: int, registry, measures: list[Any] = MEASURES) -> Any:
    orig, anon = frames(40)
    rng = np.random.default_rng(n)
    variants = {f"v{i:03d}": anon.assign(x=anon["x"] + rng.normal(0, 0.1 * i, len(anon)))
                for i in range(n)}
    return evaluate_many(orig, variants, measures, registry=registry)


def test_images_do_not_grow_with_variants(registry) -> None:
    two = [MEASURES[0], MEASURES[4]]  # ToyClasses (a plot per variant) and ToyLoss (none)
    counts = {}
    for n in (13, 26):
        page = render_html(many(n, registry, two), registry=registry)
        counts[n] = page.count("<img ")
        assert f"{n} variants: each variant&#39;s plots, details and warnings are left out" in page
    # the R-U map and one chart per measure, however many variants
    assert counts[13] == counts[26] == 1 + len(two)
    # per-variant sections on request: ToyClasses' histogram for each variant again
    page = render_html(many(3, registry, two), registry=registry, variant_sections=True)
    assert page.count("<img ") == 1 + len(two) + 3


def test_failures_are_listed_when_variant_sections_are_off(registry) -> None:
    orig, anon = frames(40)
    variants = {f"v{i:02d}": anon for i in range(12)} | {"bad": anon.drop(columns=["x"])}
    report = evaluate_many(orig, variants, [{"name": "ToyLoss"}], registry=registry)
    page = render_html(report, registry=registry)
    assert "set report.variant_sections to true" in page
    assert '<div class="errorbox">variant bad: KeyError' in page
    assert page.count('<div class="errorbox">variant ') == 1


def test_every_measure_of_a_multi_variant_report_gets_a_chart(registry) -> None:
    report = many(3, registry)
    page = render_html(report, registry=registry, variant_sections=False)
    alts = [i["alt"] for i in parse(page).images]
    assert len(alts) == 1 + len(MEASURES)
    for m in MEASURES:  # ToyLoss (like DM and AECS) has no plot of its own
        assert f"{m['name']}: values by variant" in alts
    # the summary has one row per variant
    assert page.count("<tr><th>v00") == 3


def test_cell_map_palette_is_colour_blind_safe() -> None:
    from matplotlib import colormaps
    from matplotlib.colors import to_rgb

    from anoneval.core.report.plots import status_palette

    palette = [to_rgb(c) for c in status_palette(3)]
    cividis = colormaps["cividis"]
    for c in palette:  # drawn from cividis
        samples = cividis(np.linspace(0, 1, 256))[:, :3]
        assert np.abs(samples - c).sum(axis=1).min() < 0.02
    # distinct in lightness alone (greyscale, any colour vision): ≥ 0.2 apart
    lum = sorted(0.2126 * r + 0.7152 * g + 0.0722 * b for r, g, b in palette)
    assert min(np.diff(lum)) > 0.2


def test_inputs_table_fits_the_page_in_chromium(browser, registry, tmp_path: Path) -> None:
    orig, anon = frames()
    report = evaluate(orig, anon, [{"name": "ToyLoss"}], registry=registry)
    long = "/data/" + "x" * 400 + "/" + "y" * 300 + ".csv"
    for side in ("original", "anonymized"):
        assert report.inputs[side] is not None
        report.inputs[side]["path"] = long
        report.inputs[side]["hash"] = "sha256:" + "f" * 64
    path = tmp_path / "inputs.html"
    path.write_text(probe(render_html(report, registry=registry)))
    dom = chromium(tmp_path, "--window-size=1000,800", "--virtual-time-budget=5000",
                   "--dump-dom", path.as_uri()).stdout
    m = re.search(r'<pre id="image-check" data-page-width="(\d+)" '
                  r'data-inputs-width="([\d.]+)"', dom)
    assert m, "the page did not finish loading"
    page_width, inputs_right = int(m.group(1)), float(m.group(2))
    assert 0 < inputs_right <= page_width


# -- structure: templates, generic plots, sections with their families ---------------------------


def test_html_comes_from_autoescaped_templates(root: Path) -> None:
    from anoneval.core.report.templating import environment

    env = environment()
    for name in ("report.html.j2", "sweep.html.j2", "figure.html.j2", "repr.html.j2"):
        assert env.get_template(name).render  # loads from core/report/templates
        assert env.autoescape(name) is True
    # no HTML built from f-strings or concatenation in the rendering modules
    for module in ("core/report/html.py", "core/report/plots.py", "plugins/workflows/_sweep.py",
                   "core/report/model.py"):
        source = (root / module).read_text()
        assert not re.search(r"""f?["']<(td|tr|th|p|div|table|img|figure|section|h\d)\b""",
                             source), module


def test_plots_know_no_plugin_and_the_registry_imports_no_plotting(root: Path) -> None:
    source = (root / "core" / "report" / "plots.py").read_text()
    registry = build_registry(entry_points=False)
    names = [e.name for e in registry.entries()]
    keys = ["class_size_counts", "cells", "nearest_distance", "curve"]
    assert [n for n in [*names, *keys] if re.search(rf"\b{n}\b", source)] == []
    code = ("import sys; from anoneval.registry import build_registry; "
            "r = build_registry(entry_points=False); "
            "print(sorted(m for m in sys.modules if m.endswith(('plots', '_report'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
    # the families' sections register when a report is rendered
    registry.load_report_sections()
    plugins = {i.plugin_name for i in registry.pm.hook.report_section.get_hookimpls()}
    assert {f"anoneval.plugins.{f}._report" for f in ("microdata", "tabular", "linkage",
                                                      "perturbation")} <= plugins


def test_html_numbers_for_people(registry) -> None:
    orig, anon = frames()
    report = evaluate(orig, anon, MEASURES, registry=registry)
    report.measures[4].value = 6.4e-16  # round-off of a loss that is 0
    report.measures[0].value = 1234567.0
    page = render_html(report, registry=registry)
    summary = page[page.index('id="summary"'):page.index('id="inputs-section"')]
    shown = re.sub(r'data-value="[^"]*"', "", summary)
    assert "e-16" not in shown and "round-off and are shown as 0" in summary
    assert ">1,234,567</span>" in summary and ">0</span>" in summary
    assert 'data-value="6.4e-16"' in summary  # the exact value stays in the page's data
