"""The microdata family's report section: histograms of equivalence-class sizes.

Drawn for any measure whose details have ``class_size_counts`` ({class size: number of
classes}, as KAnonymity reports them), with ``params["k"]`` as a dashed line when given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from anoneval.core.api import hookimpl
from anoneval.core.report.plots import COLORS, drawable, figure_block, log_axis, new_figure


def class_size_section(measure: Mapping[str, Any]) -> str | None:
    """Histograms of equivalence-class sizes: classes and records per size."""
    counts = measure["details"].get("class_size_counts")
    if not isinstance(counts, Mapping) or not counts:
        return None
    sizes = np.array([float(s) for s in counts], dtype=np.float64)
    n = np.array([float(c) for c in counts.values()], dtype=np.float64)
    order = np.argsort(sizes)
    sizes, n = sizes[order], n[order]
    fig, (ax_c, ax_r) = new_figure(2, width=4.6)
    k = measure.get("params", {}).get("k")
    small = sizes.max() <= 60
    edges = np.unique(np.round(np.geomspace(1, sizes.max() + 1, 40)))
    for ax, weights in ((ax_c, n), (ax_r, n * sizes)):
        if small:
            ax.bar(sizes, weights, width=0.8, color=COLORS["original"])
        else:  # one filled step outline, not a patch per bin
            ax.stairs(np.histogram(sizes, bins=edges, weights=weights)[0], edges, fill=True,
                      color=COLORS["original"])
            log_axis(ax)
    for ax, what in ((ax_c, "classes"), (ax_r, "records")):
        if isinstance(k, (int, float)) and not isinstance(k, bool):
            ax.axvline(k - 0.5 if small else k, color=COLORS["pareto"], linestyle="--",
                       label=f"k = {k:g}")
            ax.legend()
        ax.set_xlabel("class size (records)" + ("" if small else ", log-spaced bins"))
        ax.set_ylabel(f"number of {what}")
    ax_c.set_title("classes per size")
    ax_r.set_title("records per class size")
    caption = (f"{int(n.sum()):,} classes, {int((n * sizes).sum()):,} records; smallest class "
               f"{sizes.min():,.0f}, largest {sizes.max():,.0f}.")
    suppressed = measure.get("details", {}).get("suppressed_records")
    if isinstance(suppressed, int) and suppressed:
        caption += f" {suppressed:,} suppressed records are in no class and not drawn."
    return figure_block(fig, f"{measure['label']}: class-size histogram", caption)


@hookimpl
def report_section(measure: dict[str, Any]) -> str | None:
    if not drawable(measure):
        return None
    return class_size_section(measure)
