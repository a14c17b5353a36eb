"""The linkage family's report section: nearest distances of linked against unlinked records.

Drawn for any measure whose details have ``nearest_distance_linked`` and
``nearest_distance_unlinked`` (RecordLinkage): a histogram and the ECDFs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from anoneval.core.api import hookimpl
from anoneval.core.report.plots import (
    COLORS,
    drawable,
    ecdf,
    figure_block,
    floats,
    new_figure,
    note,
)


def linkage_section(measure: Mapping[str, Any]) -> str | None:
    """Nearest-record distances of linked against unlinked records: histogram and ECDF."""
    details = measure["details"]
    if "nearest_distance_linked" not in details or "nearest_distance_unlinked" not in details:
        return None
    groups = {"linked": floats(details["nearest_distance_linked"]),
              "unlinked": floats(details["nearest_distance_unlinked"])}
    dropped = sum(int((~np.isfinite(v)).sum()) for v in groups.values())
    groups = {k: v[np.isfinite(v)] for k, v in groups.items()}
    both = np.concatenate(list(groups.values()))
    if not len(both):
        return note("no finite nearest distances to plot.")
    xlabel = "distance to the nearest record"
    edges = np.histogram_bin_edges(both, bins=min(50, max(5, int(np.sqrt(len(both))))))
    fig, (ax_h, ax_e) = new_figure(2, width=4.6)
    for name, values in groups.items():
        if len(values):
            ax_h.stairs(np.histogram(values, bins=edges)[0], edges, linewidth=1.6,
                        color=COLORS[name], label=f"{name} (n={len(values):,})")
            ecdf(ax_e, values, COLORS[name], f"{name} (n={len(values):,})")
    ax_h.set_xlabel(xlabel)
    ax_h.set_ylabel("records")
    ax_e.set_xlabel(xlabel)
    ax_e.set_ylabel("share of records ≤ x")
    ax_h.legend()
    ax_e.legend()
    caption = "Distance of each record to its nearest record of the other dataset."
    if dropped:
        caption += f" {dropped:,} non-finite distances not drawn."
    return figure_block(fig, f"{measure['label']}: linked vs unlinked distances", caption)


@hookimpl
def report_section(measure: dict[str, Any]) -> str | None:
    if not drawable(measure):
        return None
    return linkage_section(measure)
