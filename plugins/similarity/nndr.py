"""Nearest-neighbour distance ratio: released records that sit next to one original record."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from anoneval.core.api import (
    Context,
    DataError,
    Dataset,
    Distance,
    MeasureResult,
    PluginRef,
    RiskMeasure,
    plugin_ref,
    spans,
    wilson_interval,
)
from anoneval.plugins._control import checked_control
from anoneval.plugins._shared.intervals import LevelParams
from anoneval.plugins._shared.sampling import SampleParams
from anoneval.plugins.distances._fitted import fitted_distance

#: Distances computed per chunk of query records.
CHUNK_ELEMENTS = 1 << 22
#: Record pairs per block of query records (``Context.map_blocks``).
BLOCK_PAIRS = 1 << 24
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def ratio_block(shared: tuple[Distance, Dataset, Dataset], rows: np.ndarray) -> np.ndarray:
    """NNDR of the query records at positions ``rows`` (chunked to :data:`CHUNK_ELEMENTS`
    distances)."""
    distance, query, reference = shared
    n = len(reference)
    out = np.empty(len(rows))
    for a, b in spans(len(out), max(1, CHUNK_ELEMENTS // n)):
        d = distance.pairwise(query, reference, rows=rows[a:b])
        if np.isnan(d).any():
            raise DataError(f"{distance.name} gave no distance for some record pairs (no "
                            "comparable column); NNDR needs a distance for every pair")
        two = np.sort(np.partition(d, 1, axis=1)[:, :2], axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[a:b] = np.where(two[:, 0] > 0, two[:, 0] / two[:, 1], 0.0)
    return out


def nndr(distance: Distance, query: Dataset, reference: Dataset,
         ctx: Context | None = None, rows: np.ndarray | None = None) -> np.ndarray:
    """d₁/d₂ of each query record (or of those at positions ``rows``, a sample): distances to
    its nearest and second-nearest reference record. 0 when d₁ = 0 (an exact copy, also of a
    duplicated reference record). Blocks of query records run on ``ctx``'s engine."""
    rows = np.arange(len(query)) if rows is None else np.asarray(rows, np.int64)
    size = max(1, BLOCK_PAIRS // len(reference))
    parts = (ctx or Context()).map_blocks(ratio_block, [rows[a:b] for a, b in
                                                        spans(len(rows), size)],
                                          (distance, query, reference), desc="NNDR")
    return np.concatenate(parts) if parts else np.zeros(0)


def summary(ratios: np.ndarray, threshold: float) -> dict[str, object]:
    """The share of ratios below ``threshold``, their quantiles, mean and count."""
    q = np.quantile(ratios, QUANTILES)
    return {"share_below": float(np.mean(ratios < threshold)),
            "quantiles": {f"p{round(100 * a)}": float(v) for a, v in zip(QUANTILES, q,
                                                                        strict=True)},
            "mean": float(ratios.mean()), "n": len(ratios)}


class NNDR(RiskMeasure):
    """Share of released records whose nearest-neighbour distance ratio is below a threshold.

    For each released record, NNDR = d₁/d₂, the distances to its nearest and second-nearest
    original record (Zhao et al. 2021, CTAB-GAN, with the distance of the ``distance`` plugin,
    by default Gower's, fitted on the original as in RecordLinkage). A ratio near 0 marks a
    released record much closer to one original record than to any other: it points at that
    person. NNDR = 0 when d₁ = 0 (an exact copy; 0/0 for a copy of a duplicated record).
    The value is #{NNDR < threshold} / m (strict ``<``; higher = riskier). details: the
    quantiles (numpy's linear interpolation) and mean; with a control set (optional), the same
    for the control records against the original, the reference for records that were not
    copied. syntheval's variant (ratios of *original* records against the release) is not this
    one. The search is exhaustive, chunked. ``ci``: Wilson's (1927) score interval of the
    share at ``confidence_level``, the released records taken as m draws of the generator
    (the original, the reference, is fixed). ``sample``: a seeded simple random sample of the
    released (and control) records, each searched against the whole original; the share is
    then that of the sample, Wilson's interval over the s sampled records, and
    ``details.sample`` gives the sizes (:mod:`anoneval.plugins._shared.sampling`).
    """

    name = "NNDR"
    description = "Share of released records whose nearest/second-nearest original distance "\
                  "ratio is below a threshold."
    unit = "share"
    uses_control = "optional"

    class Params(SampleParams, LevelParams):
        threshold: float = Field(0.5, gt=0, le=1, description="A ratio below it counts.")
        distance: PluginRef = plugin_ref(
            "distance", "Gower", "Record distance, fitted on the original (e.g. Gower, "
                                 "Euclidean with its columns).")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        if {getattr(d, "data_kind", None) for d in (original, anonymized)} != {"microdata"}:
            raise DataError("NNDR compares microdata")
        if len(original) < 2:
            raise DataError("NNDR needs at least two original records")
        if len(anonymized) == 0:
            raise DataError("the anonymized data has no records")
        distance = fitted_distance(ctx, self.params.distance, original)
        t = self.params.threshold
        rng = ctx.rng(8)
        rows = self.params.sample_rows(len(anonymized), rng)
        released = summary(_named(distance, anonymized, original, ctx, "anonymized data",
                                  rows), t)
        details: dict[str, object] = {"threshold": t, "distance": distance.name, **released}
        if rows is not None:
            details["sample"] = {"released_rows": len(rows),
                                 "of_released_rows": len(anonymized)}
        if ctx.control is not None:
            control = checked_control(ctx.control, [], "NNDR")
            details["control"] = summary(_named(distance, control, original, ctx,
                                                "control set",
                                                self.params.sample_rows(len(control), rng)), t)
        ratios_n = int(released["n"])  # type: ignore[call-overload]
        below = round(float(released["share_below"]) * ratios_n)  # type: ignore[arg-type]
        ci = list(wilson_interval(below, ratios_n, self.params.confidence_level))
        return MeasureResult(value=released["share_below"], ci=ci, details=details)


def _named(distance: Distance, data: Dataset, original: Dataset, ctx: Context,
           side: str, rows: np.ndarray | None = None) -> np.ndarray:
    """:func:`nndr` with the side named in a data error (the distance calls its inputs
    "first" and "second")."""
    try:
        return nndr(distance, data, original, ctx, rows)
    except DataError as exc:
        raise DataError(f"the {side} against the original: {exc}") from exc
