"""Pairing of original and anonymized trajectories by ``trajectory_id`` and the distance
between the two versions of each trajectory (shared helpers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from anoneval.core.api import Context, DataError, Distance, PluginRef, Trajectories

#: Distances whose value is a length in metres on the sphere (the others are shares).
LENGTHS = {"Martinez2021", "DTW", "Hausdorff", "SSPD", "OWD", "SegmentHausdorff",
           "DiscreteFrechet", "Frechet", "ERP"}


def length_unit(params: Mapping[str, Any], default: str) -> str | None:
    """"metres" when the ``distance`` param (``default`` when absent) is a length on the
    sphere, else None."""
    ref = params.get("distance") or {}
    name = ref.get("name", default) if isinstance(ref, Mapping) else str(ref)
    space = (ref.get("params") or {}).get("space", "sphere") if isinstance(ref, Mapping) \
        else "sphere"
    return "metres" if name in LENGTHS and space == "sphere" else None


def fit_trajectory_distance(ref: PluginRef, original: Trajectories, ctx: Context) -> Distance:
    """The ``ref`` distance plugin fitted on the original; an error when it is not one that
    accepts trajectories."""
    distance = ctx.create("distance", ref)
    if not isinstance(distance, Distance) or "trajectories" not in distance.accepts:
        raise DataError(f"{ref.name} is not a trajectory distance")
    return distance.fit(original, ctx)


def version_distances(distance: Distance, original: Trajectories, anonymized: Trajectories,
                      xi: np.ndarray, yi: np.ndarray) -> np.ndarray:
    """D(original[xi[k]], anonymized[yi[k]]) for every k: the distance's ``paired`` when it
    has one, else one pairwise call per pair."""
    paired = getattr(distance, "paired", None)
    if callable(paired):
        return np.asarray(paired(original, anonymized, xi, yi), dtype=np.float64)
    return np.array([distance.pairwise(original, anonymized, [i], [j])[0, 0]
                     for i, j in zip(xi, yi, strict=True)], dtype=np.float64)


def pair_by_id(original: Trajectories, anonymized: Trajectories, measure: str
               ) -> tuple[np.ndarray, np.ndarray, list[str], dict[str, int]]:
    """Positions of the originals with an anonymized version and of those versions, the
    warnings about ids missing on either side, and their counts."""
    if len(original) == 0:
        raise DataError(f"{measure}: the original has no trajectories")
    pos = anonymized.index_of(original.trajectory_id)
    matched = np.flatnonzero(pos >= 0)
    if len(matched) == 0:
        raise DataError(f"{measure}: no anonymized trajectory has the id of an original one "
                        "(trajectories are paired by trajectory_id)")
    counts = {"matched": len(matched),
              "original_missing_in_anonymized": len(original) - len(matched),
              "anonymized_without_original": len(anonymized) - len(matched)}
    warnings = []
    if counts["original_missing_in_anonymized"]:
        warnings.append(f"{counts['original_missing_in_anonymized']} original trajectories have "
                        f"no anonymized version and are left out of {measure}")
    if counts["anonymized_without_original"]:
        warnings.append(f"{counts['anonymized_without_original']} anonymized trajectories have "
                        f"no original and are left out of {measure}")
    return matched, pos[matched], warnings, counts
