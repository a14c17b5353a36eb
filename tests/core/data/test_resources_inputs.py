"""Resources and odd inputs: memory limits, very wide headers, FIFOs and devices, strict JSON,
hierarchy files, separator sniffing (issue 23, "Resources and odd inputs")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _toy_plugins import Hungry, registry_with

from anoneval.core import evaluate
from anoneval.core.api import (
    DataError,
    read_json,
    read_text,
    separators_fitting,
)
from anoneval.core.cli.main import main
from anoneval.core.data.files import MAX_INT_DIGITS, loads
from anoneval.core.data.kinds import _parquet_bytes, load, sniff_separator
from anoneval.core.data.memory import human_bytes
from anoneval.core.errors import ConfigError, PluginError
from anoneval.core.run.config import load_config
from anoneval.registry import build_registry

# -- running the CLI under a real memory limit ------------------------------------------------

#: Runs ``anoneval ARGS`` with RLIMIT_AS set to the interpreter's size after its imports plus
#: HEADROOM MiB, so the limit bites on the data, not on importing pandas.
LIMITED = textwrap.dedent("""
    import resource, sys
    from pathlib import Path
    from anoneval.core.cli.main import main
    import anoneval.core.run.runner, anoneval.core.report.html, pyarrow.parquet  # noqa: F401
    size = next(int(line.split()[1]) * 1024 for line in
                Path("/proc/self/status").read_text().splitlines()
                if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS,
                       (size + int(sys.argv[1]) * 2**20, resource.RLIM_INFINITY))
    sys.exit(main(sys.argv[2:]))
""")

linux_only = pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                reason="RLIMIT_AS and /proc are Linux's")


def run_limited(tmp: Path, headroom_mib: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LIMITED, str(headroom_mib), *args], cwd=tmp,
                          capture_output=True, text=True, timeout=180)


def config(tmp: Path, data: str, name: str = "c.json", **extra: object) -> Path:
    path = tmp / name
    path.write_text(json.dumps({"original": {"path": data, **extra}, "measures": [
        {"name": "KAnonymity", "params": {"quasi_identifiers": ["a"]}}]}))
    return path


@pytest.fixture(scope="module")
def tall_parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 million rows of two int64 columns in a file of about half a megabyte (run-length
    encoded), written a million rows at a time."""
    path = tmp_path_factory.mktemp("tall") / "tall.parquet"
    block = pa.array(np.zeros(1_000_000, dtype=np.int64))
    table = pa.table({"a": block, "b": block})
    with pq.ParquetWriter(path, table.schema) as writer:
        for _ in range(60):
            writer.write_table(table)
    assert path.stat().st_size < 2 * 2**20
    return path


@linux_only
def test_a_parquet_file_that_expands_past_the_limit_is_refused_before_reading(
        tall_parquet: Path, tmp_path: Path) -> None:
    cfg = config(tmp_path, str(tall_parquet))
    done = run_limited(tmp_path, 300, "run", str(cfg), "-o", "r.json")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert "tall.parquet (60,000,000 rows × 2 columns) needs about 915.5 MiB" in done.stderr
    assert "address-space limit" in done.stderr and "--engine dask" in done.stderr
    assert not (tmp_path / "r.json").exists()
    # a folder of such files: the rows of all of them
    folder = tmp_path / "parts"
    folder.mkdir()
    for name in ("a.parquet", "b.parquet"):
        (folder / name).write_bytes(tall_parquet.read_bytes())
    done = run_limited(tmp_path, 300, "run", str(config(tmp_path, "parts")), "-o", "r.json")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "parts (120,000,000 rows × 2 columns in 2 files) needs about 1.8 GiB" in done.stderr


def test_parquet_memory_estimate_is_rows_times_widths(tmp_path: Path) -> None:
    path = tmp_path / "p.parquet"
    pd.DataFrame({"i": np.arange(1000, dtype=np.int64), "f": np.zeros(1000, np.float32),
                  "b": np.ones(1000, bool), "s": ["x"] * 1000}).to_parquet(path)
    need, rows, columns = _parquet_bytes(path)
    assert need == 1000 * (8 + 4 + 1 + 8)  # a text cell counts as its 8-byte pointer
    assert (rows, columns) == (1000, 4)
    assert human_bytes(need) == "20.5 KiB" and human_bytes(512) == "512 bytes"


@linux_only
def test_ten_million_csv_rows_under_a_limit_fail_cleanly(tmp_path: Path) -> None:
    (tmp_path / "big.csv").write_text("a,b\n" + "1,2\n" * 10**7)
    cfg = config(tmp_path, "big.csv")
    outcomes = {}
    for headroom in (100, 200, 320):
        done = run_limited(tmp_path, headroom, "run", str(cfg), "-o", "r.json")
        assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr
        assert done.returncode in (0, 2), done.stderr
        if done.returncode == 2:
            assert "big.csv" in done.stderr and "38.1 MiB" in done.stderr, done.stderr
            assert "--engine dask" in done.stderr
        outcomes[headroom] = done.stderr
    # refused from the estimate (a sample's memory per byte × the file's size), before reading
    assert "big.csv (38.1 MiB of CSV) needs about" in outcomes[100]


def test_running_out_while_reading_names_the_input_and_its_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "d.csv"
    path.write_text("a,b\n1,2\n")

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr("anoneval.core.data.kinds.read_frame", exhausted)
    with pytest.raises(DataError, match=r"d\.csv \(8 bytes of csv\) does not fit in memory"):
        load(path)


def test_a_measure_out_of_memory_is_its_own_error() -> None:
    frame = pd.DataFrame({"a": [1, 1, 2, 2]})
    report = evaluate(frame, frame, ["Hungry", {"name": "KAnonymity",
                                                "params": {"quasi_identifiers": ["a"]}}],
                      registry=registry_with(Hungry))
    error = report["Hungry"].error
    assert error is not None and error.startswith("MemoryError: Hungry ran out of memory")
    assert "3.2 TiB" in error
    assert report["KAnonymity"].error is None and report["KAnonymity"].value is not None


# -- devices, FIFOs, and very wide headers -----------------------------------------------------


def cli(tmp: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess, bounded in time: a blocking read fails the test, not hangs."""
    return subprocess.run([sys.executable, "-m", "anoneval", *args], cwd=tmp,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_devices_and_fifos_are_refused_naming_them(tmp_path: Path) -> None:
    done = cli(tmp_path, "run", "/dev/zero", "-o", "r.json")
    assert done.returncode == 2
    assert "config /dev/zero is a character device, not a regular file" in done.stderr
    os.mkfifo(tmp_path / "fifo.json")
    done = cli(tmp_path, "validate", "fifo.json")
    assert done.returncode == 2 and "fifo.json is a FIFO (named pipe)" in done.stderr
    cfg = config(tmp_path, "/dev/zero", format="csv")
    done = cli(tmp_path, "run", str(cfg), "-o", "r.json")
    assert done.returncode == 2
    assert "data file /dev/zero is a character device" in done.stderr
    os.mkfifo(tmp_path / "h.csv")
    (tmp_path / "d.csv").write_text("a\nx\ny\n")
    hier = tmp_path / "hc.json"
    hier.write_text(json.dumps({"original": {"path": "d.csv"}, "anonymized": {"path": "d.csv"},
                                "measures": [{"name": "NonUniformEntropy", "params": {
                                    "quasi_identifiers": ["a"],
                                    "hierarchies": {"a": "h.csv"}}}]}))
    done = cli(tmp_path, "run", str(hier), "-o", "r.json")
    # refused up front (a config check of the hierarchy paths) or as the measure's error
    said = (done.stderr if done.returncode == 2
            else json.loads((tmp_path / "r.json").read_text())["measures"][0]["error"])
    assert "hierarch" in said and "h.csv is a FIFO (named pipe), not a regular file" in said


def wide_csv(path: Path, n: int, repeat: bool) -> Path:
    names = [f"c{i % (n - 1) if repeat else i}" for i in range(n)]
    path.write_text(",".join(names) + "\n" + ",".join(["1"] * n) + "\n")
    return path


def test_a_header_of_100000_columns_is_read_in_seconds(tmp_path: Path) -> None:
    """The duplicate-column check was quadratic (20,000 columns took 30–50 s, 100,000 did not
    finish in 400 s); bounded here at 60 s in a subprocess, where it takes about one."""
    wide_csv(tmp_path / "wide.csv", 100_000, repeat=False)
    wide_csv(tmp_path / "dup.csv", 100_000, repeat=True)
    script = textwrap.dedent("""
        import time
        from anoneval.core.data.kinds import load
        from anoneval.core.errors import DataError
        start = time.perf_counter()
        print(len(load("wide.csv").columns))
        try:
            load("dup.csv")
        except DataError as exc:
            print(str(exc)[:80])
        print(time.perf_counter() - start)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    columns, error, _ = done.stdout.splitlines()
    assert columns == "100000"
    assert error.startswith("dup.csv: duplicate column name 'c0' in the header")
    # and a whole run over it (content hashes, value kinds, cell checks per column), ~4 s
    cfg = tmp_path / "w.json"
    cfg.write_text(json.dumps({"original": {"path": "wide.csv"}, "anonymized": {
        "path": "wide.csv"}, "measures": [{"name": "KAnonymity", "params": {
            "quasi_identifiers": ["c1", "c99999"]}}]}))
    done = cli(tmp_path, "run", "w.json", "-o", "r.json", timeout=90)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["measures"][0]["error"] is None


# -- strict JSON: configs, workflow configs, registry files ----------------------------------


def test_repeated_keys_in_a_config_are_refused_with_their_path(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("a\nx\n")
    cfg = tmp_path / "c.json"
    cfg.write_text('{"original": {"path": "d.csv"}, "measures": [{"name": "KAnonymity", '
                   '"params": {"quasi_identifiers": ["a"], "k": 2, "k": 200}}]}')
    with pytest.raises(ConfigError, match=r"key 'k' appears more than once in the object at "
                                          r"measures\[0\]\.params"):
        load_config(cfg)
    cfg.write_text('{"seed": 1, "seed": 2}')
    with pytest.raises(ConfigError, match="key 'seed' appears more than once in the "
                                          "top-level object"):
        load_config(cfg)


@pytest.mark.parametrize(("text", "message"), [
    ('{"seed": ' + "9" * 5000 + "}", "line 1, column 10: an integer of 5,000 digits; at most"),
    ('{\n "seed": NaN}', "line 2, column 10: NaN is not JSON"),
    ('{"seed": -Infinity}', "-Infinity is not JSON"),
    ('{"seed": 1e999}', "the number 1e999 is beyond the range of a float"),
    ('{"seed": [1, }', "invalid JSON at line 1, column 14"),
])
def test_config_numbers_json_cannot_hold_are_clear_errors(tmp_path: Path, text: str,
                                                          message: str, capsys) -> None:
    cfg = tmp_path / "c.json"
    cfg.write_text(text)
    assert main(["validate", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert f"config {cfg}: " in err and message in err and "Traceback" not in err


def test_strict_json_keeps_what_json_allows() -> None:
    value = {"a": [1, 2.5, None, True, {"b": "x", "c": -(10 ** (MAX_INT_DIGITS - 1))}],
             "d": {"a": 1}}  # the same key in different objects is fine
    assert loads(json.dumps(value), "t") == value
    with pytest.raises(DataError, match=r"key 'k' appears more than once in the object at "
                                        r"a\[1\]\.b"):
        loads('{"a": [1, {"b": {"k": 1, "k": 1}}]}', "t")


def test_a_registry_file_with_repeated_keys_is_refused(tmp_path: Path) -> None:
    reg = tmp_path / "reg.json"
    reg.write_text('{"measure": {"A": {"class": "x.py:A"}, "A": {"class": "y.py:A"}}}')
    with pytest.raises(PluginError, match=r"registry file .*reg\.json: key 'A' appears more "
                                          r"than once in the object at measure"):
        build_registry(entry_points=False, user_file=reg)


def test_a_workflow_config_with_repeated_keys_is_refused(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "a.json"
    cfg.write_text('{"workflow": "architecture", "workflow": "architecture"}')
    assert main(["architecture", str(cfg)]) == 2
    assert "key 'workflow' appears more than once" in capsys.readouterr().err


def test_read_helpers_drop_a_bom_and_name_the_file_when_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_json(path) == {"a": 1}
    path.write_bytes(b"ok\nbad \xe9\n")
    with pytest.raises(DataError, match=r"notes .*x\.json: not UTF-8 text \(invalid "
                                        r"continuation byte at byte 7, line 2\)"):
        read_text(path, "notes")


# -- hierarchies and separators ---------------------------------------------------------------


def test_hierarchy_with_a_bom_or_not_utf8(tmp_path: Path) -> None:
    from anoneval.plugins.microdata._common import load_hierarchy

    path = tmp_path / "h.csv"
    path.write_bytes("\ufeffMale;*\nFemale;*\n".encode())
    h = load_hierarchy(path, "*")
    assert list(h.rows) == ["Male", "Female"]
    odd = tmp_path / "odd.csv"
    odd.write_text("a\u2028b;x;*\r\nc\x1cd;x;*\n", newline="")
    assert list(load_hierarchy(odd, "*").rows) == ["a\u2028b", "c\x1cd"]
    latin = tmp_path / "latin.csv"
    latin.write_bytes("Zürich;CH\nGenève;CH\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"hierarchy .*latin\.csv: not UTF-8 text .* line 1"):
        load_hierarchy(latin, "*")


def test_slash_separated_files_are_sniffed(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("a/b/c\n1/x/3\n4/y/6\n")
    assert sniff_separator(path) == "/"
    assert list(load(path).frame.columns) == ["a", "b", "c"]
    # a comma file with slashes in its dates is still read with commas
    dates = tmp_path / "t.csv"
    dates.write_text("id,when\n1,2020/01/02\n2,2021/03/04\n")
    assert sniff_separator(dates) == ","
    from anoneval.plugins.microdata._common import load_hierarchy

    hier = tmp_path / "h.csv"
    hier.write_text("a/x/*\nb/x/*\n")
    assert load_hierarchy(hier, "*").height == 2


def test_an_ambiguous_separator_is_named_in_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "amb.csv"
    path.write_text("a;b,c\n1;2,3\n")  # ';' and ',' both split every line in two
    assert separators_fitting(path.read_text().splitlines(keepends=True)) == {",": 2, ";": 2}
    with pytest.warns(UserWarning, match=r"amb\.csv: read with separator ',' \(2 fields\), "
                                         r"sniffed from the file; ';' \(2 fields\) would also"):
        data = load(path)
    assert list(data.frame.columns) == ["a;b", "c"]


def test_the_cli_shows_the_separator_warning_as_one_line(tmp_path: Path) -> None:
    (tmp_path / "amb.csv").write_text("a;b,c\n1;2,3\n2;2,3\n")
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"original": {"path": "amb.csv"}, "measures": [
        {"name": "KAnonymity", "params": {"quasi_identifiers": ["c"]}}]}))
    done = cli(tmp_path, "run", "c.json", "-o", "r.json")
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("warning: amb.csv: read with separator ','")
    assert "UserWarning" not in done.stderr and "_sniffed(" not in done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_inside_a_dataset_folder_or_glob_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text("a\n1\n")
    os.mkfifo(folder / "b.csv")
    for given in (folder, str(folder / "*.csv")):
        with pytest.raises(DataError, match=r"b\.csv is a FIFO \(named pipe\)"):
            load(given)


def test_a_missing_column_of_a_wide_file_lists_a_bounded_number(tmp_path: Path) -> None:
    data = load(wide_csv(tmp_path / "w.csv", 5000, repeat=False))
    with pytest.raises(DataError, match=r"column 'zz' not in the microdata .*c99 and 4,900 "
                                        r"more$") as err:
        data.require(["zz"])
    assert "c100," not in str(err.value)


def test_an_overlong_integer_in_json_lines_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"a": 1}\n{"a": ' + "9" * 5000 + "}\n")
    if not hasattr(sys, "set_int_max_str_digits"):  # no limit (Python 3.10 before 3.10.7)
        assert load(path).frame["a"].iloc[1] == int("9" * 5000)
        return
    with pytest.raises(DataError, match=r"d\.jsonl: line 2: Exceeds the limit"):
        load(path)


def test_value_kinds_from_dtypes_match_the_inferred_ones() -> None:
    from anoneval.core.api import Microdata
    from anoneval.core.data.kinds import _value_kind

    frame = pd.DataFrame({"i": [1, 2], "u": np.array([1, 2], np.uint8), "f": [np.nan, np.nan],
                          "g": np.array([1.5, 2], np.float32), "b": [True, False],
                          "t": ["a", "b"], "m": [1, "a"]})
    kinds = Microdata(frame).value_kinds()
    assert kinds == {c: _value_kind(frame[c]) for c in frame.columns}
    assert kinds["f"] == "number" and kinds["b"] == "bool" and kinds["m"] == "mixed"


def test_json_files_are_read_up_to_a_size(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"a": "' + "x" * 100 + '"}')
    assert read_json(path, "config", max_bytes=200) == {"a": "x" * 100}
    with pytest.raises(DataError, match=r"config .*big\.json is 109 bytes; at most 100 are"):
        read_json(path, "config", max_bytes=100)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_swapped_in_after_the_check_does_not_block(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The descriptor is opened without blocking and checked itself (no check-then-open race)."""
    os.mkfifo(tmp_path / "late.json")
    monkeypatch.setattr("anoneval.core.data.files.regular_file", lambda path, what: None)
    with pytest.raises(DataError, match=r"late\.json is a FIFO \(named pipe\)"):
        read_text(tmp_path / "late.json", "config")


def test_cgroup_memory_limits_are_read(tmp_path: Path) -> None:
    from anoneval.core.data.memory import _cgroup_room

    proc = tmp_path / "cgroup"
    proc.write_text("0::/user.slice/run.scope\n")
    group = tmp_path / "sys" / "user.slice" / "run.scope"
    group.mkdir(parents=True)
    (group / "memory.max").write_text("1073741824\n")
    (group / "memory.current").write_text("73741824\n")
    assert _cgroup_room(proc, tmp_path / "sys") == 10**9
    (group / "memory.max").write_text("max\n")  # no limit
    assert _cgroup_room(proc, tmp_path / "sys") is None
    proc.write_text("12:cpu,cpuacct:/x\n4:memory:/job\n")
    v1 = tmp_path / "sys" / "memory" / "job"
    v1.mkdir(parents=True)
    (v1 / "memory.limit_in_bytes").write_text(str(2 * 10**9))
    (v1 / "memory.usage_in_bytes").write_text(str(5 * 10**8))
    assert _cgroup_room(proc, tmp_path / "sys") == 15 * 10**8
    (v1 / "memory.limit_in_bytes").write_text(str(2**63 - 4096))  # v1's "unlimited"
    assert _cgroup_room(proc, tmp_path / "sys") is None
    assert _cgroup_room(tmp_path / "missing", tmp_path / "sys") is None
