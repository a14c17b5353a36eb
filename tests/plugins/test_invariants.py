"""Properties every registered measure keeps, checked on each through the same code (as
scikit-learn's ``test_common``): determinism, no mutation of its inputs, invariance to the order
of the records, the direction its class declares, and a value that is a finite number (in
[0, 1] when its unit is a share).

Every measure that accepts microdata runs under the example params of
``tests/plugins/microdata/test_measure_columns.py`` (which requires one per such measure) on
the same small frames; every measure that accepts a table runs on one cell table (with its
margins and a suppression pattern: :func:`tables`), and every trajectory measure on one set of
trajectories and a perturbed release (:func:`trajectory_sets`), under its default params. The
"order of the records" is the order of the cells of a table (each side shuffled on its own:
cells pair by key) and the order of the trajectories (ids and users relabelled alike on both
sides, so the sorted order changes while the pairing by id stays).
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from anoneval.core import evaluate
from anoneval.core.api import Dataset, Direction, Table, Trajectories
from anoneval.registry import build_registry

_spec = importlib.util.spec_from_file_location(
    "_measure_examples", Path(__file__).resolve().parent / "microdata" /
    "test_measure_columns.py")
assert _spec is not None and _spec.loader is not None
_examples = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_examples)
EXAMPLES: dict[str, dict[str, Any]] = _examples.EXAMPLES
frames = _examples.frames
#: The examples, with a microdata distance where the default is one of trajectories.
PARAMS = {**EXAMPLES, "RecordLinkage": {"distance": {"name": "Gower"}}}

REGISTRY = build_registry(entry_points=False)
#: Microdata measures without an example here: the table-audit pair reads a suppression
#: pattern of a cell table (tests/plugins/tabular/test_suppression_audit.py checks them).
NO_EXAMPLE = {"SuppressionAudit", "SuppressionLoss"}
MEASURES = sorted((kind, name) for kind in ("risk_measure", "loss_measure")
                  for name in REGISTRY.names(kind)
                  if "microdata" in REGISTRY.get(kind, name).accepts and name not in NO_EXAMPLE)
#: Measures of trajectories or tables only (checked by the table and trajectory tests below).
OTHER_KINDS = sorted((kind, name) for kind in ("risk_measure", "loss_measure")
                     for name in REGISTRY.names(kind)
                     if "microdata" not in REGISTRY.get(kind, name).accepts)
#: Measures whose value depends on the record order by design: their attacks draw random
#: records by position, so a seeded draw picks other records once the rows are permuted (the
#: other seeded measures, e.g. Linkability or PropensityMSE, keep their value: checked).
RANDOM_DRAWS = {"AttributeInference", "SinglingOut"}
#: Measures that need a population larger than the sample (an error is their right answer on
#: these frames; they still must not mutate the data, and fail the same way every time).
ERRORS_HERE = {"DeltaPresence"}


def run(name: str, original: pd.DataFrame, anonymized: pd.DataFrame,
        control: pd.DataFrame | None) -> dict[str, Any]:
    kind = next(k for k, n in MEASURES if n == name)
    measure = REGISTRY.create(kind, name, PARAMS[name])
    entry = evaluate(original, anonymized, [measure], control=control,
                     seed=7).to_dict()["measures"][0]
    entry.pop("seconds")
    return json.loads(json.dumps(entry, default=str, sort_keys=True))


def inputs(name: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    kind = next(k for k, n in MEASURES if n == name)
    measure = REGISTRY.create(kind, name, PARAMS[name])
    original, anonymized = frames()
    control = frames(seed=1)[0] if measure.control_use() != "none" else None
    return original, anonymized, control


def test_every_measure_is_covered() -> None:
    assert MEASURES and {name for _, name in MEASURES} <= set(EXAMPLES)
    for kind, name in OTHER_KINDS:
        accepts = set(REGISTRY.get(kind, name).accepts)
        assert accepts and accepts <= {"trajectories", "table"}, (name, accepts)
    assert set(OTHER_KINDS) <= {*TABLE_MEASURES, *TRAJECTORY_MEASURES}


def snapshot(data: Any) -> pd.DataFrame | None:
    """A deep copy of what a side holds, to compare after the measure ran."""
    if data is None:
        return None
    if isinstance(data, pd.DataFrame):
        return data.copy(deep=True)
    return (data.to_frame() if isinstance(data, Trajectories) else data.frame).copy(deep=True)


def assert_properties(kind: str, name: str, params: dict[str, Any],
                      entry: Any, sides: tuple[Any, ...],
                      reordered: Any = None, errors_here: bool = False) -> None:
    """The properties every measure keeps: ``entry(*sides)`` is its report entry, and
    ``reordered()`` gives the same sides with their records in another order (None: a measure
    that depends on the order by design)."""
    kept = [snapshot(d) for d in sides]
    first = entry(*sides)
    # no mutation of the inputs
    for before, data in zip(kept, sides, strict=True):
        if before is not None:
            pd.testing.assert_frame_equal(before, snapshot(data))
    # determinism: the same seed gives the same entry
    assert entry(*sides) == first
    if errors_here:
        assert first["error"] and first["value"] is None
        return
    assert first["error"] is None, first["error"]
    # direction: the one the class declares, of the measure's kind
    declared = REGISTRY.create(kind, name, params).direction()
    assert first["direction"] == Direction(declared).value
    assert Direction(first["direction"]) in (
        (Direction.RISKIER, Direction.SAFER) if kind == "risk_measure"
        else (Direction.MORE_LOSS, Direction.LESS_LOSS))
    # bounds: a finite number; a share lies in [0, 1]
    value = first["value"]
    assert isinstance(value, int | float) and math.isfinite(value), value
    if first.get("unit") == "share":
        assert 0.0 <= value <= 1.0, value
    # invariance to the order of the records
    if reordered is not None:
        shuffled = entry(*reordered())
        assert shuffled["error"] is None, shuffled["error"]
        assert shuffled["value"] == pytest.approx(value, rel=1e-9, abs=1e-12), name


@pytest.mark.parametrize(("kind", "name"), MEASURES, ids=[n for _, n in MEASURES])
def test_measure_invariants(kind: str, name: str) -> None:
    original, anonymized, control = inputs(name)

    def reordered() -> tuple[Any, ...]:
        # the same permutation on both sides keeps records paired by position
        order = np.random.default_rng(11).permutation(len(original))
        return (original.iloc[order].reset_index(drop=True),
                anonymized.iloc[order].reset_index(drop=True),
                None if control is None else control.iloc[::-1].reset_index(drop=True))

    assert_properties(kind, name, PARAMS[name], lambda o, a, c: run(name, o, a, c),
                      (original, anonymized, control),
                      None if name in RANDOM_DRAWS else reordered, name in ERRORS_HERE)


# -- table measures ------------------------------------------------------------------------------

TABLE_OPTIONS = {"keys": ["d0", "d1"], "count": "n", "total": "value",
                 "contributions": ["top1", "top2"]}
#: Params of the measures a table needs more than its load options for: the audit pair reads
#: the suppression pattern of the released table, and (the audit) the original cell table.
TABLE_PARAMS: dict[str, dict[str, Any]] = {
    "SuppressionAudit": {"dimensions": {"d0": "flat", "d1": "flat"}, "magnitude": "value",
                         "count_column": "n", "contribution_columns": ["top1", "top2"]},
    "SuppressionLoss": {"dimensions": {"d0": "flat", "d1": "flat"}},
}
TABLE_MEASURES = sorted((kind, name) for kind in ("risk_measure", "loss_measure")
                        for name in REGISTRY.names(kind)
                        if "table" in REGISTRY.get(kind, name).accepts)


def tables(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(original, released) cell tables over d0 × d1 with their margins ("Tot"): contributors,
    total and the two largest contributions per cell (some cells of one contributor, some
    dominated by one); the release adds 0-2 units to the counts of cells of two or more and
    suppresses a 2 × 2 block (one primary cell, three secondary)."""
    rng = np.random.default_rng(seed)
    rows, cols = ["A", "B", "C"], ["X", "Y", "Z"]
    units = {}
    for r in rows:
        for c in cols:
            x = rng.gamma(2.0, 50.0, rng.integers(1, 7)).round(1)
            if rng.random() < 0.3:
                x[0] *= 20  # one contributor dominates the cell
            units[r, c] = x
    cells = []
    for r in ["Tot", *rows]:
        for c in ["Tot", *cols]:
            x = np.sort(np.concatenate([u for (r2, c2), u in units.items()
                                        if r in ("Tot", r2) and c in ("Tot", c2)]))[::-1]
            cells.append({"d0": r, "d1": c, "n": len(x), "value": float(x.sum()),
                          "top1": float(x[0]), "top2": float(x[1]) if len(x) > 1 else np.nan,
                          "status": "s"})
    original = pd.DataFrame(cells)
    released = original.copy()
    grows = (released["d0"] != "Tot") & (released["n"] >= 2)
    released["n"] += rng.integers(0, 3, len(released)) * grows
    block = released["d0"].isin(["A", "B"]) & released["d1"].isin(["X", "Y"])
    released.loc[block, "status"] = "x"
    released.loc[block & released["d0"].eq("A") & released["d1"].eq("X"), "status"] = "u"
    return original, released


def table_entry(name: str, original: pd.DataFrame, released: pd.DataFrame) -> dict[str, Any]:
    kind = next(k for k, n in TABLE_MEASURES if n == name)
    measure = REGISTRY.create(kind, name, TABLE_PARAMS.get(name, {}))
    entry = evaluate(Table(original, **TABLE_OPTIONS), Table(released, **TABLE_OPTIONS),
                     [measure], seed=7).to_dict()["measures"][0]
    entry.pop("seconds")
    return json.loads(json.dumps(entry, default=str, sort_keys=True))


@pytest.mark.parametrize(("kind", "name"), TABLE_MEASURES, ids=[n for _, n in TABLE_MEASURES])
def test_table_measure_invariants(kind: str, name: str) -> None:
    original, released = tables()

    def reordered() -> tuple[pd.DataFrame, pd.DataFrame]:
        # each side shuffled on its own: cells pair by their keys
        rng = np.random.default_rng(11)
        return tuple(f.iloc[rng.permutation(len(f))].reset_index(drop=True)  # type: ignore
                     for f in (original, released))

    assert_properties(kind, name, TABLE_PARAMS.get(name, {}),
                      lambda o, r: table_entry(name, o, r), (original, released), reordered)


# -- trajectory measures -------------------------------------------------------------------------

TRAJECTORY_MEASURES = sorted((kind, name) for kind in ("risk_measure", "loss_measure")
                             for name in REGISTRY.names(kind)
                             if "trajectories" in REGISTRY.get(kind, name).accepts)
T0 = 1_300_000_000 - 1_300_000_000 % 86400  # a UTC midnight


def trajectory_frames(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(original, released) points of 10 users' 30 trajectories around Paris over three days
    (each from one of three homes to one of three workplaces, so that users share places);
    the release moves every point by up to about 100 m and drops a tenth of the points (never
    a trajectory's first two)."""
    rng = np.random.default_rng(seed)
    homes = [(2.30, 48.85), (2.34, 48.87), (2.28, 48.83)]
    works = [(2.33, 48.84), (2.36, 48.86), (2.31, 48.88)]
    rows = []
    for user in range(10):
        home, work = homes[rng.integers(3)], works[rng.integers(3)]
        for day in range(3):
            tid = user * 3 + day
            start = T0 + 86400 * day + 3600 * int(rng.integers(0, 6))
            n = int(rng.integers(5, 10))
            path = np.linspace(home, work, n) + rng.normal(0, 0.0005, (n, 2))
            times = start + np.sort(rng.choice(np.arange(1, 16 * 3600, 600), n, replace=False))
            rows += [{"user_id": f"u{user}", "trajectory_id": tid, "timestamp": int(t),
                      "lon": float(x), "lat": float(y)}
                     for t, (x, y) in zip(times, path, strict=True)]
    original = pd.DataFrame(rows)
    released = original.assign(lon=original["lon"] + rng.uniform(-1e-3, 1e-3, len(original)),
                               lat=original["lat"] + rng.uniform(-1e-3, 1e-3, len(original)))
    keep = (released.groupby("trajectory_id").cumcount() < 2) | (rng.random(len(released)) > 0.1)
    return original, released[keep].reset_index(drop=True)


def trajectory_entry(name: str, original: Dataset, released: Dataset) -> dict[str, Any]:
    kind = next(k for k, n in TRAJECTORY_MEASURES if n == name)
    measure = REGISTRY.create(kind, name, {})
    entry = evaluate(original, released, [measure], seed=7).to_dict()["measures"][0]
    entry.pop("seconds")
    return json.loads(json.dumps(entry, default=str, sort_keys=True))


@pytest.mark.parametrize(("kind", "name"), TRAJECTORY_MEASURES,
                         ids=[n for _, n in TRAJECTORY_MEASURES])
def test_trajectory_measure_invariants(kind: str, name: str) -> None:
    frames_ = trajectory_frames()

    def reordered() -> tuple[Trajectories, ...]:
        # ids and users relabelled alike on both sides (pairs by id stay), rows shuffled
        rng = np.random.default_rng(11)
        ids = rng.permutation(30) + 500
        users = {f"u{u}": f"v{v}" for u, v in enumerate(rng.permutation(10))}
        out = []
        for f in frames_:
            g = f.assign(trajectory_id=ids[f["trajectory_id"]],
                         user_id=f["user_id"].map(users))
            out.append(Trajectories.from_frame(g.iloc[rng.permutation(len(g))]))
        return tuple(out)

    assert_properties(kind, name, {}, lambda o, r: trajectory_entry(name, o, r),
                      tuple(Trajectories.from_frame(f) for f in frames_), reordered)
