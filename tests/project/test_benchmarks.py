"""The benchmark scripts import and define ``main`` (a renamed helper must not break one
unnoticed; ``.ci/run`` also runs each with ``--quick``), and their harness warms up, interleaves
and measures a child's own memory as docs/scaling.md says (no timing is asserted)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(p.stem for p in BENCHMARKS.glob("bench_*.py"))
#: Peers a benchmark imports that the test extra installs on some Pythons only (pyproject).
PEERS_NOT_EVERYWHERE = {"pycanon", "dit"}


@pytest.mark.parametrize("name", SCRIPTS)
def test_benchmark_imports(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # as when the script is run
    try:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name not in PEERS_NOT_EVERYWHERE:
                raise
            pytest.skip(f"{name} measures {exc.name} beside anoneval, and the test extra has "
                        f"no {exc.name} build for this Python")
        assert callable(module.main)
        assert module.__doc__ and "--quick" in Path(module.__file__).read_text()
    finally:  # the scripts and their helpers are not left behind for other tests
        scripts = (str(BENCHMARKS), str(ROOT / "examples"))
        for key, mod in list(sys.modules.items()):
            if (getattr(mod, "__file__", None) or "").startswith(scripts):
                del sys.modules[key]


@pytest.fixture
def common(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """``benchmarks/_common.py``, the harness, imported as the scripts import it."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    try:
        yield importlib.import_module("_common")
    finally:
        for key, mod in list(sys.modules.items()):
            if (getattr(mod, "__file__", None) or "").startswith(str(BENCHMARKS)):
                del sys.modules[key]


def test_harness_warms_up_and_alternates_the_sides(common) -> None:  # type: ignore[no-untyped-def]
    calls: list[tuple[str, object]] = []
    made = iter(range(100))

    def fresh() -> tuple[int]:
        return (next(made),)
    c = common.interleaved(lambda a: calls.append(("ours", a)),
                           lambda a: calls.append(("peer", a)), 4, fresh)
    # one untimed warm-up call per side, then rounds alternating which side goes first
    assert [s for s, _ in calls] == ["ours", "peer", "ours", "peer", "peer", "ours", "ours",
                                     "peer", "peer", "ours"]
    assert [a for _, a in calls] == list(range(10))  # fresh inputs for every call
    assert len(c.ours) == len(c.peer) == len(c.ours_cpu) == len(c.peer_cpu) == 4
    assert c.ratios == [o / p for o, p in zip(c.ours, c.peer, strict=True)]

    calls.clear()
    common.interleaved(lambda: calls.append("ours"), lambda: calls.append("peer"), 1,
                       warm_up=False)
    assert calls == ["ours", "peer"]


def test_harness_ratio_line_and_verdict(common, capsys) -> None:  # type: ignore[no-untyped-def]
    c = common.Comparison("case", [1.0, 3.0, 2.0], [4.0, 4.0, 4.0], [1.0] * 3, [2.0] * 3)
    assert c.ratios == [0.25, 0.75, 0.5] and c.median_ratio == 0.5
    common.show(c, "pandas", target=0.4)
    out = capsys.readouterr().out
    assert "ratio    0.25 /     0.5 /    0.75 (cpu     0.5)" in out and "FAIL" in out
    assert common.verdict(0.5, 0.5).endswith("PASS")
    assert common.verdict(4.0, 5.0, at_most=False).endswith("FAIL")
    assert common.verdict(1.0, None) == ""


def test_peak_rss_is_the_childs_own(common) -> None:  # type: ignore[no-untyped-def]
    """A child's peak counts its own memory, not the (larger) benchmark process's."""
    ballast = bytearray(300 * 2**20)  # this process: > 300 MiB resident
    ballast[:: 4096] = b"x" * len(ballast[:: 4096])
    small = common.peak_rss([sys.executable, "-c", "pass"])
    big = common.peak_rss([sys.executable, "-c", "b = bytearray(200 * 2**20); "
                                                 "b[::4096] = b'x' * len(b[::4096])"])
    assert small.rss < 100 * 2**20
    assert 200 * 2**20 < big.rss < 300 * 2**20
    assert small.wall > 0 and big.cpu > 0
    with pytest.raises(RuntimeError, match="failed"):
        common.peak_rss([sys.executable, "-c", "raise SystemExit(2)"])


def test_fixed_cost_memory_files_hold_the_same_records_in_both_formats(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Part 3 of bench_fixed_cost compares CSV with Parquet: the two must be the same data."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import pandas as pd
    try:
        bench = importlib.import_module("bench_fixed_cost")
    except ModuleNotFoundError as exc:
        if exc.name not in PEERS_NOT_EVERYWHERE:
            raise
        pytest.skip(f"bench_fixed_cost imports {exc.name}, not installed on this Python")
    try:
        (tmp_path / "p").mkdir()
        (tmp_path / "c").mkdir()
        po, pr, qi = bench.memory_files(2_000, tmp_path / "p", "parquet")
        co, cr, qi2 = bench.memory_files(2_000, tmp_path / "c", "csv")
        assert qi == qi2 and po.suffix == ".parquet" and co.suffix == ".csv"
        pd.testing.assert_frame_equal(pd.read_parquet(po), pd.read_csv(co))
        released = pd.read_csv(cr)
        pd.testing.assert_frame_equal(pd.read_parquet(pr), released)
        assert (released[qi] == "*").all(axis=1).any()  # some classes were suppressed
    finally:
        for key, mod in list(sys.modules.items()):
            if (getattr(mod, "__file__", None) or "").startswith(str(BENCHMARKS)):
                del sys.modules[key]


@pytest.fixture
def remote(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """``benchmarks/_remote.py``, the persistent peer helper, imported as the scripts do."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    try:
        yield importlib.import_module("_remote")
    finally:
        for key, mod in list(sys.modules.items()):
            if (getattr(mod, "__file__", None) or "").startswith(str(BENCHMARKS)):
                del sys.modules[key]


#: A tiny Python peer: loads its "data" (a number given on the command line) once, then serves.
CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
from _remote import serve
base = int(sys.argv[2])
print("chatter on stdout is ignored")

def spin(n):
    t = time.process_time()
    while time.process_time() - t < float(n):
        pass
    return {"base": base, "spun": float(n)}

def fail():
    raise ValueError("no such\\nthing")

serve({"spin": spin, "fail": fail, "sleep": lambda s: time.sleep(float(s)),
       "crash": lambda: sys.exit(3)})
"""


def test_remote_peer_reports_the_childs_own_times_and_results(remote, common, tmp_path
                                                              ) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "peer.py"
    script.write_text(CHILD)
    argv = [sys.executable, str(script), str(BENCHMARKS), "7"]
    with remote.RemotePeer(argv, timeout=60, name="tiny") as peer:
        got = peer.run("spin", 0.2)
        assert got.value == {"base": 7, "spun": 0.2}  # the JSON result, the data loaded once
        assert 0.2 <= got.cpu < 1.0 and got.wall >= got.cpu * 0.5
        # the harness takes the child's own times: this process spends almost no CPU waiting
        c = common.interleaved(lambda: None, peer.op("spin", 0.1), 2)
        assert all(0.1 <= cpu < 1.0 for cpu in c.peer_cpu)
        assert all(cpu < 0.05 for cpu in c.ours_cpu)
        with pytest.raises(remote.PeerError, match="ValueError: no such thing"):
            peer.run("fail")
        with pytest.raises(remote.PeerError, match="unknown operation 'nope'; known: crash"):
            peer.run("nope")
        assert peer.run("spin", 0).value["base"] == 7  # still serving after errors
        with pytest.raises(ValueError, match="tab or newline"):
            peer.run("spin", "1\t2")
        with pytest.raises(remote.PeerError, match="ended"):
            peer.run("crash")
    with remote.RemotePeer(argv, timeout=60, name="tiny") as peer:
        with pytest.raises(remote.PeerError, match=r"no answer within 0\.2 s"):
            peer.run("sleep", 30, timeout=0.2)
        assert peer._proc.poll() is not None  # killed, not left behind


def test_remote_peer_that_cannot_start_says_why(remote, tmp_path) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "bad.py"
    script.write_text("import sys\nsys.stderr.write('library xyz is missing\\n')\nsys.exit(1)\n")
    with pytest.raises(remote.PeerError, match=r"(?s)exit status 1.*library xyz is missing"):
        remote.RemotePeer([sys.executable, str(script)], timeout=60, name="bad")


def test_harness_takes_measured_times_from_a_self_timed_side(remote, common) -> None:  # type: ignore[no-untyped-def]
    c = common.interleaved(lambda: remote.Measured(5.0, 4.0), lambda: remote.Measured(2.0, 1.0),
                           3)
    assert c.ours == [5.0] * 3 and c.ours_cpu == [4.0] * 3
    assert c.peer == [2.0] * 3 and c.peer_cpu == [1.0] * 3 and c.median_ratio == 2.5


def test_r_peer_without_rscript_says_so(remote, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(remote.shutil, "which", lambda name: None)
    assert remote.start_r_peer("serve(list())", [], tmp_path, name="x") == \
        "no Rscript on this machine"
