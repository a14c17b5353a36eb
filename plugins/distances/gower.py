"""Gower's distance between microdata records of mixed types."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    Distance,
    Microdata,
    Params,
    data_row,
    refuse_infinite,
)
from anoneval.plugins.distances._records import (
    CHUNK_ELEMENTS,
    as_microdata,
    choose_columns,
    is_numeric,
    rows_cols,
)


@dataclass
class _Column:
    name: str
    kind: str  # "numeric", "ordinal" or "categorical"
    weight: float
    scale: float = 1.0  # range (numeric, ordinal ranks)
    levels: pd.Index | None = None  # ordinal levels in order


class Gower(Distance):
    """Gower's (1971) general dissimilarity for mixed numeric, ordinal and categorical columns.

        d(x, y) = Σ_k w_k δ_k d_k(x, y) / Σ_k w_k δ_k

    - numeric: d_k = |x_k − y_k| / R_k, R_k the range of column k in the reference (original);
      values outside that range give d_k > 1. A constant column (R_k = 0) gives 0 if equal, 1
      if not.
    - ordinal (Kaufman & Rousseeuw 1990, ch. 1): values replaced by their rank r among the
      ordered levels, then d_k = |r_x − r_y| / (M − 1), M the number of levels. The order is
      ``levels[column]`` when given (lowest first; the only way to order text read from a
      file), else an ordered pandas Categorical's order, else the sorted distinct values of the
      reference (alphabetical for text). A value that is not a level is an error.
    - categorical (anything not numeric, and booleans): d_k = 0 if equal, 1 otherwise.
    - δ_k = 0 when x_k or y_k is missing (the column is skipped for that pair), else 1; a pair
      with no comparable column gets NaN. w_k = ``weights`` (default 1).
    Distances are in [0, 1] for values inside the reference's ranges. Columns: the given ones,
    or all columns of the reference.
    """

    name = "Gower"
    description = "Gower's distance for mixed numeric and categorical columns (microdata)."

    class Params(Params):
        columns: list[str] | None = Field(
            None, min_length=1, description="Columns compared; null: all columns.")
        categorical: list[str] = Field(
            default_factory=list, description="Numeric columns to compare as categories "
            "(codes); non-numeric columns are categorical anyway.")
        ordinal: list[str] = Field(
            default_factory=list, description="Columns compared by rank of ordered levels.")
        levels: dict[str, list[str | int | float]] = Field(
            default_factory=dict, description="Levels of ordinal columns, lowest first, e.g. "
            '{"edu": ["low", "mid", "high"]}; a column named here is ordinal. Default order: an '
            "ordered Categorical's, else the sorted distinct values.")
        weights: dict[str, float] = Field(
            default_factory=dict, description="Weight of a column (default 1); 0 ignores it.")

    columns_: list[str] | None = None

    def fit(self, reference: Dataset, ctx: Context) -> Gower:
        data = as_microdata(reference, "reference")
        p = self.params
        columns = choose_columns(data, p.columns, self.name, numeric=False)
        ordinal = [*p.ordinal, *(c for c in p.levels if c not in p.ordinal)]
        for field, names in (("categorical", p.categorical), ("ordinal", p.ordinal),
                             ("levels", list(p.levels)), ("weights", list(p.weights))):
            unknown = [c for c in names if c not in columns]
            if unknown:
                raise DataError(f"{self.name}: {field} names {', '.join(map(repr, unknown))}, "
                                f"not among the compared columns {columns}")
        bad = [w for w in p.weights.values() if not w >= 0]
        if bad:
            raise DataError(f"{self.name}: weights must be ≥ 0, got {bad}")
        both = [c for c in p.categorical if c in ordinal]
        if both:
            raise DataError(f"{self.name}: {', '.join(map(repr, both))} named both categorical "
                            "and ordinal")
        for col, given in p.levels.items():
            if len(given) < 1 or len(set(given)) < len(given):
                raise DataError(f"{self.name}: levels of {col!r} must be distinct values, lowest "
                                f"first; got {given}")
        specs = []
        for col in columns:
            s = data.frame[col]
            weight = float(p.weights.get(col, 1.0))
            if col in ordinal:
                if col in p.levels:
                    levels = pd.Index(p.levels[col])
                elif isinstance(s.dtype, pd.CategoricalDtype) and s.dtype.ordered:
                    levels = pd.Index(s.dtype.categories)
                else:
                    levels = pd.Index(np.sort(s.dropna().unique()))
                specs.append(_Column(col, "ordinal", weight, max(len(levels) - 1, 1), levels))
            elif col not in p.categorical and is_numeric(s):
                values = pd.to_numeric(s, errors="coerce")
                span = float(values.max() - values.min()) if values.notna().any() else 0.0
                specs.append(_Column(col, "numeric", weight, span))
            else:
                specs.append(_Column(col, "categorical", weight))
        self.specs_ = specs
        self.columns_ = columns
        return self

    def _encode(self, data: Microdata, role: str, spec: _Column) -> np.ndarray:
        """Column values as floats (NaN = missing): numbers, ordinal ranks or category codes."""

        def compute() -> np.ndarray:
            data.require([spec.name], f"{self.name} column")
            s = data.frame[spec.name]
            if spec.kind == "numeric":
                out = pd.to_numeric(s, errors="coerce").to_numpy(np.float64)
                bad = out != out
                if (bad & s.notna().to_numpy()).any():
                    row = int(np.flatnonzero(bad & s.notna().to_numpy())[0])
                    raise DataError(f"{self.name}: column {spec.name!r} of the {role} data has "
                                    f"a non-numeric value {s.iloc[row]!r} at {data_row(row)}")
                refuse_infinite(out, f"{self.name}: column {spec.name!r} of the {role} data",
                                "Gower needs finite numbers or missing values")
                return out
            if spec.kind == "ordinal":
                assert spec.levels is not None
                rank = spec.levels.get_indexer(s).astype(np.float64)
                unknown = (rank < 0) & s.notna().to_numpy()
                if unknown.any():
                    row = int(np.flatnonzero(unknown)[0])
                    raise DataError(f"{self.name}: ordinal column {spec.name!r} of the {role} "
                                    f"data has {s.iloc[row]!r} at {data_row(row)}, not one of its "
                                    f"levels {list(spec.levels)}")
                rank[rank < 0] = np.nan
                return rank
            return s.to_numpy(dtype=object)

        levels = tuple(spec.levels) if spec.levels is not None else None
        return data.cached(("gower", spec.name, spec.kind, levels), compute)

    def pairwise(self, x: Dataset, y: Dataset, rows: np.ndarray | None = None,
                 cols: np.ndarray | None = None) -> np.ndarray:
        if self.columns_ is None:
            raise RuntimeError(f"{self.name} must be fitted on the original data first")
        mx, my = as_microdata(x, "first"), as_microdata(y, "second")
        rows, cols = rows_cols(mx, my, rows, cols)
        out = np.empty((len(rows), len(cols)))
        step = max(CHUNK_ELEMENTS // max(len(cols), 1), 1)
        encoded = []
        for spec in self.specs_:
            ex, ey = self._encode(mx, "first", spec), self._encode(my, "second", spec)
            if spec.kind == "categorical":  # shared integer codes, −1 = missing
                codes, _ = pd.factorize(pd.Series(np.concatenate([ex, ey]), dtype=object))
                ex, ey = codes[:len(ex)], codes[len(ex):]
            encoded.append((spec, ex, ey[cols]))
        for start in range(0, len(rows), step):
            r = rows[start:start + step]
            num = np.zeros((len(r), len(cols)))
            den = np.zeros((len(r), len(cols)))
            for spec, ex, ey in encoded:
                if spec.weight == 0:
                    continue
                a, b = ex[r][:, None], ey[None, :]
                if spec.kind == "categorical":
                    valid = (a >= 0) & (b >= 0)
                    d = (a != b).astype(np.float64)
                else:
                    valid = ~(np.isnan(a) | np.isnan(b))
                    diff = np.abs(a - b)
                    d = diff / spec.scale if spec.scale > 0 else (diff > 0).astype(np.float64)
                num += spec.weight * np.where(valid, d, 0.0)
                den += spec.weight * valid
            with np.errstate(invalid="ignore", divide="ignore"):
                out[start:start + step] = np.where(den > 0, num / np.where(den > 0, den, 1),
                                                   np.nan)
        return out
