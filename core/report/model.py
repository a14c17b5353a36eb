"""The evaluation report: JSON for machines, a tidy DataFrame for analysts, text for people."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pydantic_core
from pydantic import BaseModel, Field

from anoneval.core.api import Direction
from anoneval.core.errors import ConfigError
from anoneval.core.report.atomic import write_atomic, write_frame_atomic
from anoneval.core.report.jsonable import to_jsonable
from anoneval.core.report.numbers import (
    ZERO_NOTE,
    fmt_value,
    is_interval,
    is_roundoff,
    unit_of,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from anoneval.registry import Registry


class MeasureReport(BaseModel):
    """One measure's entry, in config order."""

    name: str
    label: str
    kind: str
    value: float | None
    #: ``[low, high]``, the interval of an estimated value (None when the value is exact).
    ci: list[float] | None = None
    #: The level of ``ci`` (the measure's ``confidence_level``), None without an interval.
    confidence_level: float | None = None
    direction: Direction
    details: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None
    warnings: list[str] = Field(default_factory=list)
    threshold: dict[str, float | str | None] | None = None
    passed: bool | None = None
    #: The measure's unit for people (``Measure.unit_for``); not part of the JSON report.
    unit: str | None = Field(None, exclude=True)


class _Reports(BaseModel):
    """What :class:`Report` and :class:`MultiReport` share: JSON, the file and the HTML page."""

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self.model_dump())  # type: ignore[no-any-return]

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON text (UTF-8 characters as they are), written by pydantic's
        serializer, about 10 times as fast as :func:`json.dumps` with an indent. Each number reads
        back as the same float or int; some are written in another form than Python's
        (``0.00001`` for ``1e-05``)."""
        return pydantic_core.to_json(self.to_dict(), indent=indent).decode()

    def write(self, path: str | Path) -> None:
        """The report, written atomically: JSON (``.json``), or the summary as a table
        (``.csv``, ``.parquet``: :meth:`to_table`); any other suffix is an error."""
        fmt = report_format(path)
        if fmt == "json":
            write_atomic(path, self.to_json() + "\n")
        else:
            write_frame_atomic(self.to_table(), path)

    def to_table(self) -> pd.DataFrame:
        """The summary as a table: one row per variant and measure, the columns of
        ``to_frame()`` plus the value's ``unit`` and the ``warnings`` (joined by " | ")."""
        frame = self.to_frame()  # type: ignore[attr-defined]
        measures = [m for r in getattr(self, "variants", [self]) for m in r.measures]
        return frame.assign(unit=[m.unit for m in measures],
                            warnings=[" | ".join(m.warnings) for m in measures])

    def to_html(self, path: str | Path, *, registry: Registry | None = None,
                max_rows: int | None = None, variant_sections: bool | None = None) -> None:
        """The self-contained HTML page (as ``anoneval run --html``), written atomically;
        ``registry`` draws its plugins' report sections (default: the installed plugins)."""
        from anoneval.core.report.html import write_html

        write_html(self, path, registry=registry, max_rows=max_rows,  # type: ignore[arg-type]
                   variant_sections=variant_sections)


class Report(_Reports):
    """One original against one anonymized dataset (or none, for analytic measures)."""

    anoneval_version: str
    seed: int
    variant: str | None = None
    inputs: dict[str, dict[str, Any] | None] = Field(default_factory=dict)
    synthesizer: dict[str, Any] | None = None
    engine: dict[str, Any] | None = None
    measures: list[MeasureReport] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every measure succeeded."""
        return all(m.error is None for m in self.measures)

    def __getitem__(self, label: str) -> MeasureReport:
        for m in self.measures:
            if m.label == label:
                return m
        raise KeyError(f"no measure labelled {label!r}; have: "
                       f"{', '.join(m.label for m in self.measures)}")

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: variant, label, name, kind, value, direction, passed, seconds,
        error."""
        return pd.DataFrame([_row(m, self.variant) for m in self.measures],
                            columns=FRAME_COLUMNS)

    def summary(self, registry: Registry | None = None) -> str:
        """The measures as a fixed-width table, values with their units (see
        :func:`format_summary`)."""
        return format_summary(self.to_frame(), units_by_label(self.measures, registry),
                              [m.warnings for m in self.measures])

    def _repr_html_(self) -> str:
        return frame_html(self.to_frame(), units_by_label(self.measures))


class RUPoint(BaseModel):
    """One variant on the risk–utility map; ``pareto`` is None when a value is missing."""

    variant: str
    risk: float | None
    loss: float | None
    pareto: bool | None
    #: The intervals of ``risk`` and ``loss`` where the measures report one.
    risk_ci: list[float] | None = None
    loss_ci: list[float] | None = None


class RiskUtility(BaseModel):
    """The risk–utility table: one chosen risk measure against one chosen loss measure.

    A variant is Pareto-optimal when no other variant is at least as good on both measures and
    strictly better on one ("good" follows each measure's direction: lower risk or higher
    safety, lower loss). Equal points do not dominate each other; variants whose risk or loss
    is missing (the measure failed) take no part and get ``pareto = None``.
    """

    risk: str
    loss: str
    risk_direction: Direction
    loss_direction: Direction
    points: list[RUPoint] = Field(default_factory=list)

    @property
    def pareto_variants(self) -> list[str]:
        return [p.variant for p in self.points if p.pareto]

    def to_frame(self) -> pd.DataFrame:
        """One row per variant: ``variant``, ``risk``, ``loss`` and ``pareto`` (True, False,
        or None when a value is missing), then the intervals' ends (``risk_low``, ...; None
        where a measure gives no interval)."""
        return pd.DataFrame([{**p.model_dump(exclude={"risk_ci", "loss_ci"}),
                              **_ends("risk", p.risk_ci), **_ends("loss", p.loss_ci)}
                             for p in self.points],
                            columns=["variant", "risk", "loss", "pareto", "risk_low",
                                     "risk_high", "loss_low", "loss_high"])


class MultiReport(_Reports):
    """One original against several named anonymized variants."""

    anoneval_version: str
    seed: int
    inputs: dict[str, dict[str, Any] | None] = Field(default_factory=dict)
    engine: dict[str, Any] | None = None
    variants: list[Report] = Field(default_factory=list)
    risk_utility: RiskUtility | None = None

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.variants)

    def __getitem__(self, name: str) -> Report:
        for r in self.variants:
            if r.variant == name:
                return r
        raise KeyError(f"no variant {name!r}; have: "
                       f"{', '.join(str(r.variant) for r in self.variants)}")

    def to_frame(self) -> pd.DataFrame:
        rows = [_row(m, r.variant) for r in self.variants for m in r.measures]
        return pd.DataFrame(rows, columns=FRAME_COLUMNS)

    def risk_utility_figure(self, registry: Registry | None = None) -> Figure:
        """The risk–utility map of the HTML report as a matplotlib figure (Pareto-optimal
        variants filled and joined; an axis where higher is better drawn reversed). Needs a
        risk–utility table (two or more variants with a risk and a loss measure)."""
        from anoneval.core.report.plots import require_matplotlib, ru_map

        if self.risk_utility is None:
            raise ValueError("this report has no risk–utility table (it needs a risk and a "
                             "loss measure over the variants; see report.ru_map)")
        require_matplotlib()
        units = units_by_label(self.variants[0].measures if self.variants else [], registry)
        ru = self.risk_utility
        return ru_map(ru.model_dump(), units.get(ru.risk), units.get(ru.loss))[0]

    def summary(self, registry: Registry | None = None) -> str:
        """Every variant's measures as a fixed-width table, then the risk–utility table."""
        units = units_by_label(self.variants[0].measures if self.variants else [], registry)
        text = format_summary(self.to_frame(), units,
                              [m.warnings for r in self.variants for m in r.measures])
        if self.risk_utility is not None:
            text += "\n\n" + format_risk_utility(self.risk_utility, units)
        return text

    def _repr_html_(self) -> str:
        units = units_by_label(self.variants[0].measures if self.variants else [])
        out = frame_html(self.to_frame(), units)
        if self.risk_utility is not None:
            ru = self.risk_utility
            rows = [[p.variant, fmt_value(p.risk, units.get(ru.risk), p.risk_ci),
                     fmt_value(p.loss, units.get(ru.loss), p.loss_ci),
                     {True: "✓", False: "", None: "n/a"}[p.pareto]] for p in ru.points]
            out += _table_html(["variant", f"{ru.risk} ({ru.risk_direction})",
                                f"{ru.loss} ({ru.loss_direction})", "Pareto-optimal"], rows)
        return out


#: Report file suffixes and what each writes.
REPORT_FORMATS = {".json": "json", ".csv": "csv", ".parquet": "parquet"}


def report_format(path: str | Path) -> str:
    """What a report path writes, by its suffix: json, csv (the summary table) or parquet
    (the same table); any other suffix is a :class:`ConfigError` listing the allowed ones."""
    suffix = Path(path).suffix.lower()
    if suffix not in REPORT_FORMATS:
        got = suffix or "a file without a suffix"
        raise ConfigError([("output", f"{str(path)!r}: a report is written as "
                                      f"{', '.join(REPORT_FORMATS)} (the JSON report, or the "
                                      f"summary as a table), not {got}")])
    return REPORT_FORMATS[suffix]


FRAME_COLUMNS = ["variant", "label", "name", "kind", "value", "ci_low", "ci_high", "direction",
                 "passed", "seconds", "error"]


def checked_interval(ci: Any, value: float | None, warnings: list[str]) -> list[float] | None:
    """A measure's ``ci`` as the report keeps it: ``[low, high]`` of two finite numbers with
    low <= high, or None (with a warning saying why a given interval was dropped)."""
    if ci is None:
        return None
    if value is None:
        return None
    if not is_interval(ci):
        warnings.append(f"the interval {ci!r} is not two finite numbers low <= high; "
                        "reported as null")
        return None
    return [float(ci[0]), float(ci[1])]


def interval_level(params: Mapping[str, Any], ci: list[float] | None) -> float | None:
    """The level of a measure's interval: its ``confidence_level`` param (``confidence`` for
    measures that name it so); None without an interval."""
    if ci is None:
        return None
    level = params.get("confidence_level", params.get("confidence"))
    return float(level) if isinstance(level, int | float) and not isinstance(level, bool) \
        else None


def _row(m: MeasureReport, variant: str | None) -> dict[str, Any]:
    low, high = m.ci if m.ci is not None else (None, None)
    return {"variant": variant, "label": m.label, "name": m.name, "kind": m.kind,
            "value": m.value, "ci_low": low, "ci_high": high, "direction": m.direction,
            "passed": m.passed, "seconds": m.seconds, "error": m.error}


def _ci_of(r: Any) -> list[float] | None:
    """The interval of a frame row (None when it has none)."""
    low, high = getattr(r, "ci_low", None), getattr(r, "ci_high", None)
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return None
    return [float(low), float(high)]


def _ends(name: str, ci: list[float] | None) -> dict[str, float | None]:
    low, high = ci if ci is not None else (None, None)
    return {f"{name}_low": low, f"{name}_high": high}


def units_by_label(measures: Sequence[MeasureReport],
                   registry: Registry | None = None) -> dict[str, str | None]:
    """Each measure label's unit (see :func:`unit_of`)."""
    return {m.label: m.unit if registry is None else unit_of(registry, m.kind, m.name, m.params)
            for m in measures}


def _status_text(error: Any, passed: Any, n_warnings: int = 0) -> str:
    status = "ERROR" if error else {True: "pass", False: "FAIL"}.get(passed, "ok")
    if n_warnings and not error:
        status += f" ({n_warnings} warning{'s' if n_warnings > 1 else ''})"
    return status


def _summary_rows(frame: pd.DataFrame, units: Mapping[str, str | None],
                  warnings: Sequence[Sequence[str]] | None = None
                  ) -> tuple[list[str], list[dict[str, str]]]:
    cols = ["label", "kind", "value", "direction", "status"]
    if frame["variant"].notna().any():
        cols.insert(0, "variant")
    timed = bool((frame["seconds"] > 0).any())
    if timed:
        cols.append("seconds")
    counts = [len(w) for w in warnings] if warnings is not None else [0] * len(frame)
    rows = []
    for r, n_warn in zip(frame.itertuples(index=False), counts, strict=True):
        value = None if r.value is None or pd.isna(r.value) else float(r.value)
        rows.append({"variant": str(r.variant), "label": r.label,
                     "kind": str(r.kind).replace("_measure", ""),
                     "value": fmt_value(value, units.get(r.label), _ci_of(r)),
                     "direction": r.direction,
                     "status": _status_text(r.error, r.passed, n_warn),
                     "seconds": f"{r.seconds:.3f}"})
    return cols, rows


def format_summary(frame: pd.DataFrame, units: Mapping[str, str | None] | None = None,
                   warnings: Sequence[Sequence[str]] | None = None) -> str:
    """A readable fixed-width table of measures for the terminal: values with thousands
    separators and units (shares in %), round-off shown as 0 with a note, run times only when
    recorded, a status "ok (N warnings)" when a measure warned (``warnings``: each row's
    messages), then each error and each warning under the table."""
    units = units or {}
    cols, rows = _summary_rows(frame, units, warnings)
    right = {"value", "seconds"}
    widths = {c: max([len(c), *(len(row[c]) for row in rows)]) for c in cols}

    def line(row: Mapping[str, str]) -> str:
        return "  ".join(row[c].rjust(widths[c]) if c in right else row[c].ljust(widths[c])
                         for c in cols).rstrip()

    lines = [line({c: c for c in cols}), "  ".join("-" * widths[c] for c in cols)]
    lines += [line(row) for row in rows]
    if any(is_roundoff(v) for v in frame["value"]):
        lines.append(f"({ZERO_NOTE})")
    multi = "variant" in cols
    for r in frame[frame["error"].notna()].itertuples(index=False):
        where = f"[{r.variant}] " if multi else ""
        lines.append(f"error in {where}{r.label}: {r.error}")
    grouped: dict[tuple[str, str], list[str]] = {}  # one line per warning, naming its measures
    for r, notes in zip(frame.itertuples(index=False), warnings or [], strict=False):
        where = f"[{r.variant}] " if multi else ""
        for w in notes:
            grouped.setdefault((where, w), []).append(str(r.label))
    lines += [f"warning in {where}{', '.join(labels)}: {w}"
              for (where, w), labels in grouped.items()]
    return "\n".join(lines)


def format_sweep(frame: pd.DataFrame, param: str,
                 units: Mapping[str, str | None] | None = None) -> str:
    """A sweep's values as a fixed-width table: the param's value, the variant (when there
    are variants), label, value with its unit and status; an ``error`` column only when a
    run failed."""
    units = units or {}
    cols = [param, "variant", "label", "value", "status", "error"]
    if not frame["variant"].notna().any():
        cols.remove("variant")
    if not frame["error"].notna().any():
        cols.remove("error")
    rows = [{param: fmt_value(r.param_value), "variant": str(r.variant), "label": r.label,
             "value": fmt_value(None if r.value is None or pd.isna(r.value) else float(r.value),
                                units.get(r.label), _ci_of(r)),
             "status": _status_text(r.error, r.passed), "error": str(r.error or "")}
            for r in frame.itertuples(index=False)]
    widths = {c: max([len(c), *(len(row[c]) for row in rows)]) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols).rstrip(),
             "  ".join("-" * widths[c] for c in cols)]
    lines += ["  ".join(row[c].rjust(widths[c]) if c in ("value", param) else
                        row[c].ljust(widths[c]) for c in cols).rstrip() for row in rows]
    if any(is_roundoff(v) for v in frame["value"]):
        lines.append(f"({ZERO_NOTE})")
    return "\n".join(lines)


def _table_html(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    from anoneval.core.report.templating import render

    return str(render("repr.html.j2", columns=columns, note="",
                      rows=[[{"text": c, "num": False, "code": False} for c in row]
                            for row in rows]))


def frame_html(frame: pd.DataFrame, units: Mapping[str, str | None]) -> str:
    """The summary as a compact, escaped HTML table (Jupyter's ``_repr_html_``)."""
    cols, rows = _summary_rows(frame, units)
    return _table_html(cols, [[row[c] for c in cols] for row in rows])


def pareto_optimal(points: Sequence[tuple[float, float]]) -> list[bool]:
    """Which 2-D points no other point dominates (both coordinates: lower is better).

    ``q`` dominates ``p`` when ``q <= p`` in both coordinates and ``q < p`` in at least one.
    """
    arr = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    le = (arr[:, None, :] <= arr[None, :, :]).all(axis=2)  # le[q, p]: q at least as good as p
    lt = (arr[:, None, :] < arr[None, :, :]).any(axis=2)
    dominated = (le & lt).any(axis=0)
    return [not d for d in dominated.tolist()]


def build_risk_utility(variants: Sequence[Report], risk: str | None = None,
                       loss: str | None = None) -> RiskUtility | None:
    """The risk–utility table of ``variants`` for measures labelled ``risk`` and ``loss``.

    Without labels, the first risk measure and the first loss measure of the first variant are
    used; None when there is no such pair.
    """
    if not variants:
        return None
    first = variants[0].measures
    if risk is None:
        risk = next((m.label for m in first if m.kind == "risk_measure"), None)
    if loss is None:
        loss = next((m.label for m in first if m.kind == "loss_measure"), None)
    if risk is None or loss is None:
        return None
    r0, l0 = variants[0][risk], variants[0][loss]
    points = [RUPoint(variant=str(v.variant), risk=v[risk].value, loss=v[loss].value,
                      pareto=None, risk_ci=v[risk].ci, loss_ci=v[loss].ci) for v in variants]
    sign_r = 1.0 if r0.direction.higher_is_worse else -1.0
    sign_l = 1.0 if l0.direction.higher_is_worse else -1.0
    full = [i for i, p in enumerate(points) if p.risk is not None and p.loss is not None]
    marks = pareto_optimal([(sign_r * points[i].risk, sign_l * points[i].loss)  # type: ignore
                            for i in full])
    for i, mark in zip(full, marks, strict=True):
        points[i].pareto = mark
    return RiskUtility(risk=risk, loss=loss, risk_direction=r0.direction,
                       loss_direction=l0.direction, points=points)


def format_risk_utility(ru: RiskUtility, units: Mapping[str, str | None] | None = None) -> str:
    """The risk–utility table as fixed-width text (``*`` marks Pareto-optimal variants)."""
    units = units or {}
    rows = [(p.variant, fmt_value(p.risk, units.get(ru.risk), p.risk_ci),
             fmt_value(p.loss, units.get(ru.loss), p.loss_ci),
             {True: "*", False: "", None: "n/a"}[p.pareto]) for p in ru.points]
    head = ("variant", f"{ru.risk} ({ru.risk_direction})", f"{ru.loss} ({ru.loss_direction})",
            "pareto")
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(4)]
    lines = ["risk-utility (* = Pareto-optimal):",
             "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(line.rstrip() for line in lines)
