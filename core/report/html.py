"""The self-contained HTML report: one file, no network assets, plots embedded as PNG.

Rendered from the jinja2 templates in ``core/report/templates`` with autoescaping, so every string
that comes from a config, the data, a label, a variant name or a plugin's details is shown as
text. The HTML fragments ``report_section`` plugins return are filtered to harmless markup
(:mod:`anoneval.core.report.sanitize`), and the page carries a Content-Security-Policy that
allows no script, no form submission and no navigation, as a second line of defence.

Layout: a summary table (each measure's value with its unit and interval, direction and
pass/fail against the config's thresholds; one row per variant for many variants, scrolling
sideways under a fixed variant column, headers never broken inside a word), the risk–utility
table and map (intervals as error bars, labels that overlap nothing), the notices (a warning
given on several measures, once, with the measures and variants it concerns), the inputs
(paths, rows, hashes), the synthesizer (with plots of actual against replica when the data
are passed), and a section per measure: for many variants one chart of the value across
variants, then each variant's value, the fragments of every ``report_section`` hookimpl (the
built-in families' plots come through the same hook) and its details as tables.
Per-variant sections are drawn up to :data:`VARIANT_SECTIONS_UP_TO` variants unless the
config's ``report.variant_sections`` says otherwise, so the number of images does not grow with
the number of variants.

The output is deterministic: the same report gives the same bytes except inside
``<span class="volatile">`` (the generation time and the measures' run times).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anoneval.core.report.atomic import write_atomic
from anoneval.core.report.jsonable import to_jsonable
from anoneval.core.report.numbers import ZERO_NOTE, fmt_value, is_roundoff, unit_label, unit_of
from anoneval.core.report.plots import (
    require_matplotlib,
    ru_map_figure,
    synthesis_figures,
    variants_figure,
)
from anoneval.core.report.sanitize import sanitize_fragment
from anoneval.core.report.templating import Markup, render

if TYPE_CHECKING:
    from anoneval.core.data.kinds import Dataset
    from anoneval.core.report.model import MultiReport, Report
    from anoneval.core.run.config import Plan
    from anoneval.registry import Registry

DEFAULT_MAX_ROWS = 50
MAX_DEPTH = 3
MAX_JSON_CHARS = 4000
COLLAPSE_ABOVE = 12
#: Per-variant sections (plugin plots, details) are drawn up to this many variants by default.
VARIANT_SECTIONS_UP_TO = 12


def _status(m: Mapping[str, Any]) -> tuple[str, str]:
    """CSS class and label of a measure entry's status."""
    if m.get("error"):
        return "error", "ERROR"
    return {True: ("pass", "pass"), False: ("fail", "FAIL")}.get(m.get("passed"), ("", ""))


def _threshold(m: Mapping[str, Any], unit: str | None = None) -> str:
    thr = m.get("threshold") or {}
    parts = [f"≥ {fmt_value(thr['min'], unit)}" if thr.get("min") is not None else "",
             f"≤ {fmt_value(thr['max'], unit)}" if thr.get("max") is not None else ""]
    text = " and ".join(p for p in parts if p) or "–"
    on = thr.get("on", "value")
    return text if on == "value" or text == "–" else f"{text} ({on} end of ci)"


def _level(m: Mapping[str, Any]) -> str:
    """The interval's level as people read it ("95 % interval"), "" without one."""
    level = m.get("confidence_level")
    if m.get("ci") is None or not isinstance(level, float | int):
        return ""
    return f"{fmt_value(float(level), 'share')} interval"


# -- details as blocks for the templates -----------------------------------------------------


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


def _cell(v: Any) -> dict[str, Any]:
    if _is_scalar(v):
        return {"text": fmt_value(v), "code": False,
                "num": isinstance(v, (int, float)) and not isinstance(v, bool)}
    text = json.dumps(v, ensure_ascii=False)
    return {"text": text[:200] + "…" if len(text) > 200 else text, "code": True, "num": False}


def _code(v: Any) -> dict[str, Any]:
    return {"text": fmt_value(v), "code": True, "num": False}


def records_block(records: Sequence[Mapping[str, Any]], max_rows: int) -> dict[str, Any]:
    """Row objects as a template table block (``_macros.html.j2``), truncated."""
    columns: dict[str, None] = {}
    for r in records[:max_rows]:
        columns.update(dict.fromkeys(r))
    return {"type": "records", "columns": [str(c) for c in columns],
            "rows": [[_cell(r.get(c)) for c in columns] for r in records[:max_rows]],
            "shown": min(max_rows, len(records)), "total": len(records), "what": "rows"}


def _mapping(d: Mapping[str, Any], max_rows: int, head: tuple[str, str]) -> dict[str, Any]:
    items = list(d.items())
    return {"type": "mapping", "head": head,
            "rows": [(str(k), _cell(v)) for k, v in items[:max_rows]],
            "shown": min(max_rows, len(items)), "total": len(items), "what": "entries"}


def _scalar_list(values: list[Any], max_rows: int) -> dict[str, Any]:
    if len(values) <= 12:
        return {"type": "list", "summary": ", ".join(fmt_value(v) for v in values) or "(empty)",
                "more": None}
    nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    summary = f"{len(values):,} values"
    if len(nums) == len(values):
        srt = sorted(nums)
        summary += (f"; min {fmt_value(srt[0])}, median {fmt_value(srt[len(srt) // 2])}, "
                    f"max {fmt_value(srt[-1])}")
    shown = ", ".join(fmt_value(v) for v in values[:max_rows])
    more = f", … ({len(values) - max_rows:,} more)" if len(values) > max_rows else ""
    return {"type": "list", "summary": summary, "more": shown + more}


def details_blocks(details: Mapping[str, Any], max_rows: int,
                   depth: int = 0) -> list[dict[str, Any]]:
    """Details as template blocks: scalars in one key/value table, then one block per
    structured item (long ones folded)."""
    scalars = {k: v for k, v in details.items() if _is_scalar(v)}
    out = ([{"key": None, "fold": 0, "block": _mapping(scalars, len(scalars),
                                                       ("detail", "value"))}]
           if scalars else [])
    for key, value in details.items():
        if key in scalars:
            continue
        n = len(value) if isinstance(value, list | Mapping) else 0
        out.append({"key": str(key), "fold": n if n > COLLAPSE_ABOVE else 0,
                    "block": _structured(value, max_rows, depth)})
    return out


def _structured(value: Any, max_rows: int, depth: int) -> dict[str, Any]:
    if isinstance(value, list):
        if value and all(isinstance(v, Mapping) for v in value):
            return records_block(value, max_rows)
        if all(_is_scalar(v) for v in value):
            return _scalar_list(value, max_rows)
    if isinstance(value, Mapping):
        if value and all(_is_scalar(v) for v in value.values()):
            return _mapping(value, max_rows, ("key", "value"))
        lists = [v for v in value.values() if isinstance(v, list)]
        if (value and len(lists) == len(value) and all(_is_scalar(x) for v in lists for x in v)
                and len({len(v) for v in lists}) == 1):  # a dict of equal-length columns
            rows = [{k: value[k][i] for k in value} for i in range(len(lists[0]))]
            return records_block(rows, max_rows)
        if depth < MAX_DEPTH:
            return {"type": "nested", "children": details_blocks(value, max_rows, depth + 1)}
    text = json.dumps(value, ensure_ascii=False, indent=1)
    if len(text) > MAX_JSON_CHARS:
        text = text[:MAX_JSON_CHARS] + f"\n… ({len(text) - MAX_JSON_CHARS:,} more characters)"
    return {"type": "json", "text": text}


def details_html(details: Mapping[str, Any], max_rows: int) -> Markup:
    """Details as escaped HTML tables (see :func:`details_blocks`)."""
    return render("details.html.j2", items=details_blocks(details, max_rows))


def records_table(records: Sequence[Mapping[str, Any]], max_rows: int) -> Markup:
    """A list of row objects as an escaped HTML table, truncated to ``max_rows``."""
    return render("details.html.j2", items=[{"key": None, "fold": 0,
                                             "block": records_block(records, max_rows)}])


# -- hook fragments ----------------------------------------------------------------------------


def plugin_fragments(registry: Registry, measure: dict[str, Any],
                     report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every ``report_section`` hookimpl's fragment for one measure entry, in registration
    order; a failing plugin gives an error note instead of stopping the report.

    A fragment is HTML written by the plugin (code the user installed); it must escape what it
    shows, e.g. with :func:`markupsafe.escape` or :func:`anoneval.core.report.plots.note`. What
    it lets through is filtered to harmless markup (:mod:`anoneval.core.report.sanitize`: no
    script, no ``<meta>`` refresh, no ``<base>``, no form).
    """
    out: list[dict[str, Any]] = []
    args = {"measure": measure, "report": report}
    for impl in registry.pm.hook.report_section.get_hookimpls():
        try:
            fragment = impl.function(**{k: args[k] for k in impl.argnames if k in args})
        except Exception as exc:
            out.append({"plugin": impl.plugin_name, "html": None,
                        "error": f"{type(exc).__name__}: {exc}"})
            continue
        if isinstance(fragment, str) and fragment:
            out.append({"plugin": impl.plugin_name, "html": Markup(sanitize_fragment(fragment)),
                        "error": None})
    return out


# -- page parts --------------------------------------------------------------------------------


def _multi(report: Report | MultiReport) -> bool:
    """Whether ``report`` has variants: a :class:`MultiReport` (read from the model, which
    imports this module for its ``to_html``, so the classes are not imported here)."""
    return hasattr(report, "variants")


def _variants(report: Report | MultiReport) -> list[dict[str, Any]]:
    data = report.to_dict()
    return data["variants"] if _multi(report) else [data]


def _entries(variants: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The measure entries of the first variant: label order of the config."""
    return variants[0]["measures"] if variants else []


def measure_units(registry: Registry, entries: Sequence[Mapping[str, Any]]) -> list[str | None]:
    """Each entry's unit: the ``unit`` its measure class declares (None when unknown)."""
    return [unit_of(registry, m["kind"], m["name"], m.get("params")) for m in entries]


def _value_cell(v: Mapping[str, Any], m: Mapping[str, Any], unit: str | None) -> dict[str, Any]:
    cls, label = _status(m)
    return {"cls": cls, "badge": label, "status": label or "ok", "variant": v["variant"] or "",
            "label": m["label"], "json": json.dumps(m["value"]),
            "ci": json.dumps(m.get("ci")), "level": _level(m),
            "text": fmt_value(m["value"], unit, m.get("ci"))}


def _summary(variants: list[dict[str, Any]], multi: bool,
             units: list[str | None]) -> dict[str, Any]:
    entries = _entries(variants)
    measures = [{"label": m["label"], "kind": m["kind"].replace("_measure", ""),
                 "direction": m["direction"], "threshold": _threshold(m, u)}
                for m, u in zip(entries, units, strict=True)]
    rows = [{"variant": v["variant"] or "",
             "cells": [_value_cell(v, m, u) for m, u in zip(v["measures"], units, strict=True)]}
            for v in variants]
    rounded = any(is_roundoff(m["value"]) for v in variants for m in v["measures"])
    levels = sorted({lv for v in variants for m in v["measures"] if (lv := _level(m))})
    return {"multi": multi, "measures": measures, "rows": rows,
            "zero_note": ZERO_NOTE if rounded else "", "levels": ", ".join(levels)}


def _risk_utility(ru: Mapping[str, Any], units: Mapping[str, str | None]) -> dict[str, Any]:
    points = [{"variant": p["variant"], "pareto": p["pareto"],
               "risk": fmt_value(p["risk"], units.get(ru["risk"]), p.get("risk_ci")),
               "loss": fmt_value(p["loss"], units.get(ru["loss"]), p.get("loss_ci"))}
              for p in ru["points"]]
    return {**ru, "points": points,
            "figure": ru_map_figure(ru, units.get(ru["risk"]), units.get(ru["loss"]))}


def _inputs(report: Report | MultiReport) -> dict[str, Any]:
    rows: list[tuple[str, dict[str, Any] | None]] = []
    if _multi(report):
        rows.append(("original", report.inputs.get("original")))
        if report.inputs.get("control") is not None:
            rows.append(("control", report.inputs["control"]))
        rows += [(f"variant {v.variant}", v.inputs.get("anonymized")) for v in report.variants]
    else:
        rows += [(role, info) for role, info in report.inputs.items() if info is not None]
    keys: dict[str, None] = {}
    for _, info in rows:
        keys.update(dict.fromkeys(k for k in (info or {}) if k not in ("path", "hash")))
    cols = ["path", *keys, "hash"]
    return {"columns": cols,
            "rows": [(role, [_code((info or {}).get(c)) if c in ("path", "hash")
                             else _cell((info or {}).get(c)) for c in cols])
                     for role, info in rows]}


def _synthesizer(synth: Mapping[str, Any], datasets: Mapping[str, Dataset] | None,
                 seed: int, max_rows: int) -> dict[str, Any]:
    figures = None
    if datasets and "original" in datasets and "anonymized" in datasets:
        figures = synthesis_figures(datasets["original"], datasets["anonymized"], seed)
    return {"name": synth.get("name"),
            "params": json.dumps(synth.get("params"), indent=1, ensure_ascii=False),
            "output": synth.get("output"), "warnings": synth.get("warnings") or [],
            "details": details_blocks(to_jsonable(synth["details"]), max_rows)
            if synth.get("details") else [], "figures": figures}


def shared_notices(variants: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The warnings a variant repeats on more than one measure (e.g. about its inputs): each
    once, with the measures and the variants it applies to (variants giving the same notice
    on the same measures share one entry); the measure sections leave them out."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for v in variants:
        where: dict[str, list[str]] = {}
        for m in v["measures"]:
            for w in dict.fromkeys(m.get("warnings") or []):
                where.setdefault(w, []).append(m["label"])
        for w, labels in where.items():
            if len(labels) > 1:
                on = ("all measures" if len(labels) == len(v["measures"])
                      else ", ".join(labels))
                grouped.setdefault((w, on), []).append(v["variant"] or "")
    return [{"text": w, "labels": on, "variants": names,
             "where": ("" if len(variants) < 2 else "every variant"
                       if len(names) == len(variants) else
                       f"variant{'s' if len(names) > 1 else ''} {', '.join(names)}")}
            for (w, on), names in grouped.items()]


def _measure(i: int, variants: list[dict[str, Any]], multi: bool, registry: Registry,
             max_rows: int, unit: str | None, per_variant: bool,
             shared: Mapping[str, set[str]] | None = None) -> dict[str, Any]:
    first = variants[0]["measures"][i]
    out: dict[str, Any] = {
        "index": i, "label": first["label"], "name": first["name"], "kind": first["kind"],
        "direction": first["direction"], "threshold": _threshold(first, unit),
        "unit": unit_label(unit) if unit != "share" else "share (shown in %)",
        "params": json.dumps(first["params"], indent=1, ensure_ascii=False)
        if first.get("params") else "", "chart": None, "variant_note": "", "variants": [],
        "failures": []}
    if multi:
        out["chart"] = variants_figure(
            first["label"], [v["variant"] or "" for v in variants],
            [v["measures"][i]["value"] for v in variants], first.get("threshold"),
            first["direction"], unit, cis=[v["measures"][i].get("ci") for v in variants],
            passed=[v["measures"][i].get("passed") for v in variants])
        if not per_variant:
            out["variant_note"] = (
                f"{len(variants):,} variants: each variant's plots, details and warnings are "
                "left out (set report.variant_sections to true in the config to draw them); "
                "the summary table has every value.")
            out["failures"] = [(v["variant"] or "", v["measures"][i]["error"]) for v in variants
                               if v["measures"][i].get("error")]
            return out
    for v in variants:
        m = v["measures"][i]
        cls, label = _status(m)
        common = (shared or {}).get(v["variant"] or "", set())
        own = [w for w in m.get("warnings") or [] if w not in common]
        n_common = len(set(m.get("warnings") or []) & common)
        out["variants"].append({
            "variant": v["variant"] or "", "cls": cls, "badge": label,
            "text": fmt_value(m["value"], unit, m.get("ci")), "level": _level(m),
            "seconds": f"{m['seconds']:.3f}" if m["seconds"] else "",  # 0: timings off
            "error": m.get("error"), "warnings": own,
            "notices": f"{n_common} notice{'s' if n_common > 1 else ''} shared with other "
                       "measures: see Notices" if n_common else "",
            "fragments": plugin_fragments(registry, m, v),
            "details": details_blocks(m["details"], max_rows) if m.get("details") else []})
    return out


def render_html(report: Report | MultiReport, plan: Plan | None = None, *,
                datasets: Mapping[str, Dataset] | None = None,
                registry: Registry | None = None, max_rows: int | None = None,
                title: str | None = None, generated: str | None = None,
                variant_sections: bool | None = None) -> str:
    """The report as one self-contained HTML page.

    ``plan`` supplies the description, the registry (its ``report_section`` hookimpls) and the
    config's ``report`` options; ``datasets`` ("original", "anonymized") the data for plots of
    actual against replica; ``generated`` the timestamp shown (default: now, UTC);
    ``variant_sections`` draws each variant's plots and details (default: the config's
    ``report.variant_sections``, else only up to :data:`VARIANT_SECTIONS_UP_TO` variants).
    """
    require_matplotlib()
    if registry is None:
        from anoneval.registry import default_registry

        registry = plan.registry if plan is not None else default_registry()
    registry.load_report_sections()
    spec = plan.config.report if plan is not None else None
    max_rows = max_rows or (spec.max_rows if spec is not None else DEFAULT_MAX_ROWS)
    if variant_sections is None and spec is not None:
        variant_sections = spec.variant_sections
    multi = _multi(report)
    variants = _variants(report)
    if variant_sections is None:
        variant_sections = len(variants) <= VARIANT_SECTIONS_UP_TO
    entries = _entries(variants)
    units = measure_units(registry, entries)
    generated = generated or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    description = plan.config.description if plan is not None else None
    title = title or ("anoneval report" + (f": {description}" if description else ""))
    ru = None
    if _multi(report) and report.risk_utility is not None:  # type: ignore[union-attr]
        ru = _risk_utility(report.risk_utility.model_dump(),
                           {m["label"]: u for m, u in zip(entries, units, strict=True)})
    synth = None if _multi(report) else report.synthesizer  # type: ignore[union-attr]
    toc = [("summary-section", "Summary")]
    toc += [("ru-section", "Risk–utility")] if ru else []
    notices = shared_notices(variants)
    shared: dict[str, set[str]] = {}
    for n in notices:
        for name in n["variants"]:
            shared.setdefault(name, set()).add(n["text"])
    toc += [("notices-section", "Notices")] if notices else []
    toc += [("inputs-section", "Inputs")]
    toc += [("synth-section", "Synthesizer")] if synth else []
    toc += [(f"m-{i}", m["label"]) for i, m in enumerate(entries)]
    return str(render(
        "report.html.j2", title=title, version=report.anoneval_version, seed=report.seed,
        generated=generated, toc=toc, multi=multi,
        n_failed=sum(1 for v in variants for m in v["measures"] if m.get("error")),
        summary=_summary(variants, multi, units), ru=ru, inputs=_inputs(report),
        notices=notices,
        synth=_synthesizer(synth, datasets, report.seed, max_rows) if synth else None,
        measures=[_measure(i, variants, multi, registry, max_rows, units[i], variant_sections,
                           shared) for i in range(len(entries))]))


def write_html(report: Report | MultiReport, path: str | Path, plan: Plan | None = None, *,
               datasets: Mapping[str, Dataset] | None = None,
               registry: Registry | None = None, max_rows: int | None = None,
               variant_sections: bool | None = None) -> None:
    """Write :func:`render_html` to ``path`` atomically."""
    write_atomic(path, render_html(report, plan, datasets=datasets, registry=registry,
                                   max_rows=max_rows, variant_sections=variant_sections))


__all__ = ["VARIANT_SECTIONS_UP_TO", "details_blocks", "details_html", "fmt_value",
           "plugin_fragments", "records_block", "records_table", "render_html", "write_html"]
