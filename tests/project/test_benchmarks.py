"""The benchmark scripts import and define ``main``: a renamed helper must not break one
unnoticed (``.ci/run`` also runs each with ``--quick``)."""

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
