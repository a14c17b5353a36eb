"""SUDA and DIS-SUDA: scores of records from their minimal sample uniques (SUDA2's search)."""

from __future__ import annotations

import itertools
import math
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import Context, DataError, Dataset, MeasureResult, Microdata, RiskMeasure
from anoneval.plugins.microdata._common import Classes, column
from anoneval.plugins.reidentification._params import RecordParams, classes, record_table
from anoneval.plugins.reidentification._report import risk_histogram

#: Labels and upper edges of sdcMicro's DIS-SUDA table (``print.suda2``).
DIS_BINS = ("== 0", "(0.0, 0.1]", "(0.1, 0.2]", "(0.2, 0.3]", "(0.3, 0.4]", "(0.4, 0.5]",
            "(0.5, 0.6]", "(0.6, 0.7]", "> 0.7")


class SUDA(RiskMeasure):
    """Mean DIS-SUDA score: the probability that a record's sample uniqueness is a match.

    Sources: Elliot, Manning & Ford (2002), "A computational algorithm for handling the special
    uniques problem", IJUFKS 10(5) (SUDA); Manning, Haglin & Keane (2008), "A recursive search
    algorithm for statistical disclosure assessment", DMKD 16 (SUDA2); Elliot (2000) and Skinner
    & Elliot (2002) for DIS; sdcMicro's ``suda2`` (Templ, Kowarik & Meindl 2015).

    A *minimal sample unique* (MSU) of a record is a set of its quasi-identifier values that no
    other record shares and no proper subset of which is unique. Missing values and suppressed
    cells (``suppression_token``) never form part of an MSU but still tell records apart (NA
    equals only NA), as in sdcMicro; records suppressed on every quasi-identifier are not
    searched and score 0. With M quasi-identifiers an MSU of size k adds (M − k)! to its
    record's SUDA score (Elliot's weights, ``original_scores``), else
    (2^(M−k) − 1)·k!(M − k)!/M!. Only records unique on every quasi-identifier can score.

    DIS-SUDA (Elliot 2000), for a record with score s > 0:
    dis = 1 / (1 + P(1 − f)/f / (s^Q · Σ_j s_j^(−Q))) with f = ``dis_fraction`` (the sampling
    fraction), P the records whose key occurs exactly twice, Q = 1 + (8 − M)/20 evaluated in
    float32 as sdcMicro does, and the sum over records with a score; 0 for score 0.

    value = the mean DIS-SUDA score over every record (n counts suppressed ones). details:
    ``score_sum``, ``score_max``, ``records_with_msu``, ``msu_counts`` (MSUs per size),
    ``dis_table`` (sdcMicro's bins), ``attribute_contributions`` (100·Σ of the MSU weights
    containing the variable / Σ scores; they need not sum to 100). Per record (``per_record``):
    ``score``, ``dis_score``, ``msus`` (the record's number of MSUs), ``min_msu_size`` (the size
    of its smallest MSU, 0 when it has none) and ``contribution_<variable>`` (share of the
    record's score from MSUs containing the variable). ``max_msu_size`` bounds the search
    (larger MSUs are not found). ``compat="sdcmicro"`` adds sdcMicro's constant dummy
    variables to fewer than 3 quasi-identifiers, which changes M in the weights and in Q.

    SUDA reads the records on every engine (its search has no distributed form): on Dask it
    is gathered to the client, and above ``engine.gather_limit`` it fails alone with an error
    saying why (:meth:`records_reason`) while the other measures run.
    """

    name = "SUDA"
    description = "Mean DIS-SUDA score from minimal sample uniques (SUDA2, as sdcMicro's suda2)."
    inputs = "either"

    class Params(RecordParams):
        dis_fraction: float = Field(0.01, gt=0, lt=1,
                                    description="Sampling fraction f of DIS-SUDA.")
        original_scores: bool = Field(True, description="Elliot's MSU weights (M − k)!; "
                                                        "false: sdcMicro's alternative.")
        max_msu_size: int | None = Field(None, ge=1,
                                         description="Largest MSU size searched (all sizes "
                                                     "when null).")
        compat: Literal["sdcmicro"] | None = Field(
            None, description="'sdcmicro' pads fewer than 3 quasi-identifiers with constant "
                              "dummies, as sdcMicro's suda2 does.")

    def records_reason(self) -> str:
        p = self.params
        k = len(p.quasi_identifiers)
        top = min(p.max_msu_size or k, k)
        subsets = sum(math.comb(k, i) for i in range(1, top + 1))
        bounded = (f", those of up to {top} of them" if top < k else "")
        return (f"SUDA reads the records: SUDA2 searches each sample-unique record's minimal "
                f"sample uniques, which needs the frequency of the record's values on every "
                f"subset of the {k} quasi-identifiers ({subsets} subsets{bounded}), each a "
                "group-by of all the records; this version runs that search in memory and "
                "has no distributed form. Give fewer quasi-identifiers or a smaller "
                "max_msu_size, raise engine.gather_limit if the client's memory holds the "
                "records, or use the local engine on a machine whose memory does")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        data, cl = classes(original, anonymized, p, ctx, p.missing)
        qi = list(p.quasi_identifiers)
        n = cl.records
        if n == 0:
            raise DataError("no records to assess")
        m_eff = max(len(qi), 3) if p.compat == "sdcmicro" else len(qi)
        weights = msu_weights(m_eff, p.original_scores)
        search = msu_search(data, qi, cl, p.suppression_token, p.missing, p.max_msu_size,
                            weights)
        cls_score = search.counts @ weights[:search.counts.shape[1]]
        cls_contrib = search.contrib
        row_class = cl.row_class()
        ok = row_class >= 0
        class_score = np.zeros(len(cl.sizes))
        class_score[search.unique] = cls_score
        score = np.zeros(len(row_class))
        score[ok] = class_score[row_class[ok]]
        pairs = 2 * int((cl.sizes == 2).sum())
        dis = dis_scores(score, m_eff, p.dis_fraction, pairs)
        total = float(score.sum())
        contrib_total = cls_contrib.sum(axis=0)
        details = {
            "records": n,
            "suppressed_records": cl.suppressed_total,
            "score_sum": total,
            "score_max": float(score.max()) if len(score) else 0.0,
            "score_mean": total / n,
            "records_with_msu": int((score > 0).sum()),
            "msu_counts": {int(k + 1): int(c) for k, c in
                           enumerate(search.counts.sum(axis=0)) if c},
            "dis_histogram": {**risk_histogram(dis), "zero": int((dis == 0).sum())},
            "dis_table": dis_table(np.concatenate([dis, np.zeros(cl.deleted)])),
            "attribute_contributions": {
                col: (100.0 * float(contrib_total[j]) / total if total else 0.0)
                for j, col in enumerate(qi)},
        }
        if p.per_record:
            cols: dict[str, np.ndarray] = {"score": score, "dis_score": dis}
            msus = np.zeros((len(cl.sizes), search.counts.shape[1]), dtype=np.int64)
            msus[search.unique] = search.counts
            has = msus.any(axis=1)
            smallest = np.where(has, msus.astype(bool).argmax(axis=1) + 1, 0)
            for name, per_class in (("msus", msus.sum(axis=1)), ("min_msu_size", smallest)):
                per_row = np.zeros(len(row_class), dtype=np.int64)
                per_row[ok] = per_class[row_class[ok]]
                cols[name] = per_row
            with np.errstate(invalid="ignore", divide="ignore"):
                share = cls_contrib / cls_score[:, None]
            for j, col in enumerate(qi):
                per_class = np.zeros(len(cl.sizes))
                per_class[search.unique] = np.nan_to_num(share[:, j])
                per_row = np.zeros(len(row_class))
                per_row[ok] = per_class[row_class[ok]]
                cols[f"contribution_{col}"] = per_row
            details["per_record"] = record_table(data, p.id, cols)
        return MeasureResult(value=float(dis.sum()) / n, details=details)


class Search:
    """MSUs of the sample-unique classes: ``unique`` (class indices), ``counts[u, k-1]`` (MSUs
    of size k) and ``contrib[u, j]`` (the summed weights of the MSUs containing variable j)."""

    def __init__(self, unique: np.ndarray, counts: np.ndarray, contrib: np.ndarray) -> None:
        self.unique, self.counts, self.contrib = unique, counts, contrib


def msu_search(data: Microdata, qi: list[str], cl: Classes, token: str, missing: str,
               max_size: int | None, weights: np.ndarray) -> Search:
    """Count the MSUs of every sample-unique class, level by level over attribute subsets.

    Works on the table of classes (distinct keys with their sizes), not on records: the count
    of a subset's value combination is the sum of the sizes of the classes sharing it. A set
    is an MSU of a unique class when its count is 1, no item is missing or suppressed, and
    none of its subsets one item smaller has count 1 (uniqueness is inherited by supersets).
    """
    m = len(qi)
    top = m if max_size is None else min(m, max_size)
    sizes = cl.sizes
    unique = np.flatnonzero(sizes == 1)
    counts = np.zeros((len(unique), top), dtype=np.int32)
    contrib = np.zeros((len(unique), m), dtype=np.float64)
    if not len(unique):
        return Search(unique, counts, contrib)
    row_class = cl.row_class()
    rows = np.flatnonzero(row_class >= 0)
    first = np.full(len(sizes), -1, dtype=np.int64)
    first[row_class[rows][::-1]] = rows[::-1]
    codes = np.empty((len(sizes), m), dtype=np.int64)
    usable = np.ones((len(unique), m), dtype=bool)
    released = int(sizes.sum())
    for j, col in enumerate(qi):
        c = column(data, col, token, missing)
        codes[:, j] = c.codes[first]
        _, uniques = data.codes(col)
        bad = np.flatnonzero(np.asarray(pd.isna(uniques), dtype=bool))
        if c.token >= 0:
            bad = np.append(bad, c.token)
        value_count = np.bincount(codes[:, j], weights=sizes, minlength=len(c.texts))
        bad = np.union1d(bad, np.flatnonzero(value_count >= released))  # in every record
        usable[:, j] = ~np.isin(codes[unique, j], bad)
    cards = codes.max(axis=0) + 1
    previous: dict[tuple[int, ...], np.ndarray] = {}
    for k in range(1, top + 1):
        current: dict[tuple[int, ...], np.ndarray] = {}
        for subset in itertools.combinations(range(m), k):
            ids = _subset_ids(codes, cards, subset)
            total = np.bincount(ids, weights=sizes)
            is_unique = total[ids[unique]] == 1
            current[subset] = is_unique
            msu = is_unique & usable[:, list(subset)].all(axis=1)
            for drop in range(k if k > 1 else 0):
                msu &= ~previous[subset[:drop] + subset[drop + 1:]]
            counts[:, k - 1] += msu
            contrib[np.ix_(np.flatnonzero(msu), subset)] += weights[k - 1]
        previous = current
    return Search(unique, counts, contrib)


def _subset_ids(codes: np.ndarray, cards: np.ndarray, subset: tuple[int, ...]) -> np.ndarray:
    """Ids of the classes' value combinations on ``subset``: the mixed-radix key itself when
    its range is small (counted by ``bincount`` without hashing), else dense ids."""
    key = np.zeros(len(codes), dtype=np.int64)
    size = 1
    for j in subset:
        card = int(cards[j])
        if size * card >= 2**62:
            key = pd.factorize(key)[0].astype(np.int64)
            size = int(key.max()) + 1
        key = key * card + codes[:, j]
        size *= card
    if size <= 4 * len(codes) + 100_000:
        return key
    return pd.factorize(key)[0]


def msu_weights(m: int, original: bool) -> np.ndarray:
    """Score weight of an MSU of size k = 1..m: (m−k)! or (2^(m−k)−1)·k!(m−k)!/m!."""
    k = np.arange(1, m + 1)
    fact = np.array([math.factorial(int(m - i)) for i in k], dtype=np.float64)
    if original:
        return fact
    kf = np.array([math.factorial(int(i)) for i in k], dtype=np.float64)
    return (2.0 ** (m - k) - 1) * kf * fact / math.factorial(m)


def dis_scores(score: np.ndarray, m: int, fraction: float, pairs: int) -> np.ndarray:
    """DIS-SUDA of each record (0 where the score is 0); Q and f in float32 as sdcMicro."""
    q = float(np.float32(1.0) + (np.float32(8.0) - np.float32(m)) / np.float32(20.0))
    f = float(np.float32(fraction))
    num = pairs * (1.0 - f) / f
    out = np.zeros(len(score))
    pos = score > 0
    if pos.any():
        s = score[pos]
        adj = float(np.sum(s ** -q))
        out[pos] = 1.0 / (1.0 + num / (s ** q * adj))
    return out


def dis_table(dis: np.ndarray) -> dict[str, int]:
    """Records per DIS-SUDA bin, sdcMicro's ``print.suda2`` table (edges 0.1·i + machine ε)."""
    edges = np.r_[-1.0, np.arange(0, 0.71, 0.1) + np.finfo(float).eps, np.inf]
    idx = np.searchsorted(edges, dis, side="left") - 1  # (a, b] bins
    counts = np.bincount(np.clip(idx, 0, len(DIS_BINS) - 1), minlength=len(DIS_BINS))
    return {label: int(c) for label, c in zip(DIS_BINS, counts, strict=True)}
