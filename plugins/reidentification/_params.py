"""Params and helpers the re-identification models share with the microdata family."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import Context, Dataset, Microdata
from anoneval.plugins.microdata._common import Classes, QIParams, released_classes


class RecordParams(QIParams):
    """Quasi-identifier params plus the per-record table switch."""

    per_record: bool = Field(
        False, description="Add a per-record table to details (`records`), aligned with the "
                           "rows of the assessed data.")


def classes(original: Dataset | None, anonymized: Dataset | None, p: QIParams,
            ctx: Context, missing: Literal["value", "suppressed"]) -> tuple[Microdata, Classes]:
    """:func:`released_classes` with ``missing`` mapped to the family's convention, so the
    group-by is shared with every measure on the same quasi-identifiers."""
    shared = QIParams(quasi_identifiers=p.quasi_identifiers,
                      suppression_token=p.suppression_token, missing=missing, id=p.id)
    return released_classes(original, anonymized, shared, ctx)


def record_table(data: Microdata, id_col: str | None, columns: dict[str, np.ndarray]
                 ) -> pd.DataFrame:
    """A per-record table aligned with ``data``'s rows, led by the id column when given."""
    out = pd.DataFrame(columns)
    if id_col is not None:
        out.insert(0, id_col, data.frame[id_col].to_numpy())
    return out
