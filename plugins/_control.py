"""Checks of the control set (records held out of the release) shared by the families that
read ``ctx.control``: attacks, similarity and fidelity measures."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from anoneval.core.api import DataError, Dataset, Microdata, refuse_infinite

#: Fewest control records a measure compares against: one record is no sample of the
#: population (a rate over one target, a nearest neighbour that is the only candidate).
MIN_CONTROL_RECORDS = 2


def checked_control(control: Dataset | None, columns: Sequence[str], measure: str) -> Microdata:
    """The control set, refused with an error naming it when it is not microdata, has fewer
    than :data:`MIN_CONTROL_RECORDS` records, lacks one of ``columns``, holds only missing
    values in one of them, or holds an infinite value in one of them."""
    if control is None:
        raise DataError(f"{measure} needs the control set")
    if not isinstance(control, Microdata):
        raise DataError(f"{measure}: the control set must be microdata, not {control.data_kind}")
    if len(control) < MIN_CONTROL_RECORDS:
        raise DataError(f"{measure}: the control set has {len(control)} record(s); it needs at "
                        f"least {MIN_CONTROL_RECORDS} held-out records to compare against")
    missing = [c for c in columns if c not in control.columns]
    if missing:
        raise DataError(f"{measure}: column(s) {', '.join(map(repr, missing))} not in the "
                        f"control set; its columns: {', '.join(map(str, control.columns))}")
    refuse_non_finite(control.frame, columns, "control set", measure)
    return control


def refuse_non_finite(frame: pd.DataFrame, columns: Sequence[str], side: str,
                      measure: str, empty_ok: bool = False) -> None:
    """An error naming ``side`` when a numeric one of ``columns`` holds ±inf (distances and
    comparisons with inf are undefined) or, unless ``empty_ok``, one holds only missing
    values."""
    empty = [] if empty_ok else [str(c) for c in columns if frame[c].isna().all()]
    if empty:
        raise DataError(f"{measure}: column(s) {', '.join(map(repr, empty))} of the {side} hold "
                        "only missing values")
    for c in columns:
        s = frame[c]
        if pd.api.types.is_float_dtype(s):
            refuse_infinite(s.to_numpy(dtype=np.float64, na_value=np.nan),
                            f"{measure}: column {c!r} of the {side}",
                            "the measure needs finite numbers (missing values may be empty)")
