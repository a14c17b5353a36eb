"""RandomizedResponse: randomize categorical columns by direct, unary or RAPPOR response."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    Microdata,
    SynthesisResult,
    Synthesizer,
    data_row,
)
from anoneval.plugins.perturbation import _channels as ch

#: Salt of this synthesizer's random streams: ctx.rng(0) alone would replay
#: numpy.random.default_rng(seed), the stream that often generated the data being randomized.
_SALT = 0x5252
#: Random numbers drawn per chunk (bounds memory for many categories × many records).
_CHUNK = 1 << 22


class RandomizedResponse(Synthesizer):
    """Replace each chosen categorical column by its randomized report, record by record.

    Mechanisms as in :class:`~anoneval.plugins.perturbation.mi_leakage.MILeakage`: ``direct`` keeps
    the category w.p. gamma and otherwise reports one of the m − 1 others uniformly (k-RR, Wang
    et al. 2017's direct encoding); ``matrix`` draws the report of category c from row c of a square
    row-stochastic matrix; ``unary``, ``unary_asymmetric`` and ``rappor`` one-hot encode the
    category and randomize each bit: the column then holds the m reported bits as a string of
    '0'/'1' (bit j = category j). ``rappor`` runs google/rappor's two steps on each bit: the
    permanent response (keep w.p. 1 − f, else 0 or 1 w.p. f/2 each), then one instantaneous
    report (1 w.p. q for a permanent 1, p for a 0); ``rappor_report: permanent`` outputs the
    permanent response itself. Each record gets one report (no memoization across runs).

    Categories are the column's sorted distinct values (missing values last, as a category
    of their own), or ``domain[column]`` when given, so that values absent from the data can be
    reported too. Rows keep their order, so the output is row-aligned with the original, as
    MILeakage's empirical mode needs. Randomness comes from the evaluation seed (one stream per
    column position), so a run is reproducible.
    """

    name = "RandomizedResponse"
    description = "Randomized response (direct / unary / RAPPOR) on categorical columns."

    class Params(ch.MechanismParams):
        columns: list[str] = Field(min_length=1, description="Categorical columns to randomize.")
        domain: dict[str, list[Any]] | None = Field(
            default=None,
            description="Per column, the full list of categories in order (bit j of a unary "
                        "report = domain[j]); default: the column's sorted distinct values.")

        @model_validator(mode="after")
        def _check(self) -> RandomizedResponse.Params:
            if self.mechanism is None:
                raise ValueError("'mechanism' is required (direct, unary, unary_asymmetric, "
                                 "rappor or matrix)")
            if len(set(self.columns)) != len(self.columns):
                raise ValueError(f"columns has duplicates: {self.columns}")
            for col, values in (self.domain or {}).items():
                if col not in self.columns:
                    raise ValueError(f"domain names column {col!r}, which is not in columns "
                                     f"{self.columns}")
                if not all(v is None or isinstance(v, (str, int, float)) for v in values):
                    raise ValueError(f"domain[{col!r}] values must be strings, numbers or null")
                if len(values) < 2 or len(pd.Index(values).unique()) != len(values):
                    raise ValueError(f"domain[{col!r}] needs at least 2 distinct values "
                                     "(categories m >= 2), without repeats")
            if self.matrix is not None and len(self.matrix) != len(self.matrix[0]):
                raise ValueError("matrix must be square for RandomizedResponse (reports are "
                                 f"categories); got {len(self.matrix)} × {len(self.matrix[0])}")
            return self

    def generate(self, original: Dataset, ctx: Context) -> SynthesisResult:
        if not isinstance(original, Microdata):
            raise DataError(f"RandomizedResponse needs microdata, not {original.data_kind}")
        pp = self.params
        original.require(pp.columns, "column")
        frame = original.frame.copy(deep=False)  # randomized columns are replaced, not written
        info: dict[str, Any] = {}
        for i, col in enumerate(pp.columns):
            codes, domain = self._codes(original, col)
            m = len(domain)
            if m < 2:
                raise DataError(f"column {col!r} has {m} distinct value; randomized response "
                                "needs categories m >= 2 (give 'domain')")
            channel = pp.channel(m)
            rng = ctx.rng(_SALT, i)
            if channel.kind == "unary":
                frame[col] = self._unary(codes, m, rng)
            else:
                out = (_direct(codes, m, channel.gamma, rng) if channel.kind == "direct"
                       else _from_matrix(codes, channel.matrix, rng))  # type: ignore[arg-type]
                frame[col] = pd.Series(domain.take(out), index=frame.index)
            info[col] = {"categories": m, "ldp_epsilon": channel.ldp_epsilon(),
                         "domain": [str(v) for v in domain] if m <= 100 else None}
            if channel.kind == "unary":
                info[col]["bit_probabilities"] = {"p1": channel.p1, "p0": channel.p0}
        return SynthesisResult(data=Microdata(frame, source=original.source),
                               details={"mechanism": pp.mechanism, "columns": info})

    def _codes(self, data: Microdata, col: str) -> tuple[np.ndarray, pd.Index]:
        """Category number of each row and the categories, in order."""
        codes, values = data.codes(col)
        given = (self.params.domain or {}).get(col)
        if given is None:
            order = ch.sorted_order(values)
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            return rank[codes], pd.Index(values).take(order)
        domain = pd.Index(given)
        pos = domain.get_indexer(pd.Index(values))
        if (pos < 0).any():
            bad = int(np.flatnonzero(pos < 0)[0])
            row = int(np.flatnonzero(codes == bad)[0])
            raise DataError(f"column {col!r}, {data_row(row)}: value {values[bad]!r} is not in "
                            f"domain[{col!r}] = {list(domain)[:20]}")
        return pos[codes], domain

    def _unary(self, codes: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        """Bit strings of the one-hot encoding after per-bit randomization."""
        pp = self.params
        n = len(codes)
        out = np.empty(n, dtype=object)
        step = max(1, _CHUNK // m)
        channel = pp.channel(m)
        f, p, q = (ch.RAPPOR_DEFAULTS[k] if getattr(pp, k) is None else float(getattr(pp, k))
                   for k in ("f", "p", "q"))
        for start in range(0, n, step):
            c = codes[start:start + step]
            k = len(c)
            true = np.zeros((k, m), dtype=bool)
            true[np.arange(k), c] = True
            if pp.mechanism == "rappor":
                # permanent response: keep w.p. 1 − f, else a fair coin
                prr = np.where(rng.random((k, m)) < f, rng.random((k, m)) < 0.5, true)
                bits = (prr if pp.rappor_report == "permanent"
                        else rng.random((k, m)) < np.where(prr, q, p))
            else:
                bits = rng.random((k, m)) < np.where(true, channel.p1, channel.p0)
            chars = (bits.view(np.uint8) + ord("0")).view(f"S{m}").ravel()
            out[start:start + k] = chars.astype(f"U{m}")
        return out


def _direct(codes: np.ndarray, m: int, gamma: float, rng: np.random.Generator) -> np.ndarray:
    """k-RR: keep w.p. gamma, else one of the other m − 1 categories uniformly."""
    keep = rng.random(len(codes)) < gamma
    other = (codes + 1 + rng.integers(0, m - 1, size=len(codes))) % m
    return np.where(keep, codes, other)


def _from_matrix(codes: np.ndarray, w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Inverse-CDF draw of each record's report from row ``codes[i]`` of ``w``."""
    cum = np.cumsum(w, axis=1)
    cum[:, -1] = np.inf
    u = rng.random(len(codes))
    out = np.empty(len(codes), dtype=np.int64)
    step = max(1, _CHUNK // w.shape[1])
    for start in range(0, len(codes), step):
        sl = slice(start, start + step)
        out[sl] = (u[sl, None] >= cum[codes[sl]]).sum(axis=1)
    return out
