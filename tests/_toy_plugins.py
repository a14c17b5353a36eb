"""The toy plugins of the tests, in one module: small measures, synthesizers and hook plugins
that exercise the framework (not built-ins), grouped by the tests that use them."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest
from pydantic import Field

from anoneval.core.api import (
    DELETED,
    Context,
    Dataset,
    Distance,
    LossMeasure,
    MeasureResult,
    Microdata,
    Params,
    PluginRef,
    RiskMeasure,
    SynthesisResult,
    Synthesizer,
    Trajectories,
    hookimpl,
    plugin_ref,
    released,
)
from anoneval.plugins._shared.continuous import (
    ColumnsParams,
    backward,
    forward,
    select_columns,
)


class ShareBelowK(RiskMeasure):
    """Share of records in classes smaller than k (brute-force simple, for framework tests)."""

    name = "ShareBelowK"
    description = "Share of records in classes smaller than k."
    inputs = "either"

    class Params(Params):
        quasi_identifiers: list[str] = Field(min_length=1, description="QI columns.")
        k: int = Field(2, ge=1, description="Smallest allowed class size.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        data = released(original, anonymized)
        assert isinstance(data, Microdata)
        data.require(self.params.quasi_identifiers, "quasi-identifier")
        ids, _ = data.group_ids(self.params.quasi_identifiers)
        small = data.group_sizes(self.params.quasi_identifiers)[ids] < self.params.k
        return MeasureResult(value=float(small.mean()), details={"records": len(data)})


class Boom(LossMeasure):
    """Always raises: one failing plugin must not stop the others."""

    name = "Boom"
    description = "Raises on purpose."

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        raise RuntimeError("kaput")


class NotANumber(RiskMeasure):
    """Returns NaN with a warning: a threshold on no value must FAIL, the warning must show."""

    name = "NotANumber"
    description = "Returns NaN on purpose."

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        return MeasureResult(value=float("nan"), warnings=["578 records could not be linked"])


class CountingPrepare(LossMeasure):
    """Counts how often ``prepare`` runs (original-side work must run once per evaluator)."""

    name = "CountingPrepare"
    description = "Row-count difference; counts prepare calls."
    calls: list[int] = []  # noqa: RUF012 - a test probe

    def prepare(self, original: Dataset | None, ctx: Context) -> Any:
        CountingPrepare.calls.append(1)
        return len(original) if original is not None else 0

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert anonymized is not None
        return MeasureResult(value=float(abs(ctx.prepared - len(anonymized))))


class RowDistance(Distance):
    """Absolute difference of one numeric column."""

    name = "RowDistance"
    description = "Absolute difference of a numeric column."

    class Params(Params):
        column: str = Field("x", description="Numeric column.")

    def pairwise(self, x: Dataset, y: Dataset, rows: np.ndarray | None = None,
                 cols: np.ndarray | None = None) -> np.ndarray:
        assert isinstance(x, Microdata) and isinstance(y, Microdata)
        a = x.frame[self.params.column].to_numpy(float)
        b = y.frame[self.params.column].to_numpy(float)
        a = a if rows is None else a[rows]
        b = b if cols is None else b[cols]
        return np.abs(a[:, None] - b[None, :])


class NearestMatch(RiskMeasure):
    """Share of records whose nearest anonymized record is their own (row-aligned)."""

    name = "NearestMatch"
    description = "Share of records linked to themselves by a nested distance."

    class Params(Params):
        distance: PluginRef = plugin_ref("distance", "RowDistance", "Distance to link with.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert original is not None and anonymized is not None
        dist = ctx.create("distance", self.params.distance)
        assert isinstance(dist, Distance)
        d = dist.fit(original, ctx).pairwise(original, anonymized)
        return MeasureResult(value=float((d.argmin(axis=1) == np.arange(len(d))).mean()))


class Analytic(RiskMeasure):
    """Needs no data: returns its param."""

    name = "Analytic"
    description = "Returns its param; needs no data."
    inputs = "none"

    class Params(Params):
        value: float = Field(0.5, ge=0, le=1, description="The value to return.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        return MeasureResult(value=self.params.value,
                             details={"draw": float(ctx.rng().random())})


TOYS = (ShareBelowK, Boom, NotANumber, CountingPrepare, RowDistance, NearestMatch, Analytic)


def toy_measure(name: str, value: Callable[[Any, Dataset | None, Dataset | None, Context], float],
                *, doc: str, module: str, inputs: str = "both",
                params: type[Params] | None = None) -> type[RiskMeasure]:
    """A risk measure class ``name`` (defined in ``module``) whose value is
    ``value(params, original, anonymized, ctx)``."""

    def compute(self: RiskMeasure, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        return MeasureResult(value=float(value(self.params, original, anonymized, ctx)))

    namespace: dict[str, Any] = {"__doc__": doc, "__module__": module, "__qualname__": name,
                                 "name": name, "description": doc, "inputs": inputs,
                                 "compute": compute}
    if params is not None:
        namespace["Params"] = params
    return type(name, (RiskMeasure,), namespace)


def compute_on_frames(measure: Any, original: Any,
                      anonymized: Any = None) -> tuple[float | None, dict[str, Any], list[str]]:
    """``measure.compute`` on DataFrames (each as Microdata; None stays None): the value, the
    details and the warnings."""
    ctx = Context()
    o = Microdata(original) if original is not None else None
    a = Microdata(anonymized) if anonymized is not None else None
    res = measure.compute(o, a, ctx)
    return res.value, res.details, ctx.warnings


def registry_with(*classes: type) -> Any:
    """A registry of the built-ins (no entry points) and ``classes``."""
    from anoneval.registry import build_registry

    registry = build_registry(entry_points=False)
    for cls in classes:
        registry.register(cls, source="tests")
    return registry


class LifecycleRecorder:
    """A pluggy plugin recording lifecycle hook calls."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    @hookimpl
    def before_measure(self, measure: Any, ctx: Context) -> None:
        self.events.append(("before", measure.name))

    @hookimpl
    def after_measure(self, measure: Any, result: Any, ctx: Context) -> None:
        self.events.append(("after", measure.name))


# -- used by tests/core/data/test_pairs.py --------------------------------------------------------

class ChangedCells(RiskMeasure):
    """Cells of ``age`` changed by the release: a paired measure using the default compute."""

    name = "ChangedCells"
    description = "Changed age cells."
    paired = True

    def columns(self):
        return {"original": ["age"], "anonymized": ["age"]}

    def partial(self, frame, ctx):
        changed = frame[("original", "age")].astype(str) != frame[("anonymized", "age")]
        return int(changed.sum()), int(frame[DELETED].sum()), sorted(frame.index)[:1]

    def combine(self, parts):
        return (sum(p[0] for p in parts), sum(p[1] for p in parts),
                sorted(i for p in parts for i in p[2]))

    def finalize(self, combined, ctx):
        return MeasureResult(value=combined[0], details={"firsts": combined[2]})


# -- used by tests/core/data/test_partitioned.py --------------------------------------------------

class SeenColumns(RiskMeasure):
    """Which columns the partitions handed to ``partial`` held (observes column pruning)."""

    name = "SeenColumns"
    description = "Columns of the partitions."
    inputs = "either"

    def columns(self):
        return {"anonymized": ["sex", "region"]}

    def partial(self, frame, ctx):
        return set(frame.columns), len(frame)

    def combine(self, parts):
        return set().union(*(p[0] for p in parts)), sum(p[1] for p in parts)

    def finalize(self, combined, ctx):
        return MeasureResult(value=combined[1], details={"columns": sorted(combined[0])})


class MeanAge(RiskMeasure):
    """Mean age from the frame: no partition-wise form, so it runs on gathered data."""

    name = "MeanAge"
    description = "Mean age."
    inputs = "either"

    def columns(self):
        return {"original": ["age"], "anonymized": ["age"]}

    def compute(self, original, anonymized, ctx):
        return MeasureResult(value=float(anonymized.frame["age"].mean()))


# -- used by tests/core/data/test_resources_inputs.py ---------------------------------------------

class Hungry(RiskMeasure):
    """Runs out of memory."""

    name = "Hungry"
    description = "Allocates too much."
    inputs = "either"

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        raise MemoryError("Unable to allocate 3.2 TiB for an array")


# -- used by tests/core/report/test_html.py -------------------------------------------------------

class ToyClasses(RiskMeasure):
    """1 / smallest class size, with class_size_counts (the KAnonymity histogram)."""

    name = "ToyClasses"
    description = "Toy class sizes."
    inputs = "either"

    class Params(Params):
        qi: list[str] = Field(min_length=1)
        k: int = 2

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        data = released(original, anonymized)
        assert isinstance(data, Microdata)
        sizes = data.group_sizes(self.params.qi)
        s, c = np.unique(sizes, return_counts=True)
        return MeasureResult(value=1.0 / sizes.min(),
                             details={"class_size_counts": dict(zip(s, c, strict=True))})


class ToyCells(RiskMeasure):
    """Share of unsafe cells of a region × sector count table (the sensitivity-rule map)."""

    name = "ToyCells"
    description = "Toy cell rule."
    inputs = "either"

    class Params(Params):
        threshold: int = 3

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        data = released(original, anonymized)
        assert isinstance(data, Microdata)
        counts = data.frame.groupby(["region", "sector"]).size()
        full = pd.MultiIndex.from_product([sorted(data.frame["region"].unique()),
                                           ["s1", "s2", "s3"]], names=["region", "sector"])
        counts = counts.reindex(full, fill_value=0)
        cells = counts.rename("count").reset_index()
        cells["status"] = np.where(cells["count"] == 0, "empty",
                                   np.where(cells["count"] < self.params.threshold, "unsafe",
                                            "safe"))
        return MeasureResult(value=float((cells["status"] == "unsafe").mean()),
                             details={"cells": cells})


class ToyLinkage(RiskMeasure):
    """Share of anonymized records whose nearest original (on x) is their own row."""

    name = "ToyLinkage"
    description = "Toy record linkage."

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(original, Microdata) and isinstance(anonymized, Microdata)
        x = original.frame["x"].to_numpy(float)
        y = anonymized.frame["x"].to_numpy(float)
        d = np.abs(y[:, None] - x[None, :])
        nearest = d.argmin(axis=1)
        linked = nearest == np.arange(len(y))
        dist = d.min(axis=1)
        return MeasureResult(value=float(linked.mean()),
                             details={"nearest_distance_linked": dist[linked],
                                      "nearest_distance_unlinked": dist[~linked]})


class ToyCurve(RiskMeasure):
    """An analytic leakage curve over epsilon."""

    name = "ToyCurve"
    description = "Toy leakage curve."
    inputs = "none"

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        eps = np.linspace(0, 4, 9)
        leak = 1 - np.exp(-eps)
        return MeasureResult(value=float(leak[-1]),
                             details={"curve": {"param": "epsilon", "x": eps, "y": leak}})


class ToyLoss(LossMeasure):
    """Mean |Δx| with a long per-record table and nested details."""

    name = "ToyLoss"
    description = "Toy loss."

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(original, Microdata) and isinstance(anonymized, Microdata)
        diff = (original.frame["x"] - anonymized.frame["x"]).abs()
        return MeasureResult(value=float(diff.mean()), details={
            "per_record": pd.DataFrame({"row": np.arange(len(diff)), "abs_diff": diff}),
            "nested": {"a": {"b": 1, "c": [1, 2]}},
            "worst": float(diff.max()),
        })


class Noise(Synthesizer):
    """Original plus Gaussian noise on x and y; the category is resampled."""

    name = "Noise"
    description = "Toy noise synthesizer."

    def generate(self, original: Dataset, ctx: Context) -> SynthesisResult:
        assert isinstance(original, Microdata)
        rng = ctx.rng()
        f = original.frame.copy()
        f["x"] = f["x"] + rng.normal(0, 1, len(f))
        f["y"] = f["y"] + rng.normal(0, 1, len(f))
        f["region"] = rng.permutation(f["region"].to_numpy())
        return SynthesisResult(data=Microdata(f), details={"noise_sd": 1.0})


class ThirdParty:
    """A third-party plugin: its own section for ToyLoss, a failing one for ToyCells."""

    @hookimpl
    def report_section(self, measure: dict[str, Any], report: dict[str, Any]) -> str | None:
        if measure["name"] == "ToyLoss":
            return (f'<p id="third-party">worst is {measure["details"]["worst"]:.2f} in '
                    f'variant {report["variant"]}</p>')
        if measure["name"] == "ToyCells":
            raise ValueError("cannot draw this")
        return None


class MeasureOnly:
    """A hookimpl may take a subset of the spec's arguments."""

    @hookimpl
    def report_section(self, measure: dict[str, Any]) -> str | None:
        return '<p id="measure-only">hello</p>' if measure["label"] == "ToyCurve" else None


MARK = "document.title='PWNED';document.documentElement.setAttribute('data-pwned','1')"


PAYLOADS = [f"<script>{MARK}</script>",
            f'<img src=x onerror="{MARK}">',
            f"javascript:{MARK}",
            f'" onmouseover="{MARK}" autofocus onfocus="{MARK}" x="',
            f"'><svg onload=\"{MARK}\">"]


class HostileCells(RiskMeasure):
    """Names key columns (``cells``) its cells table lacks: the map's note names them."""

    name = "HostileCells"
    description = "Cells table without the named keys."
    inputs = "either"

    class Params(Params):
        cells: list[str] = Field(min_length=1)

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        data = released(original, anonymized)
        assert isinstance(data, Microdata)
        for p in PAYLOADS:
            ctx.warn(f"warning {p}")
        col = data.frame.columns[0]
        cells = pd.DataFrame({col: data.frame[col].astype(str).unique()})
        cells["status"] = "safe"
        return MeasureResult(value=0.5, details={"cells": cells, "note": PAYLOADS,
                                                 PAYLOADS[0]: PAYLOADS[1]})


class HostileFails(RiskMeasure):
    """Always fails with a payload in its message."""

    name = "HostileFails"
    description = "Fails."
    inputs = "either"

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        raise ValueError(" ".join(PAYLOADS))


class HostileSection:
    """A third-party section: escapes what it shows, and also slips raw markup in."""

    @hookimpl
    def report_section(self, measure: dict[str, Any]) -> str | None:
        from markupsafe import escape

        if measure["name"] != "HostileCells":
            return None
        shown = "".join(f'<p class="tp">{escape(p)}</p>' for p in measure["details"]["note"])
        return shown + PAYLOADS[0] + PAYLOADS[1]


class RefreshSection:
    """A third-party section pasting a value unescaped: a refresh, a base, a form."""

    def __init__(self, away: str) -> None:
        self.away = away

    @hookimpl
    def report_section(self, measure: dict[str, Any]) -> str | None:
        return (f'<p class="tp">shown</p><meta http-equiv="refresh" content="0;url={self.away}">'
                f'<base href="{self.away}"><form action="{self.away}"><button>go</button></form>')


# -- used by tests/core/run/test_many.py ----------------------------------------------------------

class MinClass(RiskMeasure):
    """Smallest class size over ``qi`` (higher = safer), prepared work counted."""

    name = "MinClass"
    description = "Smallest class size."
    inputs = "either"
    higher_is_worse = False
    prepared: list[int] = []  # noqa: RUF012 - a test probe

    class Params(Params):
        qi: list[str] = Field(min_length=1)

    def prepare(self, original: Dataset | None, ctx: Context) -> Any:
        MinClass.prepared.append(1)
        assert isinstance(original, Microdata)
        return int(original.group_sizes(self.params.qi).min())

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        data = released(original, anonymized)
        assert isinstance(data, Microdata)
        return MeasureResult(value=float(data.group_sizes(self.params.qi).min()),
                             details={"original_min": ctx.prepared})


class Classes(LossMeasure):
    """Number of classes lost against the original (higher = more loss)."""

    name = "Classes"
    description = "Classes lost."

    class Params(Params):
        qi: list[str] = Field(min_length=1)

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(original, Microdata) and isinstance(anonymized, Microdata)
        return MeasureResult(value=float(original.group_ids(self.params.qi)[1]
                                         - anonymized.group_ids(self.params.qi)[1]))


class Fragile(LossMeasure):
    """Fails on variants without column 'b'."""

    name = "Fragile"
    description = "Fails without b."

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(anonymized, Microdata)
        return MeasureResult(value=float(anonymized.frame["b"].nunique()))


# -- used by tests/core/run/test_plugin_containment.py --------------------------------------------

RELEASE = threading.Event()  # lets the hanging plugin's thread end when the test is done


class Exits(RiskMeasure):
    name = "Exits"
    description = "Calls sys.exit()."

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        sys.exit(3)


class ExitsInPrepare(RiskMeasure):
    name = "ExitsInPrepare"
    description = "Calls sys.exit() while preparing."

    def prepare(self, original: Dataset | None, ctx: Context) -> None:
        sys.exit("bye")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        return MeasureResult(value=0.0)


class Vandal(RiskMeasure):
    """Writes into everything it is handed, every way pandas and numpy allow."""

    name = "Vandal"
    description = "Modifies the data in place."
    inputs = "either"

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        written = 0
        for data in (original, anonymized):
            assert isinstance(data, Microdata)
            frame = data.frame
            frame.loc[0, "age"] = -1
            frame.iloc[1, 1] = "HACKED"
            frame["zip"] = "z"
            frame.drop(index=4, inplace=True)
            written += 1
            ids, _ = data.group_ids(["age"])
            with pytest.raises(ValueError, match="read-only"):
                ids[0] = 99
        return MeasureResult(value=float(written))


class Reader(RiskMeasure):
    """Reports what it sees, to show the vandal's writes did not reach it."""

    name = "Reader"
    description = "Sums the age column."
    inputs = "either"

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        data = released(original, anonymized)
        assert isinstance(data, Microdata)
        frame = data.frame
        return MeasureResult(value=float(frame["age"].sum()),
                             details={"zips": sorted(frame["zip"].unique()), "rows": len(frame),
                                      "groups": int(data.group_ids(["age"])[1])})


class Hangs(LossMeasure):
    name = "Hangs"
    description = "Never returns (until the test releases it)."

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        RELEASE.wait(60)
        return MeasureResult(value=1.0)


class Quick(LossMeasure):
    name = "Quick"
    description = "Returns at once."
    higher_is_worse = False

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        return MeasureResult(value=0.5)


class TrajectoryVandal(LossMeasure):
    name = "TrajectoryVandal"
    description = "Writes into trajectory arrays."
    accepts = ("trajectories",)
    inputs = "either"

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(original, Trajectories)
        with pytest.raises(ValueError, match="read-only"):
            original.lon[0] = 0.0
        return MeasureResult(value=0.0)


# -- used by tests/core/run/test_synthetic_control.py ---------------------------------------------

class _ControlVandal(RiskMeasure):
    """Writes into the control set it is given, then reports what is left of it."""

    name = "ControlVandal"
    description = "Modifies the control set in place."
    uses_control = "required"

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(ctx.control, Microdata)
        ctx.control.frame.loc[0, "a"] = -100
        ids, _ = ctx.control.group_ids(["a"])
        with pytest.raises(ValueError, match="read-only"):
            ids[0] = 99
        return MeasureResult(value=float(ctx.control.frame["a"].sum()))


class _ControlKinds(RiskMeasure):
    """Reports the control set's column dtypes as the measure sees them."""

    name = "ControlKinds"
    description = "The control set's dtypes."
    uses_control = "required"

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert isinstance(ctx.control, Microdata) and isinstance(original, Microdata)
        frames = {"original": original.frame, "control": ctx.control.frame}
        return MeasureResult(value=0.0, details={
            side: {c: [str(f[c].dtype), f[c].tolist()] for c in f.columns}
            for side, f in frames.items()})


# -- used by tests/plugins/synthesizers/test_maxent_synth.py --------------------------------------

class ReplicaMeanLogGap(LossMeasure):
    """Test-only measure: max |mean log(original) − mean log(replica)| over the columns."""

    name = "ReplicaMeanLogGap"
    description = "test measure"

    def compute(self, original, anonymized, ctx):
        cols = list(original.frame.columns)
        a = np.log(original.frame[cols].to_numpy()).mean(axis=0)
        b = np.log(anonymized.frame[cols].to_numpy()).mean(axis=0)
        return MeasureResult(value=float(np.max(np.abs(a - b))))


# -- used by tests/plugins/workflows/test_architecture.py -----------------------------------------

class ShiftedNormal(Synthesizer):
    """Test double: reports the actual data's normal model but draws the replica from
    N(μ + shift·σ, Σ) on the transformed scale; ``good_from_seed`` turns the shift off for
    seeds at or above it, and ``copy_rows`` returns the actual rows themselves."""

    name = "ShiftedNormal"
    description = "test double"
    accepts: ClassVar[tuple[str, ...]] = ("microdata",)

    class Params(ColumnsParams):
        n: int | None = None
        shift: float = 0.0
        good_from_seed: int = 10**9
        copy_rows: bool = False

    def generate(self, original, ctx: Context) -> SynthesisResult:
        p = self.params
        cols = select_columns(original, p.columns)
        x, fitted = forward(original.frame, cols, p.transform)
        mean, cov = x.mean(axis=0), np.cov(x, rowvar=False, ddof=0)
        shift = p.shift if ctx.seed < p.good_from_seed else 0.0
        rng = ctx.rng()
        n = p.n or len(x)
        draws = (x.copy() if p.copy_rows and p.n is None else
                 rng.multivariate_normal(mean + shift * np.sqrt(np.diag(cov)), cov, n))
        frame = pd.DataFrame(backward(draws, fitted), columns=cols)
        details = {"parameters": {"mean": dict(zip(cols, mean.tolist(), strict=True)),
                                  "covariance": cov.tolist()}}
        return SynthesisResult(data=Microdata(frame), details=details)


class NoColumns(Synthesizer):
    name = "NoColumns"
    description = "test double without columns/transform"

    class Params(ColumnsParams.__base__):  # anoneval.core.Params
        k: int = Field(default=1)

    def generate(self, original, ctx):  # pragma: no cover - never reached
        raise AssertionError


# -- used by tests/plugins/workflows/test_sweep.py ------------------------------------------------

class GammaParams(Params):
    gamma: float = Field(0.5, ge=0, le=1, description="A weight in [0, 1].")


class Shift(Synthesizer):
    """The original with ``shift`` added to column a."""

    name = "Shift"
    description = "Adds a constant."

    class Params(Params):
        shift: float = Field(0.0, description="Added to a.")

    def generate(self, original: Dataset, ctx: Context) -> SynthesisResult:
        assert isinstance(original, Microdata)
        return SynthesisResult(data=Microdata(original.frame.assign(
            a=original.frame["a"] + self.params.shift)))
