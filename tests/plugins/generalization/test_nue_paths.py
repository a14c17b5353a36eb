"""NonUniformEntropy's two paths agree on any data: ``compute`` (each side's classes per
column, paired by their codes) and the pair tables of blocks of paired records (``partial``,
``combine``, ``finalize``: the Dask engine's path), by row order or by ``id`` with deleted
records, a token that is also a released value, text and numbers, and missing values either
way."""

from __future__ import annotations

import itertools
from typing import Any

import pandas as pd
from _close import close
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core.api import Context, Microdata, pair_datasets
from anoneval.plugins.generalization.nonuniform_entropy import NonUniformEntropy


@st.composite
def releases(draw: Any) -> tuple[pd.DataFrame, pd.DataFrame, list[int]]:
    n = draw(st.integers(1, 40))
    # "a" text (the token among its released values), "b" numbers (float with missing ones)
    raw = {"a": draw(st.lists(st.sampled_from(["1", "2", "3", None]), min_size=n, max_size=n)),
           "b": draw(st.lists(st.sampled_from([1, 2, 3, None]), min_size=n, max_size=n))}
    released = {
        "a": draw(st.lists(st.sampled_from(["1", "2", "3", "*", None]), min_size=n, max_size=n)),
        "b": draw(st.lists(st.sampled_from([1, 2, 3, None]), min_size=n, max_size=n))}
    original = pd.DataFrame({"id": range(n), **raw})
    release = pd.DataFrame({"id": range(n), **released})
    cuts = sorted(set(draw(st.lists(st.integers(1, max(n - 1, 1)), max_size=3))) - {n})
    return original, release, cuts


@settings(max_examples=60, deadline=None)
@given(case=releases(), by_id=st.booleans(), missing=st.sampled_from(["value", "suppressed"]),
       order=st.randoms(use_true_random=False), kept=st.floats(0.3, 1.0))
def test_compute_equals_the_pair_tables_of_blocks(case, by_id, missing, order, kept):
    original, release, cuts = case
    params: dict[str, Any] = {"quasi_identifiers": ["a", "b"], "missing": missing}
    if by_id:  # the release shuffled, some of its records deleted
        rows = list(range(len(release)))
        order.shuffle(rows)
        release = release.iloc[rows[:max(1, round(kept * len(rows)))]]
        params["id"] = "id"
    m = NonUniformEntropy(**params)
    ctx = Context()
    whole = m.compute(Microdata(original), Microdata(release), ctx)
    frame = pair_datasets(Microdata(original), Microdata(release), m.columns(), params.get("id"))
    parts = [m.partial(frame.iloc[lo:hi], Context())
             for lo, hi in itertools.pairwise([0, *cuts, len(frame)]) if hi > lo]
    blocks = Context()
    got = m.finalize(m.combine(parts), blocks)
    assert close(whole.value, got.value), (whole.value, got.value)
    assert close(whole.details, got.details)
    assert ctx.warnings == blocks.warnings
    assert whole.details["records"] == len(original)
