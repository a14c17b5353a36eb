"""The re-identification measures from class summaries: equal to the record path, and on Dask
reduced on the workers (no records gathered, no class assembled in the client), equal to the
local engine."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _close import close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anoneval.core import evaluate
from anoneval.plugins.reidentification import _summary
from anoneval.plugins.reidentification._summary import boundary, kth_value, median

# -- the record path (per_record) and the summary path agree --------------------------------


def _entries(report: Any) -> list[dict[str, Any]]:
    out = []
    for m in report.to_dict()["measures"]:
        m = dict(m)
        m["details"] = {k: v for k, v in (m.get("details") or {}).items() if k != "per_record"}
        m["params"] = {k: v for k, v in m["params"].items() if k != "per_record"}
        for key in ("label", "seconds", "timings", "memory"):
            m.pop(key, None)
        m["warnings"] = [w for w in m["warnings"] if "per_record" not in w]
        out.append(m)
    return out


frames = st.integers(1, 60).flatmap(lambda n: st.builds(
    lambda a, b, c, w: pd.DataFrame({"a": a, "b": b, "c": c, "w": w}),
    st.lists(st.sampled_from(["1", "2", "*", None]), min_size=n, max_size=n),
    st.lists(st.sampled_from(["x", "y", "*"]), min_size=n, max_size=n),
    st.lists(st.sampled_from(["p", "q", "*", None]), min_size=n, max_size=n),
    st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0, 7.25, 40.0]), min_size=n, max_size=n)))

IR_PARAMS = st.fixed_dictionaries({
    "weights": st.sampled_from([None, "w"]), "method": st.sampled_from(["approx", "exact"]),
    "missing": st.sampled_from(["category", "suppressed"]),
    "compat": st.sampled_from([None, "sdcmicro"]),
    "risk_threshold": st.sampled_from([0.05, 0.1, 0.5, 1.0]),
    "global_risk_level": st.sampled_from([0.0013, 0.0517, 0.3071, 0.9013])})  # ties unlikely


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=frames, params=IR_PARAMS, qi=st.sampled_from([["a"], ["a", "b"], ["a", "b", "c"]]))
def test_individual_risk_from_the_summary_equals_the_record_path(frame, params, qi):
    """value, ci, every detail (the median/MAD count and the μ-Argus threshold included) and
    the warnings, with suppressed records, missing values and weights below 1."""
    measure = {"name": "IndividualRisk", "params": {**params, "quasi_identifiers": qi}}
    rows = {**measure, "label": "rows", "params": {**measure["params"], "per_record": True}}
    summary, records = _entries(evaluate(None, frame, [measure, rows]))
    assert summary["error"] == records["error"]
    assert close(summary, records), (summary, records)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=frames, qi=st.sampled_from([["a"], ["a", "b"], ["a", "b", "c"]]),
       missing=st.sampled_from(["value", "suppressed"]),
       model=st.sampled_from(["dankar", "zayatz", "pitman", "snb"]),
       compat=st.sampled_from([None, "arx"]),
       attacker=st.sampled_from(["prosecutor", "journalist", "marketer"]),
       factor=st.sampled_from([1, 3, 40]))
def test_uniqueness_and_attackers_from_the_summary_equal_the_record_path(
        frame, qi, missing, model, compat, attacker, factor):
    """PopulationUniqueness (estimates and the seeded bootstrap interval) and
    ReidentificationRisk (prosecutor; journalist and marketer with a population size)."""
    common = {"quasi_identifiers": qi, "missing": missing}
    size = {} if attacker == "prosecutor" else {"population_size": factor * len(frame)}
    measures = [{"name": "PopulationUniqueness",
                 "params": {**common, "model": model, "compat": compat, "n_boot": 30,
                            "sampling_fraction": 1 / factor}},
                {"name": "ReidentificationRisk",
                 "params": {**common, "attacker": attacker, **size}}]
    rows = [{**m, "label": f"rows {i}", "params": {**m["params"], "per_record": True}}
            for i, m in enumerate(measures)]
    found = _entries(evaluate(None, frame, [*measures, *rows], seed=3))
    for summary, records in zip(found[:2], found[2:], strict=True):
        assert close(summary, records), (summary, records)


# -- exact order statistics over parts -------------------------------------------------------


class _Parts:
    """Parts of (values, records) with the reduce of a sharded summary."""

    def __init__(self, parts: list[tuple[np.ndarray, np.ndarray]]) -> None:
        self.parts = parts

    def reduce(self, partial: Any, combine: Any) -> Any:
        return combine([partial(p) for p in self.parts])


def _own(part: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return part


@settings(max_examples=80, deadline=None)
@given(values=st.lists(st.tuples(st.sampled_from([0.0, 0.1, 0.25, 1 / 3, 0.5, 0.7, 1.0])
                                 | st.floats(0, 1), st.integers(1, 4)), min_size=1,
                       max_size=60),
       cuts=st.lists(st.integers(0, 60), max_size=4), candidates=st.integers(2, 5),
       level=st.floats(0.001, 0.999))
def test_order_statistics_over_parts_equal_numpy(values, cuts, candidates, level):
    """kth values, the median and the μ-Argus boundary found across any split of the values
    into parts, a few candidates per round (many rounds), equal numpy on the records."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_summary, "CANDIDATES", candidates)
        _order_statistics(values, cuts, level)


def _order_statistics(values: list[tuple[float, int]], cuts: list[int], level: float) -> None:
    from anoneval.plugins.reidentification.individual_risk import mu_argus_threshold

    v = np.array([x for x, _ in values])
    c = np.array([k for _, k in values])
    edges = [0, *sorted(min(x, len(v)) for x in cuts), len(v)]
    parts = _Parts([(v[a:b], c[a:b]) for a, b in itertools.pairwise(edges)
                    if b > a])
    records = np.repeat(v, c)
    ordered = np.sort(records)
    n = len(records)
    for k in {0, n // 3, n // 2, n - 1}:
        assert kth_value(parts, _own, k) == ordered[k]
    assert median(parts, _own, n) == np.median(records)
    target = level * n
    if records.sum() >= target:
        below, _ = boundary(parts, _own, lambda _p, _c, sum_min: sum_min >= target)
        found, expected = 0.0 if below is None else below, mu_argus_threshold(records, level)
        if found != expected:  # only at a tie: Σ min(r, level) = level·n up to rounding
            assert expected is not None
            tie = [x for x in (found, expected) if x > 0]
            assert tie and all(np.minimum(records, x).sum() == pytest.approx(target, rel=1e-12)
                               for x in tie), (found, expected)
    assert not _summary._LEVELS  # each search lets go of the parts' sorted values


# -- on a cluster: sharded summaries reduced on the workers ---------------------------------

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

QI = ["a", "b", "rid"]


def _frame(n: int = 3000, missing: bool = True) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({
        "a": rng.choice(["1", "2", "*", *([None] if missing else [])], n),
        "b": rng.choice(["x", "y", "*"], n),
        # most records in classes of ~20 records, the last fifth nearly unique
        "rid": np.where(np.arange(n) < 0.8 * n, np.arange(n) % 10, np.arange(n)).astype(str),
        "w": rng.choice([0.8, 1.5, 2.0, 3.5, 60.0], n)})
    frame.loc[:30, QI] = "*"  # suppressed records
    return frame


def _write(folder: Any, frame: pd.DataFrame) -> Any:
    from anoneval.core.data.partitioned import Partitioned

    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[rows].to_parquet(folder / f"p{i}.parquet", index=False)
    return Partitioned(folder)


def _measures(missing: str) -> list[dict[str, Any]]:
    qi = {"quasi_identifiers": QI}
    ir = "suppressed" if missing == "suppressed" else "category"
    return [
        {"name": "IndividualRisk", "params": {**qi, "missing": ir}},
        {"name": "IndividualRisk", "label": "weighted",
         "params": {**qi, "weights": "w", "missing": ir, "global_risk_level": 0.05}},
        {"name": "IndividualRisk", "label": "exact",
         "params": {**qi, "weights": "w", "method": "exact", "missing": ir}},
        {"name": "IndividualRisk", "label": "sdcmicro",
         "params": {**qi, "weights": "w", "method": "exact", "compat": "sdcmicro",
                    "missing": ir}},
        {"name": "PopulationUniqueness", "params": {**qi, "sampling_fraction": 0.05,
                                                    "missing": missing}},
        {"name": "PopulationUniqueness", "label": "snb arx",
         "params": {**qi, "population_size": 6000, "model": "snb", "compat": "arx",
                    "missing": missing}},
        {"name": "PopulationUniqueness", "label": "pitman",
         "params": {**qi, "sampling_fraction": 0.5, "model": "pitman", "missing": missing}},
        {"name": "ReidentificationRisk", "params": {**qi, "missing": missing}},
        {"name": "ReidentificationRisk", "label": "journalist",
         "params": {**qi, "attacker": "journalist", "population_size": 7000,
                    "missing": missing}},
        {"name": "ReidentificationRisk", "label": "marketer",
         "params": {**qi, "attacker": "marketer", "population_size": 7000,
                    "missing": missing}},
    ]


@pytest.fixture(scope="module")
def scheduler():
    """The address of a LocalCluster of 2 worker processes with a memory_limit of 1 GB."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", memory_limit="1GB",
                                  dashboard_address="127.0.0.1:0") as cl:
        yield cl.scheduler_address


@pytest.mark.parametrize("missing", ["value", "suppressed"])
def test_on_dask_sharded_and_not_gathered_equal_to_the_local_engine(
        tmp_path, scheduler, monkeypatch, missing):
    """Summaries sharded (the switch point moved below them), a gather limit of 1 KB (a
    measure reading records would fail), few candidates per search round: every measure
    equals the local engine's value, interval, details and warnings, and no summary was
    assembled in the client."""
    from anoneval.core.data import partitioned
    from anoneval.core.data.sharded import ShardedSummary

    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 2_000 / 1e9)
    monkeypatch.setattr(_summary, "CANDIDATES", 8)
    frame = _frame(missing=missing == "value")
    original, released = _write(tmp_path / "o", frame), _write(tmp_path / "r", frame)
    measures = _measures(missing)
    engine = {"name": "dask", "address": scheduler, "gather_limit": "1KB"}
    remote = evaluate(original, released, measures, engine=engine, seed=5)
    local = evaluate(frame, frame.copy(), measures, seed=5)
    sharded = [s for data in (original, released) for s in data._cache.values()
               if isinstance(s, ShardedSummary)]
    # given a release these measures read no class of the original: none is summarized
    assert {s.spec.side for s in sharded} == {"anonymized"}
    assert all(s._assembled is None for s in sharded)
    for here, there in zip(local.to_dict()["measures"], remote.to_dict()["measures"],
                           strict=True):
        assert here["error"] is None and there["error"] is None, there["error"]
        assert not any("gathered" in w for w in there["warnings"])
        assert close({k: here[k] for k in ("value", "ci", "details", "warnings")},
                      {k: there[k] for k in ("value", "ci", "details", "warnings")}), \
            here["label"]
    weighted = remote.measures[1].details
    assert weighted["mu_argus_threshold"] is not None
    assert weighted["sdcmicro_high_risk_records"] > 0


def test_classes_merged_across_parts_are_regrouped_on_the_workers(tmp_path, scheduler,
                                                                  monkeypatch):
    """missing='suppressed' with missing values merges classes that the hash partitioning put
    in different parts: the parts are regrouped on the merged keys on the workers (as the
    class measures of the microdata family do), no table is assembled in the client, and
    every measure equals the local engine."""
    from anoneval.core.data import partitioned
    from anoneval.core.data.sharded import ShardedSummary

    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 2_000 / 1e9)
    frame = _frame()
    assert frame[QI].isna().any().any()
    released = _write(tmp_path / "r", frame)
    qi = {"quasi_identifiers": QI, "missing": "suppressed"}
    measures = [{"name": "PopulationUniqueness", "params": {**qi, "sampling_fraction": 0.1}},
                {"name": "IndividualRisk", "params": qi},
                {"name": "ReidentificationRisk", "params": qi}]
    engine = {"name": "dask", "address": scheduler, "gather_limit": "1KB"}
    remote = evaluate(None, released, measures, engine=engine, seed=3)
    local = evaluate(None, frame, measures, seed=3)
    for here, there in zip(local.to_dict()["measures"], remote.to_dict()["measures"],
                           strict=True):
        assert here["error"] is None and there["error"] is None, there["error"]
        assert close({k: here[k] for k in ("value", "ci", "details", "warnings")},
                      {k: there[k] for k in ("value", "ci", "details", "warnings")}), \
            here["label"]
    sharded = [s for s in released._cache.values() if isinstance(s, ShardedSummary)]
    assert sharded and all(s._assembled is None for s in sharded)


def test_summary_measures_declare_summaries_and_record_params_do_not():
    """Which params keep the record path (and so are gathered on Dask)."""
    from anoneval.plugins.reidentification.individual_risk import IndividualRisk
    from anoneval.plugins.reidentification.population_uniqueness import PopulationUniqueness
    from anoneval.plugins.reidentification.reidentification_risk import ReidentificationRisk

    qi = {"quasi_identifiers": QI}
    assert IndividualRisk(**qi, weights="w").summaries() is not None
    for extra in ({"household": "h"}, {"per_record": True}, {"id": "i"},
                  {"missing": "wildcard"}):
        assert IndividualRisk(**qi, **extra).summaries() is None, extra
    assert PopulationUniqueness(**qi, sampling_fraction=0.1).summaries() is not None
    assert PopulationUniqueness(**qi, sampling_fraction=0.1, per_record=True).summaries() is None
    assert ReidentificationRisk(**qi).summaries() is not None
    assert ReidentificationRisk(**qi, attacker="marketer", population_size=9).summaries()
    assert ReidentificationRisk(**qi, attacker="marketer", population="p.csv").summaries() \
        is None
    # the original's own summary for the row-count check, both sides' summaries by keys
    assert functools.reduce(lambda a, s: a | {s.side}, IndividualRisk(**qi).summaries(),
                            set()) == {"original", "anonymized"}


def test_record_reading_params_fail_alone_above_the_gather_limit(tmp_path, scheduler):
    """SUDA (no distributed form) and the params that read records fail with the gather
    error and the reason (what SUDA needs, how many subsets, the options), while the measures
    from summaries run."""
    frame = _frame(missing=False)
    frame["hh"] = np.arange(len(frame)) // 3
    released = _write(tmp_path / "r", frame)
    qi = {"quasi_identifiers": QI}
    measures = [{"name": "SUDA", "params": qi},
                {"name": "SUDA", "label": "bounded", "params": {**qi, "max_msu_size": 2}},
                {"name": "IndividualRisk", "params": {**qi, "household": "hh"}},
                {"name": "ReidentificationRisk",
                 "params": {**qi, "attacker": "marketer", "population": "p.csv"}},
                {"name": "IndividualRisk", "label": "summary", "params": qi}]
    engine = {"name": "dask", "address": scheduler, "gather_limit": "1KB"}
    remote = evaluate(None, released, measures, engine=engine)
    suda, bounded, household, marketer, summary = (m.error for m in remote.measures)
    for error in (suda, bounded, household, marketer):
        assert "gather limit of 1000 B" in error and f"{len(frame)} rows" in error
    assert "SUDA2" in suda and "3 quasi-identifiers (7 subsets)" in suda
    assert "(6 subsets, those of up to 2 of them)" in bounded
    assert "max_msu_size" in suda and "local engine" in suda
    assert "household joins each record's household id" in household
    assert "the marketer attacker generalizes a population table" in marketer
    assert summary is None
    assert remote.measures[4].value == evaluate(None, frame, measures[4:]).measures[0].value
