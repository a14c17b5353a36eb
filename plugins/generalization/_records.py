"""ARX's record-level quality models on partitioned data: cell tables, then passes over records.

RecordSquaredError and HierarchyKLDivergence score each record by facts of the whole data (a
column's standard deviation and range; the size of the record's original class and of its
released class). On the dask engine they run in two steps: the cell tables of
:mod:`~anoneval.plugins.generalization._cells` (a reduction over the paired records) give those
facts per column, then the paired records are passed over again where they lie
(``ctx.records``): a plain sum per block for the squared error; for the divergence two
hash-partitioned group-bys on Dask (by the original tuple, which gives each record its
original class size, then by the released tuple, which gives its released class size and
area), so no class table and no record reaches the client. On the local engine the models read
the shared aligned codes of :mod:`~anoneval.plugins.generalization._quality`; both engines
score with the same formulas (:func:`squared_terms`, :func:`kl_sums`).

Records are keyed across blocks by the text of their values (ARX's view of a value, as
:func:`~anoneval.plugins.microdata._common.as_text` writes it), a missing value by None and
every suppressed cell of the release (the token, a missing value under
``missing="suppressed"``, the cells of a deleted record) by the token; values of one column
with the same text (``39`` and ``"39"`` in a column of mixed objects, which no data file holds)
count as one there. The divergence's shuffles carry integers: each key's position among the
values of the cell tables, each tuple as one int64 mixed-radix key (:class:`KeyCodes`).
Conventions: :mod:`anoneval.plugins.generalization._quality`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from anoneval.core.api import (
    DELETED,
    Context,
    DataError,
    MeasureResult,
    Records,
)
from anoneval.plugins.generalization._cells import CellParts, CellQualityModel, Cells, cells_of
from anoneval.plugins.generalization._numbers import Numbers
from anoneval.plugins.generalization._quality import QualityModel
from anoneval.plugins.microdata._common import as_text

# -- keys of values across blocks ----------------------------------------------------------------


def value_keys(values: pd.Series) -> np.ndarray:
    """Each value's text (as ARX reads it), None for a missing value."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    texts = as_text(uniques)
    texts[np.asarray(pd.isna(uniques), dtype=bool)] = None
    return texts[codes]


def released_keys(values: pd.Series, token: str, missing: str,
                  deleted: np.ndarray | None = None) -> np.ndarray:
    """:func:`value_keys` of released cells, every suppressed cell the token: a cell whose text
    is the token, a missing one under ``missing="suppressed"``, those of ``deleted`` records."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    texts = as_text(uniques)
    isna = np.asarray(pd.isna(uniques), dtype=bool)
    token_like = (texts == token) & ~isna
    if missing == "suppressed":
        token_like |= isna
    texts[isna] = None
    texts[token_like] = token
    keys = texts[codes]
    if deleted is not None and deleted.any():
        keys[deleted] = token
    return keys


def _pattern_keys(parts: CellParts, column: str, token: str, missing: str
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The keys of the (original, released) values of each row of a column's cell table."""
    table = parts.tables[column]
    return value_keys(table["raw"]), released_keys(table["rel"], token, missing)


def _factorized(keys: np.ndarray) -> tuple[np.ndarray, pd.Index]:
    """Codes of ``keys`` and the distinct keys, a missing one as None (factorize makes it NaN,
    which an index of keys would not find)."""
    codes, uniques = pd.factorize(keys, use_na_sentinel=False)
    uniques = np.asarray(uniques, dtype=object)
    uniques[np.asarray(pd.isna(uniques), dtype=bool)] = None
    return codes, pd.Index(uniques, dtype=object)


def _lookup(index: pd.Index, keys: pd.Index, values: np.ndarray, column: str) -> np.ndarray:
    at = index.get_indexer(keys)
    if (at < 0).any():
        raise DataError(f"column {column!r}: a value of the records is not in its cell table "
                        "(did the data change between the two passes?)")
    return values[at]


# -- the shared formulas ---------------------------------------------------------------------


def squared_terms(num: Numbers, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """ARX's record-level squared error of one column: the standardized squared distance of
    each (original, released) value pair of ``num`` (to the farther end of the released
    interval) and of each original value to the farther end of the column's overall range;
    None for a constant column (σ = 0), which adds nothing. σ is the population standard
    deviation of the original's ``n`` values (Prasser et al. 2016; ARX's
    ``QualityModelRowOrientedSquaredError``)."""
    x, ylo, yhi = num.x_lo[num.a], num.y_lo[num.b], num.y_hi[num.b]
    mean = float(num.w @ x) / n
    sd = float(np.sqrt(float(num.w @ (x - mean) ** 2) / n))  # population
    if sd == 0:
        return None
    m = min(x.min(), num.x_hi[num.a].min(), ylo.min(), yhi.min())
    big = max(x.max(), num.x_hi[num.a].max(), ylo.max(), yhi.max())
    pair = ((x - np.where(yhi - x > x - ylo, yhi, ylo)) / sd) ** 2
    xo = num.x_lo
    worst = ((xo - np.where(big - xo > xo - m, big, m)) / sd) ** 2
    return pair, worst


def kl_sums(f_orig: np.ndarray, f_rel: np.ndarray, log_area: np.ndarray, sup: np.ndarray,
            n: int, suppressed: int, log_domain: float,
            copies: np.ndarray | None = None) -> tuple[float, float]:
    """Σ p·log2(p/q) and Σ p·log2(p·Π_j D_j) over records (``copies`` of each entry, default
    one): p = f_orig/n, q = (f_rel/n)/area, for a suppressed record (|S|/n)/Π_j D_j (Kifer &
    Gehrke 2006; ARX's ``MetricSDNMKLDivergence``)."""
    pr = f_orig / n
    log_p = np.log2(pr)
    log_q = np.where(sup, np.log2(max(suppressed, 1) / n) - log_domain,
                     np.log2(f_rel / n) - log_area)
    kl = pr * (log_p - log_q)
    upper = pr * (log_p + log_domain)
    if copies is not None:
        kl, upper = kl * copies, upper * copies
    return float(kl.sum()), float(upper.sum())


# -- the models' base --------------------------------------------------------------------------


class RecordQualityModel(CellQualityModel):
    """Base of ARX's record-level models: the shared aligned codes in memory; on the dask engine
    the cell tables (partition-wise, paired), then ``ctx.records`` (:meth:`record_loss`)."""

    # in memory: the shared inputs of the comparison, as every quality model
    compute = QualityModel.compute
    loss = QualityModel.loss

    def finalize(self, combined: CellParts, ctx: Context) -> MeasureResult:
        if ctx.records is None:
            raise DataError(f"{self.name} passes over the paired records again after their "
                            "cell tables (Context.records), which this context lacks")
        if not sum(int(t["count"].sum()) for t in combined.tables.values()):
            raise DataError("the original data has no records")
        # blocks merged on ``id`` number their rows from 0 each: no row to name then
        cells = cells_of(combined, self.params, ctx, rows_known=self.params.id is None)
        return self.record_loss(cells, combined, ctx.records, ctx)

    def record_loss(self, cells: Cells, parts: CellParts, records: Records,
                    ctx: Context) -> MeasureResult:
        """The result from the cell tables (``cells``, made of ``parts``) and further passes
        over the paired ``records``."""
        raise NotImplementedError


# -- record passes: squared error ----------------------------------------------------------------


def squared_block(frame: pd.DataFrame, token: str, missing: str,
                  terms: Sequence[tuple[str, pd.Series, pd.Series]]) -> tuple[float, float]:
    """Σ_r sqrt(Σ_j pair term) and Σ_r sqrt(Σ_j worst term) of a block of paired records;
    ``terms`` holds per non-constant column its pair terms keyed by (original key, released
    key) and its worst terms keyed by the original key."""
    deleted = frame[DELETED].to_numpy(dtype=bool)
    real = np.zeros(len(frame))
    worst = np.zeros(len(frame))
    for column, pair, far in terms:
        raw = value_keys(frame[("original", column)])
        rel = released_keys(frame[("anonymized", column)], token, missing, deleted)
        raw_codes, raw_index = _factorized(raw)
        rel_codes, rel_index = _factorized(rel)
        width = max(len(rel_index), 1)
        codes, uniques = pd.factorize(raw_codes.astype(np.int64) * width + rel_codes)
        keys = pd.MultiIndex.from_arrays([raw_index.take(uniques // width),
                                          rel_index.take(uniques % width)])
        real += _lookup(pair.index, keys, pair.to_numpy(), column)[codes]
        worst += _lookup(far.index, raw_index, far.to_numpy(), column)[raw_codes]
    return float(np.sqrt(real).sum()), float(np.sqrt(worst).sum())


def add_pairs(parts: list[tuple[float, float]]) -> tuple[float, float]:
    """Sums of :func:`squared_block`'s (or :func:`kl_reduce`'s) pairs of figures."""
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def squared_sums(cells: Cells, parts: CellParts, numbers: Sequence[Numbers], token: str,
                 missing: str, records: Records) -> tuple[float, float]:
    """Σ_r d_r and Σ_r of the worst d_r over the paired records, the terms of each column
    computed from its cell table and sent to the blocks."""
    terms = []
    for c, num in zip(cells.columns, numbers, strict=True):
        found = squared_terms(num, cells.n)
        if found is None:
            continue
        pair, far = found
        s = c.side
        width = max(len(s.rel_texts), 1)
        # each cell pattern's pair: pairs are sorted by original code, then released code
        at = np.searchsorted(num.a * width + num.b, s.orig * width + s.rel)
        raw, rel = _pattern_keys(parts, s.name, token, missing)
        index = pd.MultiIndex.from_arrays([pd.Index(raw, dtype=object),
                                           pd.Index(rel, dtype=object)])
        by_pair = pd.Series(pair[at], index=index)
        by_pair = by_pair[~by_pair.index.duplicated()]
        by_raw = pd.Series(far[s.orig], index=pd.Index(raw, dtype=object))
        terms.append((s.name, by_pair, by_raw[~by_raw.index.duplicated()]))
    if not terms:
        return 0.0, 0.0
    return records.reduce(functools.partial(squared_block, token=token, missing=missing,
                                            terms=terms), add_pairs)


# -- record passes: KL divergence ---------------------------------------------------------------


@dataclass(frozen=True)
class KeyCodes:
    """Every value of each quasi-identifier (its key, from the cell tables) numbered, so the
    blocks key records by integers: ``raw[j]``/``rel[j]`` index the original's and the
    release's keys of column j; ``groups`` split the columns so that each group's codes form
    one int64 mixed-radix key (``o0…`` and ``e0…``)."""

    raw: list[pd.Index]
    rel: list[pd.Index]
    factors: list[np.ndarray]
    token: list[np.ndarray]
    raw_groups: list[list[int]]
    rel_groups: list[list[int]]

    @property
    def names(self) -> tuple[list[str], list[str]]:
        return ([f"o{i}" for i in range(len(self.raw_groups))],
                [f"e{i}" for i in range(len(self.rel_groups))])


def _radix_groups(cards: Sequence[int]) -> list[list[int]]:
    """Runs of consecutive columns whose product of cardinalities stays below 2^62."""
    groups: list[list[int]] = [[]]
    size = 1
    for j, card in enumerate(cards):
        if groups[-1] and size * card >= 2**62:
            groups.append([])
            size = 1
        groups[-1].append(j)
        size *= card
    return groups


def _radix(codes: Sequence[np.ndarray], indexes: Sequence[pd.Index],
           groups: Sequence[Sequence[int]], n: int) -> list[np.ndarray]:
    out = []
    for group in groups:
        key = np.zeros(n, dtype=np.int64)
        for j in group:
            key = key * max(len(indexes[j]), 1) + codes[j]
        out.append(key)
    return out


def _codes(keys: np.ndarray, index: pd.Index, column: str) -> np.ndarray:
    """Each key's position in ``index`` (the keys of the cell tables)."""
    codes, uniques = _factorized(keys)
    at = index.get_indexer(uniques)
    if (at < 0).any():
        raise DataError(f"column {column!r}: a value of the records is not in its cell table "
                        "(did the data change between the two passes?)")
    return at[codes]


def kl_block(frame: pd.DataFrame, qi: Sequence[str], token: str, missing: str,
             coded: KeyCodes) -> pd.DataFrame:
    """A block of paired records as its distinct (original tuple, released tuple) keys
    (``o…``, ``e…``: int64), with their records ``n``, the released tuple's area (Π_j of its
    values' share·D, in column order as the local engine multiplies them) and whether it is
    suppressed (every cell the token)."""
    deleted = frame[DELETED].to_numpy(dtype=bool)
    area = np.ones(len(frame))
    sup = np.ones(len(frame), dtype=bool)
    raw, rel = [], []
    for j, c in enumerate(qi):
        raw.append(_codes(value_keys(frame[("original", c)]), coded.raw[j], c))
        e = _codes(released_keys(frame[("anonymized", c)], token, missing, deleted),
                   coded.rel[j], c)
        area *= coded.factors[j][e]
        sup &= coded.token[j][e]
        rel.append(e)
    o_names, e_names = coded.names
    keys = dict(zip([*o_names, *e_names],
                    [*_radix(raw, coded.raw, coded.raw_groups, len(frame)),
                     *_radix(rel, coded.rel, coded.rel_groups, len(frame))], strict=True))
    grouped = pd.DataFrame({**keys, "area": area, "sup": sup}).groupby(
        [*o_names, *e_names], sort=False)
    out = grouped.agg(n=("area", "size"), area=("area", "first"),
                      sup=("sup", "first")).reset_index()
    return out.astype({**{c: np.int64 for c in [*o_names, *e_names]}, "n": np.int64,
                       "area": float, "sup": bool})


def kl_original(frame: pd.DataFrame, o_names: Sequence[str], e_names: Sequence[str]
                ) -> pd.DataFrame:
    """Each (original, released) key's original class size ``f`` (the block holds whole
    original classes), then the entries grouped by released tuple and ``f``."""
    f = frame.groupby(list(o_names), sort=False)["n"].transform("sum")
    out = frame.drop(columns=list(o_names)).assign(f=f.to_numpy(dtype=np.int64))
    out = out.groupby([*e_names, "f"], sort=False).agg(
        n=("n", "sum"), area=("area", "first"), sup=("sup", "first")).reset_index()
    return out.astype({**{c: np.int64 for c in e_names}, "f": np.int64, "n": np.int64,
                       "area": float, "sup": bool})


def kl_released(frame: pd.DataFrame, e_names: Sequence[str], n: int, suppressed: int,
                log_domain: float) -> pd.DataFrame:
    """:func:`kl_sums` of a block holding whole released classes (their sizes summed here)."""
    f_rel = frame.groupby(list(e_names), sort=False)["n"].transform("sum")
    kl, upper = kl_sums(frame["f"].to_numpy(dtype=float), f_rel.to_numpy(dtype=float),
                        np.log2(frame["area"].to_numpy(dtype=float)),
                        frame["sup"].to_numpy(dtype=bool), n, suppressed, log_domain,
                        frame["n"].to_numpy(dtype=float))
    return pd.DataFrame({"kl": [kl], "upper": [upper]})


def kl_reduce(frame: pd.DataFrame) -> tuple[float, float]:
    """The block's divergence and all-suppressed divergence."""
    return float(frame["kl"].sum()), float(frame["upper"].sum())


def key_codes(cells: Cells, parts: CellParts, token: str, missing: str) -> KeyCodes:
    """The :class:`KeyCodes` of the cell tables, with each released key's share·D (a
    released value outside the hierarchy is an error here, as on the local engine)."""
    raw_index, rel_index, factors, tokens = [], [], [], []
    for c in cells.columns:
        s = c.side
        per_text = s.share() * s.table.domain
        raw, rel = _pattern_keys(parts, s.name, token, missing)
        raw_index.append(pd.Index(raw, dtype=object).unique())
        rel_keys = pd.Index(rel, dtype=object)
        index = rel_keys.unique()
        factor = np.empty(len(index))
        factor[index.get_indexer(rel_keys)] = per_text[s.rel]
        rel_index.append(index)
        factors.append(factor)
        tokens.append(np.asarray(index == token, dtype=bool))
    return KeyCodes(raw_index, rel_index, factors, tokens,
                    _radix_groups([max(len(i), 1) for i in raw_index]),
                    _radix_groups([max(len(i), 1) for i in rel_index]))


def kl_divergence(cells: Cells, parts: CellParts, qi: Sequence[str], token: str, missing: str,
                  records: Records) -> tuple[float, float]:
    """Σ_rows p·log2(p/q) and the all-suppressed divergence, by two group-bys of the records."""
    log_domain = float(sum(np.log2(float(c.side.table.domain)) for c in cells.columns))
    coded = key_codes(cells, parts, token, missing)
    o_names, e_names = coded.names
    passes = records.map(functools.partial(kl_block, qi=list(qi), token=token, missing=missing,
                                           coded=coded))
    passes = passes.map(functools.partial(kl_original, o_names=o_names, e_names=e_names),
                        by=o_names)
    passes = passes.map(functools.partial(kl_released, e_names=e_names, n=cells.n,
                                          suppressed=cells.suppressed, log_domain=log_domain),
                        by=e_names)
    return passes.reduce(kl_reduce, add_pairs)
