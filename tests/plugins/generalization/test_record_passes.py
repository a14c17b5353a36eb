"""RecordSquaredError and HierarchyKLDivergence on the dask engine: cell tables, then passes over
the paired records where they lie (a sum per block; two Dask shuffles for the divergence), equal
to the local engine with nothing gathered.

Oracle: the local engine, whose numbers tests/plugins/generalization/test_generalization.py
checks against ARX's own output (tests/data/arx_quality) and hand computations; and, for the
record passes themselves, pandas group-bys of the whole frame.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

import dask
import numpy as np
import pandas as pd
import pytest
from _close import close
from _dask_memory import in_process_cluster
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anoneval.core import evaluate
from anoneval.core.api import Context, DataError, FrameRecords, Microdata, pair_datasets
from anoneval.core.data import partitioned
from anoneval.core.data.partitioned import Partitioned
from anoneval.core.data.records import PairedRecords
from anoneval.core.run.scaled import mode_of
from anoneval.plugins.generalization.kl_divergence import HierarchyKLDivergence
from anoneval.plugins.generalization.record_squared_error import RecordSquaredError

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

QI = ["age", "zip", "sex"]
MODELS = [RecordSquaredError, HierarchyKLDivergence]


def _age_hierarchy(path: Path) -> str:
    """age (0–89) → decade → *, in ARX's CSV format."""
    rows = [f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*" for a in range(90)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _census(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Raw quasi-identifiers (nearly a class per record) and a release: age by decade or raw,
    zips suppressed or cut to 3 digits, some sexes suppressed or missing, some records fully
    suppressed, some records with all values equal."""
    rng = np.random.default_rng(seed)
    age = rng.integers(0, 90, n)
    zips = np.char.zfill(rng.integers(0, 3000, n).astype(str), 5).astype(object)
    orig = pd.DataFrame({"id": np.arange(n), "age": age.astype(str).astype(object),
                         "zip": zips, "sex": rng.choice(["f", "m"], n)})
    rel = orig.copy()
    decade = pd.Series([f"{a // 10 * 10}-{a // 10 * 10 + 9}" for a in age], dtype=object)
    rel["age"] = np.where(rng.random(n) < 0.7, decade, orig["age"]).astype(object)
    rel.loc[rng.random(n) < 0.1, "zip"] = "*"
    rel.loc[rng.random(n) < 0.05, "sex"] = "*"
    rel.loc[rng.random(n) < 0.03, "sex"] = None
    rel.loc[rng.random(n) < 0.04, QI] = "*"
    same = rng.random(n) < 0.02
    orig.loc[same, QI] = "7"
    rel.loc[same, QI] = "7"
    return orig, rel


def _measures(tmp: Path, id_col: str | None) -> list[dict[str, Any]]:
    base: dict[str, Any] = {"quasi_identifiers": QI,
                            "hierarchies": {"age": _age_hierarchy(tmp / "age.csv")}}
    if id_col:
        base["id"] = id_col
        # by id on the cluster, 'string' numbers need the hierarchy (first appearance is lost)
        (tmp / "sex.csv").write_text("f;*\nm;*\n7;*\n")
        base["hierarchies"]["sex"] = str(tmp / "sex.csv")
    typed = {**base, "types": {"age": "integer", "zip": "integer", "sex": "string"}}
    return [{"name": "HierarchyKLDivergence", "params": base},
            {"name": "HierarchyKLDivergence", "label": "missing suppressed",
             "params": {**base, "missing": "suppressed"}},
            {"name": "RecordSquaredError", "params": typed},
            {"name": "RecordSquaredError", "label": "by dtype",
             "params": {**base, "types": {"zip": "integer"}, "missing": "suppressed"}}]


@pytest.fixture(scope="module")
def cluster():
    """Two in-process workers of 1 GB behind a TCP scheduler address (as the engine config
    takes it); summaries shard above SUMMARY_SHARE of that."""
    with in_process_cluster(tcp=True) as cl:
        yield cl


def _write(folder: Path, frame: pd.DataFrame, k: int) -> Partitioned:
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), k)):
        frame.iloc[rows].to_parquet(folder / f"p{i}.parquet", index=False)
    return Partitioned(folder)


@pytest.fixture
def passes(monkeypatch):
    """The step keys of every pass over paired records on the cluster (the cell tables' first)
    and what each brought to the client."""
    seen: list[tuple[list[tuple[str, ...]], Any]] = []
    original = PairedRecords.reduce

    def spy(self: PairedRecords, partial: Any, combine: Any) -> Any:
        found = original(self, partial, combine)
        seen.append(([step.by for step in self.steps], found))
        return found

    monkeypatch.setattr(PairedRecords, "reduce", spy)
    return seen


@pytest.mark.parametrize("by_id", [False, True])
def test_record_models_equal_the_local_engine_and_gather_nothing(tmp_path, cluster, monkeypatch,
                                                                 passes, by_id):
    """Both models (missing values as values and as suppressed, typed and by dtype) on
    partitioned data with a gather limit of 1 kB and sharded summaries: the local engine's
    value, details and warnings, no "gathered" warning; the divergence's records were shuffled
    by original then by released tuple, and only two floats per pass reached the client."""
    orig, rel = _census(6000)
    if by_id:  # deleted records, the release in another order
        rel = rel.iloc[np.random.default_rng(1).permutation(len(rel))[:5500]]
    measures = _measures(tmp_path, "id" if by_id else None)
    local = evaluate(orig, rel, measures)
    original, released = _write(tmp_path / "o", orig, 4), _write(tmp_path / "r", rel, 3)
    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 20_000 / 1e9)  # ~6000 classes shard
    engine = {"name": "dask", "address": cluster.scheduler_address, "gather_limit": "1KB"}
    remote = evaluate(original, released, measures, engine=engine)
    assert remote.engine["name"] == "dask"
    for here, there, spec in zip(local.to_dict()["measures"], remote.to_dict()["measures"],
                                 measures, strict=True):
        assert here["error"] is None and there["error"] is None, (spec, there["error"])
        assert close(here["value"], there["value"]), spec
        assert close(here["details"], there["details"]), spec
        assert here["warnings"] == there["warnings"], spec
        assert not any("gathered" in w for w in there["warnings"])
    o_keys, e_keys = ("o0",), ("e0",)  # each tuple as one int64 mixed-radix key
    divergence = [[], [(), o_keys, e_keys]]
    assert [steps for steps, _ in passes] == [*divergence, *divergence, [], [], [], []]
    for _, found in passes[1::2]:  # the record passes: two floats each
        assert isinstance(found, tuple) and [type(x) for x in found] == [float, float]
    # a release far from trivial: suppressed and deleted records, a positive divergence
    kl = local.measures[0].details
    assert 0 < kl["suppressed_records"] < len(orig) and kl["raw"] > 0


def test_both_models_run_partition_wise_paired():
    for model in MODELS:
        m = model(quasi_identifiers=QI)
        assert mode_of(m) == "partition-wise" and m.paired
        assert m.records_reason() is None


def test_finalize_without_records_says_why():
    orig, rel = _census(50)
    m = HierarchyKLDivergence(quasi_identifiers=QI)
    frame = pair_datasets(Microdata(orig), Microdata(rel), m.columns(), None)
    with pytest.raises(DataError, match=r"Context\.records"):
        m.finalize(m.combine([m.partial(frame, Context())]), Context())


# -- any data, any partitioning --------------------------------------------------------------


@st.composite
def releases(draw: Any) -> tuple[pd.DataFrame, pd.DataFrame, list[int], list[int]]:
    """Two columns of small integers as text (one typed integer), released raw, as the token,
    missing, or as a value of the other column's vocabulary; cuts of each side into files."""
    n = draw(st.integers(1, 50))
    raw = {c: draw(st.lists(st.sampled_from(["1", "2", "3"]), min_size=n, max_size=n))
           for c in ("a", "b")}
    values = st.sampled_from(["1", "2", "3", "*", None])
    rel = {c: draw(st.lists(values, min_size=n, max_size=n)) for c in ("a", "b")}
    cuts = [sorted(set(draw(st.lists(st.integers(1, max(n - 1, 1)), max_size=3))) - {n})
            for _ in range(2)]
    return pd.DataFrame(raw), pd.DataFrame(rel), cuts[0], cuts[1]


def _files(folder: Path, frame: pd.DataFrame, cuts: list[int]) -> Partitioned:
    folder.mkdir()
    for i, (lo, hi) in enumerate(itertools.pairwise([0, *cuts, len(frame)])):
        frame.iloc[lo:hi].to_parquet(folder / f"p{i}.parquet", index=False)
    return Partitioned(folder)


def _params(model: type, missing: str) -> dict[str, Any]:
    params: dict[str, Any] = {"quasi_identifiers": ["a", "b"], "missing": missing}
    if model is RecordSquaredError:
        params["types"] = {"a": "integer", "b": "string"}
    return params


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=releases(), missing=st.sampled_from(["value", "suppressed"]))
def test_record_passes_over_any_partitioning_equal_the_local_engine(case, missing):
    """The models on the two sides cut into files at random (row order pairs blocks of
    different cuts; the shuffles run on Dask's synchronous scheduler) equal compute on the
    whole frames; a comparison the local engine refuses fails alike."""
    orig, rel, cuts_o, cuts_r = case
    with tempfile.TemporaryDirectory() as tmp, \
            dask.config.set({"scheduler": "sync", "dataframe.convert-string": False}):
        original = _files(Path(tmp) / "o", orig, cuts_o)
        released = _files(Path(tmp) / "r", rel, cuts_r)
        for model in MODELS:
            m = model(_params(model, missing))
            try:
                whole = m.compute(Microdata(orig), Microdata(rel), Context())
            except Exception as err:
                with pytest.raises(type(err)):
                    _on_files(m, original, released)
                continue
            got = _on_files(m, original, released)
            assert close(whole.value, got.value), (model.name, whole.value, got.value)
            assert close(whole.details, got.details), model.name


def _on_files(m: Any, original: Partitioned, released: Partitioned) -> Any:
    records_ = PairedRecords(original, released, m.columns(), None)
    ctx = Context(records=records_)
    return m.finalize(records_.reduce(lambda f: m.partial(f, Context()), m.combine), ctx)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=releases(), missing=st.sampled_from(["value", "suppressed"]))
def test_finalize_on_frame_records_equals_compute(case, missing):
    """The partition-wise path in memory (cell tables of blocks combined in a tree, then the
    passes over the one block of FrameRecords) equals compute's aligned-codes path."""
    orig, rel, cuts, _ = case
    for model in MODELS:
        m = model(_params(model, missing))
        try:
            whole = m.compute(Microdata(orig), Microdata(rel), Context())
        except Exception as err:
            with pytest.raises(type(err)):
                _blockwise(m, orig, rel, cuts)
            continue
        got = _blockwise(m, orig, rel, cuts)
        assert close(whole.value, got.value), model.name
        assert close(whole.details, got.details), model.name


def _blockwise(m: Any, orig: pd.DataFrame, rel: pd.DataFrame, cuts: list[int]) -> Any:
    frame = pair_datasets(Microdata(orig), Microdata(rel), m.columns(), None)
    parts = [m.partial(frame.iloc[lo:hi], Context())
             for lo, hi in itertools.pairwise([0, *cuts, len(frame)]) if hi > lo]
    combined = m.combine([m.combine(parts[:2]), *parts[2:]])
    return m.finalize(combined, Context(records=FrameRecords(frame)))


# -- the record passes themselves ------------------------------------------------------------


def _flat(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"k": frame[("original", "k")].to_numpy(),
                         "v": frame[("anonymized", "v")].to_numpy()})


def _classes(frame: pd.DataFrame) -> pd.DataFrame:
    """Per key of this block: its records and sum (the block must hold whole classes)."""
    return frame.groupby("k", dropna=False, sort=False)["v"].agg(["size", "sum"]).reset_index()


def _rows(frame: pd.DataFrame) -> pd.DataFrame:
    return frame


def _concat(parts: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(parts, ignore_index=True)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(keys=st.lists(st.sampled_from([1.0, 2.0, -0.0, 0.0, np.nan]), min_size=1, max_size=80),
       cuts=st.lists(st.integers(1, 79), max_size=4))
def test_map_by_keys_puts_whole_classes_in_each_block(keys, cuts):
    """map(fn, by) on the cluster's shuffle: each class (-0.0 and 0.0 one, a missing key one)
    lies in one block, so fn's per-block group-by equals pandas' over the whole frame."""
    n = len(keys)
    frame = pd.DataFrame({"k": keys, "v": np.arange(n, dtype=np.int64)})
    cuts = sorted({c for c in cuts if c < n})
    with tempfile.TemporaryDirectory() as tmp, \
            dask.config.set({"scheduler": "sync", "dataframe.convert-string": False}):
        original = _files(Path(tmp) / "o", frame, cuts)
        released = _files(Path(tmp) / "r", frame, cuts[:1])
        passes = PairedRecords(original, released, {"original": ["k"], "anonymized": ["v"]},
                               None).map(_flat).map(_classes, by=["k"])
        found = passes.reduce(_rows, _concat)
        local = FrameRecords(pair_datasets(Microdata(frame), Microdata(frame), {
            "original": ["k"], "anonymized": ["v"]}, None)).map(_flat).map(_classes, by=["k"])
        here = local.reduce(_rows, _concat)
    expected = frame.assign(k=frame["k"] + 0.0).groupby("k", dropna=False)["v"].agg(
        ["size", "sum"])
    want = expected[["size", "sum"]].to_numpy().tolist()
    for got in (found, here):  # one row per class: no class in two blocks
        assert got.sort_values("k")[["size", "sum"]].to_numpy().tolist() == want


def test_a_map_by_keys_needs_plain_columns_first():
    with pytest.raises(ValueError, match="plain columns"):
        FrameRecords(pd.DataFrame({"k": [1]})).map(_rows, by=["k"])


class _Pairs:
    """A toy paired measure: its finalize counts the records whose value changed, again,
    through ctx.records (as a second pass would)."""

    @staticmethod
    def changed(frame: pd.DataFrame) -> int:
        return int((frame[("original", "k")] != frame[("anonymized", "k")]).sum())


def _toy() -> Any:
    from anoneval.core.api import LossMeasure, MeasureResult

    class Changed(LossMeasure):
        name = "Changed"
        description = "records changed, counted twice"
        paired = True

        def columns(self) -> dict[str, list[str]]:
            return {"original": ["k"], "anonymized": ["k"]}

        def partial(self, frame: pd.DataFrame, ctx: Context) -> int:
            return _Pairs.changed(frame)

        def combine(self, parts: list[int]) -> int:
            return sum(parts)

        def finalize(self, combined: int, ctx: Context) -> MeasureResult:
            assert ctx.records is not None
            again = ctx.records.reduce(_Pairs.changed, sum)
            return MeasureResult(value=combined, details={"again": again})

    return Changed()


def test_default_compute_hands_finalize_the_records(tmp_path):
    """Measure.compute of a paired measure (the local engine) and a partitioned run both give
    finalize the paired records: its second pass counts what the first did."""
    orig = pd.DataFrame({"k": [1, 2, 3, 4, 5]})
    rel = pd.DataFrame({"k": [1, 0, 3, 0, 0]})
    m = _toy()
    local = m.compute(Microdata(orig), Microdata(rel), Context())
    assert local.value == local.details["again"] == 3
    with dask.config.set({"scheduler": "sync", "dataframe.convert-string": False}):
        original, released = _files(tmp_path / "o", orig, [2]), _files(tmp_path / "r", rel, [4])
        found = _on_files(m, original, released)
    assert found.value == found.details["again"] == 3


def test_key_tuples_split_before_int64_overflows():
    from anoneval.plugins.generalization._records import _radix, _radix_groups

    assert _radix_groups([2**40, 2**21, 2]) == [[0, 1], [2]]
    assert _radix_groups([3, 4]) == [[0, 1]]
    codes = [np.array([2, 0, 2]), np.array([1, 3, 1])]
    keys = _radix(codes, [pd.Index(range(3)), pd.Index(range(4))], [[0, 1]], 3)
    assert keys[0].tolist() == [2 * 4 + 1, 3, 2 * 4 + 1]


def test_missing_original_values_with_a_hierarchy_listing_null(tmp_path):
    """A missing original value (ARX's NULL in the hierarchy) and missing released ones: the
    record passes key them apart from the texts and still find them in the cell tables."""
    (tmp_path / "h.csv").write_text("a;*\nb;*\nNULL;*\n")
    orig = pd.DataFrame({"x": ["a", None, "b", "a", None, "b"],
                         "y": ["1", "2", "1", "2", "3", "3"]})
    rel = pd.DataFrame({"x": ["a", None, "*", "a", "*", "b"], "y": ["1", "2", "*", "2", "3", "*"]})
    with dask.config.set({"scheduler": "sync", "dataframe.convert-string": False}):
        original, released = _files(tmp_path / "o", orig, [3]), _files(tmp_path / "r", rel, [2])
        for model, extra in ((RecordSquaredError, {"types": {"x": "string", "y": "integer"}}),
                             (HierarchyKLDivergence, {})):
            m = model(quasi_identifiers=["x", "y"], hierarchies={"x": str(tmp_path / "h.csv")},
                      **extra)
            whole = m.compute(Microdata(orig), Microdata(rel), Context())
            got = _on_files(m, original, released)
            assert whole.value > 0 and close(whole.value, got.value), model.name
            assert close(whole.details, got.details), model.name
