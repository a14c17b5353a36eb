"""HTML report sections of the re-identification models: histograms of per-record risk."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from anoneval.core.api import hookimpl
from anoneval.core.report.plots import drawable

#: Measure name → (details key of the histogram, what the x axis shows).
HISTOGRAMS = {
    "IndividualRisk": ("risk_histogram", "individual re-identification risk"),
    "SUDA": ("dis_histogram", "DIS-SUDA score"),
}


def risk_histogram(values: np.ndarray, bins: int = 20) -> dict[str, list[float] | list[int]]:
    """Counts of ``values`` in ``bins`` equal bins over [0, 1] (last bin closed) for details."""
    counts, edges = np.histogram(np.clip(values[np.isfinite(values)], 0.0, 1.0), bins=bins,
                                 range=(0.0, 1.0))
    return {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts]}


def histogram_section(measure: Mapping[str, Any]) -> str | None:
    """A bar chart of the per-record risk histogram in the measure's details."""
    key, what = HISTOGRAMS[measure["name"]]
    hist = measure.get("details", {}).get(key)
    if not isinstance(hist, Mapping) or "edges" not in hist or "counts" not in hist:
        return None
    from anoneval.core.report.plots import COLORS, figure_block, log_axis, new_figure

    edges = np.asarray(hist["edges"], dtype=np.float64)
    counts = np.asarray(hist["counts"], dtype=np.float64)
    if len(edges) != len(counts) + 1 or not counts.sum():
        return None
    fig, (ax,) = new_figure()
    ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color=COLORS["original"],
           edgecolor="white")
    if counts.max() > 50 * max(counts[counts > 0].min(), 1):
        log_axis(ax, "y")
    ax.set_xlabel(what)
    ax.set_ylabel("records")
    ax.set_xlim(0, 1)
    zero = int(hist.get("zero", 0))
    caption = (f"{int(counts.sum())} records by {what} ({len(counts)} bins of width "
               f"{edges[1] - edges[0]:g})" + (f"; {zero} of them at 0." if zero else "."))
    return figure_block(fig, f"{measure.get('label', measure['name'])}: histogram of {what}",
                        caption)


@hookimpl
def report_section(measure: dict[str, Any], report: dict[str, Any]) -> str | None:
    if measure.get("name") not in HISTOGRAMS or not drawable(measure):
        return None
    return histogram_section(measure)
