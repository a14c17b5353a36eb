"""The attribute-disclosure models from the class summary: equal to the record path and to a
brute force, and on a sharded summary equal to the local engine with nothing gathered."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _close import close
from _dask_memory import in_process_cluster
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import evaluate
from anoneval.core.api import Context, Microdata, SummarySpec
from anoneval.core.data import partitioned
from anoneval.core.data.partitioned import Partitioned
from anoneval.core.data.sharded import ShardedSummary
from anoneval.plugins.microdata.alpha_kanonymity import AlphaKAnonymity
from anoneval.plugins.microdata.beta_likeness import BetaLikeness
from anoneval.plugins.microdata.delta_disclosure import DeltaDisclosure
from anoneval.plugins.microdata.tcloseness import TCloseness

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

QI = ["a", "b"]


def _frame(rng: np.random.Generator, n: int, rid: int) -> pd.DataFrame:
    """QIs with the token and missing cells, a text and a numeric sensitive attribute (both
    with missing values), some suppressed records."""
    frame = pd.DataFrame({
        "a": rng.choice(["1", "2", "*", None], n, p=[0.4, 0.4, 0.1, 0.1]),
        "b": rng.integers(0, rid, n).astype(str),
        "s": rng.choice(["p", "q", "r", None], n, p=[0.5, 0.3, 0.15, 0.05]),
        "x": rng.choice([1.0, 2.0, 5.0, 7.5, np.nan], n),
    })
    frame.loc[: n // 50, QI] = "*"
    return frame


def _details(result: Any) -> dict[str, Any]:
    return {k: v for k, v in result.details.items() if k != "per_record"}


def _models(sensitive: list[str], hierarchy: str | None = None) -> list[tuple[type, dict]]:
    out: list[tuple[type, dict[str, Any]]] = [
        (TCloseness, {"t": 0.15}), (TCloseness, {"t": 0.1, "distance": "ordered"}),
        (DeltaDisclosure, {"delta": 0.7}), (DeltaDisclosure, {"delta": 1.2, "log_base": "2"}),
        (BetaLikeness, {"beta": 0.8}), (BetaLikeness, {"beta": 3.0, "variant": "enhanced"}),
        (AlphaKAnonymity, {"alpha": 0.6, "k": 3})]
    if hierarchy is not None:
        out.append((TCloseness, {"t": 0.1, "distance": "hierarchical",
                                 "hierarchies": {"s": hierarchy}}))
    return [(cls, {"quasi_identifiers": QI, "sensitive": sensitive, **params})
            for cls, params in out]


# -- a brute force: each class's distribution by pandas, the formulas written out ------------


def _brute(frame: pd.DataFrame, cls: type, params: dict[str, Any]) -> tuple[float, int]:
    """value and violating classes of the equal-distance t-closeness, δ-disclosure, basic
    β-likeness and (α,k)-anonymity of ``frame`` on its single sensitive attribute, counting
    missing values (QI and sensitive) as values, suppressed records in no class."""
    sa = params["sensitive"][0]
    values = frame[sa].astype(object).where(frame[sa].notna(), "<NA>")
    p = values.value_counts(normalize=True)
    keys = frame[QI].astype(object).where(frame[QI].notna(), "<NA>")
    kept = ~(keys == "*").all(axis=1)
    bad_records, bad_classes = 0, 0
    for _, rows in keys[kept].groupby(QI).groups.items():
        q = values[rows].value_counts(normalize=True)
        if cls is TCloseness:
            d = 0.5 * sum(abs(q.get(v, 0.0) - p[v]) for v in p.index)
            bad = d > params["t"] + 1e-12
        elif cls is DeltaDisclosure:
            base = math.e if params.get("log_base", "e") == "e" else 2.0
            d = max(abs(math.log(q[v] / p[v], base)) for v in q.index)
            bad = d >= params["delta"] * (1 - 1e-12)
        elif cls is BetaLikeness:
            bad = max((q[v] - p[v]) / p[v] for v in q.index) > params["beta"] * (1 + 1e-12)
        else:
            bad = q.max() > params["alpha"] + 1e-12 or len(rows) < params["k"]
        bad_records += len(rows) * bad
        bad_classes += int(bad)
    return bad_records / len(frame), bad_classes


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 120), rid=st.integers(1, 8),
       missing=st.sampled_from(["value", "suppressed"]), token=st.sampled_from(["*", "x"]))
def test_summary_path_equals_the_records_and_a_brute_force(seed, n, rid, missing, token):
    frame = _frame(np.random.default_rng(seed), n, rid)
    if token != "*":
        frame[QI] = frame[QI].replace("*", token)
    shuffled = frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    data = Microdata(frame)  # one dataset: the models share its summaries, as in a run
    for cls, params in _models(["s"]) + _models(["s", "x"]) + _models(["x"]):
        params = {**params, "suppression_token": token, "missing": missing}
        summary_ctx, record_ctx = Context(), Context()
        got = cls(**params).compute(None, data, summary_ctx)
        rec = cls(**params, per_record=True).compute(None, Microdata(frame), record_ctx)
        again = cls(**params).compute(None, Microdata(shuffled), Context())
        assert cls(**params).summaries() is not None
        assert cls(**params, per_record=True).summaries() is None
        assert close(got.value, rec.value) and close(_details(got), _details(rec)), cls
        assert summary_ctx.warnings == record_ctx.warnings
        assert close(got.value, again.value) and close(_details(got), _details(again))
        assert 0.0 <= got.value <= 1.0
        table = rec.details["per_record"]
        assert got.details["records_in_violating_classes"] == int(table["violates"].sum())
        plain = params["sensitive"] == ["s"] and missing == "value" and token == "*"
        if plain and params.get("distance", "equal") == "equal" and \
                params.get("variant", "basic") == "basic":
            value, classes = _brute(frame, cls, params)
            assert got.value == pytest.approx(value, rel=1e-12, abs=0.0), cls
            assert got.details["violating_classes"] == classes


def test_both_sides_read_the_released_summary_and_check_row_counts():
    rng = np.random.default_rng(1)
    original, released = _frame(rng, 300, 20), _frame(rng, 300, 5)
    for cls, params in _models(["s"]):
        got = cls(**params).compute(Microdata(original), Microdata(released), Context())
        rec = cls(**params, per_record=True).compute(Microdata(original), Microdata(released),
                                                     Context())
        assert close(got.value, rec.value) and close(_details(got), _details(rec))
        with pytest.raises(Exception, match="row"):
            cls(**params).compute(Microdata(original.iloc[:-1]), Microdata(released), Context())


# -- on a sharded summary: equal to the local engine, nothing gathered ------------------------


@pytest.fixture(scope="module")
def sharding():
    """A LocalCluster of 2 in-process workers with a memory_limit of 1 GB on loopback TCP (a
    run's engine config connects to it by address, with a gather limit)."""
    with in_process_cluster(tcp=True) as cl, \
            distributed.Client(cl, set_as_default=False) as client:
        yield client


def _write(folder: Path, frame: pd.DataFrame, k: int) -> Partitioned:
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), k)):
        frame.iloc[rows].to_parquet(folder / f"p{i}.parquet", index=False)
    return Partitioned(folder)


def _hierarchy(tmp_path: Path) -> str:
    path = tmp_path / "s.csv"
    path.write_text("p;pq;*\nq;pq;*\nr;rn;*\nNULL;rn;*\n")
    return str(path)


def test_sharded_summary_equals_the_local_engine_without_gathering(tmp_path, sharding,
                                                                   monkeypatch):
    frame = _frame(np.random.default_rng(7), 3000, 900)
    data = _write(tmp_path / "d", frame, 3)
    hierarchy = _hierarchy(tmp_path)
    measures = [{"name": cls.name, "label": f"{cls.name} {i}", "params": params}
                for i, (cls, params) in enumerate(_models(["s"], hierarchy)
                                                  + _models(["s", "x"]))]
    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 20_000 / 1e9)  # sharded from 20 KB
    tight = {"name": "dask", "address": sharding.scheduler.address, "gather_limit": "1KB"}
    remote = evaluate(data, data, measures, engine=tight)
    local = evaluate(frame, frame.copy(), measures)
    records = evaluate(frame, frame.copy(), [{**m, "params": {**m["params"], "per_record": True}}
                                             for m in measures])
    summaries = [s for key, s in data._cache.items() if key[0] == "class_summary"
                 and s.spec.sensitive]
    assert summaries and all(isinstance(s, ShardedSummary) and len(s.parts) >= 3
                             for s in summaries)
    assert all(s._assembled is None for s in summaries)  # no class table came to the client
    for here, there, rec in zip(local.measures, remote.measures, records.measures, strict=True):
        assert there.error is None, there.error
        assert not [w for w in there.warnings if "gathered" in w], there.label
        assert close(here.value, there.value) and close(here.details, there.details), \
            there.label
        assert there.warnings == here.warnings
        assert close(rec.value, there.value) and close(_details(rec), there.details)
        assert there.details["violating_classes"] > 0  # the figures are not trivially empty


def test_missing_suppressed_merges_across_parts_on_the_workers(tmp_path, sharding,
                                                               monkeypatch):
    frame = _frame(np.random.default_rng(8), 3000, 900)
    data = _write(tmp_path / "d", frame, 3)
    measures = [{"name": cls.name, "label": f"{cls.name} {i}",
                 "params": {**params, "missing": "suppressed"}}
                for i, (cls, params) in enumerate(_models(["s"]))]
    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 20_000 / 1e9)
    remote = evaluate(data, data, measures, engine={"name": "dask", "gather_limit": "1KB",
                                                     "address": sharding.scheduler.address})
    local = evaluate(frame, frame.copy(), measures)
    summary = data._cache[("class_summary", SummarySpec("anonymized", tuple(QI), None, ("s",)))]
    # the groups merged by a second hash partitioning on the workers: no table assembled here
    assert isinstance(summary, ShardedSummary) and summary._assembled is None
    assert frame[QI].isna().any().any()
    for here, there in zip(local.measures, remote.measures, strict=True):
        assert there.error is None, there.error
        assert close(here.value, there.value) and close(here.details, there.details)
        assert there.warnings == here.warnings


@pytest.mark.parametrize("extra, why", [({"per_record": True}, "per_record lists every"),
                                        ({"id": "rid"}, "id aligns the sides")])
def test_record_params_fail_alone_above_the_gather_limit(tmp_path, sharding, extra, why):
    frame = _frame(np.random.default_rng(9), 600, 50).assign(rid=np.arange(600))
    data = _write(tmp_path / "d", frame, 2)
    measures = [{"name": "TCloseness", "label": "records",
                 "params": {"quasi_identifiers": QI, "sensitive": "s", **extra}},
                {"name": "TCloseness", "params": {"quasi_identifiers": QI, "sensitive": "s"}}]
    remote = evaluate(data, data, measures, engine={"name": "dask", "gather_limit": "1KB",
                                                     "address": sharding.scheduler.address})
    refused, fine = remote.measures
    assert "gather limit" in refused.error and why in refused.error
    assert fine.error is None
    assert fine.value == evaluate(frame, frame.copy(), measures[1:]).measures[0].value


def test_delta_presence_runs_from_the_summaries_under_a_tiny_gather_limit(tmp_path, sharding):
    frame = _frame(np.random.default_rng(10), 600, 50)
    data = _write(tmp_path / "d", frame, 2)
    measures = [{"name": "DeltaPresence", "params": {"quasi_identifiers": QI}}]
    remote = evaluate(data, data, measures, engine={"name": "dask", "gather_limit": "1KB",
                                                     "address": sharding.scheduler.address})
    local = evaluate(frame, frame.copy(), measures).measures[0]
    assert remote.measures[0].error is None and local.error is None
    assert remote.measures[0].value == local.value
    assert remote.measures[0].details == local.details
