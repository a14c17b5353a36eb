"""Correct attribution probability (CAP): the share of a person's sensitive value among the
released records that share (or are nearest to) their key values, exact and vectorised."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator
from scipy import sparse

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    IntervalParams,
    MeasureResult,
    Microdata,
    Params,
    RiskMeasure,
    bootstrap_indices,
    percentile_interval,
    repeated,
)

Variant = Literal["cap", "zero_cap", "generalized_cap"]

#: Cells of one block of the key × key Hamming-distance matrix of the generalized CAP.
BLOCK_CELLS = 1 << 22
#: Relative cost of a join row against one key-pair comparison of the Hamming matrix (the
#: generalized CAP picks the cheaper of the two per level; a test forces either).
JOIN_COST = 50.0
#: Bootstrap replicates resampled at once (bounds the index matrix to this × rows).
BOOT_CHUNK = 16


def _codes(frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> list[np.ndarray]:
    """One integer code per row and combination of ``columns``, shared by the frames; a
    missing value is a value of its own (every missing value equal to every other)."""
    both = pd.concat([f[list(columns)] for f in frames], ignore_index=True)
    group = np.zeros(len(both), dtype=np.int64)
    for c in columns:
        codes, uniques = pd.factorize(both[c], use_na_sentinel=False)
        group = group * (len(uniques) + 1) + codes
        group = pd.factorize(group)[0].astype(np.int64)  # compact: never overflows
    out, start = [], 0
    for f in frames:
        out.append(group[start:start + len(f)])
        start += len(f)
    return out


def _column_codes(frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> list[np.ndarray]:
    """Per-column codes (rows × columns), shared by the frames, missing a value of its own."""
    both = pd.concat([f[list(columns)] for f in frames], ignore_index=True)
    mat = np.column_stack([pd.factorize(both[c], use_na_sentinel=False)[0] for c in columns])
    out, start = [], 0
    for f in frames:
        out.append(mat[start:start + len(f)])
        start += len(f)
    return out


def cap_scores(real: pd.DataFrame, released: pd.DataFrame, key_fields: Sequence[str],
               sensitive_fields: Sequence[str], variant: Variant) -> np.ndarray:
    """Each real record's CAP: among the released records with its key (``generalized_cap``:
    with the keys nearest to it in Hamming distance, pooled), the share holding its sensitive
    values. A record whose key no released record has gets NaN (``cap``: not counted) or 0
    (``zero_cap``)."""
    key_r, key_s = _codes([real, released], key_fields)
    sen_r, sen_s = _codes([real, released], sensitive_fields)
    n_keys = int(max(key_r.max(initial=-1), key_s.max(initial=-1))) + 1
    n_sen = int(max(sen_r.max(initial=-1), sen_s.max(initial=-1))) + 1
    per_key = np.bincount(key_s, minlength=n_keys)
    pair_s = key_s * n_sen + sen_s
    pairs, pair_counts = np.unique(pair_s, return_counts=True)
    pair_r = key_r * n_sen + sen_r
    pos = np.minimum(np.searchsorted(pairs, pair_r), len(pairs) - 1)
    hits = np.where(pairs[pos] == pair_r, pair_counts[pos], 0)
    denom = per_key[key_r]
    seen = denom > 0
    scores = np.full(len(real), np.nan)
    scores[seen] = hits[seen] / denom[seen]
    if variant == "zero_cap":
        scores[~seen] = 0.0
    elif variant == "generalized_cap" and not seen.all():
        scores[~seen] = _generalized(real.loc[~seen], released, key_fields, sensitive_fields)
    return scores


def _combine(mat: np.ndarray) -> np.ndarray:
    """One compact code per row of the integer code matrix ``mat`` (equal rows, equal codes)."""
    group = np.zeros(len(mat), dtype=np.int64)
    for j in range(mat.shape[1]):
        group = group * (int(mat[:, j].max(initial=0)) + 1) + mat[:, j]
        group = pd.factorize(group)[0].astype(np.int64)
    return group


def _generalized(real: pd.DataFrame, released: pd.DataFrame, key_fields: Sequence[str],
                 sensitive_fields: Sequence[str]) -> np.ndarray:
    """CAP of real records whose key the release lacks, over the released keys at the least
    Hamming distance (every released record of every such key pooled, as SDMetrics'
    GeneralizedCAPAttacker does).

    Level by level, d = 1, 2, ...: a released key at distance d differs from the real key in
    exactly one set S of d key columns, so the released records at distance ≤ d are counted
    by joining on the other columns, once per S (C(K, d) joins); a real record with a count
    at level d (its least distance) is resolved. When the joins of a level would cost more
    than comparing the remaining distinct keys pairwise, the rest goes to the blockwise
    Hamming-distance matrix (:func:`_generalized_matrix`)."""
    cols_r, cols_s = _column_codes([real, released], key_fields)
    sen_r, sen_s = _codes([real, released], sensitive_fields)
    n_sen = int(max(sen_r.max(initial=-1), sen_s.max(initial=-1))) + 1
    n_cols = cols_r.shape[1]
    num, den = np.zeros(len(real)), np.zeros(len(real))
    todo = np.arange(len(real))
    n_keys_s = len(np.unique(_combine(cols_s)))
    for d in range(1, n_cols + 1):
        subsets = list(combinations(range(n_cols), d))
        n_keys_r = len(np.unique(_combine(cols_r[todo])))
        if len(subsets) * (len(todo) + len(cols_s)) * JOIN_COST > n_keys_r * n_keys_s * n_cols:
            num[todo] = _generalized_matrix(cols_r[todo], sen_r[todo], cols_s, sen_s, n_sen)
            den[todo] = 1.0
            break
        for cut in subsets:
            keep = [j for j in range(n_cols) if j not in cut]
            group = _combine(np.vstack([cols_s[:, keep], cols_r[todo][:, keep]]))
            g_s, g_r = group[:len(cols_s)], group[len(cols_s):]
            per_group = np.bincount(g_s, minlength=int(group.max(initial=0)) + 1)
            pairs, counts = np.unique(g_s * n_sen + sen_s, return_counts=True)
            pair_r = g_r * n_sen + sen_r[todo]
            pos = np.minimum(np.searchsorted(pairs, pair_r), len(pairs) - 1)
            num[todo] += np.where(pairs[pos] == pair_r, counts[pos], 0)
            den[todo] += per_group[g_r]
        todo = todo[den[todo] == 0]
        if len(todo) == 0:
            break
    return num / den


def _generalized_matrix(cols_r: np.ndarray, sen_r: np.ndarray, cols_s: np.ndarray,
                        sen_s: np.ndarray, n_sen: int) -> np.ndarray:
    """The generalized CAP of the real records (key codes ``cols_r``, sensitive codes
    ``sen_r``) from the Hamming distances of their distinct keys to the released distinct
    keys, blockwise (a block holds :data:`BLOCK_CELLS` distances)."""
    keys_s, key_of_s = np.unique(cols_s, axis=0, return_inverse=True)
    key_of_s = key_of_s.ravel()
    keys_r, key_of_r = np.unique(cols_r, axis=0, return_inverse=True)
    key_of_r = key_of_r.ravel()
    # released records per (distinct key, sensitive value) and per distinct key
    counts = sparse.csr_matrix((np.ones(len(sen_s)), (key_of_s, sen_s)),
                               shape=(len(keys_s), n_sen))
    per_key = np.bincount(key_of_s, minlength=len(keys_s)).astype(float)
    out = np.empty(len(cols_r))
    order = np.argsort(key_of_r, kind="stable")  # records grouped by their distinct key
    bounds = np.searchsorted(key_of_r[order], np.arange(len(keys_r) + 1))
    step = max(1, BLOCK_CELLS // max(len(keys_s), 1))
    for start in range(0, len(keys_r), step):
        block = keys_r[start:start + step]
        dist = np.zeros((len(block), len(keys_s)), dtype=np.int32)
        for j in range(keys_s.shape[1]):
            dist += block[:, j, None] != keys_s[None, :, j]
        mask = sparse.csr_matrix(dist == dist.min(axis=1, keepdims=True), dtype=float)
        pooled = (mask @ counts).tocsr()  # block keys × sensitive values
        den = mask @ per_key
        rows = order[bounds[start]:bounds[start + len(block)]]
        local = key_of_r[rows] - start
        out[rows] = np.asarray(pooled[local, sen_r[rows]]).ravel() / den[local]
    return out


def protection_interval(scores: np.ndarray, transform: Callable[[np.ndarray], np.ndarray],
                        ctx: Context, n_boot: int, confidence_level: float) -> list[float] | None:
    """Percentile interval of ``transform(1 − mean CAP)`` over bootstrap resamples of the real
    records (NaN scores, uncounted records, stay uncounted in every resample)."""
    rng = ctx.rng(28)
    n = len(scores)
    counted = ~np.isnan(scores)
    filled = np.where(counted, scores, 0.0)
    reps = []
    for start in range(0, n_boot, BOOT_CHUNK):
        idx = bootstrap_indices(rng, n, min(BOOT_CHUNK, n_boot - start))
        k = counted[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps.append(transform(1 - filled[idx].sum(axis=1) / k))
    ci = percentile_interval(np.concatenate(reps), confidence_level)
    return None if ci is None else [ci[0], ci[1]]


class CAPParams(IntervalParams, Params):
    """The attacker's knowledge: keys, sensitive columns and the CAP variant."""

    key_fields: list[str] = Field(min_length=1, description="Columns the attacker knows "
                                                            "(SDMetrics' key_fields).")
    sensitive_fields: list[str] = Field(min_length=1,
                                        description="Columns the attacker guesses "
                                                    "(SDMetrics' sensitive_fields).")
    variant: Variant = Field("cap", description="cap: unmatched keys not counted; zero_cap: "
                                                "they score 0; generalized_cap: nearest keys "
                                                "in Hamming distance.")

    @model_validator(mode="after")
    def _check(self) -> CAPParams:
        both = set(self.key_fields) & set(self.sensitive_fields)
        if both:
            raise ValueError(f"column(s) {sorted(both)} are both key and sensitive fields")
        for name in ("key_fields", "sensitive_fields"):
            dup = repeated(getattr(self, name))
            if dup:
                raise ValueError(f"columns listed twice in {name}: {dup}")
        return self


class CAPMeasure(RiskMeasure):
    """Base of the CAP measures: their params (keys, sensitive columns, variant), the columns
    they read from both sides, and the checked frames on those columns."""

    accepts = ("microdata",)
    higher_is_worse = False
    unit = "share"

    Params = CAPParams

    def columns(self) -> dict[str, list[str]]:
        cols = [*self.params.key_fields, *self.params.sensitive_fields]
        return {"original": cols, "anonymized": list(cols)}

    def frames(self, original: Dataset | None,
               anonymized: Dataset | None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Both sides on the key and sensitive columns, with an error naming the side when it
        is not microdata, has no records or lacks a column."""
        columns = self.columns()["original"]
        out = []
        for role, data in (("original", original), ("anonymized", anonymized)):
            if not isinstance(data, Microdata):
                raise DataError(f"{self.name} needs the {role} data as microdata")
            if len(data) == 0:
                raise DataError(f"{self.name}: the {role} data has no records")
            missing = [c for c in columns if c not in data.columns]
            if missing:
                raise DataError(f"{self.name}: column(s) {', '.join(map(repr, missing))} not "
                                f"in the {role} data; its columns: "
                                f"{', '.join(map(str, data.columns))}")
            out.append(data.frame[columns])
        return out[0], out[1]


class CategoricalCAP(CAPMeasure):
    """SDMetrics' CategoricalCAP score: 1 − the mean correct attribution probability.

    CAP (Elliot 2015, "Final report on the disclosure risk associated with the synthetic data
    produced by the SYLLS team"; Taub, Elliot, Pampaka & Smith 2018, "Differential correct
    attribution probability for synthetic data: an exploration", PSD 2018): an attacker who
    knows a person's ``key_fields`` looks up the released records with the same key values and
    takes the share of them holding the person's ``sensitive_fields`` (all of them, as one
    tuple) as the probability of a correct attribution. The value is 1 − the mean CAP over the
    original records (higher = safer), as SDMetrics' ``CategoricalCAP``,
    ``CategoricalZeroCAP`` and ``CategoricalGeneralizedCAP`` (0.32):

    - ``cap``: a record whose key no released record has is not counted; no counted record
      gives no value (SDMetrics: NaN) and a warning;
    - ``zero_cap``: such a record scores 0;
    - ``generalized_cap``: such a record is compared with the released keys at the least
      Hamming distance (number of differing key columns), their records pooled.

    Values are compared as categories (numbers too: discretise continuous ones first, or use
    :class:`~anoneval.plugins.attacks.disclosure_protection.DisclosureProtection`); a missing
    value is a category of its own (SDMetrics compares the raw tuples, where NaN ≠ NaN; its
    DisclosureProtection fills them with one null category, as here). Exact over every
    record, vectorised (SDMetrics loops over records in Python). ``ci``: bootstrap percentile
    interval over the original records (the targets; the release held fixed).
    details: ``mean_cap``, ``n_counted``, ``n_unmatched`` (records whose key the release lacks).
    """

    name = "CategoricalCAP"
    description = "SDMetrics' CAP score: 1 − mean correct attribution probability of the "\
                  "sensitive fields given the key fields (cap, zero_cap, generalized_cap)."
    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        real, syn = self.frames(original, anonymized)
        scores = cap_scores(real, syn, p.key_fields, p.sensitive_fields, p.variant)
        return cap_result(scores, p, ctx, lambda x: x)


def cap_result(scores: np.ndarray, p: CAPParams, ctx: Context,
               transform: Callable[[np.ndarray], np.ndarray],
               details: dict | None = None) -> MeasureResult:
    """The result from per-record CAP scores: ``transform(1 − mean CAP)`` and its interval."""
    counted = ~np.isnan(scores)
    out = {"variant": p.variant, "n_counted": int(counted.sum()),
           "n_unmatched": int((~counted).sum()) if p.variant == "cap" else None,
           **(details or {})}
    if not counted.any():
        return MeasureResult(value=None, details=out, warnings=[
            "no original record's key fields occur in the release: CAP is undefined "
            "(SDMetrics: NaN); variant zero_cap scores such records 0"])
    mean_cap = float(scores[counted].mean())
    out["mean_cap"] = mean_cap
    value = transform(1 - mean_cap)
    ci = protection_interval(scores, transform, ctx, p.n_boot, p.confidence_level)
    return MeasureResult(value=float(value), ci=ci, details=out)
