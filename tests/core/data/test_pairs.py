"""Paired records (core/data/pairs.py) and NonUniformEntropy partition-wise on the dask engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _close import close
from _toy_plugins import ChangedCells

from anoneval.core import evaluate
from anoneval.core.data.kinds import Microdata
from anoneval.core.data.pairs import _spans, pair_datasets
from anoneval.core.data.partitioned import Partitioned
from anoneval.core.errors import DataError

pytest.importorskip("distributed", reason="the dask extra is not installed")

QI = ["age", "sex", "zip"]


def test_spans_slice_the_other_side_at_the_same_positions():
    # left blocks of 3, 4, 2 rows against right blocks of 5, 0, 4 rows
    assert _spans([3, 4, 2], [5, 0, 4]) == [[(0, 0, 3)], [(0, 3, 5), (2, 0, 2)], [(2, 2, 4)]]
    assert _spans([9], [5, 4]) == [[(0, 0, 5), (1, 0, 4)]]
    assert _spans([0, 2], [2]) == [[], [(0, 0, 2)]]


def test_pairing_by_key_marks_deleted_records_and_checks_keys():
    original = Microdata(pd.DataFrame({"id": [1, 2, 3], "x": ["a", "b", "c"]}))
    anonymized = Microdata(pd.DataFrame({"id": [3, 1], "x": ["C", "A"]}))
    frame = pair_datasets(original, anonymized, {"original": ["x"], "anonymized": ["x"]}, "id")
    assert frame[("original", "x")].tolist() == ["a", "b", "c"]
    assert frame[("anonymized", "x")].tolist()[::2] == ["A", "C"]
    assert frame[("deleted", "")].tolist() == [False, True, False]
    with pytest.raises(DataError, match=r"id 4 \(anonymized data row 2"):
        pair_datasets(original, Microdata(pd.DataFrame({"id": [3, 4], "x": ["C", "D"]})),
                      {}, "id")
    with pytest.raises(DataError, match="must be row-aligned"):
        pair_datasets(original, anonymized, {}, None)


def people(n: int = 240, seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """An original and a generalized release: age bands, suppressed records, missing values."""
    rng = np.random.default_rng(seed)
    original = pd.DataFrame({
        "id": rng.permutation(n) + 1000, "age": rng.integers(20, 60, n),
        "sex": rng.choice(["f", "m"], n),
        "zip": rng.choice(["8166", "8167", "8192", None], n)})
    band = original["age"] // 10 * 10
    released = original.assign(age=band.astype(str) + "-" + (band + 9).astype(str),
                               zip=original["zip"].str[:3])
    released.loc[rng.random(n) < 0.1, "zip"] = None
    suppressed = rng.random(n) < 0.08
    released.loc[suppressed, QI] = "*"
    return original, released


def write_parts(frame: pd.DataFrame, folder: Path, cuts: list[int]) -> Path:
    folder.mkdir()
    for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(frame)], strict=True)):
        frame.iloc[a:b].to_parquet(folder / f"part-{i:03d}.parquet", index=False)
    return folder


@pytest.fixture(scope="module")
def hierarchy(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("nue") / "age.csv"
    path.write_text("".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 60)))
    return str(path)


def same(local: Any, remote: Any) -> None:
    for here, there in zip(local.to_dict()["measures"], remote.to_dict()["measures"],
                           strict=True):
        assert here["error"] is None and there["error"] is None, (here["error"], there["error"])
        assert close(here["value"], there["value"])
        assert close(here["details"], there["details"])
        assert here["warnings"] == there["warnings"]  # nothing gathered


def test_nue_by_row_order_equals_the_local_engine(tmp_path, cluster, hierarchy):
    original, released = people()
    # the two sides split the rows at different places
    lazy_o = Partitioned(write_parts(original, tmp_path / "o", [50, 120, 200]))
    lazy_r = Partitioned(write_parts(released, tmp_path / "r", [10, 11, 130]))
    measures = [
        {"name": "NonUniformEntropy", "params": {"quasi_identifiers": QI}},
        {"name": "NonUniformEntropy", "label": "hierarchy",
         "params": {"quasi_identifiers": QI, "hierarchies": {"age": hierarchy},
                    "weights": {"sex": 0.5}, "normalized": True}},
        {"name": "NonUniformEntropy", "label": "missing suppressed",
         "params": {"quasi_identifiers": QI, "missing": "suppressed"}},
    ]
    local = evaluate(original, released, measures)
    remote = evaluate(lazy_o, lazy_r, measures, engine=cluster)
    same(local, remote)
    assert any("missing values" in w for w in remote.measures[0].warnings)
    assert remote.measures[0].value > 0 and remote.measures[0].details["records"] == 240
    # one side in memory, the other partitioned
    same(local, evaluate(original, lazy_r, measures, engine=cluster))


def test_nue_by_id_equals_the_local_engine(tmp_path, cluster, hierarchy):
    original, released = people()
    shuffled = released.sample(frac=1, random_state=1).iloc[:-7]  # 7 records deleted
    lazy_o = Partitioned(write_parts(original, tmp_path / "o", [100]))
    lazy_r = Partitioned(write_parts(shuffled, tmp_path / "r", [60, 61, 150]))
    measures = [{"name": "NonUniformEntropy",
                 "params": {"quasi_identifiers": QI, "id": "id",
                            "hierarchies": {"age": hierarchy}}}]
    local = evaluate(original, shuffled, measures)
    remote = evaluate(lazy_o, lazy_r, measures, engine=cluster)
    same(local, remote)
    assert any("7 records of the original" in w for w in remote.measures[0].warnings)
    # deleted records count as suppressed: the same as writing the token in their cells
    starred = released.copy()
    starred.loc[~starred["id"].isin(shuffled["id"]), QI] = "*"
    assert remote.measures[0].value == pytest.approx(
        evaluate(original, starred, measures).measures[0].value, rel=1e-12)


def test_nue_pairing_errors_on_partitions(tmp_path, cluster):
    original, released = people(60)
    lazy_o = Partitioned(write_parts(original, tmp_path / "o", [30]))
    measure = {"name": "NonUniformEntropy", "params": {"quasi_identifiers": QI, "id": "id"}}
    dup = released.assign(id=released["id"].where(released.index != 5, released["id"][4]))
    stray = released.assign(id=released["id"].where(released.index != 50, -1))
    short = Partitioned(write_parts(released.iloc[:-1], tmp_path / "short", [20]))
    for name, frame, error in (("dup", dup, "has duplicates"), ("stray", stray, "id -1")):
        lazy = Partitioned(write_parts(frame, tmp_path / name, [20]))
        report = evaluate(lazy_o, lazy, [measure], engine=cluster)
        assert error in report.measures[0].error and "'id'" in report.measures[0].error
    by_order = {"name": "NonUniformEntropy", "params": {"quasi_identifiers": QI}}
    report = evaluate(lazy_o, short, [by_order], engine=cluster)
    assert "the original has 60 rows and the anonymized data 59" in report.measures[0].error


def test_nue_outside_the_hierarchy_names_the_values_on_partitions(tmp_path, cluster,
                                                                  hierarchy):
    original, released = people(60)
    released.loc[3, "age"] = "90-99"
    measure = {"name": "NonUniformEntropy",
               "params": {"quasi_identifiers": QI, "hierarchies": {"age": hierarchy}}}
    local = evaluate(original, released, [measure]).measures[0].error
    remote = evaluate(Partitioned(write_parts(original, tmp_path / "o", [30])),
                      Partitioned(write_parts(released, tmp_path / "r", [30])), [measure],
                      engine=cluster).measures[0].error
    assert "data row 4 (1-based" in local and "'90-99'" in local
    assert "'90-99'" in remote and "not a generalization" in remote


# -- one kind of value per column, and both sides alike, on partitions --------------------------


def write_csv_parts(frames: list[pd.DataFrame], folder: Path) -> Path:
    folder.mkdir()
    for i, frame in enumerate(frames):
        frame.to_csv(folder / f"part-{i}.csv", index=False)
    return folder


@pytest.mark.parametrize("case", ["mixed", "text ages", "text vs numbers", "unparsable"])
def test_kinds_are_aligned_on_partitions_as_in_memory(tmp_path, cluster, case):
    rng = np.random.default_rng(5)
    n = 90
    original = pd.DataFrame({"age": rng.integers(30, 34, n), "sex": rng.choice(["f", "m"], n),
                             "zip": rng.choice(["100", "200"], n)})
    released = original.copy()
    if case == "mixed":  # one file of numbers, one holding text: the column mixes kinds
        released["age"] = released["age"].astype(object)
        released.loc[60:, "age"] = "3*"
    elif case == "text ages":  # text holding numbers on one side: read as the original's
        released["age"] = released["age"].astype(str)
    elif case == "text vs numbers":  # numbers in the release, text in the original
        original["zip"] = "z" + original["zip"]
        released["zip"] = rng.choice([100, 200], n)
    else:  # text that is no number: both sides as text
        released["age"] = released["age"].astype(str).where(released.index % 7 != 0, "old")
    lazy_o = Partitioned(write_csv_parts([original.iloc[:40], original.iloc[40:]],
                                         tmp_path / "o"))
    # CSV reads numbers in text as numbers: text ages need Parquet
    lazy_r = Partitioned(write_csv_parts([released.iloc[:60], released.iloc[60:]],
                                         tmp_path / "r") if case == "mixed"
                         else write_parts(released, tmp_path / "r", [60]))
    qi = ["age", "sex", "zip"]
    measures = [{"name": "KAnonymity", "params": {"quasi_identifiers": qi}},
                {"name": "NonUniformEntropy", "params": {"quasi_identifiers": qi}},
                {"name": "Discernibility", "params": {"quasi_identifiers": qi}}]
    local = evaluate(lazy_o, lazy_r, measures)
    remote = evaluate(lazy_o, lazy_r, measures, engine=cluster)
    notes = [w for w in local.measures[0].warnings if "column" in w]
    expected = {"mixed": "mixes values of types int, str; read as text",
                "text ages": "the anonymized side was read as the original's (int64)",
                "text vs numbers": "the anonymized side was read as the original's (object)",
                "unparsable": "both sides were read as text"}[case]
    assert any(expected in w for w in notes), notes
    for here, there in zip(local.measures, remote.measures, strict=True):
        assert here.error is None and there.error is None, (here.error, there.error)
        assert here.value == pytest.approx(there.value, rel=1e-12)
        assert [w for w in there.warnings if "gathered" not in w] == here.warnings
    assert remote.measures[0].details == local.measures[0].details


def test_parquet_text_columns_are_known_from_the_footers(tmp_path, monkeypatch):
    original, _ = people(40)
    lazy = Partitioned(write_parts(original.assign(day=pd.Timestamp("2020-01-01").date()),
                                   tmp_path / "o", [20]))
    surveyed: list[Any] = []
    reduce = Partitioned.reduce
    monkeypatch.setattr(Partitioned, "reduce", lambda self, columns, *a: (
        surveyed.append(columns), reduce(self, columns, *a))[1])
    assert lazy.value_kinds() == {"id": "number", "age": "number", "sex": "text",
                                  "zip": "text", "day": "datetime"}
    assert surveyed == [["day"]]  # dates are objects in pandas: their kind needs a pass


def test_a_paired_measure_of_a_plugin_author(tmp_path, cluster):
    original, released = people(100)
    local = evaluate(original, released, [ChangedCells()]).measures[0]
    remote = evaluate(Partitioned(write_parts(original, tmp_path / "o", [30, 70])),
                      Partitioned(write_parts(released, tmp_path / "r", [55])),
                      [ChangedCells()], engine=cluster).measures[0]
    assert local.value == remote.value == 100  # every age became a band or '*'
    assert local.details["firsts"] == [0] and remote.details["firsts"] == [0, 30, 70]
