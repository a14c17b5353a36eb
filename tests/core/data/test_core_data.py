"""Loading CSV (sniffed or given separator), Parquet and JSON lines; group-by primitives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import load
from anoneval.core.api import DataError, Microdata
from anoneval.core.data.kinds import Table, as_dataset, sniff_separator

FRAME = pd.DataFrame({"sex": ["m", "f", "f"], "age": [30, 41, 41], "w": [1.5, 2.0, 0.5]})


@pytest.mark.parametrize("sep", [";", ",", "\t", "|"])
def test_csv_separator_is_sniffed(tmp_path: Path, sep: str) -> None:
    path = tmp_path / "d.csv"
    FRAME.to_csv(path, sep=sep, index=False)
    assert sniff_separator(path) == sep
    data = load(path)
    pd.testing.assert_frame_equal(data.frame, FRAME)


def test_adult_is_read_with_semicolons(data_dir: Path) -> None:
    data = load(data_dir / "adult" / "adult.csv", options={"sep": ";"})
    assert isinstance(data, Microdata) and len(data) == 30162
    assert data.columns == ["sex", "age", "race", "marital-status", "education",
                            "native-country", "workclass", "occupation", "salary-class"]
    sniffed = load(data_dir / "adult" / "adult.csv")
    assert sniffed.content_hash() == data.content_hash()


def test_parquet_and_jsonl(tmp_path: Path) -> None:
    FRAME.to_parquet(tmp_path / "d.parquet", index=False)
    FRAME.to_json(tmp_path / "d.jsonl", orient="records", lines=True)
    a = load(tmp_path / "d.parquet")
    b = load(tmp_path / "d.jsonl")
    pd.testing.assert_frame_equal(a.frame, FRAME)
    pd.testing.assert_frame_equal(b.frame, FRAME)


def test_read_all_as_text(tmp_path: Path) -> None:
    FRAME.to_csv(tmp_path / "d.csv", index=False)
    data = load(tmp_path / "d.csv", options={"dtype": "str"})
    assert list(data.frame["age"]) == ["30", "41", "41"]


def test_unknown_extension_and_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / "d.xyz").write_text("a\n1\n")
    with pytest.raises(DataError, match="cannot tell the format"):
        load(tmp_path / "d.xyz")
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(DataError, match="cannot read as parquet"):
        load(tmp_path / "bad.parquet")


def test_loading_never_modifies_the_file(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    FRAME.to_csv(path, sep=";", index=False)
    before = path.read_bytes(), path.stat().st_mtime_ns
    load(path).content_hash()
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_require_names_missing_and_present_columns() -> None:
    with pytest.raises(DataError) as err:
        Microdata(FRAME).require(["sex", "zip", "edu"], "quasi-identifier")
    msg = str(err.value)
    assert "quasi-identifiers 'zip', 'edu' not in the microdata" in msg
    assert "its columns are: sex, age, w" in msg


def test_table_checks_its_columns() -> None:
    with pytest.raises(DataError, match="table column 'n'"):
        Table(FRAME, keys=["sex"], count="n")


def test_group_ids_treat_missing_as_a_value() -> None:
    df = pd.DataFrame({"a": [1, np.nan, np.nan, 1], "b": ["x", "y", "y", None]})
    data = Microdata(df)
    ids, n = data.group_ids(["a", "b"])
    assert n == 3
    assert ids[1] == ids[2] and ids[0] != ids[3]
    assert sorted(data.group_sizes(["a", "b"]).tolist()) == [1, 1, 2]


def test_derived_arrays_are_cached_per_dataset() -> None:
    data = Microdata(FRAME)
    assert data.group_ids(["sex"]) is data.group_ids(["sex"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from("abc"), st.integers(0, 2)),
                min_size=1, max_size=40), st.randoms())
def test_group_sizes_match_pandas_and_ignore_row_order(rows, rnd) -> None:
    df = pd.DataFrame(rows, columns=["x", "y", "z"])
    sizes = sorted(Microdata(df).group_sizes(["x", "y", "z"]).tolist())
    assert sizes == sorted(df.groupby(["x", "y", "z"]).size().tolist())
    shuffled = df.sample(frac=1, random_state=rnd.randint(0, 10**6))
    assert sorted(Microdata(shuffled).group_sizes(["x", "y", "z"]).tolist()) == sizes


def test_many_high_cardinality_columns_do_not_overflow() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"c{i}": rng.integers(0, 50_000, 2_000) for i in range(6)})
    df = pd.concat([df, df.iloc[:10]], ignore_index=True)
    sizes = Microdata(df).group_sizes(list(df.columns))
    assert sorted(sizes.tolist()) == sorted(df.groupby(list(df.columns)).size().tolist())


def test_content_hash_depends_on_values_and_columns() -> None:
    a = Microdata(FRAME).content_hash()
    assert a == Microdata(FRAME.copy()).content_hash()
    assert a != Microdata(FRAME.assign(age=[30, 41, 42])).content_hash()
    assert a != Microdata(FRAME.rename(columns={"w": "weight"})).content_hash()


def test_as_dataset() -> None:
    assert as_dataset(None) is None
    assert isinstance(as_dataset(FRAME), Microdata)
    with pytest.raises(TypeError, match=r"^expected a pandas DataFrame"):
        as_dataset([1, 2])


def test_content_hash_from_cached_codes_equals_pandas() -> None:
    # object columns (text, mixed kinds, missing values) hashed from the cached codes give
    # pandas' hash_pandas_object, as a fresh dataset's hash does
    frame = pd.DataFrame({"t": ["a", "b", None, "a"], "m": [1, "1", 2.5, None],
                          "n": [1.0, np.nan, 3.0, 4.0], "b": [True, 1, "x", False]})
    warm = Microdata(frame)
    for col in frame.columns:
        warm.codes(col)
    expected = pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes()
    assert warm._hash_parts()[1] == expected
    assert Microdata(frame)._hash_parts()[1] == expected
    assert warm.content_hash() == Microdata(frame.copy()).content_hash()


CELLS = st.one_of(st.sampled_from(["a", "b", "1", ""]), st.none(), st.just(np.nan),
                  st.integers(-2, 2), st.sampled_from([1.0, 2.5]), st.booleans())


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(CELLS, CELLS), min_size=1, max_size=30), st.booleans())
def test_content_hash_of_object_columns_equals_pandas(rows, shared) -> None:
    # object columns, their codes cached by a measure or not (then factorized by their
    # distinct objects), hash as pandas' hash_pandas_object; equal strings in distinct
    # objects (``shared`` False) or the same object (as a CSV reader shares them)
    frame = pd.DataFrame(rows, columns=["x", "y"], dtype=object)
    if not shared:
        frame = frame.map(lambda v: "".join(v) if isinstance(v, str) else v)
    expected = pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes()
    cold = Microdata(frame)
    assert cold._hash_parts()[1] == expected
    assert ("codes", "x") not in cold._cache  # hashing caches no codes
    warm = Microdata(frame)
    warm.codes("x")
    assert warm._hash_parts()[1] == expected


def test_numbers_read_as_text_share_one_string_per_distinct_value() -> None:
    from anoneval.core.data.kinds import _text

    values = pd.Series([39.0, float("nan"), 2.5, -0.0, 39.0, 1e20] * 1000)
    text = _text(values)
    assert text.tolist()[:6] == ["39", text.iloc[1], "2.5", "0", "39", "100000000000000000000"]
    assert pd.isna(text.iloc[1])
    assert text.tolist() == _text(values.astype(object)).tolist()  # the per-value conversion
    assert len({id(v) for v in text.dropna()}) == 4  # one object per distinct text
    assert _text(pd.Series([3, 4, 3], dtype="uint8")).tolist() == ["3", "4", "3"]


def test_a_parquet_read_of_no_columns_keeps_the_row_count(tmp_path):
    # a row count (a summary without keys) reads no column; pyarrow < 26 read such a file as
    # 0 rows, which made a sharded run's original look empty
    from anoneval.core.data.kinds import _read_parquet

    path = tmp_path / "x.parquet"
    pd.DataFrame({"a": range(7), "b": list("abcdefg")}).to_parquet(path, index=False)
    assert len(_read_parquet(path, [])) == 7
    assert list(_read_parquet(path, ["b"])["b"]) == list("abcdefg")


@pytest.mark.parametrize("columns", [None, ["t"], ["n", "d"], ["c", "t"]])
@pytest.mark.parametrize("index", [False, True])
@pytest.mark.parametrize("infer_string", [False, True])
@pytest.mark.parametrize("pyarrow_version", [None, "18.1.0"])
def test_a_parquet_read_equals_pandas_read(tmp_path, monkeypatch, columns, index, infer_string,
                                           pyarrow_version):
    # the file is opened once (schema and columns from one handle), not through pandas'
    # dataset reader: dtypes (pandas 3's string dtype too), index, column order and attrs as
    # pandas reads them; before pyarrow 19 pandas' own reader maps the strings
    import pyarrow

    from anoneval.core.data.kinds import _read_parquet

    if pyarrow_version:
        monkeypatch.setattr(pyarrow, "__version__", pyarrow_version)

    frame = pd.DataFrame({
        "i": [1, 2, 3, 4], "n": pd.array([1, None, 3, 4], dtype="Int64"),
        "f": [0.5, np.nan, 2.0, -1.0], "t": ["a", None, "b", "a"],
        "c": pd.Categorical(["x", "y", "x", None]), "b": [True, False, True, True],
        "d": pd.to_datetime(["2020-01-01", None, "2021-06-30", "2022-12-31"]).tz_localize("UTC"),
    }, index=pd.Index([10, 11, 12, 13], name="row"))
    frame.attrs = {"source": "survey"}
    path = tmp_path / "x.parquet"
    frame.to_parquet(path, index=index)
    with pd.option_context("future.infer_string", infer_string):
        ours, theirs = _read_parquet(path, columns), pd.read_parquet(path, columns=columns)
    pd.testing.assert_frame_equal(ours, theirs)
    assert ours.attrs == theirs.attrs
    assert list(ours.columns) == (list(frame.columns) if columns is None else columns)
