"""Location time attack: the intruder knows k visited locations with their time at a precision."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.plugins.mobility._attacks import Lookup, Plan, atleast, frequency_rows
from anoneval.plugins.mobility._risk import AttackParams, MobilityAttack
from anoneval.plugins.mobility._tiles import VisitTable

Precision = Literal["year", "month", "day", "hour", "minute", "second"]


def time_keys(t: np.ndarray, precision: str, compat: str | None) -> np.ndarray:
    """Integer key of each epoch time (UTC) truncated to ``precision``.

    Intended: the calendar year, month, day, hour, minute or second containing the time.
    ``compat="skmob"`` reproduces ``skmob.utils.utils.date_time_precision``: the decimal
    concatenation, unpadded, of year, month, day, then the month again (never the hour) for
    "hour", plus the minute for "minute", plus the second for "second"; read as an integer
    (the strings are digits, so this keeps their equality). Its "hour" is therefore "day",
    "minute" ignores the hour, and (m=1, d=11) collides with (m=11, d=1).
    """
    t = np.asarray(t, dtype=np.int64)
    if compat != "skmob":
        if precision in ("year", "month"):
            dt = pd.DatetimeIndex(pd.to_datetime(t, unit="s"))
            y = dt.year.to_numpy().astype(np.int64)
            return y if precision == "year" else y * 12 + dt.month.to_numpy() - 1
        step = {"day": 86400, "hour": 3600, "minute": 60, "second": 1}[precision]
        return np.floor_divide(t, step)
    dt = pd.DatetimeIndex(pd.to_datetime(t, unit="s"))
    parts = {"year": ["year"], "month": ["year", "month"], "day": ["year", "month", "day"],
             "hour": ["year", "month", "day", "month"],
             "minute": ["year", "month", "day", "month", "minute"],
             "second": ["year", "month", "day", "month", "minute", "second"]}[precision]
    text = pd.Series([""] * len(t), dtype=object)
    for part in parts:
        text = text + pd.Series(getattr(dt, part).to_numpy()).astype(str)
    return text.astype(np.int64).to_numpy()


class LocationTimeAttack(MobilityAttack):
    """The intruder knows k visits as (location, time at ``time_precision``) pairs.

    v matches I when every (location, time) pair of I occurs in v at least as often as in I
    (multiset inclusion, reference/mobility_semantics.md §3). Times are UTC. The default is
    the intended precision; ``compat: "skmob"`` reproduces skmob's ``date_time_precision``
    (its "hour" is really the day, its "minute" drops the hour; see :func:`time_keys`).

    Source: Pellungrini et al. (2017), ACM TIST 9(3); scikit-mobility 1.3.1
    ``skmob/privacy/attacks.py`` and ``skmob/utils/utils.py``. Risk, targets and sampling:
    see ``_risk.py``.
    """

    name = "LocationTimeAttack"
    description = "Location time attack: the intruder knows k visited locations with their times."

    class Params(AttackParams):
        time_precision: Precision = Field("hour", description="Precision of the known times.")
        compat: Literal["skmob"] | None = Field(None, description=(
            "skmob: its date_time_precision keys (hour = day, minute without the hour)."))

    def location_keys(self, table: VisitTable) -> np.ndarray:
        tk = time_keys(table.t, self.params.time_precision, self.params.compat)
        return np.stack([table.tile, tk], axis=1)

    def tile_of_key(self, keys: np.ndarray) -> np.ndarray:
        return keys[:, 0]

    def attack(self, know, pop, n_loc, tie):  # type: ignore[no-untyped-def]
        fk = frequency_rows(know.starts, know.loc)
        plan = Plan(fk, self.params.knowledge_length, "multiset",
                                   sample_rows=know)
        look = Lookup(frequency_rows(pop.starts, pop.loc), n_loc)
        return plan, look, atleast(look)

    def extra_details(self) -> dict[str, Any]:
        return {"time_precision": self.params.time_precision, "compat": self.params.compat}
