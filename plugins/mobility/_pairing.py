"""Pairing of original and anonymized trajectories by ``trajectory_id`` (shared helper)."""

from __future__ import annotations

import numpy as np

from anoneval.core.api import DataError, Trajectories


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
