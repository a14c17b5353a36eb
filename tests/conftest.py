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


@pytest.fixture
def toy_registry():
    """Built-ins plus the toy plugins of ``_toy_plugins``; no entry points."""
    from _toy_plugins import TOYS

    from anoneval.registry import build_registry

    registry = build_registry(entry_points=False)
    for cls in TOYS:
        registry.register(cls, source="tests")
    return registry
