"""The engine of the skmob re-identification attacks: instances as integer rows, matches counted
with numpy (Pellungrini et al. 2017; scikit-mobility's ``skmob/privacy/attacks.py``).

An attack enumerates each user's background-knowledge *instances* (k-combinations of the rows of
its visit table or of its frequency vector, reference/mobility_semantics.md §3) and counts, for
each distinct instance, the users of the population that match it. Per-user risk is the maximum
over the user's instances of 1/#matches. Instead of skmob's one pandas merge per (instance,
user), an instance is a row of ``k`` location codes (``-1`` pads a user with fewer than ``k``
rows) and ``k`` values (a required count, a frequency, a probability); identical instances are
counted once; candidates are the users who visited the instance's rarest location, and the
attack's predicate is evaluated on all (instance, candidate) pairs at once, in chunks of bounded
size. Above ``max_instances`` distinct instances a user's instances are a seeded sample of
``max_instances`` uniform k-combinations of its rows, and its risk a lower bound.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

CHUNK_PAIRS = 1 << 22  # (instance, candidate) pairs per chunk: bounds memory (~100 MB)
DENSE_CELLS = 1 << 23  # a users × locations lookup is dense up to this many cells


@dataclass
class Rows:
    """Per-user rows (sorted by user): location code and value; ``starts`` per user code."""

    starts: np.ndarray
    loc: np.ndarray
    value: np.ndarray

    @property
    def n_users(self) -> int:
        return len(self.starts) - 1

    def sizes(self) -> np.ndarray:
        return np.diff(self.starts)


def frequency_rows(starts: np.ndarray, loc: np.ndarray, order: str = "ascending",
                   tie: np.ndarray | None = None) -> Rows:
    """skmob's frequency vector: one row per (user, location) with its visit count.

    Rows of a user are sorted by count, ``"ascending"`` (skmob's ``sort_values``) or
    ``"descending"``, ties by ``tie`` (a per-location-code rank; location code when None),
    ascending, as skmob's group-by order of (lat, lng).
    """
    n_users = len(starts) - 1
    uid = np.repeat(np.arange(n_users), np.diff(starts))
    n_loc = int(loc.max()) + 1 if len(loc) else 1
    key = uid.astype(np.int64) * n_loc + loc
    keys, counts = np.unique(key, return_counts=True)
    u, lc = keys // n_loc, keys % n_loc
    rank = lc if tie is None else tie[lc]
    sign = 1 if order == "ascending" else -1
    o = np.lexsort((rank, sign * counts, u))
    u, lc, counts = u[o], lc[o], counts[o]
    return Rows(np.searchsorted(u, np.arange(n_users + 1)), lc, counts.astype(np.float64))


@lru_cache(maxsize=256)
def _combos(n: int, k: int, replacement: bool) -> np.ndarray:
    gen = itertools.combinations_with_replacement if replacement else itertools.combinations
    out = np.fromiter(itertools.chain.from_iterable(gen(range(n), k)), dtype=np.int64)
    out = out.reshape(-1, k)
    out.flags.writeable = False
    return out


def _n_instances(n: np.ndarray, k: int, replacement: bool) -> np.ndarray:
    """C(n, k) (or C(n+k−1, k)) per user, as floats (an upper bound of distinct instances)."""
    m = n + (k - 1 if replacement else 0)
    out = np.ones(len(n))
    for i in range(k):
        out *= np.maximum(m - i, 0) / (i + 1)
    return np.where(n <= k, 1.0, np.rint(out))


def _random_subsets(n: np.ndarray, k: int, s: int, rng: np.random.Generator) -> np.ndarray:
    """``s`` uniform k-subsets of range(n_u) per user (n_u > k), sorted: (len(n)·s, k)."""
    nn = np.repeat(n, s)
    idx = np.floor(rng.random((len(nn), k)) * nn[:, None]).astype(np.int64)
    while True:
        idx.sort(axis=1)
        bad = np.flatnonzero((np.diff(idx, axis=1) == 0).any(axis=1))
        if not len(bad):
            return idx
        idx[bad] = np.floor(rng.random((len(bad), k)) * nn[bad, None]).astype(np.int64)


@dataclass
class Instances:
    """Instances: owner user code, k location codes (-1: none) and k values per row."""

    owner: np.ndarray
    loc: np.ndarray
    value: np.ndarray
    sampled: np.ndarray  # per user code: True when the user's instances are a sample
    drawn: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per user


@dataclass
class Plan:
    """How an attack draws instances: from ``rows``, k at a time, in ``mode`` (see
    :func:`enumerate_instances`), sampled from ``sample_rows`` in multiset mode."""

    rows: Rows
    k: int
    mode: str
    sample_rows: Rows | None = None

    def bound(self, max_instances: int) -> np.ndarray:
        """Instances each user will get at most (for batching)."""
        multiset = self.mode == "multiset"
        total = _n_instances(self.rows.sizes(), self.k, multiset)
        if multiset and self.sample_rows is not None:
            total = np.where(self.sample_rows.sizes() <= self.k, 1.0, total)
        return np.minimum(total, max_instances)

    def sampled(self, max_instances: int) -> np.ndarray:
        """Users with more than ``max_instances`` instances (their instances are sampled)."""
        multiset = self.mode == "multiset"
        total = _n_instances(self.rows.sizes(), self.k, multiset)
        if multiset and self.sample_rows is not None:
            total = np.where(self.sample_rows.sizes() <= self.k, 1.0, total)
        return total > max_instances

    def enumerate(self, max_instances: int, rng: np.random.Generator,
                  users: np.ndarray | None = None, draws: int | None = None) -> Instances:
        return enumerate_instances(self.rows, self.k, self.mode, max_instances, rng,
                                   self.sample_rows, users, draws)


def enumerate_instances(rows: Rows, k: int, mode: str, max_instances: int,
                        rng: np.random.Generator, sample_rows: Rows | None = None,
                        users: np.ndarray | None = None, draws: int | None = None) -> Instances:
    """Every user's instances, deduplicated per user.

    ``mode``: ``"combo"`` k-combinations of the rows (value = the row's value); ``"sequence"``
    k-combinations of the rows in row order (time), as location tuples; ``"multiset"``
    multisets of size k of the user's locations, ``rows`` being its frequency vector (value =
    the count required of the location: 1, 2, ... for its repeats), sampled from the visit
    rows ``sample_rows`` as skmob's k-combinations of rows.
    """
    sizes = rows.sizes()
    multiset = mode == "multiset"
    visits = sample_rows if multiset and sample_rows is not None else rows
    total = _n_instances(sizes, k, multiset)
    if multiset:
        total = np.where(visits.sizes() <= k, 1.0, total)
    sampled = total > max_instances
    owners, locs, vals = [], [], []
    chosen = np.arange(len(sizes)) if users is None else np.asarray(users, dtype=np.int64)
    exact = chosen[~sampled[chosen] & (sizes[chosen] > 0)]
    if multiset:  # a user with at most k visits: the one instance of all its visits
        few = exact[visits.sizes()[exact] <= k]
        exact = exact[visits.sizes()[exact] > k]
        if len(few):
            n = visits.sizes()[few]
            idx = np.arange(k)[None, :]
            pad = idx >= n[:, None]
            pos = np.where(pad, 0, visits.starts[few][:, None] + idx)
            loc = np.sort(np.where(pad, -1, visits.loc[pos]), axis=1)
            owners.append(few)
            locs.append(loc)
            vals.append(_required(loc).astype(np.float64))
    for n in np.unique(sizes[exact]):
        users = exact[sizes[exact] == n]
        base = rows.starts[users]
        if n <= k and not multiset:
            idx = np.full((1, k), -1, dtype=np.int64)
            idx[0, :n] = np.arange(n)
        else:
            idx = _combos(int(n), k, multiset)
        pad = np.broadcast_to(idx < 0, (len(users), *idx.shape)).reshape(-1, k)
        pos = np.where(pad, 0, (base[:, None, None] + idx[None]).reshape(-1, k))
        loc = np.where(pad, -1, rows.loc[pos])
        owner = np.repeat(users, len(idx))
        if multiset:
            req = np.broadcast_to(_required(idx), (len(users), *idx.shape)).reshape(-1, k)
            ok = (req <= rows.value[pos]).all(axis=1)
            loc, val, owner = loc[ok], req[ok], owner[ok]
            o = np.argsort(loc * (k + 1) + val, axis=1)  # canonical order: by location
            loc = np.take_along_axis(loc, o, axis=1)
            val = np.take_along_axis(val, o, axis=1).astype(np.float64)
        else:
            val = np.where(pad, 0.0, rows.value[pos])
        owners.append(owner)
        locs.append(loc)
        vals.append(val)
    big = chosen[sampled[chosen]]
    if len(big):
        src = visits
        n = src.sizes()[big]
        s_draws = max_instances if draws is None else draws
        idx = _random_subsets(n, k, s_draws, rng)
        pos = np.repeat(src.starts[big], s_draws)[:, None] + idx
        loc = src.loc[pos]
        if multiset:
            loc = np.sort(loc, axis=1)
            val = _required(loc).astype(np.float64)
        else:
            val = src.value[pos]
        owners.append(np.repeat(big, s_draws))
        locs.append(loc)
        vals.append(val)
    if not owners:
        empty = np.zeros((0, k))
        return Instances(np.zeros(0, np.int64), empty.astype(np.int64), empty, sampled)
    inst = Instances(np.concatenate(owners), np.concatenate(locs), np.concatenate(vals), sampled)
    return _dedupe(inst)


def _required(sorted_codes: np.ndarray) -> np.ndarray:
    """Running multiplicity along each sorted row: (a, a, b) → (1, 2, 1); -1 pads stay 0."""
    req = np.ones(sorted_codes.shape, dtype=np.int64)
    for j in range(1, sorted_codes.shape[1]):
        same = sorted_codes[:, j] == sorted_codes[:, j - 1]
        req[:, j] = np.where(same, req[:, j - 1] + 1, 1)
    return np.where(sorted_codes < 0, 0, req)


def row_groups(*cols: np.ndarray) -> np.ndarray:
    """Group id of each row of the stacked columns (equal rows, equal id)."""
    frame = pd.DataFrame({i: c for i, c in enumerate(cols)})
    return frame.groupby(list(frame.columns), sort=False).ngroup().to_numpy()


def _dedupe(inst: Instances) -> Instances:
    k = inst.loc.shape[1]
    cols = [inst.owner] + [inst.loc[:, j] for j in range(k)] + [inst.value[:, j] for j in range(k)]
    gid = row_groups(*cols)
    _, first = np.unique(gid, return_index=True)
    drawn = np.bincount(inst.owner, minlength=len(inst.sampled))
    return Instances(inst.owner[first], inst.loc[first], inst.value[first], inst.sampled, drawn)


class Lookup:
    """Value of (user code, location code) in population rows, 0 where the user lacks it."""

    def __init__(self, rows: Rows, n_loc: int) -> None:
        n_users = rows.n_users
        uid = np.repeat(np.arange(n_users), rows.sizes())
        self.n_loc = n_loc
        self.dense: np.ndarray | None = None
        if n_users * n_loc <= DENSE_CELLS:
            self.dense = np.zeros((n_users, n_loc), dtype=np.float64)
            np.add.at(self.dense, (uid, rows.loc), rows.value)
        else:
            key = uid.astype(np.int64) * n_loc + rows.loc
            o = np.argsort(key, kind="stable")
            self.keys, self.values = key[o], rows.value[o]
        # postings: users having each location, grouped by location
        o = np.lexsort((uid, rows.loc))
        self.post_users = uid[o]
        self.post_start = np.searchsorted(rows.loc[o], np.arange(n_loc + 1))

    def get(self, users: np.ndarray, locs: np.ndarray) -> np.ndarray:
        if self.dense is not None:
            return self.dense[users, np.maximum(locs, 0)]
        key = users.astype(np.int64) * self.n_loc + np.maximum(locs, 0)
        i = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
        return np.where(self.keys[i] == key, self.values[i], 0.0)

    def n_users_with(self, locs: np.ndarray) -> np.ndarray:
        safe = np.maximum(locs, 0)
        n = self.post_start[safe + 1] - self.post_start[safe]
        return np.where(locs < 0, np.iinfo(np.int64).max, n)


#: predicate(lookup-like population, candidate users, instance locs (m×k), values (m×k)) → ok
Predicate = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def count_matches(pop: Lookup, loc: np.ndarray, value: np.ndarray,
                  predicate: Predicate) -> np.ndarray:
    """Number of population users matching each instance (rows of ``loc``/``value``).

    Candidates are the users having the instance's rarest location (every predicate requires
    each known location to be visited); the predicate decides among them.
    """
    m, k = loc.shape
    counts = np.zeros(m, dtype=np.int64)
    if m == 0:
        return counts
    nwith = np.stack([pop.n_users_with(loc[:, j]) for j in range(k)], axis=1)
    pivot = np.argmin(nwith, axis=1)
    ploc = loc[np.arange(m), pivot]
    npost = np.where(ploc < 0, 0, nwith[np.arange(m), pivot])
    live = np.flatnonzero(npost > 0)
    ends = np.cumsum(npost[live])
    start = 0
    while start < len(live):
        stop = int(np.searchsorted(ends, (ends[start - 1] if start else 0) + CHUNK_PAIRS,
                                   side="right"))
        stop = max(stop, start + 1)
        chunk = live[start:stop]
        lens = npost[chunk]
        inst = np.repeat(chunk, lens)
        offs = np.repeat(pop.post_start[ploc[chunk]] - np.concatenate(
            [[0], np.cumsum(lens)[:-1]]), lens) + np.arange(int(lens.sum()))
        users = pop.post_users[offs]
        ok = predicate(users, loc[inst], value[inst])
        counts += np.bincount(inst[ok], minlength=m)
        start = stop
    return counts


def atleast(pop: Lookup) -> Predicate:
    """Every known location visited at least the required number of times (multiset ⊆)."""
    def pred(users: np.ndarray, loc: np.ndarray, value: np.ndarray) -> np.ndarray:
        ok = np.ones(len(users), dtype=bool)
        for j in range(loc.shape[1]):
            ok &= (loc[:, j] < 0) | (pop.get(users, loc[:, j]) >= np.maximum(value[:, j], 1))
        return ok
    return pred


def within(pop: Lookup, tolerance: float) -> Predicate:
    """Every known location visited, with ``v − v·τ ≤ value ≤ v + v·τ`` (skmob's arithmetic)."""
    def pred(users: np.ndarray, loc: np.ndarray, value: np.ndarray) -> np.ndarray:
        ok = np.ones(len(users), dtype=bool)
        for j in range(loc.shape[1]):
            v = pop.get(users, loc[:, j])
            ok &= (loc[:, j] < 0) | ((v > 0) & (v - v * tolerance <= value[:, j])
                                     & (value[:, j] <= v + v * tolerance))
        return ok
    return pred


def proportion(pop: Lookup, tolerance: float) -> Predicate:
    """Every known location visited, proportions f/max f over the instance's locations within τ."""
    def pred(users: np.ndarray, loc: np.ndarray, value: np.ndarray) -> np.ndarray:
        known = loc >= 0
        f = np.stack([pop.get(users, loc[:, j]) for j in range(loc.shape[1])], axis=1)
        f = np.where(known, f, 0.0)
        ok = ((f > 0) | ~known).all(axis=1)
        pv = f / np.where(ok, f.max(axis=1), 1.0)[:, None]
        pi = value / value.max(axis=1)[:, None]
        inside = (pv - pv * tolerance <= pi) & (pi <= pv + pv * tolerance)
        return ok & (inside | ~known).all(axis=1)
    return pred


class Positions:
    """Occurrences of (user, location) at row positions, for the greedy subsequence scan."""

    def __init__(self, rows: Rows, n_loc: int) -> None:
        sizes = rows.sizes()
        uid = np.repeat(np.arange(rows.n_users), sizes)
        pos = np.arange(len(uid)) - np.repeat(rows.starts[:-1], sizes)
        self.width = int(sizes.max()) + 1 if len(sizes) else 1
        self.n_loc = n_loc
        key = (uid.astype(np.int64) * n_loc + rows.loc) * self.width + pos
        self.keys = np.sort(key)

    def predicate(self, users: np.ndarray, loc: np.ndarray, value: np.ndarray) -> np.ndarray:
        """The known locations occur in the user's sequence in this order (greedy scan)."""
        ok = np.ones(len(users), dtype=bool)
        prev = np.full(len(users), -1, dtype=np.int64)
        base = users.astype(np.int64) * self.n_loc
        for j in range(loc.shape[1]):
            known = loc[:, j] >= 0
            prefix = base + np.maximum(loc[:, j], 0)
            q = prefix * self.width + prev + 1
            raw = np.searchsorted(self.keys, q)
            i = np.minimum(raw, len(self.keys) - 1)
            found = (raw < len(self.keys)) & (self.keys[i] // self.width == prefix)
            ok &= ~known | found
            prev = np.where(known & found, self.keys[i] % self.width, prev)
        return ok


def lower_bound_note(drawn: np.ndarray) -> float:
    """With 95 % confidence, at most this share of a user's k-combinations beats its sampled
    maximum: 1 − 0.05^(1/s) for s independent uniform draws (the fewest over sampled users)."""
    s = int(drawn.min()) if len(drawn) else 0
    return 1.0 if s == 0 else 1 - math.pow(0.05, 1 / s)
