"""Population class sizes: a population generalized to a release and counted per release class.

Journalist and marketer risk (El Emam & Dankar 2008) and δ-presence (Nergiz et al. 2007) compare
each equivalence class of a release (its size f) with the number F of population records that
fall into it once the population is generalized to the release's levels (ARX: the data set a
research subset was drawn from, suppressed records included). The population's rows need not
align with the release's; each released column's level comes from :func:`release_levels`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    Microdata,
    ParamPath,
    data_row,
    load,
    released,
)
from anoneval.plugins.microdata._common import Classes, column, released_classes
from anoneval.plugins.microdata._hierarchy import (
    HierarchyParams,
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
