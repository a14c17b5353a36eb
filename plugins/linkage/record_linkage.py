"""Record-linkage disclosure risk: how many anonymized records point back to their original."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    Distance,
    IntervalParams,
    MeasureResult,
    Microdata,
    PluginRef,
    RiskMeasure,
    Trajectories,
    bootstrap_indices,
    data_row,
    percentile_interval,
    plugin_ref,
    spans,
)
from anoneval.plugins._shared.euclidean import EuclideanIndex
from anoneval.plugins._shared.sampling import SampleParams
from anoneval.plugins.distances._fitted import fitted_distance
from anoneval.plugins.distances._records import LinearMapDistance

#: Distances computed per chunk of anonymized records (bounds the chunk's matrix to ~32 MB).
PAIRS_PER_CHUNK = 1 << 22
#: Record pairs per block of the search (``Context.map_blocks``; about 0.1 s of work with
#: Martinez2021); smaller searches run as one block, in place.
BLOCK_PAIRS = 1 << 18
#: Result of a search: nearest original (−1: none), its distance, and for ties="distance" the
#: number of tied originals and whether the true original is among them.
Search = tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]
#: Ids listed in the details when anonymized records have no original counterpart.
LIST_IDS = 20


@dataclass
class Prepared:
    """What depends on the original alone (reused across anonymized variants)."""

    distance: Distance
    original: Dataset
    groups: np.ndarray  # content group of each original record
    group_sizes: np.ndarray
    ids: np.ndarray  # id of each original record (trajectory_id, id column or row position)
    reference: Trajectories | None  # upstream's one-point reference trajectory
    order: np.ndarray | None  # originals sorted (stably) by distance to the reference
    ref_sorted: np.ndarray | None
    index: EuclideanIndex | None = None  # microdata under a linear-map distance (Euclidean)


class RecordLinkage(RiskMeasure):
    """Share of original records correctly linked to their anonymized version by distance.

    Source: the MobiDataLab mobility anonymizer's ``measures_methods/RecordLinkage.py`` and
    ``docs/metrics/recordLinkage.md`` (Martínez et al. 2021), described in
    ``reference/mobility_rappor.md`` §A4; distance-based record linkage as in sdcMicro
    (Domingo-Ferrer & Torra 2001). For each anonymized record x'_j the nearest original (smallest
    distance; ties between different originals at exactly equal distance go to the first in the
    search order, strict ``<``, as upstream) and its group G are found; then

        RL = (1/n) Σ_j Pr(x'_j),   Pr(x'_j) = 1/|G| if the true original of x'_j is in G, else 0,

    with n the number of *original* records. ``ties="identical"`` (upstream's code): G is the set
    of originals with content identical to the nearest one (trajectories: same points and times;
    microdata: same values of the distance's columns). ``ties="distance"`` (upstream's docs): G is
    every candidate within ``tie_tolerance`` of the minimum distance.

    Ground truth: trajectories with equal ``trajectory_id`` (upstream); microdata rows in the same
    position, or equal values of the ``id`` column (unique in both datasets, never missing in the
    original, so the value stays a share in [0, 1]). Anonymized records whose id is absent from
    the original (or missing) cannot be linked: they count as unlinked and are reported (a
    warning); when no anonymized record has its original, the measure is an error.

    Search (trajectories): exhaustive when ``exact``; else upstream's window: originals sorted by
    their distance r to a one-point reference trajectory (earliest time, smallest lon and lat of
    the original), the w originals closest in r to r(x'_j) are searched, w = N·p/100 for
    ``percen_window_size`` p, or by default N below 1,000 (exhaustive) and
    ⌊N·10^(4−⌊log10 N⌋)/100⌋ above (N/10 up to 10⁴, N/100 up to 10⁵, ...). Odd or fractional w
    searches 2⌊w/2⌋+1 originals, even w searches w. The projection is a heuristic (the
    distance is no metric) and may miss links. Microdata are always searched exhaustively;
    under Euclidean or Mahalanobis with ``ties="identical"`` both sides are mapped once and
    searched with :class:`~anoneval.plugins._shared.euclidean.EuclideanIndex` (a KD-tree in
    few columns, blockwise BLAS screening otherwise; the distances and first-original ties
    of the plain search, ``cdist``'s values).

    ``sample``: a seeded simple random sample of s anonymized records is linked (each
    against every original), and RL is estimated as (m/s)·Σ_sample Pr(x'_j) / n, m the
    anonymized records; ``ci`` is then the percentile bootstrap interval (``n_boot``
    resamples of the sampled Pr values, at ``confidence_level``); without a sample there is
    no interval (nothing is estimated). ``details.sample`` gives the sizes.
    """

    name = "RecordLinkage"
    description = "Share of originals re-identified by nearest-distance record linkage."
    unit = "share"
    accepts = ("trajectories", "microdata")

    class Params(SampleParams, IntervalParams):
        distance: PluginRef = plugin_ref(
            "distance", "Martinez2021", "Distance used to find the nearest original; fitted on "
            "the original (e.g. Martinez2021's λ). Microdata need Euclidean, Mahalanobis or Gower.")
        percen_window_size: float | None = Field(
            None, gt=0, le=100, description="Percentage of the original trajectories searched "
            "around each anonymized one (upstream's window); null: upstream's default rule.")
        exact: bool = Field(False, description="Search every original (exhaustive).")
        ties: Literal["identical", "distance"] = Field(
            "identical", description="'identical': identical originals share the probability "
            "(upstream's code); 'distance': all originals at the minimum distance do (its docs).")
        tie_tolerance: float = Field(
            0.0, ge=0, description="With ties='distance': originals within this much of the "
            "minimum distance are tied.")
        id: str | None = Field(
            None, description="Microdata: column identifying a record in both datasets (unique "
            "in each); null: records are linked by row position.")
        per_record: bool = Field(False, description="Add a table with one row per anonymized "
                                 "record to the details.")

        @model_validator(mode="after")
        def _one_search(self) -> RecordLinkage.Params:
            if self.exact and self.percen_window_size is not None:
                raise ValueError("give either exact=true or percen_window_size, not both")
            return self

    # -- preparation -----------------------------------------------------------------------------

    def _strip_id(self, data: Dataset, side: str) -> Dataset:
        """Microdata without the ``id`` column (the distance must not see it)."""
        if not isinstance(data, Microdata) or self.params.id is None:
            return data
        data.require([self.params.id], f"id column of the {side}")
        return Microdata(data.frame.drop(columns=[self.params.id]), source=data.source)

    def prepare(self, original: Dataset | None, ctx: Context) -> Prepared | None:
        """Fit the distance on the original, group identical originals, sort by reference."""
        if original is None:
            return None
        if isinstance(original, Trajectories) and self.params.id is not None:
            raise DataError("the 'id' param is for microdata; trajectories link by trajectory_id")
        data = self._strip_id(original, "original")
        if len(data) == 0:
            raise DataError("the original data has no records")
        distance = fitted_distance(ctx, self.params.distance, data,
                                   "; for microdata use Euclidean, Mahalanobis or Gower")
        groups = _content_groups(data, distance)
        sizes = np.bincount(groups)
        reference = order = ref_sorted = None
        if isinstance(data, Trajectories):
            reference = _reference_trajectory(data)
            r = _paired(distance, data, reference, np.arange(len(data)), np.zeros(len(data), int))
            order = np.argsort(r, kind="stable")
            ref_sorted = r[order]
        index = None
        if isinstance(data, Microdata) and self.params.ties == "identical" \
                and isinstance(distance, LinearMapDistance):
            index = EuclideanIndex(distance.mapped(data, "original"))
        return Prepared(distance, data, groups, sizes, _record_ids(original, self.params.id),
                        reference, order, ref_sorted, index)

    # -- computation -----------------------------------------------------------------------------

    def window_size(self, n: int) -> float:
        """Upstream's window w for n originals (n when the search is exhaustive)."""
        if self.params.exact:
            return float(n)
        if self.params.percen_window_size is not None:
            return n * self.params.percen_window_size / 100
        if n < 1000:
            return float(n)
        return float(int(n * 10 ** (4 - int(np.floor(np.log10(n)))) / 100))

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        assert original is not None and anonymized is not None
        prep: Prepared | None = ctx.prepared or self.prepare(original, ctx)
        assert prep is not None
        if anonymized.data_kind != original.data_kind:
            raise DataError(f"the anonymized data is {anonymized.data_kind}, the original "
                            f"{original.data_kind}: record linkage needs one kind")
        if not isinstance(original, Trajectories) and self.params.percen_window_size is not None:
            raise DataError("percen_window_size applies to trajectories only; microdata are "
                            "always searched exhaustively")
        anon = self._strip_id(anonymized, "anonymized")
        truth, anon_ids = self._truth(original, anonymized, len(prep.original))
        if len(truth) and (truth < 0).all():  # nothing to link: not a score of 0
            what = "trajectory_id" if isinstance(original, Trajectories) else \
                f"id column {self.params.id!r}"
            raise DataError(f"no anonymized record's {what} is in the original, so no record "
                            f"can be linked (e.g. {_listed(anon_ids[:5])}); check the ids")
        n_orig, n_anon = len(prep.original), len(anon)
        w = self.window_size(n_orig) if isinstance(anon, Trajectories) else float(n_orig)
        windowed = isinstance(anon, Trajectories) and w < n_orig
        rows = self.params.sample_rows(n_anon, ctx.rng(9))
        positions = np.arange(n_anon) if rows is None else rows
        nearest, dist_min, tied = search(prep, anon, truth, w if windowed else None,
                                         self.params.ties, self.params.tie_tolerance, ctx, rows)
        truth, anon_ids = truth[positions], anon_ids[positions]
        if self.params.ties == "identical":
            linked = (truth >= 0) & (nearest >= 0)
            linked[linked] = prep.groups[truth[linked]] == prep.groups[nearest[linked]]
            group = np.where(nearest >= 0, prep.group_sizes[prep.groups[np.maximum(nearest, 0)]], 0)
            prob = np.where(linked, 1.0 / np.maximum(group, 1), 0.0)
        else:
            linked = tied[1]
            prob = np.where(linked, 1.0 / np.maximum(tied[0], 1), 0.0)
        scale = n_anon / len(positions)  # a sample's sum estimates the total
        total = float(prob.sum()) * scale
        absent = np.flatnonzero(truth < 0)
        warnings = []
        if len(absent):
            warnings.append(f"{len(absent)} anonymized records have no original with the same "
                            f"id and count as unlinked, e.g. {_listed(anon_ids[absent])}")
        details: dict[str, Any] = {
            "percen_record_linkage": round(100 * total / n_orig, 2),
            "linked": int(linked.sum()),
            "expected_linked": total,
            "n_original": n_orig,
            "n_anonymized": n_anon,
            "search": "window" if windowed else "exhaustive",
            "window_size": w,
            "absent_from_original": len(absent),
            "absent_ids": _listed(anon_ids[absent]),
            "nearest_distance_linked": dist_min[linked].tolist(),
            "nearest_distance_unlinked": dist_min[~linked].tolist(),
        }
        summary = getattr(prep.distance, "summary", None)
        if callable(summary):
            details["distance"] = summary()
        ci = None
        if rows is not None:
            details["sample"] = {"anonymized_rows": len(rows), "of_anonymized_rows": n_anon,
                                 "note": "linked, absent and the distance lists count the "
                                         "sampled records; expected_linked is scaled up"}
            reps = prob[bootstrap_indices(ctx.rng(10), len(prob), self.params.n_boot)].mean(
                axis=1) * n_anon / n_orig
            ends = percentile_interval(reps, self.params.confidence_level)
            ci = None if ends is None else [ends[0], ends[1]]
        if self.params.per_record:
            details["records"] = self._table(prep, anon, anon_ids, truth, nearest, dist_min,
                                             prob, positions)
        return MeasureResult(value=total / n_orig, ci=ci, details=details, warnings=warnings)

    def _truth(self, original: Dataset, anonymized: Dataset,
               n_orig: int) -> tuple[np.ndarray, np.ndarray]:
        """Position of each anonymized record's true original (−1 if none) and its id."""
        if isinstance(original, Trajectories):
            assert isinstance(anonymized, Trajectories)
            ids = anonymized.trajectory_id
            return original.index_of(ids), ids
        assert isinstance(original, Microdata) and isinstance(anonymized, Microdata)
        key = self.params.id
        if key is None:
            if len(anonymized) != n_orig:
                raise DataError(f"records are linked by row position, but the original has "
                                f"{n_orig} rows and the anonymized {len(anonymized)}; set the "
                                "'id' param to a column identifying the records")
            return np.arange(n_orig), np.arange(n_orig)
        # unique on both sides: an original linked by several anonymized records would be
        # counted several times and the share could exceed 1
        orig_ids = original.frame[key]
        if orig_ids.isna().any():
            row = int(np.flatnonzero(orig_ids.isna().to_numpy())[0])
            raise DataError(f"id column {key!r} of the original has a missing value at "
                            f"{data_row(row)}")
        for side, values in (("original", orig_ids), ("anonymized", anonymized.frame[key])):
            dup = values[values.duplicated() & values.notna()]
            if len(dup):
                raise DataError(f"id column {key!r} is not unique in the {side}: "
                                f"{_listed(dup.unique())} repeat; each record needs its own id")
        lookup = pd.Index(orig_ids)
        ids = anonymized.frame[key].to_numpy()
        return lookup.get_indexer(ids).astype(np.int64), ids

    def _table(self, prep: Prepared, anon: Dataset, anon_ids: np.ndarray, truth: np.ndarray,
               nearest: np.ndarray, dist_min: np.ndarray, prob: np.ndarray,
               positions: np.ndarray) -> pd.DataFrame:
        """One row per (sampled) anonymized record, at ``positions``: its nearest original and
        the true one's distance."""
        ok = truth >= 0
        true_dist = np.full(len(truth), np.nan)
        if ok.any():
            true_dist[ok] = _paired(prep.distance, prep.original, anon, truth[ok],
                                    positions[ok])
        nearest_ids = prep.ids.astype(object)[np.maximum(nearest, 0)]
        nearest_ids[nearest < 0] = None
        return pd.DataFrame({
            "anonymized_id": anon_ids,
            "nearest_original_id": nearest_ids,
            "nearest_distance": dist_min,
            "true_original_found": ok,
            "true_distance": true_dist,
            "probability": prob,
        })


@dataclass(frozen=True)
class SearchJob:
    """What every block of the nearest-original search reads (shipped once per worker)."""

    distance: Distance
    original: Dataset
    anonymized: Dataset
    truth: np.ndarray
    order: np.ndarray | None
    ref_sorted: np.ndarray | None
    reference: Trajectories | None
    window: float | None  # None: exhaustive
    ties: str
    tie_tolerance: float


def search(prep: Prepared, anon: Dataset, truth: np.ndarray, window: float | None, ties: str,
           tie_tolerance: float, ctx: Context, rows_of: np.ndarray | None = None) -> Search:
    """Nearest original of every anonymized record (or of those at positions ``rows_of``, a
    sample; results in that order), in blocks of anonymized records (``ctx.map_blocks``):
    exhaustive (``window`` None) or upstream's window. Each record's result depends on that
    record alone, so blocks change nothing but where it runs. Microdata under a Euclidean
    (linear-map) distance with ``ties="identical"`` take :func:`_search_euclidean`."""
    n_orig = len(prep.original)
    rows_of = np.arange(len(anon)) if rows_of is None else np.asarray(rows_of, np.int64)
    n_anon = len(rows_of)
    if prep.index is not None and window is None and ties == "identical":
        return _search_euclidean(prep, anon, rows_of, ctx)
    width = n_orig if window is None else min(int(window) + 2, n_orig)
    rows = max(BLOCK_PAIRS // max(width, 1), 1)
    job = SearchJob(prep.distance, prep.original, anon, truth, prep.order, prep.ref_sorted,
                    prep.reference, window, ties, tie_tolerance)
    label = "exhaustive" if window is None else f"window {window:g}"
    with ctx.progress(n_anon, f"RecordLinkage ({label})") as bar:
        parts = ctx.map_blocks(search_block, [rows_of[a:b] for a, b in spans(n_anon, rows)], job)
        bar.update(n_anon)
    if not parts:
        empty = np.zeros(0)
        return empty.astype(np.int64), empty, (empty.astype(np.int64), empty.astype(bool))
    nearest, dist_min, n_tied, true_tied = (np.concatenate(a) for a in zip(*parts, strict=True))
    return nearest, dist_min, (n_tied, true_tied)


#: Anonymized records per block of the Euclidean search (``Context.map_blocks``).
EUCLIDEAN_ROWS = 1 << 14


def _euclidean_block(shared: tuple[EuclideanIndex, np.ndarray], rows: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    index, queries = shared
    idx, dist = index.query(queries[rows], 1, first_on_ties=True)
    return idx[:, 0], dist[:, 0]


def _search_euclidean(prep: Prepared, anon: Dataset, rows_of: np.ndarray, ctx: Context
                      ) -> Search:
    """Exhaustive search on the distance's mapped records, each mapped once
    (:class:`EuclideanIndex`: a KD-tree in few columns, BLAS screening otherwise, distances
    recomputed as ``cdist`` does, ties to the first original): the same nearest originals and
    distances as the generic search, without a matrix per block."""
    assert prep.index is not None
    queries = prep.distance.mapped(anon, "anonymized")  # type: ignore[attr-defined]
    n = len(rows_of)
    with ctx.progress(n, "RecordLinkage (exhaustive)") as bar:
        parts = ctx.map_blocks(_euclidean_block,
                               [rows_of[a:b] for a, b in spans(n, EUCLIDEAN_ROWS)],
                               (prep.index, queries))
        bar.update(n)
    nearest = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    dist = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0)
    return nearest, dist, (np.zeros(n, np.int64), np.zeros(n, bool))


def search_block(job: SearchJob, rows: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Nearest original (−1: none), its distance, tied count and whether the true original
    is tied, for the anonymized records at positions ``rows``; chunked to
    :data:`PAIRS_PER_CHUNK`."""
    if job.window is None:
        return _search_all(job, rows)
    assert isinstance(job.anonymized, Trajectories)
    return _search_window(job, rows)


def _search_all(job: SearchJob, block: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Exhaustive search (upstream's order on ties: originals in ``order``)."""
    n_orig = len(job.original)
    cols = job.order if job.order is not None else np.arange(n_orig)
    n = len(block)
    nearest, dist_min = np.full(n, -1), np.full(n, np.nan)
    n_tied, true_tied = np.zeros(n, np.int64), np.zeros(n, bool)
    pos = np.full(n_orig, -1)
    pos[cols] = np.arange(n_orig)
    step = max(PAIRS_PER_CHUNK // max(n_orig, 1), 1)
    for a, b in spans(n, step):
        rows = block[a:b]
        d = job.distance.pairwise(job.original, job.anonymized, cols, rows).T  # D(orig, anon)
        near, dmin = _argmin(d)
        nearest[a:b] = np.where(near >= 0, cols[np.maximum(near, 0)], -1)
        dist_min[a:b] = dmin
        if job.ties == "distance":
            tie = d <= (dmin + job.tie_tolerance)[:, None]
            n_tied[a:b] = tie.sum(axis=1)
            t = job.truth[rows]
            ok = t >= 0
            true_tied[a + np.flatnonzero(ok)] = tie[np.flatnonzero(ok), pos[t[ok]]]
    return nearest, dist_min, n_tied, true_tied


def _search_window(job: SearchJob, block: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Upstream's windowed search around each anonymized trajectory's reference distance."""
    assert job.reference is not None and job.order is not None and job.ref_sorted is not None
    assert job.window is not None
    n = len(block)
    r = _paired(job.distance, job.anonymized, job.reference, block, np.zeros(n, np.int64))
    lo, hi = window_bounds(job.ref_sorted, r, job.window)
    width = hi - lo + 1
    nearest, dist_min = np.full(n, -1), np.full(n, np.nan)
    n_tied, true_tied = np.zeros(n, np.int64), np.zeros(n, bool)
    step = max(PAIRS_PER_CHUNK // max(int(width.max(initial=1)), 1), 1)
    for a, b in spans(n, step):
        rows = block[a:b]
        counts = width[a:b]
        owner = np.repeat(np.arange(len(rows)), counts)
        rank = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        cand = job.order[lo[a:b][owner] + rank]
        d = _paired(job.distance, job.original, job.anonymized, cand, rows[owner])
        d = np.where(np.isnan(d), np.inf, d)
        starts = np.cumsum(counts) - counts
        dmin = np.minimum.reduceat(d, starts)
        is_min = d == np.repeat(dmin, counts)
        first = np.full(len(rows), -1)
        hit = np.flatnonzero(is_min & np.isfinite(d))
        first_hit = hit[np.r_[True, owner[hit][1:] != owner[hit][:-1]]] if len(hit) else hit
        first[owner[first_hit]] = cand[first_hit]
        nearest[a:b] = first
        dist_min[a:b] = np.where(np.isfinite(dmin), dmin, np.nan)
        if job.ties == "distance":
            tie = np.isfinite(d) & (d <= np.repeat(dmin + job.tie_tolerance, counts))
            n_tied[a:b] = np.add.reduceat(tie.astype(np.int64), starts)
            hit_true = tie & (cand == job.truth[rows][owner])
            true_tied[a:b] = np.add.reduceat(hit_true.astype(np.int64), starts) > 0
    return nearest, dist_min, n_tied, true_tied


def window_bounds(ref_sorted: np.ndarray, r: np.ndarray, w: float) -> tuple[np.ndarray, np.ndarray]:
    """First and last sorted position searched for reference distances ``r`` (upstream's rule).

    pos = the closest entry of ``ref_sorted`` (bisect-left; on equal gaps the lower one; past
    the end: N); the window [pos − ⌊w/2⌋ (+1 if w is even), pos + ⌊w/2⌋] is shifted, not shrunk,
    to lie inside [0, N−1] (and clipped when w > N, where upstream fails).
    """
    n = len(ref_sorted)
    pos = np.searchsorted(ref_sorted, r, side="left")
    inner = (pos > 0) & (pos < n)
    p = np.clip(pos, 1, max(n - 1, 1))
    before, after = ref_sorted[p - 1], ref_sorted[np.minimum(p, n - 1)]
    pos = np.where(inner & ~(after - r < r - before), pos - 1, pos)
    cut = int(w / 2)
    lo = pos - cut + (1 if w % 2 == 0 else 0)
    hi = pos + cut
    rest_before = np.maximum(-lo, 0)
    rest_after = np.maximum(hi - (n - 1), 0)
    lo = np.maximum(lo, 0) - rest_after
    hi = np.minimum(hi, n - 1) + rest_before
    return np.maximum(lo, 0), np.minimum(hi, n - 1)


def _argmin(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column of the first minimum of each row (NaN ignored; −1 if none) and the minimum."""
    d = np.where(np.isnan(d), np.inf, d)
    near = np.argmin(d, axis=1) if d.shape[1] else np.zeros(len(d), np.int64)
    dmin = d[np.arange(len(d)), near] if d.shape[1] else np.full(len(d), np.inf)
    ok = np.isfinite(dmin)
    return np.where(ok, near, -1), np.where(ok, dmin, np.nan)


def _paired(distance: Distance, x: Dataset, y: Dataset, xi: np.ndarray,
            yi: np.ndarray) -> np.ndarray:
    """Distances of the pairs (xi[k], yi[k]): the distance's ``paired`` when it has one."""
    paired = getattr(distance, "paired", None)
    if callable(paired):
        return np.asarray(paired(x, y, xi, yi), dtype=np.float64)
    out = np.empty(len(xi))
    for a in np.unique(xi):
        sel = np.flatnonzero(xi == a)
        out[sel] = distance.pairwise(x, y, np.array([a]), yi[sel])[0]
    return out


def _content_groups(data: Dataset, distance: Distance) -> np.ndarray:
    """Group id of each record; records with identical content share one.

    Trajectories: identical (time, lon, lat) sequences, ids ignored (upstream's hash).
    Microdata: identical values in the distance's columns (``columns_``) or in all columns.
    """
    if isinstance(data, Trajectories):
        off = data.offsets
        keys = [data.t[a:b].tobytes() + data.lon[a:b].tobytes() + data.lat[a:b].tobytes()
                for a, b in itertools.pairwise(off)]
        return pd.factorize(pd.Series(keys, dtype=object))[0].astype(np.int64)
    assert isinstance(data, Microdata)
    columns = getattr(distance, "columns_", None) or data.columns
    return data.group_ids(list(columns))[0]


def _reference_trajectory(data: Trajectories) -> Trajectories:
    """Upstream's reference: one point at the earliest time, smallest lon and smallest lat."""
    return Trajectories(np.array([0]), np.array([0]), np.array([0, 1]),
                        np.array([data.lon.min()]), np.array([data.lat.min()]),
                        np.array([data.t.min()]))


def _record_ids(data: Dataset, key: str | None) -> np.ndarray:
    if isinstance(data, Trajectories):
        return data.trajectory_id
    assert isinstance(data, Microdata)
    return data.frame[key].to_numpy() if key is not None else np.arange(len(data))


def _listed(ids: np.ndarray) -> list[Any]:
    """At most LIST_IDS ids as plain values (for details and messages)."""
    return [v.item() if isinstance(v, np.generic) else v for v in list(ids[:LIST_IDS])]
