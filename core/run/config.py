"""The evaluation config (JSON): pydantic models that carry every rule, checked in one pass.

Validating :class:`EvalConfig` resolves the inputs, plugins and params and checks the rules
between them (data kinds, labels, thresholds, the risk–utility map); every problem comes back
at once in one :class:`~anoneval.core.errors.ConfigError`, each with its JSON path
(``measures[1].params.k: ...``). The Python API builds the same models. Paths in the config
resolve relative to its file.
"""

from __future__ import annotations

import difflib
import glob
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import EllipsisType
from typing import TYPE_CHECKING, Any, Literal, NoReturn, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from anoneval.core.api import Measure, Plugin, PluginRef, Synthesizer
from anoneval.core.data.files import file_kind, read_json
from anoneval.core.data.kinds import DATA_KINDS, FORMATS, OPTIONS, ReadOptions, infer_format
from anoneval.core.data.parampaths import param_paths, path_fields
from anoneval.core.data.sources import locate
from anoneval.core.errors import ConfigError, DataError, PluginError, UnknownPluginError

if TYPE_CHECKING:  # the registry imports anoneval.core: import it lazily to avoid a cycle
    from anoneval.registry import Registry

MEASURE_KINDS = ("risk_measure", "loss_measure")


Problem = tuple[str, str]
_PROBLEMS = "anoneval_problems"


def _fail(problems: list[Problem]) -> NoReturn:
    """Raise several problems from one validator; their paths are relative to its place."""
    raise PydanticCustomError(_PROBLEMS, "{first}",
                              {"problems": problems, "first": problems[0][1]})


def _join(base: str, sub: str) -> str:
    """A JSON path ``base`` extended by a relative one (``params.k`` or ``[2].name``)."""
    if not sub:
        return base
    if not base or sub.startswith("["):
        return base + sub
    return f"{base}.{sub}"


def _context(info: ValidationInfo) -> dict[str, Any]:
    return info.context if isinstance(info.context, dict) else {}


def _files_dir(info: ValidationInfo) -> Path | None:
    """The folder path params are checked against, when the config checks files."""
    ctx = _context(info)
    if "base_dir" not in ctx or not ctx.get("check_files", True):
        return None
    return Path(ctx["base_dir"])


def _registry(info: ValidationInfo) -> Registry:
    from anoneval.registry import default_registry

    return _context(info).get("registry") or default_registry()


@dataclass
class Input:
    """A resolved input file; ``side`` names it in messages ("original", ...)."""

    name: str | None
    path: Path
    given: str
    kind: str
    format: str
    options: ReadOptions
    side: str = "anonymized"


@dataclass
class PlannedMeasure:
    """A validated measure; ``inputs_checked`` once the config matched it with its inputs."""

    measure: Measure
    label: str
    threshold: Threshold | None
    timeout: float | None = None
    inputs_checked: bool = False


class DataSpec(BaseModel):
    """One input file."""

    model_config = ConfigDict(extra="forbid", strict=True)
    path: str = Field(description="File path, relative to the config file.")
    kind: Literal["microdata", "table", "trajectories"] = Field(
        "microdata", description="Data kind: " + ", ".join(DATA_KINDS) + ".")
    format: Literal["csv", "parquet", "jsonl"] | None = Field(
        None, description="File format; inferred from the extension when null.")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Reading options of the data kind. The anonymized "
        "side takes those of the original, key by key, unless it sets its own.")
    _input: Input | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _resolve(self, info: ValidationInfo) -> DataSpec:
        ctx = _context(info)
        problems: list[Problem] = []
        file = Path(self.path)
        if not file.is_absolute():
            file = Path(ctx.get("base_dir", ".")) / file
        fmt = self.format or infer_format(file)
        if ctx.get("check_files", True):  # a file, a dataset folder or a glob
            try:
                fmt = self.format or locate(file).format()
            except DataError as exc:
                problems.append(("path", str(exc)))
        if fmt is None:
            problems.append(("format", f"cannot tell the format of {self.path!r} from its "
                                       f"extension; set one of {', '.join(FORMATS)}"))
        opts: ReadOptions | None = None
        try:
            opts = OPTIONS[self.kind].model_validate(self.options)
        except ValidationError as exc:
            problems.extend(_pydantic_problems(exc, "options", self.options, OPTIONS[self.kind]))
        id_map = getattr(opts, "id_map", None)
        if id_map is not None:  # a trajectories option naming a file: relative to the config
            mapped = Path(id_map).expanduser()
            mapped = mapped if mapped.is_absolute() else Path(ctx.get("base_dir", ".")) / mapped
            base = _files_dir(info)
            why = file_problems(str(mapped), base) if base is not None else None
            if why is not None:
                problems.append(("options.id_map", why))
            opts = opts.model_copy(update={"id_map": str(mapped)})
        if problems:
            _fail(problems)
        assert fmt is not None and opts is not None
        self._input = Input(None, file, self.path, self.kind, fmt, opts)
        return self


class VariantSpec(DataSpec):
    """One of several named anonymized variants."""

    name: str = Field(min_length=1, description="Variant name, unique within the config.")


_VARIANTS_FROM = ("glob", "folder", "kind", "format", "options")


def variants_from(spec: dict[str, Any], base_dir: Path) -> list[dict[str, Any]]:
    """``{"glob": "releases/*.csv"}`` or ``{"folder": "releases"}`` as named variants: one per
    data file (name = the file's stem), sorted by name; ``kind``, ``format`` and ``options``
    apply to each. Hidden files and those starting with ``_`` are left out, and so are the
    sub-folders of a folder. (A glob in ``path`` is one dataset read from several files.)"""
    problems: list[Problem] = []
    unknown = sorted(set(spec) - {*_VARIANTS_FROM, "path"})
    problems.extend((f"anonymized.{k}", "unknown key; Allowed: " + ", ".join(_VARIANTS_FROM))
                    for k in unknown)
    given = [k for k in ("glob", "folder") if k in spec]
    if len(given) > 1 or "path" in spec:
        problems.append(("anonymized", "give one of 'glob' (one variant per matching file), "
                                       "'folder' (one variant per file in it) or 'path' (one "
                                       "dataset)"))
    if problems:
        _fail(problems)
    key = given[0]
    value = spec[key]
    if not isinstance(value, str) or not value:
        _fail([(f"anonymized.{key}", "a non-empty path (relative to the config file)")])
    where = Path(value).expanduser()
    where = where if where.is_absolute() else base_dir / where
    if key == "glob":
        if not re.search(r"[*?\[]", value):
            _fail([("anonymized.glob", f"{value!r} has no wildcard (* ? [); for one file use "
                                       "'path', for a folder 'folder'")])
        files = [Path(f) for f in glob.glob(str(where), recursive=True)]
    elif not where.is_dir():
        _fail([("anonymized.folder", f"{str(where)!r} is not a folder")])
    else:
        files = list(where.iterdir())
    files = [f for f in files if not f.name.startswith((".", "_")) and not f.is_dir()
             and (spec.get("format") is not None or infer_format(f) is not None)]
    if not files:
        _fail([(f"anonymized.{key}", f"no data file matches {value!r} (csv, parquet or jsonl "
                                     "files; paths are relative to the config file's folder)")])
    by_name: dict[str, list[Path]] = {}
    for f in files:
        by_name.setdefault(f.stem, []).append(f)
    twice = {n: fs for n, fs in by_name.items() if len(fs) > 1}
    if twice:
        _fail([(f"anonymized.{key}", f"two files would make variant {n!r}: "
                                     f"{', '.join(sorted(str(f) for f in fs))}; rename one")
               for n, fs in sorted(twice.items())])
    extra = {k: spec[k] for k in ("kind", "format", "options") if k in spec}

    def shown(f: Path) -> str:  # as the config would name it
        try:
            return str(f.relative_to(base_dir))
        except ValueError:
            return str(f)

    return [{"name": n, "path": shown(by_name[n][0]), **extra} for n in sorted(by_name)]


class Threshold(BaseModel):
    """Pass/fail bounds on a measure's value or an end of its interval (inclusive, finite,
    min <= max).

    ``on: "upper"`` with ``max`` fails when the interval's upper end exceeds ``max`` (the
    cautious test of a risk); ``on: "lower"`` tests the lower end. A measure that gives no
    interval FAILs such a threshold, with the reason as a warning.
    """

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    max: float | None = Field(None, description="The value passes when it is <= max.")
    min: float | None = Field(None, description="The value passes when it is >= min.")
    on: Literal["value", "lower", "upper"] = Field(
        "value", description="What is tested: the value, or the lower or upper end of its "
                             "interval ci.")

    @model_validator(mode="after")
    def _ordered(self) -> Threshold:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min:g}) is greater than max ({self.max:g}): no value "
                             "can pass")
        return self

    def check(self, value: float | None, ci: Sequence[float] | None) -> tuple[bool, str | None]:
        """Whether the tested number passes, and why it FAILs when it cannot be tested."""
        if value is None:
            return False, "the threshold FAILs: the measure gave no value"
        tested = value
        if self.on != "value":
            if ci is None:
                return False, (f"the threshold on the {self.on} end of the interval FAILs: "
                               "the measure gave no interval (ci)")
            tested = ci[0] if self.on == "lower" else ci[1]
        return ((self.max is None or tested <= self.max)
                and (self.min is None or tested >= self.min)), None


class MeasureSpec(BaseModel):
    """One measure: a registered name, its params, an optional label and threshold."""

    model_config = ConfigDict(extra="forbid", strict=True)
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
    _planned: PlannedMeasure | None = PrivateAttr(None)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return {"name": data} if isinstance(data, str) else data  # "DM" is {"name": "DM"}

    @model_validator(mode="wrap")
    @classmethod
    def _every_problem(cls, data: Any, handler: ValidatorFunctionWrapHandler,
                       info: ValidationInfo) -> Any:
        """A bad field (threshold, timeout, label) hides no problem of the params: these are
        checked on their own and reported with it."""
        try:
            return handler(data)
        except ValidationError as exc:
            if not isinstance(data, dict):
                raise
            problems = _pydantic_problems(exc, "", data, MeasureSpec)
            failed = {p.split(".", 1)[0].split("[", 1)[0] for p, _ in problems}
            name, kind, params = data.get("name"), data.get("kind"), data.get("params", {})
            if (failed & {"name", "kind", "params"} or not isinstance(name, str)
                    or not isinstance(params, dict)):
                raise
            if kind is not None and kind not in MEASURE_KINDS:
                raise
            try:
                _measure(name, kind, params, info)
            except PydanticCustomError as more:
                problems.extend(more.context["problems"])  # type: ignore[index]
            _fail(problems)

    @model_validator(mode="after")
    def _resolve(self, info: ValidationInfo) -> MeasureSpec:
        made = _measure(self.name, self.kind, self.params, info)
        if (self.threshold is not None and self.threshold.on != "value"
                and not {"confidence_level", "confidence"} & set(type(made).Params.model_fields)
                and not getattr(made, "gives_interval", False)):
            _fail([("threshold.on", f"{self.name} reports no interval (ci), so its threshold "
                                    f"cannot test the {self.threshold.on} end; use \"on\": "
                                    "\"value\"")])
        self._planned = PlannedMeasure(made, self.label or made.name, self.threshold,
                                       self.timeout)
        return self


def _measure(name: str, kind: str | None, params: dict[str, Any],
             info: ValidationInfo) -> Measure:
    """The measure ``name`` made from ``params``; its problems raised at once."""
    registry = _registry(info)
    kinds = [kind] if kind else list(MEASURE_KINDS)
    found = registry.kinds_of(name, kinds)
    if not found:
        _fail([("name", registry.unknown_message(kinds, name))])
    if len(found) > 1:
        _fail([("name", f"{name!r} is both a risk and a loss measure; add "
                        '"kind": "risk_measure" or "loss_measure"')])
    try:
        cls = registry.get(found[0], name)
    except PluginError as exc:
        _fail([("name", str(exc))])
    problems: list[Problem] = []
    made = validate_params(cls, params, "params", registry, problems, _files_dir(info))
    if problems:
        _fail(problems)
    assert isinstance(made, Measure)
    return made


class SynthesizerSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str = Field(description="Registered synthesizer name.")
    params: dict[str, Any] = Field(default_factory=dict, description="The synthesizer's params.")
    output: str | None = Field(None, description="Where to save the generated data (optional).")
    _synthesizer: Synthesizer | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _resolve(self, info: ValidationInfo) -> SynthesizerSpec:
        registry = _registry(info)
        try:
            cls = registry.get("synthesizer", self.name)
        except (UnknownPluginError, PluginError) as exc:
            _fail([("name", str(exc))])
        problems: list[Problem] = []
        made = validate_params(cls, self.params, "params", registry, problems,
                               _files_dir(info))
        if problems:
            _fail(problems)
        assert isinstance(made, Synthesizer)
        self._synthesizer = made
        return self


class RUMapSpec(BaseModel):
    """Which measures the risk–utility map of a many-variant report plots."""

    model_config = ConfigDict(extra="forbid", strict=True)
    risk: str = Field(description="Label of a risk measure of 'measures' (x axis).")
    loss: str = Field(description="Label of a loss measure of 'measures' (y axis).")


class ReportSpec(BaseModel):
    """Options of the report (JSON and HTML)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    ru_map: RUMapSpec | None = Field(
        None, description="Risk and loss measure of the risk–utility table and map; default: "
                          "the first risk and the first loss measure.")
    max_rows: int = Field(50, ge=1, le=100_000,
                          description="Rows shown per details table in the HTML report.")
    timings: bool = Field(True, description="Record each measure's run time; false writes 0, so "
                                            "the same inputs and seed give byte-identical JSON.")
    variant_sections: bool | None = Field(
        None, description="Draw each variant's plots and details in the HTML report; default: "
                          "only up to 12 variants (above, one chart per measure across variants "
                          "and the summary table).")


def _items(value: list[Any], model: type[BaseModel], info: ValidationInfo,
           problems: list[Problem]) -> list[tuple[int, Any]]:
    """Validate each list item on its own, so one bad item hides no other problem."""
    out = []
    for i, item in enumerate(value):
        try:
            out.append((i, model.model_validate(item, context=info.context)))
        except ValidationError as exc:
            problems.extend(_pydantic_problems(exc, f"[{i}]", item, model))
    return out


def _param_names(spec: dict[str, Any], registry: Registry) -> set[str] | None:
    """The param names (and aliases) of the measure a spec names, or None when unknown."""
    name, kind = spec.get("name"), spec.get("kind")
    if not isinstance(name, str):
        return None
    kinds = [kind] if kind in MEASURE_KINDS else list(MEASURE_KINDS)
    found = registry.kinds_of(name, kinds)
    if len(found) != 1:
        return None
    try:
        cls = registry.get(found[0], name)
    except PluginError:
        return None
    fields = cls.Params.model_fields
    return {n for n in fields} | {f.alias for f in fields.values() if f.alias}


def _name_defaults(problems: list[Problem], taken: dict[int, set[str]]) -> list[Problem]:
    """Problems with a param a measure took from ``defaults`` say so."""
    out = []
    for where, msg in problems:
        m = re.match(r"^\[(\d+)\]\.params\.([^.\[]+)", where)
        if m and m.group(2) in taken.get(int(m.group(1)), ()):
            msg = f"{msg} (the value comes from defaults.{m.group(2)})"
        out.append((where, msg))
    return out


def input_problems(measure: Measure, original: str | EllipsisType | None,
                   anonymized: set[str] | EllipsisType,
                   control: str | EllipsisType | None = ...) -> list[str]:
    """What keeps ``measure`` from running on these inputs: ``original`` is the original's
    data kind (None when absent), ``anonymized`` the anonymized side's kinds (empty when
    absent), ``control`` the control set's kind (None when absent); ``...`` for a side that
    is unknown (invalid) skips the checks it would need. The config and the Python API share
    this rule."""
    need = measure.required_inputs()
    name = type(measure).name
    out = []
    uses_control = measure.control_use()
    if uses_control == "required" and control is None:
        out.append(f"{name} needs the 'control' data (original records not used to make the "
                   "release)")
    if need == "both":
        if original is None:
            out.append(f"{name} needs the 'original' data")
        if anonymized == set():
            out.append(f"{name} needs 'anonymized' data or a synthesizer")
    elif need == "either" and original is None and anonymized == set():
        out.append(f"{name} needs 'original' or 'anonymized' data")
    if need != "none":
        kinds = {original} if isinstance(original, str) else set()
        kinds |= anonymized if isinstance(anonymized, set) else set()
        if uses_control != "none" and isinstance(control, str):
            kinds.add(control)
        bad = sorted(k for k in kinds if k not in measure.accepts)
        if bad:
            out.append(f"{name} accepts {', '.join(measure.accepts)} data, not {', '.join(bad)}")
    return out


def _label(item: Any) -> str | None:
    """The report label a measure item asks for (a failed item's too, so that a repeated
    label is reported with its other problems)."""
    if isinstance(item, PlannedMeasure):
        return item.label
    if isinstance(item, Measure):
        return item.name
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        label = item.get("label") or item.get("name")
        return label if isinstance(label, str) else None
    return None


def label_problems(items: Sequence[Any]) -> list[Problem]:
    """Each label once: the second use of a label is a problem at its ``[i].label``."""
    seen: set[str] = set()
    out = []
    for i, item in enumerate(items):
        label = _label(item)
        if label is None:
            continue
        if label in seen:
            out.append((f"[{i}].label", f"two measures are labelled {label!r}; give one of "
                                        "them a distinct 'label'"))
        seen.add(label)
    return out


_ADDRESS = re.compile(r"^(tcp|tls|inproc|ucx|ws|wss)://[^\s/]+$")
_MEMORY = re.compile(r"^(auto|\d+(\.\d+)?\s*([kMGT]i?B|[KMGT]B|B)?)$", re.IGNORECASE)


def _parses(address: str) -> bool:
    """Whether a scheduler address has a host and a valid port (if any)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(address)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return False
    return parts.scheme == "inproc" or bool(parts.hostname)


class EngineSpec(BaseModel):
    """The ``engine`` section of a config: where the run's tasks are computed."""

    model_config = ConfigDict(extra="forbid")
    name: Literal["local", "dask"] = Field(
        "local", description="local: this machine (processes when workers > 1); dask: a Dask "
                             "cluster.")
    workers: int | None = Field(
        None, ge=1, strict=True,
        description="local: processes evaluating the variants, this one and workers - 1 "
                    "started (null: all cores); dask without address: workers of the "
                    "LocalCluster started for the run (null: all cores).")
    address: str | None = Field(
        None, description="dask: the scheduler to connect to, e.g. tcp://10.0.0.5:8786 (null: "
                          "start a LocalCluster).")
    threads_per_worker: int = Field(1, ge=1, strict=True,
                                    description="dask LocalCluster: threads of each worker.")
    memory_limit: str | None = Field(
        None, description="dask LocalCluster: memory limit of each worker, e.g. '4GB'.")
    connect_timeout: float = Field(30.0, gt=0, allow_inf_nan=False,
                                   description="dask: seconds to wait for the scheduler.")
    gather_limit: str | None = Field(
        None, description="dask: the most data a measure without a partition-wise form may "
                          "gather into this process, e.g. '2GB' (null: the smallest worker "
                          "memory limit or a quarter of this machine's memory, whichever is "
                          "smaller).")

    @field_validator("address")
    @classmethod
    def _address(cls, value: str | None) -> str | None:
        if value is not None and "@" in value.split("//", 1)[-1].split("/", 1)[0]:
            raise ValueError("credentials (user:password@) in a scheduler address are not "
                             "supported (Dask's comms authenticate with TLS certificates: "
                             "'tls://' and the distributed.comm.tls settings); the address is "
                             "not shown")
        if value is not None and not (_ADDRESS.match(value) and _parses(value)):
            shown = re.sub(r"//[^/@\s]*@", "//***@", value)  # never print credentials
            raise ValueError(f"{shown!r} is not a scheduler address; expected e.g. "
                             "tcp://127.0.0.1:8786")
        return value

    @field_validator("memory_limit", "gather_limit")
    @classmethod
    def _memory(cls, value: str | None) -> str | None:
        if value is not None and not _MEMORY.match(value.strip()):
            raise ValueError(f"{value!r} is not a memory size; expected e.g. '4GB', '512MiB' "
                             "or 'auto'")
        return value

    @model_validator(mode="after")
    def _fits(self) -> EngineSpec:
        if self.name == "local" and self.address is not None:
            raise ValueError("'address' is for the dask engine; set name to 'dask'")
        if self.address is not None and self.memory_limit is not None:
            raise ValueError("'memory_limit' applies to a LocalCluster started for the run, "
                             "not to a running scheduler at 'address'")
        return self


class EvalConfig(BaseModel):
    """The whole evaluation config; validating it checks every rule at once."""

    model_config = ConfigDict(extra="forbid", strict=True)
    schema_: str | None = Field(None, alias="$schema", description="Optional schema URL.")
    description: str | None = Field(None, description="Free text for humans.")
    original: DataSpec | None = Field(None, description="The original data.")
    anonymized: DataSpec | list[VariantSpec] | None = Field(
        None, description="The anonymized data (a 'path': one file, a folder or a glob read "
        "as one dataset), a non-empty list of named variants, or {'glob': 'releases/*.csv'} / "
        "{'folder': 'releases'}: one variant per file, named by its stem, sorted.")
    control: DataSpec | None = Field(
        None, description="Control set: original records not used to make the release "
                          "(attack baselines, overfitting checks).")
    synthesizer: SynthesizerSpec | None = Field(
        None, description="Produces the anonymized side from the original.")
    defaults: dict[str, Any] = Field(
        default_factory=dict, description="Params given to every measure that accepts them "
        "unless the measure sets its own, e.g. quasi_identifiers, hierarchies, sensitive; a "
        "default that no listed measure accepts is an error.")
    measures: list[MeasureSpec] = Field(min_length=1, description="Measures, in report order.")
    seed: int = Field(0, ge=0, description="Seed of every random step (a non-negative "
                                          "integer, as numpy's generators take).")
    output: str | None = Field(None, description="Report path, relative to the config: .json "
                                                 "(the report) or .csv/.parquet (the summary "
                                                 "as a table).")
    report: ReportSpec | None = Field(None, description="Report options (risk–utility map, HTML).")
    engine: EngineSpec | None = Field(
        None, description="Where the run's tasks (the variants) are computed: local processes "
                          "or a Dask cluster; null: one after the other in this process.")

    @model_validator(mode="before")
    @classmethod
    def _inherit(cls, data: Any, info: ValidationInfo) -> Any:
        """The anonymized side and the control set take the original's kind and, when of that
        kind, its options (key by key) unless they set their own. ``anonymized: {"glob": ...}``
        or ``{"folder": ...}`` becomes one variant per file first."""
        if isinstance(data, dict) and isinstance(data.get("anonymized"), dict) and (
                {"glob", "folder"} & set(data["anonymized"])):
            base = Path(_context(info).get("base_dir", "."))
            data = {**data, "anonymized": variants_from(data["anonymized"], base)}
        orig = data.get("original") if isinstance(data, dict) else None
        if not isinstance(orig, dict):
            return data
        kind = orig.get("kind", "microdata")
        options = orig.get("options")

        def fill(spec: Any) -> Any:
            if not isinstance(spec, dict):
                return spec
            out = {"kind": kind, **spec}
            own = spec.get("options", {})
            if out["kind"] == kind and isinstance(options, dict) and isinstance(own, dict):
                out["options"] = {**options, **own}
            return out

        if isinstance(data.get("control"), dict):
            data = {**data, "control": fill(data["control"])}
        anon = data.get("anonymized")
        if isinstance(anon, dict):
            return {**data, "anonymized": fill(anon)}
        if isinstance(anon, list):
            return {**data, "anonymized": [fill(a) for a in anon]}
        return data

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any, info: ValidationInfo) -> Any:
        """Copy ``defaults`` into the params of each measure that accepts them (its own params
        win); a default no listed measure accepts is a problem at ``defaults.<key>``. Which
        keys each measure took is kept in the context, so that a problem they cause names
        ``defaults``."""
        if not isinstance(data, dict) or "defaults" not in data:
            return data
        defaults, measures = data["defaults"], data.get("measures")
        if not isinstance(defaults, dict) or not isinstance(measures, list):
            return data  # the field validators report the wrong types
        registry = _registry(info)
        used: set[str] = set()
        taken: dict[int, set[str]] = {}
        out = []
        for i, item in enumerate(measures):
            spec = {"name": item} if isinstance(item, str) else item
            accepted = _param_names(spec, registry) if isinstance(spec, dict) else None
            if accepted is None:  # unknown measure or bad item: reported by the field
                used.update(defaults)  # (no claim that a default is unused)
                out.append(item)
                continue
            own = spec.get("params", {})
            if not isinstance(own, dict):
                out.append(item)
                continue
            keys = [k for k in defaults if k in accepted]
            used.update(keys)
            add = {k: defaults[k] for k in keys if k not in own}
            if add:
                taken[i] = set(add)
                spec = {**spec, "params": {**add, **own}}
            out.append(spec)
        unused = [k for k in defaults if k not in used]
        if unused:
            _fail([(f"defaults.{k}", f"no measure of 'measures' accepts the param {k!r}; "
                                     "remove it or add a measure that takes it")
                   for k in unused])
        ctx = _context(info)
        if ctx is not None and taken:
            ctx["defaulted"] = taken
        return {**data, "measures": out}

    @field_validator("anonymized", mode="wrap")
    @classmethod
    def _variants(cls, value: Any, handler: ValidatorFunctionWrapHandler,
                  info: ValidationInfo) -> Any:
        if not isinstance(value, list):
            return handler(value)
        if not value:
            _fail([("", "give at least one anonymized variant (an empty list evaluates "
                        "nothing)")])
        problems: list[Problem] = []
        items = _items(value, VariantSpec, info, problems)
        seen: set[str] = set()
        for i, v in enumerate(value):
            name = v.get("name") if isinstance(v, dict) else None
            if isinstance(name, str) and name in seen:
                problems.append((f"[{i}].name", f"duplicate variant name {name!r}"))
            seen.add(name)
        if problems:
            _fail(problems)
        return [v for _, v in items]

    @field_validator("output")
    @classmethod
    def _output_format(cls, value: str | None) -> str | None:
        if value is not None:
            from anoneval.core.report.model import REPORT_FORMATS

            if Path(value).suffix.lower() not in REPORT_FORMATS:
                raise ValueError(f"{value!r}: a report is written as "
                                 f"{', '.join(REPORT_FORMATS)} (the JSON report, or the "
                                 "summary as a table)")
        return value

    @field_validator("synthesizer", mode="wrap")
    @classmethod
    def _synthesizer_inputs(cls, value: Any, handler: ValidatorFunctionWrapHandler,
                            info: ValidationInfo) -> Any:
        if value is None:
            return None
        problems: list[Problem] = []
        spec: SynthesizerSpec | None = None
        try:
            spec = handler(value)
        except ValidationError as exc:
            problems.extend(_pydantic_problems(exc, "", value, SynthesizerSpec))
        if info.data.get("anonymized", None) is not None:
            problems.append(("", "give either 'anonymized' or 'synthesizer', not both"))
        if "original" in info.data:
            original = info.data["original"]
            if original is None:
                problems.append(("", "a synthesizer needs the 'original' data"))
            elif spec is not None and spec._synthesizer is not None:
                accepts = type(spec._synthesizer).accepts
                if original.kind not in accepts:
                    problems.append(("name", f"{spec.name} accepts {', '.join(accepts)} data, "
                                             f"not {original.kind}"))
        if problems:
            _fail(problems)
        return spec

    @field_validator("measures", mode="wrap")
    @classmethod
    def _measures(cls, value: Any, handler: ValidatorFunctionWrapHandler,
                  info: ValidationInfo) -> Any:
        if not isinstance(value, list) or not value:
            return handler(value)
        problems: list[Problem] = []
        items = _items(value, MeasureSpec, info, problems)
        problems = _name_defaults(problems, _context(info).get("defaulted", {}))
        planned = [(i, m._planned) for i, m in items]
        original: str | EllipsisType | None = ...  # unknown when invalid
        if "original" in info.data:
            original = info.data["original"].kind if info.data["original"] else None
        control: str | EllipsisType | None = ...
        if "control" in info.data:
            control = info.data["control"].kind if info.data["control"] else None
        kinds: set[str] | EllipsisType = ...
        if "anonymized" in info.data and "synthesizer" in info.data:
            anon = info.data["anonymized"]
            specs = anon if isinstance(anon, list) else [anon] if anon is not None else []
            kinds = {s.kind for s in specs}
            if info.data["synthesizer"] is not None and isinstance(original, str):
                kinds.add(original)
        for i, p in planned:
            found = input_problems(p.measure, original, kinds, control)
            problems.extend((f"[{i}]", msg) for msg in found)
            p.inputs_checked = (not found and original is not ... and kinds is not ...
                                and control is not ...)
        problems.extend(label_problems(value))
        if problems:
            _fail(problems)
        return [m for _, m in items]

    @field_validator("report")
    @classmethod
    def _ru_map(cls, value: ReportSpec | None, info: ValidationInfo) -> ReportSpec | None:
        """The risk–utility map names a risk and a loss measure of the config by label."""
        if value is None or value.ru_map is None or "measures" not in info.data:
            return value
        planned = [m._planned for m in info.data["measures"]]
        problems: list[Problem] = []
        for axis, kind in (("risk", "risk_measure"), ("loss", "loss_measure")):
            label = getattr(value.ru_map, axis)
            allowed = [p.label for p in planned if p.measure.kind == kind]
            if label not in allowed:
                what = kind.replace("_", " ")
                problems.append((f"ru_map.{axis}", f"{label!r} is not the label of a {what}; "
                                                   f"allowed: {', '.join(allowed) or '(none)'}"))
        if problems:
            _fail(problems)
        return value


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
        elif err["type"] == _PROBLEMS:
            base = json_path(loc, prefix)
            (fitting if fits else other).extend(
                (_join(base, sub), m) for sub, m in err["ctx"]["problems"])
            continue
        elif err["type"] == "value_error":
            msg = msg.removeprefix("Value error, ")
        (fitting if fits else other).append((json_path(loc, prefix), msg))
    return list(dict.fromkeys(fitting or other))


def file_problems(value: str, base_dir: Path) -> str | None:
    """Why the file a path param names (relative to ``base_dir``) cannot be read, or None."""
    file = Path(value).expanduser()
    file = file if file.is_absolute() else base_dir / file
    if any(c in value for c in "*?["):  # a glob: at least one match
        return None if any(file.parent.glob(file.name)) else f"no file matches {str(file)!r}"
    try:
        mode = file.stat().st_mode
    except OSError as exc:
        return f"cannot read {str(file)!r}: {exc.strerror or exc} (paths are relative to the " \
               "config file's folder)"
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return f"{file} is {file_kind(mode)}, not a regular file"
    return None


def _raw_paths(model: type[BaseModel], params: dict[str, Any]) -> list[tuple[str, str]]:
    """``(where, path)`` of the path params of ``model`` in unvalidated ``params`` (those that
    are text where a path is expected), so that files are checked when other params fail."""
    out = []
    for name in path_fields(model):
        field_ = model.model_fields[name]
        value = params.get(field_.alias or name, params.get(name))
        if isinstance(value, str):
            items: list[tuple[str, Any]] = [(name, value)]
        elif isinstance(value, dict):
            items = [(f"{name}.{k}", v) for k, v in value.items()]
        elif isinstance(value, list):
            items = [(f"{name}[{i}]", v) for i, v in enumerate(value)]
        else:
            items = []
        out.extend((w, v) for w, v in items if isinstance(v, str) and v)
    return out


def validate_params(cls: type[Plugin], params: Any, path: str, registry: Registry,
                    problems: list[tuple[str, str]],
                    base_dir: Path | None = None) -> Plugin | None:
    """Validate params of ``cls`` (and nested plugin refs); return the instance or None.

    With ``base_dir`` (the config file's folder), every :data:`ParamPath` param must name a
    file that exists there.
    """
    try:
        parsed = cls.Params.model_validate(params)
    except ValidationError as exc:
        problems.extend(_pydantic_problems(exc, path, params, cls.Params))
        if base_dir is not None and isinstance(params, dict):  # the paths that did parse
            bad = {p for p, _ in problems}
            for where, value in _raw_paths(cls.Params, params):
                why = file_problems(value, base_dir)
                if why is not None and f"{path}.{where}" not in bad:
                    problems.append((f"{path}.{where}", why))
        return None
    ok = True
    if base_dir is not None:
        for where, value in param_paths(parsed):
            why = file_problems(value, base_dir)
            if why is not None:
                problems.append((f"{path}.{where}", why))
                ok = False
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
        sub = validate_params(sub_cls, ref.params, f"{path}.{fname}.params", registry, problems,
                              base_dir)
        if sub is None:
            ok = False
            continue
        ref.params = sub.params.model_dump(mode="json")
    return cls(parsed) if ok else None


def plan_measures(measures: Sequence[Measure | PlannedMeasure | str | Mapping[str, Any]],
                  registry: Registry) -> list[PlannedMeasure]:
    """The Python API's measures as the config validates them: instances pass as they are,
    names and ``{"name", "params", "label", "threshold"}`` dicts become :class:`MeasureSpec`;
    every problem (labels included) comes back in one :class:`ConfigError`."""
    if isinstance(measures, (str, Mapping)) or not isinstance(measures, Sequence):
        raise ConfigError([("measures", "a list of measures (names, spec dicts or Measure "
                                        f"instances), got {type(measures).__name__}")])
    if not measures:
        raise ConfigError([("measures", "give at least one measure")])
    problems: list[Problem] = []
    planned: list[tuple[int, PlannedMeasure]] = []
    for i, m in enumerate(measures):
        if isinstance(m, PlannedMeasure):
            planned.append((i, m))
        elif isinstance(m, Measure):
            planned.append((i, PlannedMeasure(m, m.name, None)))
        else:
            try:
                spec = MeasureSpec.model_validate(m, context={"registry": registry})
            except ValidationError as exc:
                problems.extend(_pydantic_problems(exc, f"measures[{i}]", m, MeasureSpec))
            else:
                assert spec._planned is not None
                planned.append((i, spec._planned))
    problems.extend((f"measures{p}", msg) for p, msg in label_problems(measures))
    if problems:
        raise ConfigError(problems)
    return [p for _, p in planned]


#: How deeply a config may nest (real ones need about eight levels): deeper is refused before
#: validation, the same on every Python version whatever its recursion limits.
MAX_DEPTH = 100


def _too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` (parsed JSON) nests more than ``limit`` levels; no recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return False


def validate_config(raw: Any, base_dir: str | Path = ".", registry: Registry | None = None,
                    check_files: bool = True) -> Plan:
    """Validate a config dict in full; raise :class:`ConfigError` listing every problem."""
    from anoneval.registry import default_registry

    registry = registry or default_registry()
    base_dir = Path(base_dir)
    if not isinstance(raw, dict):
        raise ConfigError([("", "the config must be a JSON object")])
    if _too_deep(raw):
        raise ConfigError([("", f"the config is nested too deeply (more than {MAX_DEPTH} "
                                "levels)")])
    context = {"registry": registry, "base_dir": base_dir, "check_files": check_files}
    try:
        config = EvalConfig.model_validate(raw, context=context)
    except ValidationError as exc:
        raise ConfigError(_pydantic_problems(exc, "", raw, EvalConfig)) from None
    except RecursionError:
        raise ConfigError([("", "the config is nested too deeply")]) from None
    original = None
    if config.original is not None:
        original = replace(config.original._input, side="original")  # type: ignore[type-var]
    control = None
    if config.control is not None:
        control = replace(config.control._input, side="control")  # type: ignore[type-var]
    variants: list[Input] = []
    if isinstance(config.anonymized, list):
        variants = [replace(v._input, name=v.name,  # type: ignore[type-var]
                            side=f"anonymized variant {v.name!r}") for v in config.anonymized]
    elif config.anonymized is not None:
        variants = [config.anonymized._input]  # type: ignore[list-item]
    synth = config.synthesizer
    return Plan(config=config, base_dir=base_dir, original=original, anonymized=variants,
                control=control, synthesizer=synth._synthesizer if synth else None,
                synthesizer_output=base_dir / synth.output if synth and synth.output else None,
                measures=[m._planned for m in config.measures],  # type: ignore[misc]
                seed=config.seed, output=base_dir / config.output if config.output else None,
                registry=registry, raw={**raw, "measures": [
                    {"name": m} if isinstance(m, str) else m for m in raw["measures"]]})


def load_config(path: str | Path, registry: Registry | None = None) -> Plan:
    """Read and validate a config file."""
    path = Path(path)
    try:
        raw = read_json(path, "config")
    except DataError as exc:
        raise ConfigError([("", str(exc))]) from None
    if _too_deep(raw):
        raise ConfigError([("", f"{path}: the JSON is nested too deeply (more than "
                                f"{MAX_DEPTH} levels)")])
    return validate_config(raw, path.parent, registry)


def config_schema() -> dict[str, Any]:
    """JSON Schema of the evaluation config."""
    return EvalConfig.model_json_schema(by_alias=True)
