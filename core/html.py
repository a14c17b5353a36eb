"""The self-contained HTML report: one file, no network assets, plots embedded as PNG.

Layout: a summary table (each measure's value, direction and pass/fail against the config's
thresholds; one column per variant), the risk–utility table and map for many variants, the
inputs (paths, rows, hashes), the synthesizer (with plots of actual against replica when the
data are passed), and a section per measure with its details as tables and the fragments every
``report_section`` hookimpl returns (the built-in plots come through the same hook, from
:class:`anoneval.core.plots.BuiltinSections`).

The output is deterministic: the same report gives the same bytes except inside
``<span class="volatile">`` (the generation time and the measures' run times).
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anoneval.core.jsonable import to_jsonable
from anoneval.core.plots import require_matplotlib, ru_map_figure, synthesis_figures
from anoneval.core.report import MultiReport, Report, write_atomic

if TYPE_CHECKING:
    from anoneval.core.config import Plan
    from anoneval.core.data import Dataset
    from anoneval.registry import Registry

DEFAULT_MAX_ROWS = 50
MAX_DEPTH = 3
MAX_JSON_CHARS = 4000
COLLAPSE_ABOVE = 12

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;
color:#222;background:#fff;line-height:1.4}
main{max-width:1200px;margin:0 auto;padding:1rem 1.5rem 4rem}
h1{font-size:1.6rem;margin:.5rem 0}h2{border-bottom:2px solid #ddd;padding-bottom:.2rem;
margin-top:2.2rem}h3{margin-top:1.6rem}h4{margin:1rem 0 .3rem}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{background:#e3f4e3}.fail{background:#fbdcdc}.error{background:#ffe9c7}
.badge{font-size:.75rem;font-weight:600;margin-left:.4rem}
.note{color:#666;font-size:.85rem}.meta{color:#555}
.warning{background:#fff6d6;border-left:4px solid #e6b800;padding:.3rem .6rem;margin:.3rem 0}
.errorbox{background:#fde2e1;border-left:4px solid #c0392b;padding:.3rem .6rem;margin:.3rem 0;
white-space:pre-wrap;font-family:monospace;font-size:.85rem}
pre{background:#f7f7f7;padding:.5rem;overflow-x:auto;font-size:.8rem}
figure{margin:.5rem 0 1.2rem}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{color:#555;font-size:.85rem}details.detail{margin:.6rem 0}
nav ul{columns:2;list-style:none;padding-left:0}nav a{text-decoration:none}
code{font-size:.85rem}.pareto{font-weight:700;color:#b22222}
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def fmt_value(value: Any) -> str:
    """A number as people read it: whole numbers in full, others to 6 significant digits."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.6g}"
    return str(value)


def _status(m: Mapping[str, Any]) -> tuple[str, str]:
    """CSS class and label of a measure entry's status."""
    if m.get("error"):
        return "error", "ERROR"
    return {True: ("pass", "pass"), False: ("fail", "FAIL")}.get(m.get("passed"), ("", ""))


def _threshold(m: Mapping[str, Any]) -> str:
    thr = m.get("threshold") or {}
    parts = [f"≥ {fmt_value(thr['min'])}" if thr.get("min") is not None else "",
             f"≤ {fmt_value(thr['max'])}" if thr.get("max") is not None else ""]
    return " and ".join(p for p in parts if p) or "–"


# -- generic rendering of details ------------------------------------------------------------


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


def _cell(v: Any) -> str:
    if _is_scalar(v):
        cls = ' class="num"' if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
        return f"<td{cls}>{_e(fmt_value(v))}</td>"
    text = json.dumps(v, ensure_ascii=False)
    if len(text) > 200:
        text = text[:200] + "…"
    return f"<td><code>{_e(text)}</code></td>"


def _truncation_note(shown: int, total: int, what: str) -> str:
    if shown >= total:
        return ""
    return f'<p class="note">showing the first {shown} of {total} {what}.</p>'


def records_table(records: Sequence[Mapping[str, Any]], max_rows: int) -> str:
    """A list of row objects (a DataFrame in the JSON report) as a table, truncated."""
    columns: dict[str, None] = {}
    for r in records[:max_rows]:
        columns.update(dict.fromkeys(r))
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(_cell(r.get(c)) for c in columns) + "</tr>"
                   for r in records[:max_rows])
    return (f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            + _truncation_note(min(max_rows, len(records)), len(records), "rows"))


def _mapping_table(d: Mapping[str, Any], max_rows: int, head: tuple[str, str]) -> str:
    items = list(d.items())
    body = "".join(f"<tr><th>{_e(k)}</th>{_cell(v)}</tr>" for k, v in items[:max_rows])
    return (f"<table><thead><tr><th>{_e(head[0])}</th><th>{_e(head[1])}</th></tr></thead>"
            f"<tbody>{body}</tbody></table>"
            + _truncation_note(min(max_rows, len(items)), len(items), "entries"))


def _scalar_list(values: list[Any], max_rows: int) -> str:
    nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(values) <= 12:
        return f"<p>{_e(', '.join(fmt_value(v) for v in values)) or '(empty)'}</p>"
    summary = f"{len(values)} values"
    if len(nums) == len(values):
        srt = sorted(nums)
        summary += (f"; min {fmt_value(srt[0])}, median {fmt_value(srt[len(srt) // 2])}, "
                    f"max {fmt_value(srt[-1])}")
    shown = ", ".join(fmt_value(v) for v in values[:max_rows])
    more = f", … ({len(values) - max_rows} more)" if len(values) > max_rows else ""
    return (f"<p>{_e(summary)}</p><details><summary>values</summary>"
            f"<p>{_e(shown + more)}</p></details>")


def details_html(details: Mapping[str, Any], max_rows: int, depth: int = 0) -> str:
    """Details as tables: scalars in one key/value table, then one block per structured item."""
    scalars = {k: v for k, v in details.items() if _is_scalar(v)}
    out = [_mapping_table(scalars, len(scalars), ("detail", "value"))] if scalars else []
    for key, value in details.items():
        if key in scalars:
            continue
        block = _structured(value, max_rows, depth)
        n = len(value) if isinstance(value, list | Mapping) else 0
        if n > COLLAPSE_ABOVE:  # long tables start folded: the page stays readable
            out.append(f'<details class="detail"><summary><b>{_e(key)}</b> ({n} entries)'
                       f"</summary>{block}</details>")
        else:
            out += [f"<h4>{_e(key)}</h4>", block]
    return "\n".join(out)


def _structured(value: Any, max_rows: int, depth: int) -> str:
    if isinstance(value, list):
        if value and all(isinstance(v, Mapping) for v in value):
            return records_table(value, max_rows)
        if all(_is_scalar(v) for v in value):
            return _scalar_list(value, max_rows)
    if isinstance(value, Mapping):
        if value and all(_is_scalar(v) for v in value.values()):
            return _mapping_table(value, max_rows, ("key", "value"))
        lists = [v for v in value.values() if isinstance(v, list)]
        if (value and len(lists) == len(value) and all(_is_scalar(x) for v in lists for x in v)
                and len({len(v) for v in lists}) == 1):  # a dict of equal-length columns
            n = len(lists[0])
            rows = [{k: value[k][i] for k in value} for i in range(n)]
            return records_table(rows, max_rows)
        if depth < MAX_DEPTH:
            return f'<div class="nested">{details_html(value, max_rows, depth + 1)}</div>'
    text = json.dumps(value, ensure_ascii=False, indent=1)
    if len(text) > MAX_JSON_CHARS:
        text = text[:MAX_JSON_CHARS] + f"\n… ({len(text) - MAX_JSON_CHARS} more characters)"
    return f"<pre>{_e(text)}</pre>"


# -- hook fragments ----------------------------------------------------------------------------


def plugin_fragments(registry: Registry, measure: dict[str, Any],
                     report: dict[str, Any]) -> list[str]:
    """Every ``report_section`` hookimpl's fragment for one measure entry, in registration
    order; a failing plugin gives an error note instead of stopping the report."""
    out: list[str] = []
    args = {"measure": measure, "report": report}
    for impl in registry.pm.hook.report_section.get_hookimpls():
        try:
            fragment = impl.function(**{k: args[k] for k in impl.argnames if k in args})
        except Exception as exc:
            out.append(f'<div class="errorbox">plugin {_e(impl.plugin_name)} could not render '
                       f"this section: {_e(type(exc).__name__)}: {_e(exc)}</div>")
            continue
        if isinstance(fragment, str) and fragment:
            out.append(f'<div class="plugin-section" data-plugin="{_e(impl.plugin_name)}">'
                       f"{fragment}</div>")
    return out


# -- page parts --------------------------------------------------------------------------------


def _variants(report: Report | MultiReport) -> list[dict[str, Any]]:
    data = report.to_dict()
    return data["variants"] if isinstance(report, MultiReport) else [data]


def _entries(variants: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The measure entries of the first variant: label order of the config."""
    return variants[0]["measures"] if variants else []


def summary_html(variants: list[dict[str, Any]], multi: bool) -> str:
    entries = _entries(variants)
    names = [v["variant"] for v in variants]
    head = "<th>measure</th><th>kind</th><th>direction</th><th>threshold</th>"
    head += "".join(f"<th>{_e(n)}</th>" for n in names) if multi else "<th>value</th>"
    rows = []
    for i, first in enumerate(entries):
        cells = []
        for v in variants:
            m = v["measures"][i]
            cls, label = _status(m)
            badge = f'<span class="badge">{label}</span>' if label else ""
            cells.append(
                f'<td class="num value {cls}" data-variant="{_e(v["variant"] or "")}" '
                f'data-label="{_e(m["label"])}" data-value="{_e(json.dumps(m["value"]))}" '
                f'data-status="{label or "ok"}"><span class="v">{_e(fmt_value(m["value"]))}'
                f"</span>{badge}</td>")
        rows.append(
            f'<tr><th><a href="#m-{i}">{_e(first["label"])}</a></th>'
            f'<td>{_e(first["kind"].replace("_measure", ""))}</td>'
            f'<td>{_e(first["direction"])}</td><td>{_e(_threshold(first))}</td>'
            + "".join(cells) + "</tr>")
    return (f'<table id="summary"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
            "</tbody></table>")


def risk_utility_html(ru: Mapping[str, Any]) -> str:
    rows = []
    for p in ru["points"]:
        mark = {True: '<span class="pareto">✓ Pareto-optimal</span>', False: "dominated",
                None: "n/a (missing value)"}[p["pareto"]]
        rows.append(f'<tr data-variant="{_e(p["variant"])}" data-pareto="{_e(p["pareto"])}">'
                    f'<th>{_e(p["variant"])}</th><td class="num">{_e(fmt_value(p["risk"]))}</td>'
                    f'<td class="num">{_e(fmt_value(p["loss"]))}</td><td>{mark}</td></tr>')
    table = (f'<table id="risk-utility"><thead><tr><th>variant</th><th>{_e(ru["risk"])} '
             f'({_e(ru["risk_direction"])})</th><th>{_e(ru["loss"])} ({_e(ru["loss_direction"])})'
             f'</th><th>Pareto</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
    note = ('<p class="note">A variant is Pareto-optimal when no other variant is at least as '
            "good on both measures and strictly better on one.</p>")
    return table + note + ru_map_figure(ru)


def inputs_html(report: Report | MultiReport) -> str:
    rows: list[tuple[str, dict[str, Any] | None]] = []
    if isinstance(report, MultiReport):
        rows.append(("original", report.inputs.get("original")))
        if report.inputs.get("control") is not None:
            rows.append(("control", report.inputs["control"]))
        rows += [(f"variant {v.variant}", v.inputs.get("anonymized")) for v in report.variants]
    else:
        rows += [(role, info) for role, info in report.inputs.items() if info is not None]
    if not rows:
        return '<p class="note">no input data (analytic measures only).</p>'
    keys: dict[str, None] = {}
    for _, info in rows:
        keys.update(dict.fromkeys(k for k in (info or {}) if k not in ("path", "hash")))
    cols = ["path", *keys, "hash"]
    head = "<th>input</th>" + "".join(f"<th>{_e(c)}</th>" for c in cols)
    body = []
    for role, info in rows:
        info = info or {}
        tds = "".join(f"<td><code>{_e(fmt_value(info.get(c)))}</code></td>" if c in ("path", "hash")
                      else _cell(info.get(c)) for c in cols)
        body.append(f"<tr><th>{_e(role)}</th>{tds}</tr>")
    return (f'<table id="inputs"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}'
            "</tbody></table>")


def synthesizer_html(synth: Mapping[str, Any], datasets: Mapping[str, Dataset] | None,
                     seed: int, max_rows: int) -> str:
    out = [f'<p><b>{_e(synth.get("name"))}</b>; params:</p>'
           f'<pre>{_e(json.dumps(synth.get("params"), indent=1, ensure_ascii=False))}</pre>']
    if synth.get("output"):
        out.append(f'<p>replica saved to <code>{_e(synth["output"])}</code></p>')
    out += [f'<div class="warning">{_e(w)}</div>' for w in synth.get("warnings") or []]
    if synth.get("details"):
        out.append(details_html(to_jsonable(synth["details"]), max_rows))
    if datasets and "original" in datasets and "anonymized" in datasets:
        out.append(synthesis_figures(datasets["original"], datasets["anonymized"], seed))
    else:
        out.append('<p class="note">plots of actual against replica need the data: they are '
                   "drawn by <code>anoneval run --html</code>.</p>")
    return "\n".join(out)


def measure_html(i: int, variants: list[dict[str, Any]], multi: bool, registry: Registry,
                 max_rows: int) -> str:
    first = variants[0]["measures"][i]
    out = [f'<section class="measure" id="m-{i}"><h2>{_e(first["label"])}</h2>',
           f'<p class="meta"><b>{_e(first["name"])}</b> · {_e(first["kind"])} · '
           f'{_e(first["direction"])} · threshold {_e(_threshold(first))}</p>']
    if first.get("params"):
        out.append("<details><summary>params</summary><pre>"
                   f'{_e(json.dumps(first["params"], indent=1, ensure_ascii=False))}</pre>'
                   "</details>")
    for v in variants:
        m = v["measures"][i]
        cls, label = _status(m)
        if multi:
            out.append(f'<h3>variant {_e(v["variant"])}</h3>')
        took = ("" if not m["seconds"] else  # 0 exactly: timings are off in the config
                f' <span class="note">(computed in <span class="volatile">'
                f'{m["seconds"]:.3f}</span> s)</span>')
        out.append(f'<p class="{cls}">value <b>{_e(fmt_value(m["value"]))}</b>'
                   f'{f" — {label}" if label else ""}{took}</p>')
        if m.get("error"):
            out.append(f'<div class="errorbox">{_e(m["error"])}</div>')
        out += [f'<div class="warning">{_e(w)}</div>' for w in m.get("warnings") or []]
        out += plugin_fragments(registry, m, v)
        if m.get("details") and multi:  # one variant after another: keep the page short
            out.append(f'<details class="variant-details"><summary>details of variant '
                       f'{_e(v["variant"])}</summary>{details_html(m["details"], max_rows)}'
                       "</details>")
        elif m.get("details"):
            out.append(details_html(m["details"], max_rows))
    out.append("</section>")
    return "\n".join(out)


def render_html(report: Report | MultiReport, plan: Plan | None = None, *,
                datasets: Mapping[str, Dataset] | None = None,
                registry: Registry | None = None, max_rows: int | None = None,
                title: str | None = None, generated: str | None = None) -> str:
    """The report as one self-contained HTML page.

    ``plan`` supplies the description, the registry (its ``report_section`` hookimpls) and the
    config's ``report.max_rows``; ``datasets`` ("original", "anonymized") the data for plots of
    actual against replica; ``generated`` the timestamp shown (default: now, UTC).
    """
    require_matplotlib()
    if registry is None:
        from anoneval.registry import default_registry

        registry = plan.registry if plan is not None else default_registry()
    spec = plan.config.report if plan is not None else None
    max_rows = max_rows or (spec.max_rows if spec is not None else DEFAULT_MAX_ROWS)
    multi = isinstance(report, MultiReport)
    variants = _variants(report)
    generated = generated or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    description = plan.config.description if plan is not None else None
    title = title or ("anoneval report" + (f": {description}" if description else ""))
    sections: list[tuple[str, str, str]] = [  # (id, heading, content)
        ("summary-section", "Summary", summary_html(variants, multi))]
    if isinstance(report, MultiReport) and report.risk_utility is not None:
        sections.append(("ru-section", "Risk–utility",
                         risk_utility_html(report.risk_utility.model_dump())))
    sections.append(("inputs-section", "Inputs", inputs_html(report)))
    synth = report.synthesizer if isinstance(report, Report) else None
    if synth:
        sections.append(("synth-section", "Synthesizer",
                         synthesizer_html(synth, datasets, report.seed, max_rows)))
    toc = [f'<li><a href="#{sid}">{_e(head)}</a></li>' for sid, head, _ in sections]
    toc += [f'<li><a href="#m-{i}">{_e(m["label"])}</a></li>'
            for i, m in enumerate(_entries(variants))]
    n_failed = sum(1 for v in variants for m in v["measures"] if m.get("error"))
    body = [f"<h1>{_e(title)}</h1>",
            f'<p class="meta">anoneval {_e(report.anoneval_version)} · seed {report.seed} · '
            f'generated <span class="volatile">{_e(generated)}</span></p>',
            f'<nav><ul>{"".join(toc)}</ul></nav>']
    if n_failed:
        body.append(f'<div class="errorbox">{n_failed} measure run(s) failed; see their '
                    "sections.</div>")
    body += [f'<section id="{sid}"><h2>{_e(head)}</h2>\n{content}\n</section>'
             for sid, head, content in sections]
    body += [measure_html(i, variants, multi, registry, max_rows)
             for i in range(len(_entries(variants)))]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(title)}</title><style>{CSS}</style></head>\n<body><main>\n"
            + "\n".join(body) + "\n</main></body></html>\n")


def write_html(report: Report | MultiReport, path: str | Path, plan: Plan | None = None, *,
               datasets: Mapping[str, Dataset] | None = None,
               registry: Registry | None = None, max_rows: int | None = None) -> None:
    """Write :func:`render_html` to ``path`` atomically."""
    write_atomic(path, render_html(report, plan, datasets=datasets, registry=registry,
                                   max_rows=max_rows))


__all__ = ["details_html", "fmt_value", "plugin_fragments", "records_table", "render_html",
           "write_html"]
