"""Turning measure details (numpy, pandas, pydantic, containers) into plain JSON values."""

from __future__ import annotations

import math
from collections import UserString
from collections.abc import Mapping
from enum import Enum
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel


def to_jsonable(obj: Any) -> Any:
    """Turn details (numpy, pandas, pydantic, nested containers) into plain JSON values.

    NaN and ±inf become null (JSON has no such numbers; the evaluator states which details
    were not finite in the measure's warnings). DataFrames become a list of row objects.
    """
    kind = type(obj)  # the plain types of a dumped report first: a report has 10^5 values
    if kind is str or kind is int or kind is bool or obj is None:
        return obj
    if kind is float:
        return obj if math.isfinite(obj) else None
    if kind is dict:
        return {k if type(k) is str else str(k): to_jsonable(v) for k, v in obj.items()}
    if kind is list:
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, Enum):
        return to_jsonable(obj.value)
    if isinstance(obj, str):  # None and bools (no subclasses) were returned above
        return obj
    if isinstance(obj, UserString):  # e.g. an input's hash, computed when first read
        return str(obj)
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, np.bool_):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
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


def non_finite(obj: Any, path: str = "") -> list[str]:
    """Paths (``a.b[3]``, ``table.column``) of the NaN and infinite numbers in details."""
    if isinstance(obj, (float, np.floating)):
        return [] if math.isfinite(obj) else [path or "value"]
    if isinstance(obj, pd.DataFrame):
        return [f"{path}.{c}" if path else str(c) for c in obj.columns
                if pd.api.types.is_float_dtype(obj[c]) and not np.isfinite(obj[c]).all()]
    if isinstance(obj, (np.ndarray, pd.Series)) and obj.dtype.kind == "f":
        return [] if np.isfinite(obj).all() else [path]
    if isinstance(obj, Mapping):
        return [p for k, v in obj.items() for p in non_finite(v, f"{path}.{k}" if path else str(k))]
    if isinstance(obj, (list, tuple)):
        return [p for i, v in enumerate(obj) for p in non_finite(v, f"{path}[{i}]")]
    return []
