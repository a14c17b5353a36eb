"""DOMIAS: density-ratio membership inference (van Breugel et al. 2023), with the control set
as non-members and as the reference sample of the population."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Literal

import numpy as np
import pandas as pd
from pydantic import Field
from scipy import linalg
from scipy.stats import rankdata

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    IntervalParams,
    MeasureResult,
    Params,
    bootstrap_indices,
    percentile_interval,
    task_threads,
    wilson_interval,
)
from anoneval.plugins._shared.mixed import _as_float, is_numeric
from anoneval.plugins.attacks._common import (
    AttackMeasure,
    check_not_all_missing,
    frames,
    membership_sets,
)

#: Cells of one block of the query × sample kernel matrix (32 MB of float64).
BLOCK_CELLS = 1 << 22
#: Relative ridge added to a singular bandwidth matrix (in standardised units).
RIDGE = 1e-6

Density = Literal["kde", "gaussian"]


def design(fit_on: Sequence[pd.DataFrame], frames_: Sequence[pd.DataFrame],
           columns: Sequence[str]) -> list[np.ndarray]:
    """Dense features of each frame: numbers standardised by the mean and standard deviation
    over ``fit_on``, other columns one-hot with the first category left out (a full-rank
    coding; missing is a category). A missing number is refused."""
    out: list[list[np.ndarray]] = [[] for _ in frames_]
    for c in columns:
        if all(is_numeric(f[c]) for f in frames_):
            ref = np.concatenate([_as_float(f[c]) for f in fit_on])
            mu, sd = float(np.mean(ref)), float(np.std(ref))
            sd = sd if sd > 0 else 1.0
            for block, f in zip(out, frames_, strict=True):
                x = _as_float(f[c])
                if np.isnan(x).any():
                    raise DataError(f"DOMIAS: column {c!r} holds missing numbers; a density "
                                    "needs every value (impute them or leave the column out)")
                block.append(((x - mu) / sd)[:, None])
        else:
            codes, uniques = pd.factorize(pd.concat([f[c] for f in frames_], ignore_index=True),
                                          use_na_sentinel=False)
            start = 0
            for block, f in zip(out, frames_, strict=True):
                part = codes[start:start + len(f)]
                block.append((part[:, None] == np.arange(1, len(uniques))[None, :])
                             .astype(float))
                start += len(f)
    return [np.hstack(b) if b else np.zeros((len(f), 0)) for b, f in zip(out, frames_,
                                                                         strict=True)]


def bandwidth_factor(n: int, d: int, bandwidth: str | float) -> float:
    """scipy's ``gaussian_kde`` factor: Scott n^(−1/(d+4)), Silverman (n(d+2)/4)^(−1/(d+4)),
    or the number given."""
    if bandwidth == "scott":
        return n ** (-1.0 / (d + 4))
    if bandwidth == "silverman":
        return (n * (d + 2) / 4.0) ** (-1.0 / (d + 4))
    return float(bandwidth)


def _cholesky(cov: np.ndarray) -> tuple[np.ndarray, bool]:
    """Lower Cholesky factor of ``cov``; a singular one gets a small ridge (flag True)."""
    try:
        return linalg.cholesky(cov, lower=True), False
    except linalg.LinAlgError:
        scale = max(float(np.mean(np.diag(cov))), 1e-12)
        return linalg.cholesky(cov + RIDGE * scale * np.eye(len(cov)), lower=True), True


def log_density(sample: np.ndarray, query: np.ndarray, density: Density,
                bandwidth: str | float) -> tuple[np.ndarray, bool]:
    """Log density at ``query`` of the model fitted to ``sample`` and whether its covariance
    needed a ridge. ``kde``: scipy's ``gaussian_kde`` (kernel covariance = the sample
    covariance, ddof 1, times the squared bandwidth factor); ``gaussian``: one normal with the
    sample mean and covariance. Blockwise, with log-sum-exp (no underflow in high dimension)."""
    n, d = sample.shape
    if d == 0:
        return np.zeros(len(query)), False
    cov = np.atleast_2d(np.cov(sample, rowvar=False))
    if density == "kde":
        cov = cov * bandwidth_factor(n, d, bandwidth) ** 2
    chol, ridged = _cholesky(cov)
    log_norm = 0.5 * d * np.log(2 * np.pi) + np.log(np.diag(chol)).sum()
    if density == "gaussian":
        z = linalg.solve_triangular(chol, (query - sample.mean(axis=0)).T, lower=True)
        return -0.5 * (z * z).sum(axis=0) - log_norm, ridged
    # whitened coordinates: the kernel is exp(−½‖zq − zs‖²), one product per block with
    # the squared norms folded in: [zq, 1, −½‖zq‖²] · [zs, −½‖zs‖², 1] = −½‖zq − zs‖²
    zs = linalg.solve_triangular(chol, sample.T, lower=True).T
    zq = linalg.solve_triangular(chol, query.T, lower=True).T
    s_aug = np.hstack([zs, -0.5 * (zs * zs).sum(axis=1)[:, None], np.ones((n, 1))])
    q_aug = np.hstack([zq, np.ones((len(zq), 1)), -0.5 * (zq * zq).sum(axis=1)[:, None]])
    step = max(1, BLOCK_CELLS // n)
    blocks = [(start, min(start + step, len(query))) for start in range(0, len(query), step)]
    out = np.empty(len(query))

    def block(span: tuple[int, int]) -> None:
        a = q_aug[span[0]:span[1]] @ s_aug.T
        out[span[0]:span[1]] = _log_sum_exp(a)

    with ThreadPoolExecutor(task_threads()) as pool:  # numpy lets go of the GIL
        list(pool.map(block, blocks))
    return out - np.log(n) - log_norm, ridged


def _log_sum_exp(a: np.ndarray) -> np.ndarray:
    """log Σⱼ exp(aᵢⱼ) per row, ``a`` ≤ 0 up to rounding (overwritten). One exp pass; rows
    whose terms all underflow are redone with their maximum taken out."""
    rows = a.max(axis=1)
    low = rows < -700.0
    if low.any():
        a[low] -= rows[low, None]
    np.exp(a, out=a)
    out = np.log(a.sum(axis=1))
    out[low] += rows[low]
    return out


def auc(member: np.ndarray, other: np.ndarray) -> float:
    """Area under the ROC curve of "higher score → member" (Mann–Whitney; ties ½)."""
    ranks = rankdata(np.concatenate([member, other]))
    n1, n0 = len(member), len(other)
    return float((ranks[:n1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def bootstrap_auc(member: np.ndarray, other: np.ndarray, rng: np.random.Generator,
                  n_boot: int) -> np.ndarray:
    """AUCs of ``n_boot`` stratified bootstrap resamples (members and non-members resampled
    separately), vectorised: each member's count of lower (and tied) non-members is read off
    the cumulative resample counts of the sorted non-member scores."""
    o_sorted = np.sort(other)
    below = np.searchsorted(o_sorted, member, side="left")
    upto = np.searchsorted(o_sorted, member, side="right")
    order = np.argsort(other, kind="stable")
    rank_of = np.empty(len(other), dtype=np.int64)
    rank_of[order] = np.arange(len(other))
    n1, n0 = len(member), len(other)
    out = np.empty(n_boot)
    im = bootstrap_indices(rng, n1, n_boot)
    io = bootstrap_indices(rng, n0, n_boot)
    for b in range(n_boot):  # O(n) per replicate: cumulative counts, no pairs
        counts = np.bincount(rank_of[io[b]], minlength=n0)
        cum = np.concatenate([[0], np.cumsum(counts)])
        wins = cum[below] + 0.5 * (cum[upto] - cum[below])
        out[b] = np.bincount(im[b], minlength=n1) @ wins / (n1 * n0)
    return out


def split_sets(ori: pd.DataFrame, ctl: pd.DataFrame, n_attacks: int,
               rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Members (original records), non-members and the reference sample (control records,
    disjoint): as many members as non-members, at most ``n_attacks`` and fewer than half the
    control (the reference keeps at least two records)."""
    try:
        members, others, rest = membership_sets(len(ori), len(ctl), n_attacks, rng,
                                                reference=True)
    except DataError as exc:
        raise DataError(f"DOMIAS {exc}") from exc
    assert rest is not None
    return ori.iloc[members], ctl.iloc[others], ctl.iloc[rest]


def domias_scores(members: pd.DataFrame, others: pd.DataFrame, reference: pd.DataFrame,
                  released: pd.DataFrame, columns: Sequence[str], density: Density,
                  bandwidth: str | float) -> tuple[np.ndarray, np.ndarray, bool]:
    """DOMIAS scores log p_G(x) − log p_R(x) of the members and the non-members, p_G fitted
    to the release and p_R to the reference sample; and whether a covariance needed a ridge."""
    enc_m, enc_o, enc_r, enc_s = design([reference, released],
                                        [members, others, reference, released], columns)
    query = np.vstack([enc_m, enc_o])
    log_g, ridge_g = log_density(enc_s, query, density, bandwidth)
    log_r, ridge_r = log_density(enc_r, query, density, bandwidth)
    score = log_g - log_r
    return score[:len(enc_m)], score[len(enc_m):], ridge_g or ridge_r


class DOMIAS(AttackMeasure):
    """DOMIAS membership inference: the AUC of the density ratio p_G(x) / p_R(x) separating
    the original records behind the release from held-out ones.

    van Breugel, Sun, Qian & van der Schaar (2023), "Membership inference attacks against
    synthetic data through overfitting detection", AISTATS 2023: a record is called a member
    when the release's density p_G is high *relative to* the population's p_R, estimated
    from a reference sample of it. Here the members are up to ``n_attacks`` original records,
    the non-members as many control records, and the reference sample the rest of the
    control set (disjoint from the non-members, as the paper's sets are; at most half the
    control set is used as non-members). ``density``: ``kde`` (default; scipy's
    ``gaussian_kde`` as the DOMIAS package and synthcity use it: Gaussian kernels with the
    sample covariance times the squared ``bandwidth`` factor, Scott's rule by default) or
    ``gaussian`` (one multivariate normal per set). Numbers are standardised, other columns
    one-hot coded without their first category; a singular covariance (a category absent
    from one set, a constant column) gets a ridge of 1e-6 × its mean variance, with a warning.

    Value: the AUC of the score (ties ½; higher = riskier, 0.5 = no better than chance).
    ``details.accuracy``: calling members the records scoring strictly above the median of all
    scores (DOMIAS' ``compute_metrics_baseline``), with its Wilson interval. The score is
    log p_G − log p_R, computed with log-sum-exp; synthcity divides the densities,
    p_G / (p_R + 1e-10), which underflows to ties in many dimensions and otherwise ranks the
    records alike. ``ci``: the stratified bootstrap percentile interval of the AUC (members
    and non-members resampled separately; the densities held fixed).
    """

    name = "DOMIAS"
    description = "DOMIAS density-ratio membership attack (KDE): AUC with original records "\
                  "as members and control records as non-members."

    class Params(IntervalParams, Params):
        n_attacks: int = Field(2000, ge=1, description="Members and non-members (each).")
        columns: list[str] | None = Field(None, min_length=1,
                                          description="Columns the densities are fitted on; "
                                                      "null: all of the original's.")
        density: Density = Field("kde", description="kde: Gaussian kernel density; gaussian: "
                                                    "one multivariate normal.")
        bandwidth: Literal["scott", "silverman"] | Annotated[float, Field(gt=0)] = Field(
            "scott", description="KDE bandwidth factor: scott, silverman or a number > 0 "
                                 "(scipy's bw_method).")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        p = self.params
        if original is None:
            raise DataError("DOMIAS needs the original data")
        columns = p.columns or list(original.columns)
        ori, syn, ctl = frames(original, anonymized, ctx.control, columns)
        check_not_all_missing(syn, "anonymized")
        rng = ctx.rng(31)
        members, others, reference = split_sets(ori, ctl, p.n_attacks, rng)
        s_m, s_o, ridged = domias_scores(members, others, reference, syn, columns, p.density,
                                         p.bandwidth)
        value = auc(s_m, s_o)
        ci = percentile_interval(bootstrap_auc(s_m, s_o, rng, p.n_boot), p.confidence_level)
        scores = np.concatenate([s_m, s_o])
        called = scores > np.median(scores)
        right = int(called[:len(s_m)].sum() + (~called[len(s_m):]).sum())
        n = len(scores)
        warnings = []
        if ridged:
            warnings.append("a covariance was singular (a constant column or a category "
                            "missing from the release or the reference sample): a ridge of "
                            f"{RIDGE:g} × its mean variance was added")
        return MeasureResult(value=value, ci=None if ci is None else list(ci), details={
            "auc": value, "accuracy": right / n,
            "accuracy_ci": list(wilson_interval(right, n, p.confidence_level)),
            "n_members": len(s_m), "n_non_members": len(s_o), "n_reference": len(reference),
            "density": p.density, "bandwidth": p.bandwidth}, warnings=warnings)
