"""Population class sizes: a population generalized to a release and counted per release class.

Journalist and marketer risk (El Emam & Dankar 2008) and δ-presence (Nergiz et al. 2007) compare
each equivalence class of a release (its size f) with the number F of population records that
fall into it once the population is generalized to the release's levels (ARX: the data set a
research subset was drawn from, suppressed records included). The population's rows need not
align with the release's; each released column's level comes from :func:`release_levels`.

:func:`population_counts` counts from the records (the ``per_record`` path); the class-summary
path works on both sides' summaries, part by part: :func:`release_facts` (counts, missing cells,
the texts of hierarchy columns), :func:`release_rows` and :func:`population_rows` (each class as
a row keyed by two hashes of its tuple's texts, the population's generalized), joined by tuple
wherever the rows meet (:func:`presence`, whose :class:`Presence` figures add up over disjoint
tuples); an error's class is looked up by its hashes (:func:`release_texts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import (
    ClassSummary,
    Context,
    DataError,
    Dataset,
    Microdata,
    ParamPath,
    data_row,
    load,
    released,
)
from anoneval.plugins.microdata._common import (
    Classes,
    Hierarchy,
    column,
    key_classes,
    key_codes,
    released_classes,
    token_column,
)
from anoneval.plugins.microdata._hierarchy import (
    HierarchyParams,
    generalize,
    generalize_column,
    read_hierarchies,
    release_codes,
    release_levels,
)


class PopulationParams(HierarchyParams):
    """Params of measures that compare a release with its population."""

    population: ParamPath | None = Field(
        None, description="CSV/Parquet file of the population (raw values, relative to the "
                          "config file); default: the original dataset.")


@dataclass
class PopulationCounts:
    """``F[c]``: population records in release class ``c``; plus where they came from."""

    F: np.ndarray
    population_records: int
    outside: int
    levels: dict[str, int]


def population_dataset(original: Dataset | None, p: PopulationParams, ctx: Context,
                       who: str) -> Microdata:
    """The population: the ``population`` file when given, else the original dataset."""
    if p.population is not None:
        pop = load(ctx.path(p.population))
    elif original is not None:
        pop = original
    else:
        raise DataError(f"{who} needs a population: give the original dataset or the "
                        "'population' param (a file of raw records)")
    if not isinstance(pop, Microdata):
        raise DataError(f"the population must be microdata, got {pop.data_kind}")
    return pop


def release_population(original: Dataset | None, anonymized: Dataset | None,
                       p: PopulationParams, ctx: Context,
                       who: str) -> tuple[Microdata, Classes, PopulationCounts]:
    """The released data, its classes and the population records in each class.

    The population is the ``population`` file, else the original when the anonymized data is
    the release; ``who`` names the measure in the error raised when there is none.
    """
    if anonymized is None and p.population is None:
        raise DataError(f"{who} needs a population besides the release: give the original and "
                        "the anonymized data, or 'population'")
    data, cl = released_classes(None, released(original, anonymized), p, ctx)
    pop = population_dataset(original if anonymized is not None else None, p, ctx, who)
    return data, cl, population_counts(pop, data, cl, p, ctx)


def population_counts(population: Microdata, release: Microdata, cl: Classes,
                      p: PopulationParams, ctx: Context) -> PopulationCounts:
    """Count the population records in each class of ``cl`` (the release's classes).

    Each quasi-identifier of the population is generalized to the release's level (hierarchy
    columns; others are compared as text). Population records whose generalized tuple is in no
    release class are counted in ``outside``. Errors: a population smaller than the release, a
    population value missing from a hierarchy, and a class with more released than population
    records (naming the class's values and a released row).
    """
    qi = list(p.quasi_identifiers)
    population.require(qi, "quasi-identifier")
    if len(population) < cl.records - cl.deleted:
        raise DataError(f"the population has {len(population)} records, fewer than the "
                        f"{cl.records - cl.deleted} released records (population smaller than "
                        "the sample)")
    hs = read_hierarchies({c: v for c, v in p.hierarchies.items() if c in qi}, ctx,
                          p.suppression_token)
    levels = release_levels(release, qi, hs, p.levels, p.suppression_token, p.missing)
    rel_cols = [column(release, c, p.suppression_token, p.missing) for c in qi]
    pop_codes = []
    for c, rc in zip(qi, rel_cols, strict=True):
        gen = generalize_column(population, c, hs.get(c), levels[c], p.suppression_token,
                                p.missing)
        pop_codes.append(release_codes(gen, rc))
    row_class = cl.row_class()
    n_classes = len(cl.sizes)
    # key of each released class: its first row's code tuple
    first = np.full(n_classes, -1, dtype=np.int64)
    released_rows = np.flatnonzero(row_class >= 0)
    first[row_class[released_rows[::-1]]] = released_rows[::-1]
    key_rel = _tuple_key([rc.codes[first] for rc in rel_cols], [len(rc.texts) for rc in rel_cols])
    valid = np.ones(len(population), dtype=bool)
    for codes in pop_codes:
        valid &= codes >= 0
    key_pop = _tuple_key([np.maximum(codes, 0) for codes in pop_codes],
                         [len(rc.texts) for rc in rel_cols])
    pos = pd.Index(key_rel).get_indexer(key_pop)
    pos[~valid] = -1
    F = np.bincount(pos[pos >= 0], minlength=n_classes).astype(np.int64)
    short = cl.sizes > F
    if short.any():
        c = int(np.flatnonzero(short)[0])
        row = int(first[c])
        values = {q: str(rc.texts[rc.codes[row]]) for q, rc in zip(qi, rel_cols, strict=True)}
        if F[c] == 0:
            plain = [q for q in qi if q not in hs]
            raise DataError(
                f"no population record falls into release class {values} (e.g. released "
                f"{data_row(row)}): the population is generalized to the release's levels "
                "with 'hierarchies', and quasi-identifiers without one "
                f"({', '.join(plain) or 'none'}) are compared as text, so a generalized value "
                "never meets a raw one. Give 'hierarchies' for the generalized "
                "quasi-identifiers, a 'population' file at the release's levels, or, for "
                "journalist and marketer risk, 'population_size' (the size of the population "
                "the data was drawn from)")
        raise DataError(
            f"release class {values} (e.g. released {data_row(row)}) has "
            f"{int(cl.sizes[c])} records "
            f"but the population only {int(F[c])} (population smaller than the sample; levels "
            f"used: {levels})")
    return PopulationCounts(F=F, population_records=len(population),
                            outside=int((pos < 0).sum()), levels=levels)


def _tuple_key(codes: list[np.ndarray], cards: list[int]) -> np.ndarray:
    """One integer per code tuple (mixed radix; falls back to text past int64)."""
    total = 1.0
    for card in cards:
        total *= max(card, 1)
    if total < 2**62:
        key = np.zeros(len(codes[0]) if codes else 0, dtype=np.int64)
        for c, card in zip(codes, cards, strict=True):
            key = key * max(card, 1) + c
        return key
    return pd.MultiIndex.from_arrays(codes).to_flat_index().astype(str).to_numpy()


# -- from class summaries: the join by the generalized tuple on any engine --------------------

T = TypeVar("T")

#: Kind of a key value, so that values equal as text but of different types (``39`` and
#: ``"39"``) are told apart: suppressed, text, number, missing, other.
_TOKEN, _TEXT, _NUMBER, _MISSING, _OTHER = range(5)


def _kinds(values: pd.Index) -> np.ndarray:
    """The kind (see :data:`_TEXT`…) of each of ``values``."""
    return np.array([_MISSING if v is None or v is pd.NA or (isinstance(v, float) and v != v)
                     else _TEXT if isinstance(v, str)
                     else _NUMBER if isinstance(v, (bool, int, float, np.number))
                     else _OTHER for v in values], dtype=np.int64)


@dataclass(frozen=True)
class ReleaseFacts:
    """Of the release's class summary: records, suppressed records, missing cells per
    quasi-identifier and, per hierarchy column, its distinct texts (its domain, to detect its
    level)."""

    records: int
    suppressed: int
    missing: tuple[int, ...]
    texts: dict[str, np.ndarray]

    @classmethod
    def combine(cls, parts: list[ReleaseFacts]) -> ReleaseFacts:
        return cls(sum(f.records for f in parts), sum(f.suppressed for f in parts),
                   tuple(int(sum(m)) for m in zip(*(f.missing for f in parts), strict=True)),
                   {c: np.unique(np.concatenate([f.texts[c] for f in parts]).astype(str))
                    for c in parts[0].texts})


def release_facts(part: ClassSummary, qi: tuple[str, ...], token: str, missing: str,
                  leveled: tuple[str, ...]) -> ReleaseFacts:
    """:class:`ReleaseFacts` of one part (``leveled``: the columns with a hierarchy)."""
    cols, _, class_of_group, sizes = key_classes(key_codes(part.keys, qi), part.counts, token,
                                                 missing)
    texts = {c: col.texts[np.unique(col.codes)] for c, col in zip(qi, cols, strict=True)
             if c in leveled}
    return ReleaseFacts(part.n_records, int(sizes[class_of_group < 0].sum()),
                        tuple(c.n_missing for c in cols), texts)


#: Hash keys of :func:`_hashed`: two independent 64-bit hashes of a tuple's texts, so that two
#: tuples of a join (at most a few 10⁸) share both only with probability ~n²/2¹²⁹.
_HASH_KEYS = ("anoneval-tuple-1", "anoneval-tuple-2")


def _hashed(texts: list[np.ndarray], f: np.ndarray, F: np.ndarray, kind: np.ndarray,
            keep: bool = False) -> pd.DataFrame:
    """Rows of tuples as two hashes of their texts (``h0``, ``h1``: what the join shuffles,
    eight bytes a row each instead of a text per quasi-identifier) with ``f``, ``F`` and
    ``kind``; with ``keep`` also the texts (``k0``, ``k1``…)."""
    named = pd.DataFrame({f"k{j}": t for j, t in enumerate(texts)})
    out = pd.DataFrame({
        f"h{i}": pd.util.hash_pandas_object(named, index=False, hash_key=key).to_numpy()
        for i, key in enumerate(_HASH_KEYS)})
    if keep:
        out = pd.concat([named, out], axis=1)
    return out.assign(f=f.astype(np.int64), F=F.astype(np.int64), kind=kind.astype(np.uint64))


def release_rows(part: ClassSummary, qi: tuple[str, ...], token: str, missing: str,
                 texts: bool = False) -> pd.DataFrame:
    """One row per class of a part of the release's summary: its quasi-identifiers' texts
    hashed (:func:`_hashed`; with ``texts`` the texts too), its records ``f`` and the kinds of
    its values (``kind``, a hash)."""
    keys = key_codes(part.keys, qi)
    cols, gids, class_of_group, sizes = key_classes(keys, part.counts, token, missing)
    first = np.zeros(len(sizes), dtype=np.int64)
    first[gids[::-1]] = np.arange(len(gids) - 1, -1, -1)
    kept = np.flatnonzero(class_of_group >= 0)
    rows = first[kept]
    values, kinds = [], []
    for (_, uniques), col in zip(keys, cols, strict=True):
        codes = col.codes[rows]
        values.append(col.texts[codes])
        kind = _kinds(uniques)
        if col.token >= 0:
            kind[col.token] = _TOKEN
        kinds.append(kind[codes] if len(kind) else codes)
    kind = pd.util.hash_pandas_object(pd.DataFrame({j: k for j, k in enumerate(kinds)}),
                                      index=False).to_numpy()
    return _hashed(values, sizes[kept], np.zeros(len(kept)), kind, texts)


def release_texts(part: ClassSummary, key: tuple[int, int], qi: tuple[str, ...], token: str,
                  missing: str) -> tuple[str, ...] | None:
    """The texts of the release class of a part whose tuple hashes to ``key``, else None: the
    class an error names, looked up where the part lies."""
    rows = release_rows(part, qi, token, missing, texts=True)
    hit = rows[(rows["h0"].to_numpy() == key[0]) & (rows["h1"].to_numpy() == key[1])]
    return None if hit.empty else tuple(str(hit[f"k{j}"].iat[0]) for j in range(len(qi)))


def first_found(found: list[T | None]) -> T | None:
    """The first of ``found`` that is not None."""
    return next((x for x in found if x is not None), None)


def population_rows(part: ClassSummary, qi: tuple[str, ...], token: str, missing: str,
                    hierarchies: dict[str, Hierarchy], levels: dict[str, int]) -> pd.DataFrame:
    """A part of the population's summary generalized to the release's levels: one row per
    generalized tuple (its texts hashed, :func:`_hashed`) with its records ``F``. Suppressed
    cells stay the token; quasi-identifiers without a hierarchy keep their values as text."""
    texts = []
    for (codes, uniques), c in zip(key_codes(part.keys, qi), qi, strict=True):
        col = token_column(codes, uniques, np.bincount(codes, weights=part.counts,
                                                       minlength=len(uniques)), token, missing)
        gen = col.texts.copy()
        h = hierarchies.get(c)
        if h is not None:
            idx = np.setdiff1d(np.unique(col.codes), [col.token])
            gen[idx] = generalize(h, col.texts[idx], levels[c], c)
        texts.append(gen[col.codes])
    n = len(part.counts)
    frame = _hashed(texts, np.zeros(n), part.counts, np.zeros(n))
    if not n:
        return frame
    return frame.groupby(["h0", "h1"], sort=False, as_index=False).agg(
        f=("f", "sum"), F=("F", "sum"), kind=("kind", "first"))


@dataclass(frozen=True)
class Presence:
    """What the join of release classes and population tuples gives over some tuples:
    classes, their δ extremes, violating classes and records, population records outside the
    release, and (at most one of each, by the hashes of its tuple, :func:`release_texts`) a
    class with fewer population than released records and a tuple shared by release classes
    whose values differ but read alike."""

    classes: int
    violating: int
    in_violating: int
    lowest: float | None
    highest: float | None
    outside: int
    short: tuple[tuple[int, int], int, int] | None
    clash: tuple[int, int] | None

    @classmethod
    def combine(cls, parts: list[Presence]) -> Presence:
        lows = [p.lowest for p in parts if p.lowest is not None]
        highs = [p.highest for p in parts if p.highest is not None]
        shorts = [p.short for p in parts if p.short is not None]
        clashes = [p.clash for p in parts if p.clash is not None]
        return cls(sum(p.classes for p in parts), sum(p.violating for p in parts),
                   sum(p.in_violating for p in parts), min(lows) if lows else None,
                   max(highs) if highs else None, sum(p.outside for p in parts),
                   min(shorts) if shorts else None, min(clashes) if clashes else None)


def presence(frame: pd.DataFrame, delta_min: float, delta_max: float) -> Presence:
    """The :class:`Presence` of the rows of both sides whose tuples (hashed: ``h0``, ``h1``)
    meet here: a release class's F is the population records of its tuple (Nergiz et al.
    2007)."""
    groups = frame.groupby(["h0", "h1"], sort=False)
    f, F = groups["f"].sum(), groups["F"].sum()
    released = f.to_numpy() > 0
    rel = frame[frame["f"].to_numpy() > 0]
    kinds = rel.groupby(["h0", "h1"], sort=False)["kind"].nunique()
    clash = None
    if (kinds > 1).any():
        clash = min(tuple(map(int, k)) for k in kinds.index[kinds.to_numpy() > 1])
    fc, Fc = f.to_numpy()[released], F.to_numpy()[released]
    short = None
    bad = np.flatnonzero(fc > Fc)
    if len(bad):
        index = f.index[released]
        short = min((tuple(map(int, index[i])), int(fc[i]), int(Fc[i])) for i in bad)
    delta = fc / np.maximum(Fc, 1)
    violates = (delta < delta_min) | (delta > delta_max)
    has = len(delta) > 0
    return Presence(int(released.sum()), int(violates.sum()), int(fc[violates].sum()),
                    float(delta.min()) if has else None, float(delta.max()) if has else None,
                    int(F.to_numpy()[~released].sum()), short, clash)
