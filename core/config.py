"""The evaluation config (JSON): validated in full before anything runs.

All problems are collected into one :class:`~anoneval.core.errors.ConfigError`, each with its
JSON path (``measures[1].params.k: ...``). Paths in the config resolve relative to its file.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from anoneval.core.api import Measure, Plugin, PluginRef, Synthesizer
from anoneval.core.data import DATA_KINDS, FORMATS, OPTIONS, ReadOptions, infer_format
from anoneval.core.errors import ConfigError, PluginError, UnknownPluginError

if TYPE_CHECKING:  # the registry imports anoneval.core: import it lazily to avoid a cycle
    from anoneval.registry import Registry

MEASURE_KINDS = ("risk_measure", "loss_measure")


class DataSpec(BaseModel):
    """One input file."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="File path, relative to the config file.")
    kind: Literal["microdata", "table", "trajectories"] = Field(
        "microdata", description="Data kind: " + ", ".join(DATA_KINDS) + ".")
    format: Literal["csv", "parquet", "jsonl"] | None = Field(
        None, description="File format; inferred from the extension when null.")
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="Reading options of the data kind.")


class VariantSpec(DataSpec):
    """One of several named anonymized variants."""

    name: str = Field(description="Variant name, unique within the config.")


class Threshold(BaseModel):
    """Pass/fail bounds on a measure's value (inclusive)."""

    model_config = ConfigDict(extra="forbid")
    max: float | None = Field(None, description="The value passes when it is <= max.")
    min: float | None = Field(None, description="The value passes when it is >= min.")


class MeasureSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="Registered measure name.")
    kind: Literal["risk_measure", "loss_measure"] | None = Field(
        None, description="Only needed when a risk and a loss measure share the name.")
    label: str | None = Field(None, description="Report label; defaults to the name.")
    params: dict[str, Any] = Field(default_factory=dict, description="The measure's params.")
    threshold: Threshold | None = Field(None, description="Optional pass/fail bounds.")
    timeout: float | None = Field(
        None, gt=0, allow_inf_nan=False,
        description="Seconds the measure may run; after that it is reported as timed out and "
                    "the run goes on.")


class SynthesizerSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="Registered synthesizer name.")
    params: dict[str, Any] = Field(default_factory=dict, description="The synthesizer's params.")
    output: str | None = Field(None, description="Where to save the generated data (optional).")


class RUMapSpec(BaseModel):
    """Which measures the risk–utility map of a many-variant report plots."""

    model_config = ConfigDict(extra="forbid")
    risk: str = Field(description="Label of a risk measure of 'measures' (x axis).")
    loss: str = Field(description="Label of a loss measure of 'measures' (y axis).")


class ReportSpec(BaseModel):
    """Options of the report (JSON and HTML)."""

    model_config = ConfigDict(extra="forbid")
    ru_map: RUMapSpec | None = Field(
        None, description="Risk and loss measure of the risk–utility table and map; default: "
                          "the first risk and the first loss measure.")
    max_rows: int = Field(50, ge=1, le=100_000,
                          description="Rows shown per details table in the HTML report.")
    timings: bool = Field(True, description="Record each measure's run time; false writes 0, so "
                                            "the same inputs and seed give byte-identical JSON.")


class EvalConfig(BaseModel):
    """The whole evaluation config."""

    model_config = ConfigDict(extra="forbid")
    schema_: str | None = Field(None, alias="$schema", description="Optional schema URL.")
    description: str | None = Field(None, description="Free text for humans.")
    original: DataSpec | None = Field(None, description="The original data.")
    anonymized: DataSpec | list[VariantSpec] | None = Field(
        None, description="The anonymized data, or a list of named variants.")
    control: DataSpec | None = Field(
        None, description="Control set: original records not used to make the release "
                          "(attack baselines, overfitting checks).")
    synthesizer: SynthesizerSpec | None = Field(
        None, description="Produces the anonymized side from the original.")
    measures: list[MeasureSpec] = Field(min_length=1, description="Measures, in report order.")
    seed: int = Field(0, description="Seed of every random step.")
    output: str | None = Field(None, description="Report path (JSON), relative to the config.")
    report: ReportSpec | None = Field(None, description="Report options (risk–utility map, HTML).")


@dataclass
class Input:
    """A resolved input file."""

    name: str | None
    path: Path
    given: str
    kind: str
    format: str
    options: ReadOptions


@dataclass
class PlannedMeasure:
    """A validated measure of a config or of the Python API, ready to run."""

    measure: Measure
    label: str
    threshold: Threshold | None
    timeout: float | None = None


@dataclass
class Plan:
    """A validated config: everything needed to run it."""

    config: EvalConfig
    base_dir: Path
    original: Input | None
    anonymized: list[Input]
    control: Input | None
    synthesizer: Synthesizer | None
    synthesizer_output: Path | None
    measures: list[PlannedMeasure]
    seed: int
    output: Path | None
    registry: Registry
    raw: dict[str, Any] = field(default_factory=dict)


def json_path(loc: tuple[Any, ...] | list[Any], prefix: str = "") -> str:
    """``("measures", 1, "params", "k")`` → ``measures[1].params.k``."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_SCALAR_TAGS = {"str": str, "int": (int, float), "float": (int, float), "bool": bool,
                "none": type(None)}


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and (
        "[" in part or part in _SCALAR_TAGS or part[:1].isupper() or part.startswith("function-"))


def _tag_matches(tag: str, node: Any) -> bool:
    """Whether a union member (pydantic's loc tag) is the one meant for this input value."""
    if tag.startswith(("list[", "tuple[", "set[")):
        return isinstance(node, list)
    if tag.startswith("dict[") or tag[:1].isupper():
        return isinstance(node, dict)
    if tag.startswith("literal["):
        return isinstance(node, (str, int, float)) and not isinstance(node, bool)
    if tag in _SCALAR_TAGS:
        return isinstance(node, _SCALAR_TAGS[tag])
    return True


def _strip_tags(loc: tuple[Any, ...], raw: Any) -> tuple[list[Any], bool]:
    """Drop union tags from an error location; say whether the tags fit the input."""
    out: list[Any] = []
    node, fits = raw, True
    for part in loc:
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and part < len(node)
        if in_dict or in_list:
            node = node[part]
        elif _is_union_tag(part):
            fits = fits and _tag_matches(part, node)
            continue
        else:
            node = None
        out.append(part)
    return out, fits


def _models_in(annotation: Any, in_list: bool = False) -> list[tuple[type[BaseModel], bool]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, in_list)]
    origin = get_origin(annotation)
    nested = in_list or origin in (list, tuple, set)
    return [m for arg in get_args(annotation) for m in _models_in(arg, nested)]


def _model_at(model: type[BaseModel], loc: list[Any]) -> type[BaseModel] | None:
    """The pydantic model that validates the object at ``loc`` inside ``model``."""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            continue
        fields = {f.alias or n: f for n, f in model.model_fields.items()}
        field = fields.get(part)
        if field is None:
            return None
        next_is_index = i + 1 < len(loc) and isinstance(loc[i + 1], int)
        found = _models_in(field.annotation)
        pick = [m for m, in_list in found if in_list == next_is_index] or [m for m, _ in found]
        if not pick:
            return None
        model = pick[0]
    return model


def _pydantic_problems(exc: ValidationError, prefix: str, raw: Any,
                       model: type[BaseModel]) -> list[tuple[str, str]]:
    """(JSON path, message) for each error of validating ``raw`` with ``model``.

    Union members that do not fit the input are left out, so a dict given for
    ``DataSpec | list[VariantSpec]`` is not also told it should be a list. An unknown key gets
    the keys allowed at its place and a did-you-mean.
    """
    fitting: list[tuple[str, str]] = []
    other: list[tuple[str, str]] = []
    for err in exc.errors():
        loc, fits = _strip_tags(err["loc"], raw)
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            at = _model_at(model, loc[:-1])
            allowed = [f.alias or n for n, f in at.model_fields.items()] if at else []
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            msg = "unknown key" + (f"; did you mean {close[0]!r}?" if close else ";")
            if allowed:
                msg += f" Allowed: {', '.join(allowed)}"
        elif err["type"] == "literal_error":
            msg = f"{msg} (got {err.get('input')!r})"
        (fitting if fits else other).append((json_path(loc, prefix), msg))
    return list(dict.fromkeys(fitting or other))


def validate_params(cls: type[Plugin], params: Any, path: str, registry: Registry,
                    problems: list[tuple[str, str]]) -> Plugin | None:
    """Validate params of ``cls`` (and nested plugin refs); return the instance or None."""
    try:
        parsed = cls.Params.model_validate(params)
    except ValidationError as exc:
        problems.extend(_pydantic_problems(exc, path, params, cls.Params))
        return None
    ok = True
    for fname, finfo in cls.Params.model_fields.items():
        extra = finfo.json_schema_extra
        kind = extra.get("plugin_kind") if isinstance(extra, dict) else None
        ref = getattr(parsed, fname)
        if kind is None or not isinstance(ref, PluginRef):
            continue
        try:
            sub_cls = registry.get(str(kind), ref.name)
        except (UnknownPluginError, PluginError) as exc:
            problems.append((f"{path}.{fname}.name", str(exc)))
            ok = False
            continue
        sub = validate_params(sub_cls, ref.params, f"{path}.{fname}.params", registry, problems)
        if sub is None:
            ok = False
            continue
        ref.params = sub.params.model_dump(mode="json")
    return cls(parsed) if ok else None


def plan_measure(spec: Mapping[str, Any], path: str, registry: Registry,
                 problems: list[tuple[str, str]]) -> PlannedMeasure | None:
    """Resolve a measure spec (``name``, ``kind``, ``params``, ``label``, ``threshold``) into a
    validated measure, appending every problem (with its JSON path) to ``problems``."""
    name = spec.get("name")
    if not isinstance(name, str):
        problems.append((f"{path}.name", "a measure needs a 'name' string"))
        return None
    kinds = [spec["kind"]] if spec.get("kind") in MEASURE_KINDS else list(MEASURE_KINDS)
    found = registry.kinds_of(name, kinds)
    if not found:
        problems.append((f"{path}.name", registry.unknown_message(kinds, name)))
        return None
    if len(found) > 1:
        problems.append((f"{path}.name", f"{name!r} is both a risk and a loss measure; add "
                                          '"kind": "risk_measure" or "loss_measure"'))
        return None
    try:
        cls = registry.get(found[0], name)
    except PluginError as exc:
        problems.append((f"{path}.name", str(exc)))
        return None
    made = validate_params(cls, spec.get("params", {}), f"{path}.params", registry, problems)
    threshold = None
    if spec.get("threshold") is not None:
        try:
            threshold = Threshold.model_validate(spec["threshold"])
        except ValidationError as exc:
            problems.extend(_pydantic_problems(exc, f"{path}.threshold", spec["threshold"],
                                               Threshold))
            return None
    timeout = spec.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not math.isfinite(timeout) or timeout <= 0):
        problems.append((f"{path}.timeout", f"must be a number of seconds > 0, not {timeout!r}"))
        return None
    if not isinstance(made, Measure):
        return None
    return PlannedMeasure(made, spec.get("label") or made.name, threshold,
                          None if timeout is None else float(timeout))


def _resolve_input(raw: Any, path: str, base_dir: Path, name: str | None,
                   problems: list[tuple[str, str]], check_exists: bool = True) -> Input | None:
    try:
        spec = (VariantSpec if name is not None else DataSpec).model_validate(raw)
    except ValidationError:
        return None  # the envelope reports it
    file = Path(spec.path)
    if not file.is_absolute():
        file = base_dir / file
    ok = True
    if check_exists and not file.is_file():
        problems.append((f"{path}.path", f"file not found: {file}"))
        ok = False
    fmt = spec.format or infer_format(file)
    if fmt is None:
        problems.append((f"{path}.format", f"cannot tell the format of {spec.path!r} from its "
                                            f"extension; set one of {', '.join(FORMATS)}"))
        ok = False
    try:
        opts = OPTIONS[spec.kind].model_validate(spec.options)
    except ValidationError as exc:
        problems.extend(_pydantic_problems(exc, f"{path}.options", spec.options,
                                           OPTIONS[spec.kind]))
        ok = False
    if not ok:
        return None
    return Input(name, file, spec.path, spec.kind, str(fmt), opts)


def validate_config(raw: Any, base_dir: str | Path = ".", registry: Registry | None = None,
                    check_files: bool = True) -> Plan:
    """Validate a config dict in full; raise :class:`ConfigError` listing every problem."""
    from anoneval.registry import default_registry

    registry = registry or default_registry()
    base_dir = Path(base_dir)
    problems: list[tuple[str, str]] = []
    if not isinstance(raw, dict):
        raise ConfigError([("", "the config must be a JSON object")])
    if isinstance(raw.get("measures"), list):  # "DM" is short for {"name": "DM"}
        raw = {**raw, "measures": [{"name": m} if isinstance(m, str) else m
                                   for m in raw["measures"]]}
    kind = raw["original"].get("kind") if isinstance(raw.get("original"), dict) else None
    if kind is not None:  # the other inputs are of the original's kind unless they say so
        if isinstance(raw.get("control"), dict):
            raw = {**raw, "control": {"kind": kind, **raw["control"]}}
        anon = raw.get("anonymized")
        if isinstance(anon, dict):
            raw = {**raw, "anonymized": {"kind": kind, **anon}}
        elif isinstance(anon, list):
            raw = {**raw, "anonymized": [{"kind": kind, **a} if isinstance(a, dict) else a
                                         for a in anon]}
    config: EvalConfig | None = None
    try:
        config = EvalConfig.model_validate(raw)
    except ValidationError as exc:
        problems.extend(_pydantic_problems(exc, "", raw, EvalConfig))

    # inputs
    original = None
    if isinstance(raw.get("original"), dict):
        original = _resolve_input(raw["original"], "original", base_dir, None, problems,
                                  check_files)
    control = None
    if isinstance(raw.get("control"), dict):
        control = _resolve_input(raw["control"], "control", base_dir, None, problems,
                                 check_files)
    variants: list[Input] = []
    anon = raw.get("anonymized")
    if isinstance(anon, dict):
        got = _resolve_input(anon, "anonymized", base_dir, None, problems, check_files)
        variants = [got] if got else []
    elif isinstance(anon, list):
        seen: set[str] = set()
        for i, item in enumerate(anon):
            name = item.get("name") if isinstance(item, dict) else None
            if isinstance(name, str):
                if name in seen:
                    problems.append((f"anonymized[{i}].name", f"duplicate variant name {name!r}"))
                seen.add(name)
            got = _resolve_input(item, f"anonymized[{i}]", base_dir, name or "", problems,
                                 check_files)
            if got:
                variants.append(got)
    has_original = raw.get("original") is not None
    has_anonymized = anon is not None or raw.get("synthesizer") is not None
    original_kind = raw["original"].get("kind", "microdata") if isinstance(
        raw.get("original"), dict) else None
    anon_kinds = {v.kind for v in variants}

    # synthesizer
    synth: Synthesizer | None = None
    synth_out: Path | None = None
    sraw = raw.get("synthesizer")
    if isinstance(sraw, dict) and isinstance(sraw.get("name"), str):
        if anon is not None:
            problems.append(("synthesizer", "give either 'anonymized' or 'synthesizer', not both"))
        if not has_original:
            problems.append(("synthesizer", "a synthesizer needs the 'original' data"))
        try:
            scls = registry.get("synthesizer", sraw["name"])
        except (UnknownPluginError, PluginError) as exc:
            problems.append(("synthesizer.name", str(exc)))
        else:
            made = validate_params(scls, sraw.get("params", {}), "synthesizer.params", registry,
                                   problems)
            synth = made if isinstance(made, Synthesizer) else None
            if original_kind and original_kind not in scls.accepts:
                problems.append(("synthesizer.name", f"{scls.name} accepts "
                                 f"{', '.join(scls.accepts)} data, not {original_kind}"))
            if original_kind:
                anon_kinds = {original_kind}
        if isinstance(sraw.get("output"), str):
            synth_out = base_dir / sraw["output"]

    # measures
    planned: list[PlannedMeasure] = []
    labels: set[str] = set()
    mraw = raw.get("measures")
    for i, spec in enumerate(mraw if isinstance(mraw, list) else []):
        path = f"measures[{i}]"
        if not isinstance(spec, dict):
            continue
        if not isinstance(spec.get("name"), str):
            continue  # the envelope reports it
        plan = plan_measure(spec, path, registry, problems)
        if plan is None:
            continue
        made = plan.measure
        cls = type(made)
        need = made.required_inputs()
        if need == "both":
            if not has_original:
                problems.append((path, f"{cls.name} needs the 'original' data"))
            if not has_anonymized:
                problems.append((path, f"{cls.name} needs 'anonymized' data or a synthesizer"))
        elif need == "either" and not (has_original or has_anonymized):
            problems.append((path, f"{cls.name} needs 'original' or 'anonymized' data"))
        if made.control_use() == "required" and raw.get("control") is None:
            problems.append((path, f"{cls.name} needs the 'control' data (original records not "
                                   "used to make the release)"))
        if need != "none":
            kinds = ({original_kind} if original_kind else set()) | anon_kinds
            bad = sorted(k for k in kinds if k not in cls.accepts)
            if bad:
                problems.append((path, f"{cls.name} accepts {', '.join(cls.accepts)} data, "
                                       f"not {', '.join(bad)}"))
        if plan.label in labels:
            problems.append((f"{path}.label", f"two measures are labelled {plan.label!r}; "
                                              "give one of them a distinct 'label'"))
        labels.add(plan.label)
        planned.append(plan)

    _check_ru_map(raw.get("report"), planned, problems)

    if problems:
        raise ConfigError(problems)
    assert config is not None
    return Plan(config=config, base_dir=base_dir, original=original, anonymized=variants,
                control=control,
                synthesizer=synth, synthesizer_output=synth_out, measures=planned,
                seed=config.seed, output=base_dir / config.output if config.output else None,
                registry=registry, raw=raw)


def _check_ru_map(raw: Any, planned: list[PlannedMeasure],
                  problems: list[tuple[str, str]]) -> None:
    """The risk–utility map must name a risk and a loss measure of the config by label."""
    ru = raw.get("ru_map") if isinstance(raw, dict) else None
    if not isinstance(ru, dict):
        return
    for axis, kind in (("risk", "risk_measure"), ("loss", "loss_measure")):
        label = ru.get(axis)
        if not isinstance(label, str):
            continue  # the envelope reports it
        allowed = [p.label for p in planned if p.measure.kind == kind]
        if label not in allowed:
            what = kind.replace("_", " ")
            problems.append((f"report.ru_map.{axis}", f"{label!r} is not the label of a {what}; "
                             f"allowed: {', '.join(allowed) or '(none)'}"))


def load_config(path: str | Path, registry: Registry | None = None) -> Plan:
    """Read and validate a config file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([("", f"cannot read config {path}: {exc.strerror or exc}")]) from exc
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError([("", f"{path}: invalid JSON at line {exc.lineno}, column "
                                f"{exc.colno}: {exc.msg}")]) from exc
    return validate_config(raw, path.parent, registry)


def config_schema() -> dict[str, Any]:
    """JSON Schema of the evaluation config."""
    return EvalConfig.model_json_schema(by_alias=True)
