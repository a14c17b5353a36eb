"""Turning measure details (numpy, pandas, pydantic, containers) into plain JSON values."""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import Enum
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel


def to_jsonable(obj: Any) -> Any:
    """Turn details (numpy, pandas, pydantic, nested containers) into plain JSON values.

    NaN becomes null; ±inf become the strings "inf"/"-inf" (JSON has no infinities).
    DataFrames become a list of row objects.
    """
    if isinstance(obj, Enum):
        return to_jsonable(obj.value)
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, np.bool_):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        if math.isnan(f):
            return None
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(obj, pd.DataFrame):
        return [
            {str(k): to_jsonable(v) for k, v in row.items()}
            for row in obj.to_dict(orient="records")
        ]
    if isinstance(obj, pd.Series):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, BaseModel):
        return to_jsonable(obj.model_dump())
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (pd.Timestamp, np.datetime64)):
        return str(obj)
    if obj is pd.NA or obj is pd.NaT:
        return None
    return str(obj)
