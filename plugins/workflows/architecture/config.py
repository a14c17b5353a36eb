"""The architecture's config: data, thresholds and outputs, checked before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from anoneval.core.api import (
    ConfigError,
    DataError,
    PluginRef,
)
from anoneval.core.data.files import read_json
from anoneval.core.report.outputs import collisions
from anoneval.plugins._shared.continuous import Transform
from anoneval.plugins.fidelity.moment_discrepancy import Moment

TASKS = {
    1: "exploratory data analysis", 2: "transformation x = g(y)",
    3: "information moments T", 4: "nonparametric density f̃ (kernel)",
    5: "data information moments θ", 6: "kernel information moments θ̃",
    7: "inspect |θ − θ̃|", 8: "ME model f*", 9: "inspect K(f̃ : f*)",
    10: "generate the replica x*", 11: "inspect the energy statistic E(x, x*)",
    12: "inspect close pairs π_d", 13: "replica information moments θ*",
    14: "inspect |θ − θ*|", 15: "ME model f** of the replica", 16: "inspect K(f* : f**)",
}
NODE_TASK = {1: 7, 2: 9, 3: 11, 4: 12, 5: 14, 6: 16}


# ---------------------------------------------------------------------------------------------
# configuration
# ---------------------------------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DataSpec(_Model):
    path: str = Field(description="The actual data (relative to the config file).")
    format: Literal["csv", "parquet", "jsonl"] | None = Field(
        default=None, description="File format; null = from the extension.")
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="Reader options (sep, encoding, na_values).")


class Thresholds(_Model):
    """The six decision nodes' thresholds."""

    kde_moment_tolerance: float = Field(
        default=0.2, ge=0, description="Node 1: largest |θ_j − θ̃_j| (see kde_moment_kind).")
    kde_moment_kind: Literal["absolute", "relative", "standardized"] = Field(
        default="standardized",
        description="Node 1: absolute, relative (|θ − θ̃|/|θ|) or standardized (over the sd "
                    "of T_j(x); the kernel adds h² to variances, eq. 30).")
    model_kl: float = Field(default=0.1, ge=0,
                            description="Node 2: largest K(f̃ : f*) in nats.")
    energy_alpha: float = Field(
        default=0.05, ge=0, le=1,
        description="Node 3: smallest permutation p-value of the energy test (joint and "
                    "each column); 0 disables the test.")
    energy_max: float | None = Field(default=None, ge=0,
                                     description="Node 3: optional largest joint E(x, x*).")
    close_pairs_d0: float = Field(default=0.01, ge=0,
                                  description="Node 4: the distance d0 of π_d.")
    close_pairs_epsilon: float = Field(default=0.01, ge=0, le=1,
                                       description="Node 4: π_d (joint) must be below this.")
    dcr_max: float | None = Field(
        default=None, ge=0, le=1,
        description="Node 4: optional largest share of replica rows closer to an actual row "
                    "than the 5th percentile of actual-to-actual NN distances.")
    moment_tolerance: float = Field(
        default=3.0, ge=0,
        description="Node 5: largest |θ_j − θ*_j| in moment_kind's units (default: three "
                    "standard errors).")
    moment_kind: Literal["absolute", "relative", "standard_error", "standardized"] = Field(
        default="standard_error",
        description="Node 5: absolute, relative, in two-sample standard errors, or "
                    "standardized (over the sd of T_j(x)).")
    replica_kl: float = Field(default=0.05, ge=0,
                              description="Node 6: largest K(f* : f**) in nats.")


class OutputSpec(_Model):
    released: str = Field(description="Where the released replica goes (csv/parquet/jsonl).")
    report: str = Field(description="The architecture report (JSON).")
    plots: str | None = Field(default="plots",
                              description="Folder for the Figure 2-5 PNGs; null = no plots.")


class ArchitectureConfig(_Model):
    """A run of the information architecture (``anoneval architecture CONFIG``)."""

    workflow: Literal["architecture"] = Field(
        default="architecture", description="Marks the config as this workflow's (for "
                                            "'anoneval validate').")
    data: str | DataSpec = Field(description="The actual data: a path or {path, format}.")
    columns: list[str] | None = Field(default=None, min_length=1,
                                      description="Columns to protect; null = all numeric.")
    transform: Transform | dict[str, Transform] = Field(
        default="identity", description="Task 2's transform, one for all or per column.")
    synthesizer: PluginRef = Field(
        description="The ME synthesizer by registered name, e.g. {'name': 'MaxEntNormal'}; "
                    "columns and transform come from the top level.")
    moments: list[Moment] = Field(
        default_factory=lambda: ["mean", "variance", "covariance"], min_length=1,
        description="Task 3's information moments (names as in MomentDiscrepancy).")
    seed: int = Field(default=0, ge=0, description="Seed of the first replica.")
    max_attempts: int = Field(default=5, ge=1, le=1000,
                              description="Replicas drawn at most (seed, seed + 1, …).")
    energy_resamples: int = Field(default=199, ge=0, le=100_000,
                                  description="Permutations of the energy test.")
    grid: int | None = Field(default=None, ge=16, le=4096,
                             description="Grid points per dimension (default by dimension).")
    model_sample: int = Field(default=20_000, ge=1000,
                              description="Draws for a model density without a closed form.")
    plot_columns: list[str] | None = Field(
        default=None, min_length=1, max_length=2,
        description="The one or two columns of the scatter/contour plots (default: first two).")
    thresholds: Thresholds = Field(default_factory=Thresholds)
    output: OutputSpec


def _problems(exc: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    out = []
    for e in exc.errors():
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"])
        out.append(((prefix + loc).lstrip("."), e["msg"]))
    return out


def load_architecture_config(source: str | Path | dict[str, Any]) -> tuple[
        ArchitectureConfig, Path]:
    """Validate a config (file or dict); returns it and the folder paths are relative to."""
    if isinstance(source, dict):
        raw, base = source, Path.cwd()
    else:
        path = Path(source)
        try:
            raw = read_json(path, "config")
        except DataError as exc:
            raise ConfigError([("", str(exc))]) from None
        base = path.resolve().parent
    try:
        cfg = ArchitectureConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_problems(exc)) from exc
    check_paths(cfg, base, None if isinstance(source, dict) else Path(source))
    return cfg, base


def synthesizer_class(ref: PluginRef, registry: Any) -> type:
    """The registered synthesizer ``ref`` names; it must take ``columns`` and ``transform``."""
    try:
        cls = registry.get("synthesizer", ref.name)
    except KeyError as exc:
        raise ConfigError([("synthesizer.name", str(exc))]) from exc
    fields = getattr(cls, "Params", None)
    names = set(getattr(fields, "model_fields", {}))
    if not {"columns", "transform"} <= names:
        raise ConfigError([("synthesizer.name",
                            f"{ref.name} does not take 'columns' and 'transform'; the "
                            f"architecture needs an ME synthesizer (MaxEntNormal, "
                            f"MaxEntLogistic, MaxEntMoments, GaussianCopula)")])
    return cls  # type: ignore[no-any-return]


def _resolve(base: Path, value: str) -> Path:
    p = Path(value)
    return p if p.is_absolute() else base / p


def check_paths(cfg: ArchitectureConfig, base: Path, config_path: Path | None = None,
                registry: Any = None) -> None:
    """Refuse outputs (released data, report, plots) that would overwrite the data, the config,
    a registry file or plugin source, or each other, or that are not regular files; the data
    file must exist."""
    spec = cfg.data if isinstance(cfg.data, DataSpec) else DataSpec(path=cfg.data)
    data = _resolve(base, spec.path)
    problems = [] if data.is_file() else [("data", f"file not found: {data}")]
    inputs = [("data", data)] + ([("config", config_path)] if config_path else [])
    if registry is not None:
        inputs += registry.read_paths()
    outputs = [("output.released", _resolve(base, cfg.output.released)),
               ("output.report", _resolve(base, cfg.output.report))]
    if cfg.output.plots is not None:
        from anoneval.plugins.workflows.architecture.plots import FIGURES

        folder = _resolve(base, cfg.output.plots)
        outputs += [("output.plots", folder / f"{name}.png") for name in FIGURES]
    problems += collisions(inputs, outputs)
    if problems:
        raise ConfigError(problems)
