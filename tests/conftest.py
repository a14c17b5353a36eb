"""Shared fixtures: paths to the shipped example data."""

from __future__ import annotations

from pathlib import Path

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
                                  host="127.0.0.1", dashboard_address=":0") as cl, \
            distributed.Client(cl, set_as_default=False) as client:
        yield client


@pytest.fixture
def toy_registry():
    """Built-ins plus the toy plugins of ``_toy_plugins``; no entry points."""
    from _toy_plugins import TOYS

    from anoneval.registry import build_registry

    registry = build_registry(entry_points=False)
    for cls in TOYS:
        registry.register(cls, source="tests")
    return registry


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "entry_points: the test loads installed third-party plugins (entry points)")


@pytest.fixture(autouse=True)
def _no_third_party_plugins(request: pytest.FixtureRequest,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Registries in tests hold the built-ins only, whatever anoneval plugins are installed
    (subprocesses inherit this); a test marked ``entry_points`` loads installed plugins."""
    from anoneval.registry import ENV_LOAD_PLUGINS

    if request.node.get_closest_marker("entry_points") is None:
        monkeypatch.setenv(ENV_LOAD_PLUGINS, "")
    else:
        monkeypatch.delenv(ENV_LOAD_PLUGINS, raising=False)
