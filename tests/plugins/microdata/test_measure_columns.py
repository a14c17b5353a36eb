"""Measure.columns(): every built-in microdata measure declares the columns it reads, and the
dask engine reads only those."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

from anoneval.core import evaluate
from anoneval.core.api import param_columns
from anoneval.core.data.partitioned import Partitioned
from anoneval.registry import build_registry

QI = ["age", "sex", "zip"]
N = ["age", "income"]
EXAMPLES = {
    "AlphaKAnonymity": {"quasi_identifiers": QI, "sensitive": ["disease"], "k": 2},
    "AttributeInference": {"aux_cols": ["age", "sex"], "secret": "disease", "n_attacks": 20},
    "BetaLikeness": {"quasi_identifiers": QI, "sensitive": ["disease"]},
    "CategoricalCAP": {"key_fields": ["sex", "zip"], "sensitive_fields": ["disease"]},
    "ClosePairs": {"columns": N},
    "CopiedRows": {"columns": ["age", "sex"]},
    "DeltaDisclosure": {"quasi_identifiers": QI, "sensitive": ["disease"]},
    "DeltaPresence": {"quasi_identifiers": QI},
    "DisclosureProtection": {"key_fields": ["age", "zip"], "sensitive_fields": ["disease"],
                             "continuous_columns": ["age"]},
    "DOMIAS": {"columns": ["age", "income", "sex"], "n_attacks": 20},
    "EmpiricalEpsilon": {"columns": ["age", "income", "sex"], "n_attacks": 20},
    "IdentifiabilityScore": {"columns": N},
    "DistanceToClosestRecord": {"columns": N},
    "Dominance": {"cells": ["sex", "zip"], "magnitude": "income", "n": 1, "k": 80},
    "EntropyRisk": {"cells": ["sex", "zip"]},
    "IndividualRisk": {"quasi_identifiers": QI, "weights": "weight", "household": "hh"},
    "IntervalDisclosure": {"columns": N},
    "KAnonymity": {"quasi_identifiers": QI, "id": "id"},
    "LDiversity": {"quasi_identifiers": QI, "sensitive": ["disease"], "id": "id"},
    "Linkability": {"aux_cols": [["age"], ["sex", "zip"]], "n_attacks": 20},
    "MILeakage": {"mode": "empirical", "original_column": "disease",
                  "randomized_column": "disease"},
    "MembershipInference": {"columns": ["age", "sex"], "n_attacks": 10},
    "NNDR": {},
    "NewRowSynthesis": {"columns": ["age", "sex"]},
    "PPercent": {"cells": ["sex", "zip"], "magnitude": "income"},
    "PQRule": {"cells": ["sex", "zip"], "magnitude": "income"},
    "PopulationUniqueness": {"quasi_identifiers": QI, "sampling_fraction": 0.1},
    "RecordLinkage": {},
    "ReidentificationRisk": {"quasi_identifiers": QI},
    "RobustIntervalDisclosure": {"columns": N},
    "SUDA": {"quasi_identifiers": QI},
    "SensitivityRules": {"cells": ["sex", "zip"], "magnitude": "income",
                         "rules": [{"rule": "freq", "min_contributors": 3},
                                   {"rule": "p", "p": 10}]},
    "SinglingOut": {"columns": ["age", "sex", "zip"], "n_attacks": 5, "max_attempts": 50},
    "TCloseness": {"quasi_identifiers": QI, "sensitive": ["disease"], "id": "id"},
    "Threshold": {"cells": ["sex", "zip"], "magnitude": "income", "weight": "weight"},
    "AECS": {"quasi_identifiers": QI, "id": "id"},
    "Ambiguity": {"quasi_identifiers": QI},
    "AttributeSquaredError": {"quasi_identifiers": QI},
    "CategoryCoverageLoss": {"columns": ["sex", "zip"]},
    "ContingencyDistance": {"columns": ["sex", "zip"]},
    "CorrelationDifference": {"columns": N},
    "CorrelationLoss": {"columns": N},
    "CramersVChange": {"cells": ["sex", "zip"]},
    "DM": {"quasi_identifiers": QI, "id": "id"},
    "DMStar": {"quasi_identifiers": QI, "id": "id"},
    "Discernibility": {"quasi_identifiers": QI},
    "EigenvalueLoss": {"columns": N},
    "EnergyStatistic": {"columns": N, "resamples": 9},
    "GeneralizationIntensity": {"quasi_identifiers": QI},
    "Granularity": {"quasi_identifiers": QI},
    "Height": {"quasi_identifiers": QI},
    "HellingerDistance": {"cells": ["sex", "zip"]},
    "HierarchyKLDivergence": {"quasi_identifiers": QI},
    "IL1": {"columns": N, "id": "id"},
    "IL1s": {"columns": N},
    "KLDivergence": {"columns": N},
    "KSDistance": {"columns": N},
    "MLEfficacy": {"target": "sex", "features": ["age", "income"]},
    "Missings": {"quasi_identifiers": QI},
    "MomentDiscrepancy": {"columns": N},
    "MutualInformationChange": {"columns": N},
    "NonUniformEntropy": {"quasi_identifiers": QI, "id": "id"},
    "PropensityMSE": {"columns": ["age", "sex"], "n_permutations": 2},
    "RangeCoverageLoss": {"columns": N},
    "RecordSquaredError": {"quasi_identifiers": QI},
    "RelativeAbsoluteDistance": {"cells": ["sex", "zip"]},
    "SSESST": {"quasi_identifiers": QI},
    "StatisticDifference": {"columns": N},
    "TVDistance": {"columns": ["sex", "zip"]},
    "VariableDistanceLoss": {"columns": N, "id": "id"},
    # two-sample fidelity (plugins/fidelity)
    "AlphaPrecision": {"columns": ["age", "sex", "income"], "n_boot": 20},
    "BoundaryAdherence": {"columns": N},
    "CategoryAdherence": {"columns": ["sex", "zip"]},
    "DetectionAUC": {"columns": ["age", "sex", "income"]},
    "MMD": {"columns": ["age", "sex", "income"]},
    "MissingValueSimilarity": {"columns": ["age", "zip"]},
    "PRDC": {"columns": ["age", "sex", "income"], "n_boot": 20},
    "WassersteinDistance": {"columns": ["age", "sex", "income"], "n_projections": 10},
}


def frames(n=80, seed=0):
    rng = np.random.default_rng(seed)
    original = pd.DataFrame({
        "id": np.arange(n) + 100, "age": rng.integers(20, 26, n),
        "sex": rng.choice(["f", "m"], n), "zip": rng.choice(["100", "200", "300"], n),
        "income": rng.gamma(2.0, 1000.0, n).round(1), "disease": rng.choice(["a", "b", "c"], n),
        "weight": rng.uniform(5, 20, n).round(1), "hh": rng.integers(0, n // 2, n),
        "junk_num": rng.normal(size=n), "junk_txt": rng.choice(["p", "q"], n)})
    noise = rng.uniform(0.9, 1.1, n)
    anonymized = original.assign(income=(original["income"] * noise).round(1),
                                 junk_num=rng.normal(size=n))
    anonymized.loc[rng.random(n) < 0.05, "zip"] = "*"
    return original, anonymized


REGISTRY = build_registry()
#: Measures whose release is a protected table (a row per cell with its status), not
#: microdata: their columns are tested in test_suppression_audit.py.
TABLE_RELEASE = {"SuppressionAudit", "SuppressionLoss"}
MEASURES = sorted((kind, name) for kind in ("risk_measure", "loss_measure")
                  for name in REGISTRY.names(kind)
                  if "microdata" in REGISTRY.get(kind, name).accepts
                  and name not in TABLE_RELEASE)
#: Measures reading every column under their example params (a nested distance, or no column
#: named: the tabular comparisons take their cells from a table's load options).
READS_ALL = {"NNDR", "RecordLinkage", "CramersVChange", "HellingerDistance",
             "RelativeAbsoluteDistance"}


def entry(original: pd.DataFrame, anonymized: pd.DataFrame, control: pd.DataFrame | None,
          measure: Any) -> dict[str, Any]:
    """The report entry without timings and the evaluator's control-overlap note (computed
    on every column given, not by the measure)."""
    out = evaluate(original, anonymized, [measure], control=control).to_dict()["measures"][0]
    out.pop("seconds")
    out["warnings"] = [w for w in out["warnings"] if "control records equal" not in w]
    return json.loads(json.dumps(out, default=str, sort_keys=True))


def test_every_microdata_measure_has_an_example():
    assert sorted(EXAMPLES) == sorted(name for _, name in MEASURES)


@pytest.mark.parametrize(("kind", "name"), MEASURES)
def test_declared_columns_cover_what_the_measure_reads(kind, name):
    measure = REGISTRY.create(kind, name, EXAMPLES[name])
    declared = measure.columns()
    if declared is None:
        assert name in READS_ALL
        return
    assert name not in READS_ALL
    original, anonymized = frames()
    control = frames(seed=1)[0] if measure.control_use() != "none" else None
    full = entry(original, anonymized, control, measure)
    assert "junk_num" not in declared["original"] and "junk_txt" not in declared["anonymized"]
    pruned = entry(original[list(declared["original"])], anonymized[list(declared["anonymized"])],
                   None if control is None else control[list(declared["original"])], measure)
    assert pruned == full
    if name != "DeltaPresence":  # needs a population larger than the sample
        assert full["error"] is None, full["error"]


def test_param_columns_rules():
    kan = REGISTRY.get("risk_measure", "KAnonymity")
    assert param_columns(kan.Params(quasi_identifiers=["a", "b"], weights="w", id="i")) == {
        "original": ["a", "b", "i", "w"], "anonymized": ["a", "b", "i", "w"]}
    il1 = REGISTRY.get("loss_measure", "IL1")
    assert param_columns(il1.Params()) is None  # null columns: every column
    ent = REGISTRY.get("risk_measure", "EntropyRisk")
    weights = [0.5, 0.3, 0.2]  # numbers are no column
    assert param_columns(ent.Params(cells=["a"], count_column="n", weights=weights)) == {
        "original": ["a", "n"], "anonymized": ["a", "n"]}
    assert param_columns(ent.Params(cells=["a"])) is None  # a table's count: a load option
    link = REGISTRY.get("risk_measure", "Linkability")
    assert param_columns(link.Params(aux_cols=[["a"], ["b", "c"]]))["original"] == ["a", "b", "c"]


def test_the_dask_engine_reads_only_the_declared_columns(tmp_path, cluster, monkeypatch):
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    original, anonymized = frames()
    for side, frame in (("o", original), ("a", anonymized)):
        (tmp_path / side).mkdir()
        for i, part in enumerate((frame.iloc[:40], frame.iloc[40:])):
            part.to_parquet(tmp_path / side / f"p{i}.parquet", index=False)
    asked: list[Any] = []
    gather = Partitioned.gather

    def spy(self: Partitioned, columns: Any = None) -> Any:
        asked.append(None if columns is None else sorted(columns))
        return gather(self, columns)

    monkeypatch.setattr(Partitioned, "gather", spy)
    measures = [{"name": "IL1", "params": EXAMPLES["IL1"]},
                {"name": "TVDistance", "params": EXAMPLES["TVDistance"]}]
    remote = evaluate(Partitioned(tmp_path / "o"), Partitioned(tmp_path / "a"), measures,
                      engine=cluster)
    local = evaluate(original, anonymized, measures)
    assert asked == [["age", "id", "income"]] * 2 + [["sex", "zip"]] * 2
    for here, there in zip(local.measures, remote.measures, strict=True):
        assert there.error is None and there.value == pytest.approx(here.value, rel=1e-12)
