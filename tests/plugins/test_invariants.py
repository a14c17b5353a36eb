"""Properties every registered measure keeps, checked on each through the same code (as
scikit-learn's ``test_common``): determinism, no mutation of its inputs, invariance to the order
of the records, the direction its class declares, and a value that is a finite number (in
[0, 1] when its unit is a share).

Every measure that accepts microdata runs under the example params of
``tests/plugins/microdata/test_measure_columns.py`` (which requires one per such measure) on
the same small frames; the measures of other data kinds are listed in :data:`OTHER_KINDS`.
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
from anoneval.core.api import Direction
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
#: Measures of trajectories or tables only: their families' tests check them.
OTHER_KINDS = sorted((kind, name) for kind in ("risk_measure", "loss_measure")
                     for name in REGISTRY.names(kind)
                     if "microdata" not in REGISTRY.get(kind, name).accepts)
#: Measures whose value depends on the record order by design: their attacks draw random
#: records by position, so a seeded draw picks other records once the rows are permuted (the
#: other seeded measures, e.g. Linkability or PropensityMSE, keep their value: checked).
RANDOM_DRAWS = {"AttributeInference", "SinglingOut", "DOMIAS", "EmpiricalEpsilon"}
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


@pytest.mark.parametrize(("kind", "name"), MEASURES, ids=[n for _, n in MEASURES])
def test_measure_invariants(kind: str, name: str) -> None:
    original, anonymized, control = inputs(name)
    kept = [f.copy(deep=True) for f in (original, anonymized, control) if f is not None]
    first = run(name, original, anonymized, control)
    # no mutation of the inputs
    for before, after in zip(kept, [f for f in (original, anonymized, control)
                                    if f is not None], strict=True):
        pd.testing.assert_frame_equal(before, after)
    # determinism: the same seed gives the same entry
    assert run(name, original, anonymized, control) == first
    if name in ERRORS_HERE:
        assert first["error"] and first["value"] is None
        return
    assert first["error"] is None, first["error"]
    # direction: the one the class declares, of the measure's kind
    declared = REGISTRY.create(kind, name, PARAMS[name]).direction()
    assert first["direction"] == Direction(declared).value
    assert Direction(first["direction"]) in (
        (Direction.RISKIER, Direction.SAFER) if kind == "risk_measure"
        else (Direction.MORE_LOSS, Direction.LESS_LOSS))
    # bounds: a finite number; a share lies in [0, 1]
    value = first["value"]
    assert isinstance(value, int | float) and math.isfinite(value), value
    if first.get("unit") == "share":
        assert 0.0 <= value <= 1.0, value
    # invariance to the order of the records (the same permutation on both sides keeps
    # records paired by position)
    if name in RANDOM_DRAWS:
        return
    order = np.random.default_rng(11).permutation(len(original))
    shuffled = run(name, original.iloc[order].reset_index(drop=True),
                   anonymized.iloc[order].reset_index(drop=True),
                   None if control is None else control.iloc[::-1].reset_index(drop=True))
    assert shuffled["value"] == pytest.approx(value, rel=1e-9, abs=1e-12), name
