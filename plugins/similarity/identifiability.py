"""Identifiability score: the share of original records nearer to a released record than to
any other original record (Yoon et al. 2020; synthcity's IdentifiabilityScore)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field
from scipy.spatial import cKDTree

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    IntervalParams,
    MeasureResult,
    Microdata,
    Params,
    RiskMeasure,
    task_threads,
    wilson_interval,
)

#: synthcity label-encodes a number with fewer distinct values than this (over both sides).
FEW_VALUES = 15


def encoded(real: pd.DataFrame, released: pd.DataFrame,
            rank_few_values: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """synthcity's encoding (``DataLoader.encode`` fitted on both sides, as its
    ``Metrics.evaluate``): a column that is not numeric, or that has fewer than 15 distinct
    values over both sides, becomes the rank of its value among the sorted distinct values
    (scikit-learn's LabelEncoder); other numbers stay as they are (datetimes as seconds,
    booleans as 0/1). ``rank_few_values=False``: every number stays as it is."""
    cols_r, cols_s = [], []
    for c in real.columns:
        r, s = real[c], released[c]
        both = pd.concat([r, s], ignore_index=True)
        few = rank_few_values and both.nunique(dropna=False) < FEW_VALUES
        if not few and all(pd.api.types.is_datetime64_any_dtype(x) for x in (r, s)):
            cols_r.append(r.astype("int64").to_numpy() / 1e9)
            cols_s.append(s.astype("int64").to_numpy() / 1e9)
        elif not few and all(pd.api.types.is_numeric_dtype(x) for x in (r, s)):
            cols_r.append(r.to_numpy(dtype=float))
            cols_s.append(s.to_numpy(dtype=float))
        else:
            numeric = any(all(kind(x) for x in (r, s)) for kind in (
                pd.api.types.is_numeric_dtype, pd.api.types.is_datetime64_any_dtype))
            values = both.to_numpy() if numeric else both.astype(str).to_numpy()
            codes = np.unique(values, return_inverse=True)[1].ravel().astype(float)
            cols_r.append(codes[:len(r)])
            cols_s.append(codes[len(r):])
    return np.column_stack(cols_r), np.column_stack(cols_s)


def entropy_weights(x: np.ndarray) -> np.ndarray:
    """Yoon et al.'s column weights: the entropy (nats) of each column's rounded values."""
    out = np.empty(x.shape[1])
    for j in range(x.shape[1]):
        counts = np.unique(np.round(x[:, j]), return_counts=True)[1]
        p = counts / counts.sum()
        out[j] = -(p * np.log(p)).sum()
    return out


class IdentifiabilityScore(RiskMeasure):
    """Identifiability score of Yoon, Drumright & van der Schaar (2020), "Anonymization
    through data synthesis using generative adversarial networks (ADS-GAN)", IEEE JBHI
    24(8):2378–2388, as synthcity 0.2.12 computes it (``IdentifiabilityScore``, key ``score``).

    For each original record xᵢ, rᵢ is the Euclidean distance to the nearest *other* original
    record and r̂ᵢ the distance to the nearest released record; the value is the share of
    original records with r̂ᵢ < rᵢ (strict: a tie is not identifiable; an original record with
    a duplicate has rᵢ = 0 and never counts), higher = riskier. Data are encoded as synthcity's
    ``Metrics.evaluate`` does: numbers as they are, other columns and numbers with fewer than
    15 distinct values (over both sides) as the ranks of their sorted values over both sides
    (``rank_few_values``: false keeps every number as it is).
    ``weighting``: ``none`` (synthcity: it computes Yoon et al.'s entropy weights and then
    overwrites them with ones) or ``entropy`` (the paper's: each column divided by the
    entropy, in nats, of its rounded original values, plus 1e-16; tested by brute force).

    Checked against synthcity 0.2.12's values on the shared fixture data (committed, with the
    script that made them). Where this differs from synthcity: its default key ``score_OC``
    first maps the records through a one-class neural embedding (a trained network, not
    computed here), and its ``Metrics.evaluate`` draws min(n, m) records of each side at random
    (with equal sizes a permutation, so the same value); here every record of both sides is
    used (no subsample, so the value is reproducible). The distances come from scipy's k-d tree
    (``cKDTree``, both cores), which sums the squared differences of the coordinates, where
    scikit-learn's brute-force search, which synthcity may get, expands ‖x − y‖² and loses
    digits on large values. Missing values are refused (synthcity's nearest-neighbour search
    fails on them). ``ci``: the Wilson (1927) interval of the share over the n original
    records. details: ``n_identifiable``, ``n_records``.
    """

    name = "IdentifiabilityScore"
    description = "Share of original records closer to a released record than to any other "\
                  "original record (Yoon et al. 2020; synthcity)."
    accepts = ("microdata",)
    unit = "share"

    class Params(IntervalParams, Params):
        columns: list[str] | None = Field(None, min_length=1,
                                          description="Columns compared; null: all of the "
                                                      "original's.")
        rank_few_values: bool = Field(
            True, description="synthcity: numbers with fewer than 15 distinct values are "
                              "coded as their ranks; false: kept as numbers.")
        weighting: Literal["none", "entropy"] = Field(
            "none", description="none: synthcity's unweighted distance; entropy: Yoon et "
                                "al.'s columns divided by their entropy.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if not isinstance(original, Microdata) or not isinstance(anonymized, Microdata):
            raise DataError("IdentifiabilityScore compares microdata: give the original and "
                            "the anonymized data")
        if len(original) < 2 or len(anonymized) == 0:
            raise DataError("IdentifiabilityScore needs at least two original records and one "
                            "released record")
        columns = p.columns or list(original.columns)
        original.require(columns, "IdentifiabilityScore column")
        anonymized.require(columns, "IdentifiabilityScore column")
        for side, frame in (("original", original.frame), ("anonymized", anonymized.frame)):
            gaps = [c for c in columns if frame[c].isna().any()]
            if gaps:
                raise DataError(f"IdentifiabilityScore: column(s) {', '.join(map(repr, gaps))} "
                                f"of the {side} data hold missing values; drop or impute them")
        x, y = encoded(original.frame[columns], anonymized.frame[columns], p.rank_few_values)
        if not (np.isfinite(x).all() and np.isfinite(y).all()):
            raise DataError("IdentifiabilityScore needs finite numbers (±inf found)")
        if p.weighting == "entropy":
            w = entropy_weights(x) + 1e-16
            x, y = x / w, y / w
        jobs = task_threads()
        r = cKDTree(x).query(x, k=2, workers=jobs)[0][:, 1]  # the first is the record itself
        r_hat = cKDTree(y).query(x, k=1, workers=jobs)[0]
        k = int((r_hat < r).sum())
        n = len(x)
        return MeasureResult(value=k / n, ci=list(wilson_interval(k, n, p.confidence_level)),
                             details={"n_identifiable": k, "n_records": n,
                                      "weighting": p.weighting})
