"""MILeakage against dit (the information-theory package), an independent oracle.

The joint distribution of the category C and its randomized report C' is built here from the
mechanisms' definitions (Aditya & Škorić 2019; Wang et al. 2017) and handed to dit, whose
mutual information I(C;C') (bits) must equal the plugin's analytic value.
"""

from __future__ import annotations

import itertools
import sys

import numpy as np
import pytest

if sys.version_info < (3, 11):  # pragma: no cover - the test extra has no dit there
    pytest.skip("dit (the oracle) needs pycddlib, which has no Python 3.10 build; the test "
                "extra installs dit on 3.11+ only", allow_module_level=True)

from anoneval.core import evaluate


def leakage(**params: object) -> float:
    report = evaluate(None, None, [{"name": "MILeakage", "params": params}])
    entry = report.measures[0]
    assert entry.error is None, entry.error
    assert entry.value is not None
    return entry.value


def dit_mi(outcomes: list[tuple[int, ...]], pmf: list[float]) -> float:
    import dit  # here, not at the top: its import (sympy) would cost every test worker

    d = dit.Distribution(outcomes, pmf)
    return float(dit.shannon.mutual_information(d, [0], [1]))


@pytest.mark.parametrize("m", range(2, 7))
@pytest.mark.parametrize("gamma", [0.0, 0.2, 0.5, 0.9, 1.0])
def test_direct_with_a_skewed_prior(m: int, gamma: float) -> None:
    prior = np.arange(1, m + 1) / (m * (m + 1) / 2)
    outcomes, pmf = [], []
    for c, r in itertools.product(range(m), repeat=2):
        stay = gamma if r == c else (1 - gamma) / (m - 1)
        outcomes.append((c, r))
        pmf.append(prior[c] * stay)
    expected = dit_mi(outcomes, pmf)
    got = leakage(mechanism="direct", gamma=gamma, categories=m, prior=prior.tolist())
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("m", range(2, 7))
@pytest.mark.parametrize("beta", [0.0, 0.1, 0.3, 0.5])
def test_unary_with_a_uniform_prior(m: int, beta: float) -> None:
    outcomes, pmf = [], []
    for c in range(m):
        for bits in itertools.product((0, 1), repeat=m):
            p = 1.0
            for i, b in enumerate(bits):
                one = 1 - beta if i == c else beta  # the true bit stays with prob. 1 - beta
                p *= one if b else 1 - one
            outcomes.append((c, int("".join(map(str, bits)), 2)))
            pmf.append(p / m)
    expected = dit_mi(outcomes, pmf)
    assert leakage(mechanism="unary", beta=beta, categories=m) == pytest.approx(expected,
                                                                                abs=1e-12)
