"""DeltaPresence and missing="suppressed" on sharded class summaries: joined and regrouped by a
second hash partitioning on the workers (Dask's shuffle), equal to the local engine and to the
record path, with no records gathered and no class table assembled in the client."""

from __future__ import annotations

import ast
import functools
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _close import close
from _dask_memory import in_process_cluster
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anoneval.core import evaluate
from anoneval.core.data import partitioned, sharded
from anoneval.core.data.partitioned import Partitioned
from anoneval.core.data.sharded import ShardedSummary, _regrouped_part, _summary_rows
from anoneval.core.data.summary import ClassSummary, SummarySpec, class_codes
from anoneval.plugins.microdata._common import ClassSizes, _reduce_part, no_figures, token_keys
from anoneval.plugins.microdata._population import (
    Presence,
    first_found,
    population_rows,
    presence,
    release_rows,
    release_texts,
)

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")

QI = ["age", "zip", "sex"]


def hierarchies(folder: Path) -> dict[str, str]:
    """ARX hierarchies: age → decade → "*", zip (3 digits) → first two → first one → "*"."""
    folder.mkdir(exist_ok=True)
    ages = "".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(100))
    zips = "".join(f"{z:03d};{z // 10:02d}*;{z // 100}**;*\n" for z in range(1000))
    (folder / "age.csv").write_text(ages + "NULL;NULL;*\n")
    (folder / "zip.csv").write_text(zips)
    return {"age": str(folder / "age.csv"), "zip": str(folder / "zip.csv")}


def population(n: int, seed: int = 5) -> pd.DataFrame:
    """Raw records: ages 0-99 as text (some missing), 3-digit zips (some the token), sex."""
    rng = np.random.default_rng(seed)
    age = rng.integers(0, 100, n).astype(str).astype(object)  # text, as the release's
    age[rng.random(n) < 0.03] = None
    zips = np.char.zfill(rng.integers(0, 1000, n).astype(str), 3).astype(object)
    zips[rng.random(n) < 0.02] = "*"
    return pd.DataFrame({"age": age, "zip": zips, "sex": rng.choice(["f", "m"], n)})


def release(pop: pd.DataFrame, hs: dict[str, str], share: float, seed: int = 6,
            levels: tuple[int, int] = (1, 1)) -> pd.DataFrame:
    """A sample of the population generalized to ``levels`` (age, zip; missing values stay
    missing), a few records suppressed."""
    from anoneval.plugins.microdata._hierarchy import generalize, read_hierarchy

    sub = pop.sample(frac=share, random_state=seed).reset_index(drop=True)
    out = sub.copy()
    for c, lev in zip(["age", "zip"], levels, strict=True):
        h = read_hierarchy(hs[c])
        texts = np.array(["NULL" if v is None else v for v in sub[c]], dtype=object)
        keep = (texts != "*") & (texts != "NULL")
        texts[keep] = generalize(h, texts[keep], lev, c)
        texts[texts == "NULL"] = None  # missing stays missing
        out[c] = texts
    out.loc[:9, QI] = "*"
    return out


@pytest.fixture(scope="module")
def cluster():
    """Two in-process workers of 1 GB behind a TCP scheduler address."""
    with in_process_cluster(tcp=True) as cl:
        yield cl


@pytest.fixture
def sent(monkeypatch):
    """Pickled bytes of every result a cluster sent to the client through ``gathered``; class
    summaries sharded above 100 kB."""
    found: list[int] = []
    original = sharded.gathered

    def recording(client: Any, futures: Any, patience: Any = None) -> list[Any]:
        out = original(client, futures, patience)
        found.extend(len(pickle.dumps(o)) for o in out)
        return out

    monkeypatch.setattr(sharded, "gathered", recording)
    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 100_000 / 1e9)
    return found


def _write(folder: Path, frame: pd.DataFrame, k: int = 3) -> Partitioned:
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), k)):
        frame.iloc[rows].to_parquet(folder / f"p{i}.parquet", index=False)
    return Partitioned(folder)


def _sharded(*data: Partitioned) -> list[ShardedSummary]:
    return [s for d in data for key, s in d._cache.items()
            if key[0] == "class_summary" and isinstance(s, ShardedSummary)]


def _same(local: Any, remote: Any) -> None:
    for here, there in zip(local.to_dict()["measures"], remote.to_dict()["measures"],
                           strict=True):
        assert here["error"] is None and there["error"] is None, (here["error"],
                                                                  there["error"])
        for key in ("value", "ci", "details", "warnings"):
            assert close(here[key], there[key]), (here["label"], key)


def presence_measures(hs: dict[str, str]) -> list[dict[str, Any]]:
    base = {"quasi_identifiers": QI, "hierarchies": hs}
    return [{"name": "DeltaPresence", "params": {**base, "delta_min": 0.05, "delta_max": 0.3}},
            {"name": "DeltaPresence", "label": "suppressed",
             "params": {**base, "missing": "suppressed", "levels": {"age": 1}}}]


# -- on a cluster ------------------------------------------------------------------------------


def test_delta_presence_joins_the_summaries_on_the_workers(tmp_path, cluster, sent):
    hs = hierarchies(tmp_path / "h")
    pop = population(30_000)
    rel = release(pop, hs, 0.3)
    original, released = _write(tmp_path / "o", pop), _write(tmp_path / "r", rel)
    measures = presence_measures(hs)
    engine = {"name": "dask", "address": cluster.scheduler_address, "gather_limit": "1KB"}
    remote = evaluate(original, released, measures, engine=engine)
    local = evaluate(pop, rel, measures)
    _same(local, remote)
    assert not [w for m in remote.measures for w in m.warnings if "gathered" in w]
    # the population's raw classes were sharded and never assembled here
    summaries = _sharded(original)
    assert summaries and all(s._assembled is None and len(s.parts) >= 3 for s in summaries)
    classes = summaries[0].n_classes
    assert classes > 20_000
    # what came to the client: the parts' facts and the join's figures, none per class
    assert sent and max(sent) < 2_000 < 8 * classes, (sent, classes)
    first = remote.measures[0].details
    assert first["classes"] > 100 and first["violating_classes"] > 0
    assert first["population_outside_release"] > 0  # the population's tuples of δ = 0
    # the record path (per_record) gives the same figures
    rows = evaluate(pop, rel, [{**m, "params": {**m["params"], "per_record": True}}
                               for m in measures])
    for there, here in zip(remote.measures, rows.measures, strict=True):
        assert there.value == here.value
        assert {k: v for k, v in here.details.items() if k != "per_record"} == there.details


def test_delta_presence_population_file_with_a_sharded_release(tmp_path, cluster, sent):
    """A ``population`` file is read into this process (as on the local engine); the release
    is sharded, and the join runs on the workers."""
    pop = population(30_000, seed=8).assign(age=lambda f: f["age"].fillna("-1").astype(int))
    rel = pop.sample(frac=0.4, random_state=1).reset_index(drop=True)
    pop.to_csv(tmp_path / "pop.csv", index=False)
    released = _write(tmp_path / "r", rel)
    measures = [{"name": "DeltaPresence",
                 "params": {"quasi_identifiers": QI, "population": str(tmp_path / "pop.csv"),
                            "delta_min": 0.2}}]
    engine = {"name": "dask", "address": cluster.scheduler_address, "gather_limit": "1KB"}
    remote = evaluate(None, released, measures, engine=engine)
    _same(evaluate(None, rel, measures), remote)
    assert _sharded(released)
    assert remote.measures[0].details["population_records"] == len(pop)


def test_delta_presence_errors_name_the_class(tmp_path, cluster, monkeypatch):
    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 100_000 / 1e9)
    hs = hierarchies(tmp_path / "h")
    pop = population(20_000, seed=2)
    rel = release(pop, hs, 0.3, levels=(1, 2))
    original, released = _write(tmp_path / "o", pop), _write(tmp_path / "r", rel)
    engine = {"name": "dask", "address": cluster.scheduler_address, "gather_limit": "1KB"}
    # zip generalized, but no hierarchy for it: its values never meet the population's
    params = {"quasi_identifiers": QI, "hierarchies": {"age": hs["age"]}}
    measures = [{"name": "DeltaPresence", "params": params}]
    errors = [evaluate(original, released, measures, engine=engine).measures[0].error,
              evaluate(pop, rel, measures).measures[0].error]
    # the join runs on hashes of the tuples; the class named is looked up by them, the same
    # on both engines, and is one of the release's
    assert errors[0] == errors[1], errors
    assert "no population record falls into release class" in errors[0]
    assert _named(errors[0]) in _classes(rel)
    # a release class with more records than the population has in its tuple: the population
    # is the release itself (its levels), less one record of one class, plus records elsewhere
    drop = rel.index[(rel[QI] != "*").all(axis=1)][0]
    fewer = pd.concat([rel.drop(index=drop), rel.iloc[:5].assign(zip="elsewhere")],
                      ignore_index=True)
    measures = [{"name": "DeltaPresence", "params": {"quasi_identifiers": QI}}]
    errors = [evaluate(_write(tmp_path / "s", fewer), released, measures,
                       engine=engine).measures[0].error,
              evaluate(fewer, rel, measures).measures[0].error]
    assert errors[0] == errors[1], errors
    assert "but the population only" in errors[0]
    assert _named(errors[0]) == tuple(rel.loc[drop, QI].astype(str))


def _named(error: str) -> tuple[str, ...]:
    """The values of the release class an error names (``{'age': '30-39', …}``)."""
    found = ast.literal_eval(error[error.index("{"):error.index("}") + 1])
    assert list(found) == QI, error
    return tuple(found.values())


def _classes(frame: pd.DataFrame) -> set[tuple[str, ...]]:
    return set(frame[QI].astype(str).itertuples(index=False, name=None))


def test_a_clash_of_types_across_parts_is_found_and_named():
    """Release classes that differ only by a value's type (39 and "39"), held by different
    parts, read alike as text: the join, by hashed texts, cannot tell them apart, so it
    reports the tuple's hashes, which name the class in the part that holds it."""
    spec = SummarySpec("anonymized", ("a", "b"))
    parts = [ClassSummary.of_frame(pd.DataFrame({"a": [39, 40], "b": ["x", "x"]}), spec),
             ClassSummary.of_frame(pd.DataFrame({"a": ["39", "41"], "b": ["x", "y"]}), spec)]
    rules = {"qi": ("a", "b"), "token": "*", "missing": "value"}
    rows = pd.concat([release_rows(p, **rules) for p in parts], ignore_index=True)
    found = presence(rows, 0.0, 1.0)
    assert found.classes == 3 and found.clash is not None
    assert [release_texts(p, found.clash, **rules) for p in parts] == [("39", "x")] * 2
    assert release_texts(parts[1], (0, 0), **rules) is None
    assert first_found([None, ("39", "x"), ("41", "y")]) == ("39", "x")
    assert presence(rows.iloc[1:], 0.0, 1.0).clash is None


def test_per_record_says_why_it_reads_the_records(tmp_path, cluster, monkeypatch):
    monkeypatch.setattr(partitioned, "SUMMARY_SHARE", 100_000 / 1e9)
    pop = population(5_000)
    data = _write(tmp_path / "d", pop)
    measures = [{"name": "DeltaPresence", "params": {"quasi_identifiers": QI,
                                                     "per_record": True}}]
    engine = {"name": "dask", "address": cluster.scheduler_address, "gather_limit": "1KB"}
    error = evaluate(data, data, measures, engine=engine).measures[0].error
    assert "gather limit" in error and "per_record lists every released row" in error


def test_missing_suppressed_regroups_on_the_workers(tmp_path, cluster, sent):
    """Class, attribute and re-identification measures under missing="suppressed" with missing
    quasi-identifier values: the classes that merge across parts are regrouped by Dask's
    shuffle on the workers; nothing is gathered or assembled here."""
    frame = population(30_000, seed=4).assign(
        s=lambda f: np.where(np.arange(len(f)) % 7 == 0, None, f["sex"]),
        w=lambda f: 1.0 + np.arange(len(f)) % 5)
    frame["sex"] = frame["sex"].where(np.arange(len(frame)) % 11 != 0, "*")
    data = _write(tmp_path / "d", frame)
    qi = {"quasi_identifiers": QI, "missing": "suppressed"}
    measures = [{"name": "KAnonymity", "params": {**qi, "k": 3, "list_violations": 9}},
                {"name": "KAnonymity", "label": "weighted", "params": {**qi, "weights": "w"}},
                {"name": "LDiversity", "params": {**qi, "sensitive": "s"}},
                {"name": "TCloseness", "params": {**qi, "sensitive": "s"}},
                {"name": "DM", "params": qi}, {"name": "AECS", "params": qi},
                {"name": "IndividualRisk", "params": {**qi, "weights": "w"}},
                {"name": "ReidentificationRisk", "params": qi}]
    engine = {"name": "dask", "address": cluster.scheduler_address, "gather_limit": "1KB"}
    remote = evaluate(None, data, measures, engine=engine)
    local = evaluate(None, frame, measures)
    _same(local, remote)
    assert not [w for m in remote.measures for w in m.warnings if "gathered" in w]
    assert any("missing values in quasi-identifiers" in w for w in remote.measures[0].warnings)
    summaries = _sharded(data)
    assert summaries and all(s._assembled is None for s in summaries)
    assert max(sent) < 8 * min(s.n_classes for s in summaries) / 4


# -- the reductions themselves: any split into parts and partitions ---------------------------


def frames(seed: int, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A small population (missing values, the token) and a sample of it with suppressed rows."""
    rng = np.random.default_rng(seed)
    pop = pd.DataFrame({"a": rng.choice(["1", "2", "*", None], n),
                        "b": rng.integers(0, 4, n),
                        "c": rng.choice(["x", "y", "*"], n)})
    rel = pop.sample(frac=0.5, random_state=seed).reset_index(drop=True).astype({"b": object})
    rel.loc[:2, ["a", "b", "c"]] = "*"
    return pop, rel


def _parts(frame: pd.DataFrame, spec: SummarySpec, owner: np.ndarray) -> list[ClassSummary]:
    """Summaries of disjoint sets of classes, class ``c`` in part ``owner[c % len(owner)]``."""
    group = frame.groupby(list(spec.keys), dropna=False, sort=False).ngroup().to_numpy()
    where = owner[group % len(owner)]
    return [ClassSummary.of_frame(frame[where == i].reset_index(drop=True), spec)
            for i in range(int(owner.max()) + 1)]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(8, 300),
       owner=st.lists(st.integers(0, 3), min_size=1, max_size=12),
       partitions=st.integers(1, 5), missing=st.sampled_from(["value", "suppressed"]),
       bounds=st.sampled_from([(0.0, 0.5), (0.3, 0.9), (0.0, 1.0)]))
def test_any_split_joins_to_the_record_path(seed, n, owner, partitions, missing, bounds):
    """The summary rows of any split of both sides into parts, joined in any partitioning by
    tuple, give the record path's (per_record) figures."""
    pop, rel = frames(seed, n)
    qi = ("a", "b", "c")
    params = {"quasi_identifiers": list(qi), "missing": missing, "delta_min": bounds[0],
              "delta_max": bounds[1]}
    rows = evaluate(pop, rel, [{"name": "DeltaPresence",
                                "params": {**params, "per_record": True}}]).measures[0]
    summary = evaluate(pop, rel, [{"name": "DeltaPresence", "params": params}]).measures[0]
    assert (rows.error is None) == (summary.error is None), (rows.error, summary.error)
    if rows.error is not None:
        return
    details = {k: v for k, v in rows.details.items() if k != "per_record"}
    assert summary.value == rows.value and summary.details == details
    rules = {"qi": qi, "token": "*", "missing": missing}
    spec = SummarySpec("original", qi)
    table = pd.concat(
        [release_rows(p, **rules) for p in _parts(rel, spec, np.array(owner))]
        + [population_rows(p, **rules, hierarchies={}, levels={})
           for p in _parts(pop, spec, np.array(owner[::-1]))], ignore_index=True)
    where = table["h0"].to_numpy()
    found = Presence.combine([presence(table[where % partitions == i], *bounds)
                              for i in range(partitions)])
    assert found.classes == details["classes"]
    assert found.violating == details["violating_classes"]
    assert found.in_violating == details["records_in_violating_classes"]
    assert found.outside == details["population_outside_release"]
    assert found.highest == details["achieved_delta_max"]
    assert (0.0 if found.outside else found.lowest) == details["achieved_delta_min"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(8, 300),
       owner=st.lists(st.integers(0, 3), min_size=1, max_size=12),
       partitions=st.integers(1, 5))
def test_regrouped_parts_reduce_as_the_whole(seed, n, owner, partitions):
    """missing="suppressed": a summary split into any parts, its rows regrouped on the merged
    keys in any partitioning, reduces to the whole summary's classes, sizes and listed order."""
    frame, _ = frames(seed, n)
    frame = frame.assign(w=1.0 + np.arange(len(frame)) % 3, s=frame["c"])
    qi = ("a", "b", "c")
    spec = SummarySpec("anonymized", qi, "w", ("s",))
    whole = ClassSummary.of_frame(frame, spec)
    keyer = functools.partial(token_keys, qi=qi, token="*")
    rows = pd.concat([_summary_rows(p, keyer) for p in _parts(frame, spec, np.array(owner))],
                     ignore_index=True)
    merged = [f"_m{j}" for j in range(len(qi))]
    where = pd.util.hash_pandas_object(rows[merged].astype(str), index=False).to_numpy()
    parts = [_regrouped_part(rows[where % partitions == i].reset_index(drop=True), spec)
             for i in range(partitions)]
    fn = functools.partial(_reduce_part, qi=qi, token="*", missing="suppressed",
                           partial=no_figures)
    want = ClassSizes.combine([f[1] for f in whole.reduce(fn, list)])
    got = ClassSizes.combine([f[1] for f in ShardedSummary(spec, parts).reduce(fn, list)])
    assert got.as_dict() == want.as_dict()
    assert (got.records, got.suppressed) == (want.records, want.suppressed)
    assert sum(p.weights.sum() for p in parts) == pytest.approx(whole.weights.sum(), rel=1e-12)
    assert sum(int(p.histograms["s"]["count"].sum()) for p in parts) == len(frame)
    # each part's classes are distinct and sorted by key, as a summary's are
    for p in parts:
        assert np.array_equal(class_codes(p.keys, qi).ids, np.arange(p.n_classes))
