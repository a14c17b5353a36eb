"""EnergyStatistic's multi-block path (samples larger than one distance block) against dcor."""

from __future__ import annotations

import dcor
import numpy as np
import pytest

from anoneval.plugins.fidelity.energy_statistic import BLOCK, energy_statistic


def test_multi_block_statistic_agrees_with_dcor() -> None:
    # x spans two distance blocks (and y a third): the blockwise sums must still be exact
    rng = np.random.default_rng(11)
    n, m = BLOCK + 100, 150
    x = rng.normal(size=(n, 3))
    y = rng.normal(0.1, 1.1, size=(m, 3))
    ref = float(dcor.homogeneity.energy_test_statistic(x, y))
    assert energy_statistic(x, y).statistic == pytest.approx(ref, rel=1e-9)
