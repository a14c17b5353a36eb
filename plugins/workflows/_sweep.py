"""The parameter sweep: evaluate a config over a grid of one param and plot the curves.

    anoneval sweep CONFIG --param measures[0].params.gamma --values 0:1:0.05

The param is a JSON path into the config: ``measures[i].params.<key>`` (nested keys allowed;
only measure ``i`` is evaluated unless ``--all-measures``), ``measures[*].params.<key>`` (the
same value in every measure, e.g. one curve per number of categories), ``synthesizer.params.<key>``
or ``seed`` (every measure). Values are ``start:stop:step`` (stop included when it lies on the
grid), a comma list (``2,5,10``; each item read as JSON when it parses, else as text) or a JSON
array. The config is re-validated for every value, so a value outside a param's bounds is an
error naming the value before anything runs. Input files are loaded once and reused for every
value (with their cached group-bys); each value gets a fresh evaluator because its measures'
``prepare`` may depend on the param.

Outputs, next to ``--output PREFIX``: ``PREFIX.json`` (every report), ``PREFIX.csv`` (one row per
value, variant and measure) and, unless ``--plot none``, ``PREFIX.png`` and a self-contained
``PREFIX.html`` with the curves (one panel per measure, or one for all with ``--overlay``).
:func:`sweep` is the Python API; the ``anoneval sweep`` command is the built-in plugin
``anoneval.plugins.workflows.sweep``. ``examples/rappor_sweep.json`` draws the RAPPOR leakage
figure this way.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field

from anoneval.core.data.files import loads
from anoneval.core.data.kinds import Dataset
from anoneval.core.data.progress import progress_bar
from anoneval.core.errors import ConfigError, DataError
from anoneval.core.report.atomic import write_atomic, write_bytes_atomic, write_frame_atomic
from anoneval.core.report.jsonable import to_jsonable
from anoneval.core.report.model import FRAME_COLUMNS, MultiReport, Report, units_by_label
from anoneval.core.run.config import Plan, json_path, load_config, validate_config
from anoneval.registry import Registry, default_registry, own_version

MAX_POINTS = 10_000
_STEP = re.compile(r"^\s*([^:]+):([^:]+):([^:]+)\s*$")
_PART = re.compile(r"([^.\[\]]+)|\[(\d+|\*)\]")
#: In a parsed param path: every entry of the list (``measures[*]``).
EVERY = "[*]"


class SweepRun(BaseModel):
    """The report for one value of the swept param."""

    value: Any
    report: Report | MultiReport


class SweepReport(BaseModel):
    """All runs of a sweep, in grid order."""

    anoneval_version: str
    param: str
    values: list[Any]
    runs: list[SweepRun] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.report.ok for r in self.runs)

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self.model_dump())  # type: ignore[no-any-return]

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)

    def to_frame(self) -> pd.DataFrame:
        """One row per value, variant and measure: ``param_value`` then the report columns."""
        parts = []
        for r in self.runs:
            part = r.report.to_frame()
            part.insert(0, "param_value", [r.value] * len(part))
            parts.append(part)
        frame = (pd.concat(parts, ignore_index=True) if parts
                 else pd.DataFrame(columns=[*FRAME_COLUMNS, "param_value"]))
        return frame[["param_value", *FRAME_COLUMNS]]

    def summary(self, registry: Registry | None = None) -> str:
        """One line per value, variant and measure (values with units); an ``error`` column
        only when a run failed."""
        from anoneval.core.report.model import format_sweep

        first = self.runs[0].report if self.runs else None
        measures = (first.variants[0].measures if isinstance(first, MultiReport)
                    else first.measures if first is not None else [])
        return format_sweep(self.to_frame(), self.param, units_by_label(measures, registry))


def parse_values(text: str) -> list[Any]:
    """``start:stop:step``, ``a,b,c`` or a JSON array → the list of values."""
    text = text.strip()
    if text.startswith("["):
        try:
            values = loads(text, "--values")
        except DataError as exc:
            raise ConfigError([("--values", f"invalid JSON array: {exc}")]) from None
    elif (m := _STEP.match(text)) is not None:
        values = _grid(*m.groups())
    else:
        values = [_scalar(part) for part in text.split(",") if part.strip()]
    if not values:
        raise ConfigError([("--values", f"no values in {text!r}; use start:stop:step, a,b,c "
                                        "or a JSON array")])
    if len(values) > MAX_POINTS:
        raise ConfigError([("--values", f"{len(values)} values; at most {MAX_POINTS}")])
    return list(values)


def _scalar(part: str) -> Any:
    try:
        return json.loads(part)
    except json.JSONDecodeError:
        return part.strip()


def _grid(start_s: str, stop_s: str, step_s: str) -> list[float | int]:
    try:
        start, stop, step = (float(s) for s in (start_s, stop_s, step_s))
    except ValueError:
        raise ConfigError([("--values", f"{start_s}:{stop_s}:{step_s}: start, stop and step "
                                        "must be numbers")]) from None
    if not all(math.isfinite(v) for v in (start, stop, step)):
        raise ConfigError([("--values", "start, stop and step must be finite")])
    if step <= 0:
        raise ConfigError([("--values", f"step must be > 0 (got {step_s.strip()})")])
    if stop < start:
        raise ConfigError([("--values", f"stop {stop_s.strip()} is below start "
                                        f"{start_s.strip()}")])
    n = math.floor((stop - start) / step + 1e-9) + 1
    if n > MAX_POINTS:
        raise ConfigError([("--values", f"{n} grid points; at most {MAX_POINTS}")])
    integral = all(re.fullmatch(r"\s*[+-]?\d+\s*", s) for s in (start_s, stop_s, step_s))
    # start + i*step, rounded to 12 decimals so 0.1*3 prints as 0.3
    return [int(start) + i * int(step) if integral else round(start + i * step, 12)
            for i in range(n)]


def param_text(parts: Sequence[str | int]) -> str:
    """A parsed param path as text again (``measures[*].params.gamma``)."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif p == EVERY:
            out += EVERY
        else:
            out += f".{p}" if out else p
    return out


def parse_param(path: str) -> list[str | int]:
    """``measures[0].params.gamma`` → ``["measures", 0, "params", "gamma"]``, checked.

    ``measures[*].params.<name>`` sets the param in every measure (:data:`EVERY`).
    """
    parts: list[str | int] = []
    pos = 0
    for m in _PART.finditer(path):
        between = path[pos:m.start()]
        if between not in ("", "."):
            break
        index = m.group(2)
        parts.append(m.group(1) if index is None else EVERY if index == "*" else int(index))
        pos = m.end()
    ok = pos == len(path) and parts and (
        parts == ["seed"]
        or (len(parts) >= 4 and parts[0] == "measures"
            and (isinstance(parts[1], int) or parts[1] == EVERY) and parts[2] == "params"
            and EVERY not in parts[3:])
        or (len(parts) >= 3 and parts[:2] == ["synthesizer", "params"]
            and EVERY not in parts[2:]))
    if not ok:
        raise ConfigError([("--param", f"{path!r} is not a param to sweep; allowed: "
                                       "measures[<i>].params.<name>, "
                                       "measures[*].params.<name>, "
                                       "synthesizer.params.<name>, seed")])
    return parts


def set_param(raw: dict[str, Any], path: Sequence[str | int], value: Any) -> dict[str, Any]:
    """A deep copy of ``raw`` with ``value`` at ``path`` (missing objects are created)."""
    out = copy.deepcopy(raw)
    _assign(out, list(path), value, [])
    return out


def _assign(node: Any, path: list[str | int], value: Any, done: list[str | int]) -> None:
    key, rest = path[0], path[1:]
    where = param_text([*done, key])
    if isinstance(key, int) or key == EVERY:
        if not isinstance(node, list):
            raise ConfigError([("--param", f"{where}: not a list in the config")])
        if isinstance(key, int) and not -len(node) <= key < len(node):
            raise ConfigError([("--param", f"{where}: the config has {len(node)} entries "
                                           "there")])
        for i in range(len(node)) if key == EVERY else [key]:  # type: ignore[list-item]
            if rest:
                _assign(node[i], rest, value, [*done, i])
            else:
                node[i] = value
        return
    if not isinstance(node, dict):
        raise ConfigError([("--param", f"{param_text(done)}: not an object in the config")])
    if rest:
        _assign(node.setdefault(key, {}), rest, value, [*done, key])
    else:
        node[key] = value


def only_swept_measure(raw: dict[str, Any], path: list[str | int]) -> tuple[dict[str, Any],
                                                                            list[str | int]]:
    """For a param of ``measures[i]``, the config with that measure alone and the new path."""
    measures = raw.get("measures")
    i = path[1]
    assert isinstance(i, int)
    if not isinstance(measures, list) or not -len(measures) <= i < len(measures):
        n = len(measures) if isinstance(measures, list) else 0
        raise ConfigError([("--param", f"measures[{i}]: the config has {n} measures")])
    out = {**raw, "measures": [measures[i]]}
    if isinstance(raw.get("report"), dict):
        out["report"] = {k: v for k, v in raw["report"].items() if k != "ru_map"}
    return out, ["measures", 0, *path[2:]]


def sweep(config: dict[str, Any] | str | Path, param: str, values: Sequence[Any] | str, *,
          base_dir: str | Path | None = None, registry: Registry | None = None,
          show_progress: bool = False, all_measures: bool = False,
          engine: Any = None) -> SweepReport:
    """Evaluate ``config`` (a dict or a config file) once per value of ``param``.

    For a param of ``measures[i]`` only that measure is evaluated unless ``all_measures``;
    a synthesizer param or the seed re-runs every measure. Every modified config is validated
    before the first evaluation runs. ``engine`` (default: the config's ``engine`` section)
    runs the points as independent tasks when it has workers: each point loads its inputs
    where it runs, with the default registry, as a variant task does; the report equals a
    serial sweep's apart from timings.
    """
    from anoneval.core.run.runner import run_plan

    if isinstance(config, (str, Path)):
        plan0 = load_config(config, registry)
        raw, base = plan0.raw, plan0.base_dir
        registry = plan0.registry
    else:
        raw, base = config, Path(base_dir) if base_dir is not None else Path(".")
    registry = registry or default_registry()
    grid = parse_values(values) if isinstance(values, str) else list(values)
    path = parse_param(param)
    prefix = None
    if path[0] == "measures" and path[1] != EVERY and not all_measures:
        prefix = json_path(path[:2])  # errors name the measure as the user wrote it
        raw, path = only_swept_measure(raw, path)
    plans = []
    for v in grid:
        try:
            plans.append(validate_config(set_param(raw, path, v), base, registry))
        except ConfigError as exc:
            problems = []
            for p, msg in exc.problems:
                if prefix and p.startswith("measures[0]"):
                    p = prefix + p[len("measures[0]"):]
                problems.append((f"{param} = {json.dumps(v)}" + (f": {p}" if p else ""), msg))
            raise ConfigError(problems) from exc
    from anoneval.core.run.engine import LocalEngine, open_engine, parallel

    spec = engine if engine is not None else (plans[0].config.engine if plans else None)
    with open_engine(spec) as eng:
        if parallel(eng) and len(plans) > 1:
            # the local engine's processes end with the sweep: each keeps the inputs it loads
            point = (functools.partial(run_point, inputs=uuid.uuid4().hex)
                     if isinstance(eng, LocalEngine) else run_point)
            with progress_bar(len(plans), f"sweep {param}", enabled=show_progress) as bar:
                reports = eng.map(point, [replace(p, registry=None) for p in plans])
                bar.update(len(plans))
            return SweepReport(anoneval_version=own_version(), param=param, values=grid,
                               runs=[SweepRun(value=v, report=r)
                                     for v, r in zip(grid, reports, strict=True)])
    datasets: dict[str, Dataset] = {}
    runs = []
    with progress_bar(len(plans), f"sweep {param}", enabled=show_progress) as bar:
        for v, plan in zip(grid, plans, strict=True):
            runs.append(SweepRun(value=v, report=run_plan(plan, datasets=datasets,
                                                          engine=engine)))
            bar.update()
    return SweepReport(anoneval_version=own_version(), param=param, values=grid, runs=runs)


_POINT_INPUTS: dict[str, dict[str, Dataset]] = {}


def run_point(plan: Plan, inputs: str | None = None) -> Report | MultiReport:
    """One sweep point as an engine task: serial inside (its variants and blocks too).

    With an ``inputs`` token, the inputs this process loads are kept for the later points of
    the same token (the points of a sweep read the same files), as a serial sweep does.
    """
    from anoneval.core.run.runner import run_plan

    datasets = None
    if inputs is not None:
        if inputs not in _POINT_INPUTS:
            _POINT_INPUTS.clear()
            _POINT_INPUTS[inputs] = {}
        datasets = _POINT_INPUTS[inputs]
    serial = plan.config.model_copy(update={"engine": None})
    return run_plan(replace(plan, registry=plan.registry or default_registry(), config=serial),
                    datasets=datasets)


def sweep_html(result: SweepReport, png: bytes | None) -> str:
    """A self-contained page (template ``sweep.html.j2``): the curves and a table of the
    values, every string escaped."""
    import base64

    from anoneval.core.report.html import records_block
    from anoneval.core.report.numbers import fmt_value
    from anoneval.core.report.templating import render

    frame = result.to_frame()
    frame["column"] = frame["label"] + frame["variant"].map(
        lambda v: f" [{v}]" if isinstance(v, str) else "")
    wide = frame.pivot_table(index="param_value", columns="column", values="value",
                             aggfunc="first", sort=False)
    wide = wide.reindex([v for v in result.values if v in wide.index])
    records = [{result.param: fmt_value(v), **{c: row[c] for c in wide.columns}}
               for v, row in zip(wide.index, wide.to_dict(orient="records"), strict=True)]
    errors = [{"value": r.param_value, "label": r.label, "error": r.error}
              for r in frame[frame["error"].notna()].itertuples()]
    return str(render("sweep.html.j2", title=f"anoneval sweep of {result.param}",
                      version=result.anoneval_version, n_values=len(result.values),
                      figure=base64.b64encode(png).decode("ascii") if png is not None else "",
                      errors=errors, table=records_block(records, len(records))))


def sweep_outputs(prefix: str | Path, plot: str = "both") -> list[Path]:
    """The files :func:`write_sweep` writes: PREFIX.json, PREFIX.csv, then .png and .html
    as ``plot`` (png, html, both or none) asks."""
    prefix = Path(prefix)
    curves = {"both": [".png", ".html"], "png": [".png"], "html": [".html"]}.get(plot, [])
    suffixes = [".json", ".csv", *curves]
    return [prefix.with_name(prefix.name + s) for s in suffixes]


def write_sweep(result: SweepReport, prefix: str | Path, plot: str = "both",
                overlay: bool = False) -> list[Path]:
    """Write PREFIX.json, PREFIX.csv and (``plot`` = png, html or both) the curves, one panel
    per measure or, with ``overlay``, all in one."""
    out = sweep_outputs(prefix, plot)
    write_atomic(out[0], result.to_json() + "\n")
    write_frame_atomic(result.to_frame(), out[1])
    if plot != "none":
        from anoneval.core.report.plots import png_bytes, sweep_figure

        png = png_bytes(sweep_figure(result.to_frame(), result.param, overlay))
        for path in out[2:]:
            if path.suffix == ".png":
                write_bytes_atomic(path, png)
            else:
                write_atomic(path, sweep_html(result, png))
    return out


__all__ = ["SweepReport", "SweepRun", "parse_param", "parse_values", "set_param", "sweep",
           "sweep_outputs", "write_sweep"]
