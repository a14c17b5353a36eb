"""ARX's quality models on the dask engine at any cardinality: equal to the local engine with
nothing gathered, and partials over any partitioning equal to the whole frame.

Oracle: the local engine, whose numbers tests/plugins/generalization/test_generalization.py
checks against ARX's own output (tests/data/arx_quality) and hand computations.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _close import close
from _dask_memory import in_process_client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anoneval.core import evaluate
from anoneval.core.api import DELETED, Context, Microdata, pair_datasets
from anoneval.core.data import partitioned
from anoneval.core.data.partitioned import Partitioned
from anoneval.core.data.sharded import ShardedSummary
from anoneval.core.data.summary import ClassSummary, SummarySpec, dataset_summarizer
from anoneval.core.run import evaluator
from anoneval.core.run.scaled import mode_of
from anoneval.plugins.generalization.ambiguity import Ambiguity
from anoneval.plugins.generalization.attribute_squared_error import AttributeSquaredError
from anoneval.plugins.generalization.discernibility import Discernibility
from anoneval.plugins.generalization.generalization_intensity import GeneralizationIntensity
from anoneval.plugins.generalization.granularity import Granularity
from anoneval.plugins.generalization.height import Height
from anoneval.plugins.generalization.missings import Missings
from anoneval.plugins.generalization.ssesst import SSESST

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

QI = ["age", "zip", "sex"]
CELL_MODELS = [Granularity, GeneralizationIntensity, Missings, Height, AttributeSquaredError,
               SSESST]


def _age_hierarchy(path: Path) -> str:
    """age (0–89) → decade → *, in ARX's CSV format."""
    rows = [f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*" for a in range(90)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _census(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Raw quasi-identifiers (nearly a class per record) and a release: age by decade or raw,
    some zips and sexes suppressed, some records fully suppressed, some missing sexes."""
    rng = np.random.default_rng(seed)
    age = rng.integers(0, 90, n)
    orig = pd.DataFrame({"id": np.arange(n), "age": age,
                         "zip": np.char.zfill(rng.integers(0, 3000, n).astype(str), 5).astype(
                             object),
                         "sex": rng.choice(["f", "m"], n)})
    rel = orig.copy()
    decade = pd.Series([f"{a // 10 * 10}-{a // 10 * 10 + 9}" for a in age], dtype=object)
    rel["age"] = np.where(rng.random(n) < 0.7, decade, age.astype(str)).astype(object)
    rel.loc[rng.random(n) < 0.1, "zip"] = "*"
    rel.loc[rng.random(n) < 0.05, "sex"] = "*"
    rel.loc[rng.random(n) < 0.03, "sex"] = None
    rel.loc[rng.random(n) < 0.04, ["age", "zip", "sex"]] = "*"
    orig["age"] = orig["age"].astype(str).astype(object)  # both sides read age as text
    same = rng.random(n) < 0.02  # raw records whose values are all equal: ARX's quirk
    orig.loc[same, ["age", "zip", "sex"]] = "7"
    rel.loc[same, ["age", "zip", "sex"]] = "7"
    return orig, rel


def _measures(hierarchy: str, id_col: str | None = None) -> list[dict[str, Any]]:
    base: dict[str, Any] = {"quasi_identifiers": QI, "hierarchies": {"age": hierarchy}}
    if id_col:
        base["id"] = id_col
    typed = {**base, "types": {"age": "integer", "zip": "string", "sex": "string"}}
    # Discernibility with ``id`` finds deleted records by reading both sides' rows, as DM does
    return [
        *([] if id_col else [{"name": "Discernibility", "params": {"quasi_identifiers": QI}}]),
        *([] if id_col else [{"name": "Ambiguity", "params": base}]),
        {"name": "Granularity", "params": base},
        {"name": "Granularity", "label": "arx", "params": {**base, "compat": "arx",
                                                          "aggregate": "geometric"}},
        {"name": "GeneralizationIntensity", "params": {**base, "compat": "arx"}},
        {"name": "GeneralizationIntensity", "label": "sup",
         "params": {**base, "missing": "suppressed"}},
        {"name": "Missings", "params": base},
        {"name": "Missings", "label": "missings sup", "params": {**base, "missing": "suppressed",
                                                        "aggregate": "max"}},
        {"name": "Height", "params": {**base, "missing": "suppressed"}},
        {"name": "AttributeSquaredError", "params": typed},
        {"name": "AttributeSquaredError", "label": "by dtype", "params": base},
        {"name": "SSESST", "params": typed},
    ]


@pytest.fixture(scope="module")
def cluster():
    """Two in-process workers of 1 GB: a summary's budget is SUMMARY_SHARE of that."""
    with in_process_client() as client:
        yield client


def _write(folder: Path, frame: pd.DataFrame, k: int) -> Partitioned:
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), k)):
        frame.iloc[rows].to_parquet(folder / f"p{i}.parquet", index=False)
    return Partitioned(folder)


@pytest.mark.parametrize("by_id", [False, True])
def test_quality_models_on_sharded_summaries_gather_nothing(tmp_path, cluster, monkeypatch,
                                                            by_id):
    """Every model on the dask engine equals the local engine, with a gather limit of one byte
    (a gathering measure would fail) and summaries sharded over the workers."""
    orig, rel = _census(6000)
    if by_id:  # deleted records, the release in another order
        rel = rel.iloc[np.random.default_rng(1).permutation(len(rel))[:5500]]
    hierarchy = _age_hierarchy(tmp_path / "age.csv")
    measures = _measures(hierarchy, "id" if by_id else None)
    if by_id:  # 'string' numbers of a column need its hierarchy here (see below)
        (tmp_path / "sex.csv").write_text("f;*\nm;*\n7;*\n")
        for m in measures:
            m["params"]["hierarchies"]["sex"] = str(tmp_path / "sex.csv")
            if "types" in m["params"]:
                m["params"]["types"]["zip"] = "integer"
    local = evaluate(orig, rel, measures)
    original, released = _write(tmp_path / "o", orig, 4), _write(tmp_path / "r", rel, 3)
    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 20_000 / 1e9)  # ~6000 classes shard
    monkeypatch.setattr(evaluator, "gather_limit", lambda client, configured: 1)
    remote = evaluate(original, released, measures, engine=cluster)
    assert remote.engine["name"] == "dask"
    if not by_id:
        for data, side in ((original, "original"), (released, "anonymized")):
            s = data._cache[("class_summary", SummarySpec(side, tuple(QI)))]
            assert isinstance(s, ShardedSummary) and s._assembled is None
    for here, there, spec in zip(local.to_dict()["measures"], remote.to_dict()["measures"],
                                 measures, strict=True):
        assert here["error"] is None and there["error"] is None, (spec, there["error"])
        assert close(here["value"], there["value"]), spec
        assert close(here["details"], there["details"]), spec
        assert here["warnings"] == there["warnings"], spec
        assert not any("gathered" in w for w in there["warnings"])
    # the records were really different from the trivial case
    gran = local.measures[0 if by_id else 2].details
    assert 0 < gran["suppressed_records"] < len(orig)


def test_every_cell_model_runs_partition_wise():
    for model in CELL_MODELS:
        assert mode_of(model(quasi_identifiers=QI)) == "partition-wise"
        assert model.paired
    for model in (Discernibility, Ambiguity):
        assert mode_of(model(quasi_identifiers=QI)) == "summaries"


rows = st.integers(1, 60)


@st.composite
def releases(draw: Any) -> tuple[pd.DataFrame, pd.DataFrame, list[int]]:
    n = draw(rows)
    values = st.sampled_from(["1", "2", "3", "*", None])
    cols = {c: draw(st.lists(values, min_size=n, max_size=n)) for c in ("a", "b")}
    raw = {c: draw(st.lists(st.sampled_from(["1", "2", "3"]), min_size=n, max_size=n))
           for c in ("a", "b")}
    cuts = sorted(set(draw(st.lists(st.integers(1, max(n - 1, 1)), max_size=4))) - {n})
    return pd.DataFrame(raw), pd.DataFrame(cols), cuts


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=releases(), missing=st.sampled_from(["value", "suppressed"]),
       compat=st.sampled_from(["none", "arx"]))
def test_partials_over_any_partitioning_equal_the_whole(case, missing, compat):
    """partial of each block, combined in any grouping, finalizes to compute's result."""
    orig, rel, cuts = case
    qi = ["a", "b"]
    for model in CELL_MODELS:
        params: dict[str, Any] = {"quasi_identifiers": qi, "missing": missing}
        if model in (Granularity, GeneralizationIntensity):
            params["compat"] = compat
        if model in (AttributeSquaredError, SSESST):
            params["types"] = {"a": "integer", "b": "string"}
        m = model(params)
        ctx = Context()
        try:
            whole = m.compute(Microdata(orig), Microdata(rel), Context())
        except Exception as err:  # the blocks must fail alike
            with pytest.raises(type(err)):
                _blockwise(m, orig, rel, cuts)
            continue
        got = _blockwise(m, orig, rel, cuts, ctx)
        assert close(whole.value, got.value), model.name
        assert close(whole.details, got.details), model.name


def _blockwise(m: Any, orig: pd.DataFrame, rel: pd.DataFrame, cuts: list[int],
               ctx: Context | None = None) -> Any:
    frame = pair_datasets(Microdata(orig), Microdata(rel), m.columns(), None)
    bounds = [0, *cuts, len(frame)]
    parts = [m.partial(frame.iloc[lo:hi], Context()) for lo, hi in itertools.pairwise(bounds)
             if hi > lo]
    # a tree: the first two combined, then with the rest
    combined = m.combine([m.combine(parts[:2]), *parts[2:]])
    assert not frame[DELETED].any()
    return m.finalize(combined, ctx or Context())


def test_string_numbers_without_hierarchy_by_id_on_dask_say_why(tmp_path, cluster):
    """ARX's fallback hierarchy lists the original's values in order of first appearance; the
    records merged on ``id`` on the cluster do not keep it: a clear error, not other numbers."""
    orig, rel = _census(300)
    params = {"quasi_identifiers": QI, "id": "id", "types": {"zip": "string"},
              "hierarchies": {"age": _age_hierarchy(tmp_path / "age.csv")}}
    measures = [{"name": "AttributeSquaredError", "params": params}]
    assert evaluate(orig, rel, measures).measures[0].error is None
    remote = evaluate(_write(tmp_path / "o", orig, 2), _write(tmp_path / "r", rel, 2), measures,
                      engine=cluster)
    error = remote.measures[0].error
    assert error is not None and "'zip' is typed 'string' without a hierarchy" in error


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=releases(), missing=st.sampled_from(["value", "suppressed"]),
       groups=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_summary_models_reduce_any_split_into_parts_to_the_whole(case, missing, groups, seed):
    """Ambiguity and Discernibility over summaries split into disjoint parts (as a sharded
    summary holds them) equal their results on the whole summaries."""
    orig, rel, _ = case
    original, released = Microdata(orig), Microdata(rel)
    whole = dataset_summarizer(original, released)
    rng = np.random.default_rng(seed)

    def split(spec: SummarySpec) -> ClassSummary:
        summary = whole(spec)
        if not spec.keys:
            return summary
        part_of = rng.integers(0, groups, summary.n_classes)
        parts = [ClassSummary(spec, summary.keys[part_of == g].reset_index(drop=True),
                              summary.counts[part_of == g], None, {})
                 for g in range(groups)]
        return ShardedSummary(spec, parts)

    for model in (Ambiguity, Discernibility):
        params: dict[str, Any] = {"quasi_identifiers": ["a", "b"], "missing": missing}
        m = model(params)
        try:
            expected = m.compute(original, released, Context(summarize=whole))
        except Exception as err:
            with pytest.raises(type(err)):
                m.compute(original, released, Context(summarize=split))
            continue
        got = m.compute(original, released, Context(summarize=split))
        assert close(expected.value, got.value), model.name
        assert close(expected.details, got.details), model.name
