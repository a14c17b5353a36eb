"""The tabular family's report section: a map of a table's cells coloured by status.

Drawn for any measure whose details have ``cells`` (records with key columns and ``status``
safe/unsafe/empty, as the sensitivity rules report them); the key columns are
``details["keys"]``, ``params["keys"]`` or ``params["cells"]`` when given, else the columns
before the first figure column (``contributors``, ``count``, ``total``, ...). Statuses are
coloured from cividis, light (safe) to dark (unsafe), so the map reads with any colour vision.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from anoneval.core.api import hookimpl
from anoneval.core.report.plots import figure_block, new_figure, note, status_palette, text_inches

MAX_MAP_SIDE = 120
#: The usual statuses, drawn light to dark; any other status gets the next palette colour.
STATUSES = ("safe", "empty", "unsafe")

#: Columns of a cells table that are figures of a cell, not its keys.
CELL_FIGURES = ("contributors", "count", "records", "holdings", "total", "status", "reason")


def _cell_keys(cells: list[Mapping[str, Any]], details: Mapping[str, Any],
               params: Mapping[str, Any]) -> list[str]:
    """Key columns: ``details["keys"]``, ``params["keys"]`` or ``params["cells"]`` when one is a
    list of names, else the leading columns before the first figure column, else the
    text-valued columns."""
    for given in (details.get("keys"), params.get("keys"), params.get("cells")):
        if isinstance(given, list) and given and all(isinstance(g, str) for g in given):
            return given
    columns = list(cells[0])
    lead = list(itertools.takewhile(lambda c: c not in CELL_FIGURES, columns))
    if lead and len(lead) < len(columns):
        return lead
    return [c for c in columns if c not in CELL_FIGURES
            and all(isinstance(r.get(c), str) for r in cells)]


def cells_map_section(measure: Mapping[str, Any]) -> str | None:
    """A map of the table's cells coloured by status (safe, unsafe, empty)."""
    details = measure["details"]
    cells = details.get("cells")
    if not (isinstance(cells, list) and cells and isinstance(cells[0], Mapping)
            and "status" in cells[0]):
        return None
    keys = _cell_keys(cells, details, measure.get("params", {}))
    frame = pd.DataFrame(cells)
    missing = [k for k in keys if k not in frame.columns]
    if missing:
        return note(f"cannot draw the cell map: key columns {missing} are not in the cells "
                    "table.")
    row_key = frame[keys[0]].astype(str) if keys else pd.Series("all", index=frame.index)
    col_key = (frame[keys[1:]].astype(str).agg(" / ".join, axis=1) if len(keys) > 1
               else pd.Series("", index=frame.index))
    rows, cols = pd.unique(row_key), pd.unique(col_key)
    extra = ""
    if len(rows) > MAX_MAP_SIDE or len(cols) > MAX_MAP_SIDE:
        extra = (f" Showing the first {min(len(rows), MAX_MAP_SIDE)} of {len(rows)} rows and "
                f"{min(len(cols), MAX_MAP_SIDE)} of {len(cols)} columns.")
        rows, cols = rows[:MAX_MAP_SIDE], cols[:MAX_MAP_SIDE]
    statuses = list(STATUSES)
    statuses += sorted({str(s) for s in frame["status"]} - set(statuses))
    code = {s: i for i, s in enumerate(statuses)}
    r_index = {v: i for i, v in enumerate(rows)}
    c_index = {v: i for i, v in enumerate(cols)}
    grid = np.full((len(rows), len(cols)), np.nan)
    status_code = frame["status"].astype(str).map(code).to_numpy()
    for r, c, s in zip(row_key, col_key, status_code, strict=True):
        i, j = r_index.get(r), c_index.get(c)
        if i is not None and j is not None:
            grid[i, j] = s
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    palette = status_palette(len(statuses))
    counts = frame["status"].astype(str).value_counts()
    present = [s for s in statuses if counts.get(s, 0)]
    legend = [f"{s} ({int(counts[s]):,})" for s in present]
    shown = [len(labels) <= 40 for labels in (rows, cols)]  # tick labels only where readable
    left = (text_inches([str(v) for v in rows]) if shown[0] else 0.0) + 0.5
    bottom = (text_inches([str(v) for v in cols]) if shown[1] else 0.0) + 0.55
    right = text_inches(legend) + 0.75  # the legend, beside the map
    fig, (ax,) = new_figure(width=min(left + right + max(1.0, 0.25 * len(cols)), 12),
                            height=min(0.4 + bottom + max(1.0, 0.22 * len(rows)), 12),
                            left=left, right=right, bottom=bottom)
    ax.imshow(np.ma.masked_invalid(grid), cmap=ListedColormap(palette), vmin=-0.5,
              vmax=len(statuses) - 0.5, aspect="auto", interpolation="nearest")
    for labels, show, set_ticks in ((rows, shown[0], ax.set_yticks),
                                    (cols, shown[1], ax.set_xticks)):
        set_ticks(range(len(labels)) if show else [], [str(v) for v in labels] if show else [])
    ax.tick_params(axis="x", labelrotation=90)
    ax.set_ylabel(keys[0] if keys else "")
    ax.set_xlabel(" / ".join(keys[1:]))
    ax.legend(handles=[Patch(color=palette[code[s]], label=text)
                       for s, text in zip(present, legend, strict=True)],
              loc="upper left", bbox_to_anchor=(1.01, 1.0))
    caption = (f"{len(frame):,} cells by {', '.join(keys) or 'position'}: "
               + ", ".join(f"{int(counts.get(s, 0)):,} {s}" for s in statuses) + "." + extra)
    return figure_block(fig, f"{measure['label']}: map of unsafe cells", caption)


@hookimpl
def report_section(measure: dict[str, Any]) -> str | None:
    if not isinstance(measure.get("details"), Mapping) or measure.get("error"):
        return None
    return cells_map_section(measure)
