"""Linkability attack: two halves of an original record linked through a released record."""

from __future__ import annotations

import numpy as np
from pydantic import Field, field_validator

from anoneval.core.api import Context, DataError, Dataset, MeasureResult, repeated
from anoneval.plugins._shared.mixed import encode, nearest
from anoneval.plugins.attacks._common import AttackParams, TargetedAttack


def linked(idx_a: np.ndarray, idx_b: np.ndarray) -> np.ndarray:
    """Whether each row's two neighbour sets share a released record."""
    return (idx_a[:, :, None] == idx_b[:, None, :]).any(axis=(1, 2))


class Linkability(TargetedAttack):
    """Linkability risk: an attacker holding two disjoint sets of attributes of a person links
    them through the release (Giomi et al. 2023, anonymeter; Article 29 Working Party opinion
    05/2014).

    ``n_attacks`` target records are drawn from the original (main) and from the control set
    (control). For each target, the ``n_neighbors`` nearest released records on the first list
    of ``aux_cols`` and those on the second list are found; the target is linked when the two
    sets share a released record. The naive baseline draws both sets uniformly at random.
    Distance: anonymeter's mixed-type distance, the sum over columns of |x − y| / R for numbers
    (R the range over the targets and the release; a constant column compares as a category)
    and 0/1 for categories (:mod:`anoneval.plugins._shared.mixed`). Missing values: 0 when
    both are missing, 1 when one is (anonymeter adds 1 when both are missing). Ties among
    equally distant released records are broken at random, independently for the two halves
    (anonymeter's quicksort order favours neither consistently). See
    :mod:`anoneval.plugins.attacks._common` for the rates and the risk.
    """

    name = "Linkability"
    description = "Linkability attack risk (anonymeter): two attribute sets of a person "\
                  "linked through a released record, above the control set's rate."

    class Params(AttackParams):
        aux_cols: list[list[str]] = Field(
            min_length=2, max_length=2,
            description="Two disjoint lists of columns, the two auxiliary data sets an attacker "
                        'holds, e.g. [["age", "sex"], ["zip", "job"]].')
        n_neighbors: int = Field(1, ge=1, description="Released records taken per half.")

        @field_validator("aux_cols")
        @classmethod
        def _disjoint(cls, v: list[list[str]]) -> list[list[str]]:
            a, b = v
            if not a or not b:
                raise ValueError("both aux_cols lists need at least one column")
            both = sorted(set(a) & set(b))
            if both:
                raise ValueError(f"the two aux_cols lists overlap in {both}")
            dup = repeated([*a, *b])
            if dup:
                raise ValueError(f"columns listed twice in aux_cols: {dup}")
            return v

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        cols_a, cols_b = p.aux_cols
        rng = ctx.rng(2)
        ori, syn, ctl, t_ori, t_ctl = self.targets(original, anonymized, ctx.control,
                                                   [*cols_a, *cols_b], rng)
        if p.n_neighbors > len(syn):
            raise DataError(f"n_neighbors = {p.n_neighbors} exceeds the {len(syn)} released "
                            "records")
        order_a, order_b = rng.permutation(len(syn)), rng.permutation(len(syn))
        hits = {}
        with ctx.progress(4, f"{self.name} (neighbour searches)") as bar:
            for role, targets in (("main", ori.iloc[t_ori]), ("control", ctl.iloc[t_ctl])):
                found = []
                for cols, order in ((cols_a, order_a), (cols_b, order_b)):
                    (enc_t, enc_s), _, _ = encode([targets, syn], cols)
                    found.append(nearest(enc_t, enc_s, p.n_neighbors, order=order)[0])
                    bar.update(1)
                hits[role] = linked(*found)
        k = p.n_neighbors
        base = linked(rng.integers(0, len(syn), size=(len(t_ori), k)),
                      rng.integers(0, len(syn), size=(len(t_ori), k)))
        return self.result(hits["main"], base, hits["control"],
                           {"n_neighbors": k, "aux_cols": [cols_a, cols_b]})
