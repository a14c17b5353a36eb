"""Shared fixtures: paths to the shipped example data, the adult benchmark's variants."""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "examples" / "data"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """``examples/data``: adult/ (ARX extract + hierarchies) and mobility/ (anonymizer fixtures)."""
    return DATA


@pytest.fixture(scope="session")
def cluster():
    """A ``distributed.Client`` of a LocalCluster (2 single-threaded worker processes), shared
    by the tests that need a real cluster but not a fresh one."""
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address="127.0.0.1:0") as cl, \
            distributed.Client(cl, set_as_default=False) as client:
        yield client


@pytest.fixture(scope="session")
def make_adult_variants() -> ModuleType:
    """``examples/make_adult_variants.py`` as a module."""
    spec = importlib.util.spec_from_file_location("make_adult_variants",
                                                  ROOT / "examples" / "make_adult_variants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def adult_variants(make_adult_variants: ModuleType,
                   tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The adult variants of ``make_adult_variants.py`` (and its ``variants.json``), generated
    once per session into a folder that tests only read."""
    folder = tmp_path_factory.mktemp("adult_variants")
    make_adult_variants.main(["--out", str(folder)])
    return folder


@pytest.fixture(scope="session")
def adult_benchmark(adult_variants: Path) -> Callable[[Path], Path]:
    """Writes ``examples/benchmark_adult.json`` into a folder, on the generated
    :func:`adult_variants`, with every path absolute and the output ``report.json`` there;
    returns the config's path."""

    def write(folder: Path) -> Path:
        raw = json.loads((ROOT / "examples" / "benchmark_adult.json").read_text())
        raw["original"]["path"] = str(ROOT / "examples" / raw["original"]["path"])
        for v in raw["anonymized"]:
            v["path"] = str(adult_variants / Path(v["path"]).name)
        params = [m["params"] for m in raw["measures"] if isinstance(m, dict) and "params" in m]
        for p in [*params, raw.get("defaults", {})]:
            for col, path in p.get("hierarchies", {}).items():
                p["hierarchies"][col] = str(ROOT / "examples" / path)
        raw["output"] = str(folder / "report.json")
        (folder / "benchmark_adult.json").write_text(json.dumps(raw))
        return folder / "benchmark_adult.json"

    return write


@pytest.fixture
def toy_registry():
    """Built-ins plus the toy plugins of ``_toy_plugins``; no entry points."""
    from _toy_plugins import TOYS, registry_with

    return registry_with(*TOYS)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "entry_points: the test loads installed third-party plugins (entry points)")
    # registries in tests, including those built while test modules are imported, hold the
    # built-ins only, whatever anoneval plugins are installed (subprocesses inherit this)
    from anoneval.registry import ENV_LOAD_PLUGINS

    os.environ[ENV_LOAD_PLUGINS] = ""


@pytest.fixture(autouse=True)
def _installed_plugins_when_marked(request: pytest.FixtureRequest,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A test marked ``entry_points`` loads the installed plugins (for its duration)."""
    from anoneval.registry import ENV_LOAD_PLUGINS

    if request.node.get_closest_marker("entry_points") is not None:
        monkeypatch.delenv(ENV_LOAD_PLUGINS, raising=False)
