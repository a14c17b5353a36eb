"""Plots of the HTML report and of sweeps, drawn with matplotlib and embedded as PNG.

matplotlib is the optional ``report`` extra: it is imported only when a plot is drawn, and a
missing installation is a :class:`PlotDependencyError` saying how to install it. Figures use
matplotlib's object API (no pyplot state) and are saved without a timestamp, so the same data
give the same bytes.

:class:`BuiltinSections` renders the built-in measures' plots through the ``report_section``
hook, the same path a third-party measure takes. It recognises details by their keys:

- ``class_size_counts`` ({class size: number of classes}): class-size histograms (KAnonymity);
- ``cells`` (records with key columns and ``status`` safe/unsafe/empty): a map of the cells
  (the sensitivity rules); the key columns are ``details["keys"]``, ``params["keys"]`` or
  ``params["cells"]`` when given, else the columns before the first figure column
  (``contributors``, ``count``, ``total``, ...);
- ``nearest_distance_linked`` and ``nearest_distance_unlinked``: distance distributions of
  linked against unlinked records (RecordLinkage);
- ``curve`` ({"param", "x", "y"[, "label", "xscale"]} or a list of them): a curve (MILeakage).
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from anoneval.core.errors import AnonevalError
from anoneval.core.hookspecs import hookimpl

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from anoneval.core.data import Dataset

INSTALL_HINT = "pip install 'anoneval[report]'"
COLORS = {"original": "#1f77b4", "replica": "#d62728", "linked": "#d62728",
          "unlinked": "#1f77b4", "pareto": "#d62728", "other": "#7f7f7f"}
STATUS_COLORS = {"safe": "#9bd19b", "unsafe": "#e0524d", "empty": "#d9d9d9"}
MAX_MAP_SIDE = 120
MAX_ECDF_COLUMNS = 6
MAX_SCATTER_POINTS = 2000


class PlotDependencyError(AnonevalError):
    """matplotlib (the ``report`` extra) is missing."""


def require_matplotlib() -> None:
    """Fail early, with the install command, when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError as exc:
        raise PlotDependencyError(
            "the HTML report and sweep plots are drawn with matplotlib, which is not "
            f"installed ({exc}); install the report extra: {INSTALL_HINT}") from exc


def new_figure(ncols: int = 1, nrows: int = 1, width: float = 6.4,
               height: float = 3.6) -> tuple[Figure, list[Axes]]:
    """A figure of ``nrows × ncols`` panels and its axes in reading order."""
    require_matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols if ncols > 1 else width, height * nrows),
                 layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, list(axes.ravel())


def png_bytes(fig: Figure, dpi: int = 96) -> bytes:
    """The figure as PNG bytes, without the software/time metadata."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def img_tag(fig: Figure, alt: str) -> str:
    """An ``<img>`` with the figure embedded as a base64 PNG."""
    data = base64.b64encode(png_bytes(fig)).decode("ascii")
    return f'<img class="plot" alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def figure_block(fig: Figure, alt: str, caption: str) -> str:
    return (f'<figure>{img_tag(fig, alt)}<figcaption>{html.escape(caption)}</figcaption>'
            "</figure>")


def _floats(values: Any) -> np.ndarray:
    """Numbers from a JSON list (None → NaN, "inf"/"-inf" → ±inf)."""
    out = pd.to_numeric(pd.Series(list(values or []), dtype=object), errors="coerce")
    return out.to_numpy(np.float64)


# -- built-in measure sections ---------------------------------------------------------------


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
    if sizes.max() <= 60:
        for ax, weights in ((ax_c, n), (ax_r, n * sizes)):
            ax.bar(sizes, weights, width=0.8, color=COLORS["original"])
    else:
        edges = np.unique(np.round(np.geomspace(1, sizes.max() + 1, 40)))
        for ax, weights in ((ax_c, n), (ax_r, n * sizes)):
            ax.hist(sizes, bins=edges, weights=weights, color=COLORS["original"])
            ax.set_xscale("log")
    for ax, what in ((ax_c, "classes"), (ax_r, "records")):
        if isinstance(k, (int, float)) and not isinstance(k, bool):
            ax.axvline(k - 0.5 if sizes.max() <= 60 else k, color=COLORS["pareto"],
                       linestyle="--", label=f"k = {k:g}")
            ax.legend()
        ax.set_xlabel("class size" + ("" if sizes.max() <= 60 else " (log-spaced bins)"))
        ax.set_ylabel(f"number of {what}")
    ax_c.set_title("classes per size")
    ax_r.set_title("records per class size")
    caption = (f"{int(n.sum())} classes, {int((n * sizes).sum())} records; smallest class "
               f"{sizes.min():g}, largest {sizes.max():g}.")
    suppressed = measure.get("details", {}).get("suppressed_records")
    if isinstance(suppressed, int) and suppressed:
        caption += f" {suppressed} suppressed records are in no class and not drawn."
    return figure_block(fig, f"{measure['label']}: class-size histogram", caption)


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
        return (f'<p class="note">cannot draw the cell map: key columns {missing} are not in '
                "the cells table.</p>")
    row_key = frame[keys[0]].astype(str) if keys else pd.Series("all", index=frame.index)
    col_key = (frame[keys[1:]].astype(str).agg(" / ".join, axis=1) if len(keys) > 1
               else pd.Series("", index=frame.index))
    rows, cols = pd.unique(row_key), pd.unique(col_key)
    note = ""
    if len(rows) > MAX_MAP_SIDE or len(cols) > MAX_MAP_SIDE:
        note = (f" Showing the first {min(len(rows), MAX_MAP_SIDE)} of {len(rows)} rows and "
                f"{min(len(cols), MAX_MAP_SIDE)} of {len(cols)} columns.")
        rows, cols = rows[:MAX_MAP_SIDE], cols[:MAX_MAP_SIDE]
    statuses = ["safe", "unsafe", "empty"]
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

    extra = ["#8da0cb", "#fc8d62", "#a6d854", "#ffd92f"]
    palette = [STATUS_COLORS.get(s) or extra[i % len(extra)] for i, s in enumerate(statuses)]
    fig, (ax,) = new_figure(width=min(2.5 + 0.25 * len(cols), 12),
                            height=min(1.5 + 0.22 * len(rows), 12))
    ax.imshow(np.ma.masked_invalid(grid), cmap=ListedColormap(palette), vmin=-0.5,
              vmax=len(statuses) - 0.5, aspect="auto", interpolation="nearest")
    for labels, set_ticks in ((rows, ax.set_yticks), (cols, ax.set_xticks)):
        shown = len(labels) <= 40  # tick labels only where they stay readable
        set_ticks(range(len(labels)) if shown else [], [str(v) for v in labels] if shown else [])
    ax.tick_params(axis="x", labelrotation=90)
    ax.set_ylabel(keys[0] if keys else "")
    ax.set_xlabel(" / ".join(keys[1:]))
    counts = frame["status"].astype(str).value_counts()
    ax.legend(handles=[Patch(color=palette[code[s]], label=f"{s} ({int(counts.get(s, 0))})")
                       for s in statuses if counts.get(s, 0)],
              loc="upper left", bbox_to_anchor=(1.01, 1.0))
    caption = (f"{len(frame)} cells by {', '.join(keys) or 'position'}: "
               + ", ".join(f"{int(counts.get(s, 0))} {s}" for s in statuses) + "." + note)
    return figure_block(fig, f"{measure['label']}: map of unsafe cells", caption)


def linkage_section(measure: Mapping[str, Any]) -> str | None:
    """Nearest-record distances of linked against unlinked records: histogram and ECDF."""
    details = measure["details"]
    if "nearest_distance_linked" not in details or "nearest_distance_unlinked" not in details:
        return None
    groups = {"linked": _floats(details["nearest_distance_linked"]),
              "unlinked": _floats(details["nearest_distance_unlinked"])}
    dropped = sum(int((~np.isfinite(v)).sum()) for v in groups.values())
    groups = {k: v[np.isfinite(v)] for k, v in groups.items()}
    both = np.concatenate(list(groups.values()))
    if not len(both):
        return '<p class="note">no finite nearest distances to plot.</p>'
    edges = np.histogram_bin_edges(both, bins=min(50, max(5, int(np.sqrt(len(both))))))
    fig, (ax_h, ax_e) = new_figure(2, width=4.6)
    for name, values in groups.items():
        if len(values):
            ax_h.hist(values, bins=edges, histtype="step", linewidth=1.6, color=COLORS[name],
                      label=f"{name} (n={len(values)})")
            _ecdf(ax_e, values, COLORS[name], f"{name} (n={len(values)})")
    ax_h.set_xlabel("distance to the nearest record")
    ax_h.set_ylabel("records")
    ax_e.set_xlabel("distance to the nearest record")
    ax_e.set_ylabel("share of records ≤ x")
    ax_h.legend()
    ax_e.legend()
    caption = "Distance of each record to its nearest record of the other dataset."
    if dropped:
        caption += f" {dropped} non-finite distances not drawn."
    return figure_block(fig, f"{measure['label']}: linked vs unlinked distances", caption)


def curve_section(measure: Mapping[str, Any]) -> str | None:
    """A curve such as MILeakage's leakage against a parameter."""
    raw = measure["details"].get("curve")
    curves = raw if isinstance(raw, list) else [raw]
    curves = [c for c in curves if isinstance(c, Mapping) and "x" in c and "y" in c]
    if not curves:
        return None
    fig, (ax,) = new_figure()
    for i, c in enumerate(curves):
        x, y = _floats(c["x"]), _floats(c["y"])
        ax.plot(x, y, marker="o", markersize=3, label=str(c.get("label") or f"curve {i + 1}"))
        if c.get("xscale") in ("log", "linear", "symlog"):
            ax.set_xscale(c["xscale"])
    ax.set_xlabel(str(curves[0].get("param") or "x"))
    ax.set_ylabel(str(curves[0].get("ylabel") or measure["label"]))
    if len(curves) > 1:
        ax.legend()
    ax.grid(alpha=0.3)
    return figure_block(fig, f"{measure['label']}: curve",
                        f"{measure['label']} against {curves[0].get('param') or 'x'}.")


class BuiltinSections:
    """The built-in measures' plots as a ``report_section`` plugin (see the module doc)."""

    drawers = (class_size_section, cells_map_section, linkage_section, curve_section)

    @hookimpl
    def report_section(self, measure: dict[str, Any], report: dict[str, Any]) -> str | None:
        if not isinstance(measure.get("details"), Mapping) or measure.get("error"):
            return None
        parts = [draw(measure) for draw in self.drawers]
        return "\n".join(p for p in parts if p) or None


# -- risk–utility map, synthesizer data, sweeps ----------------------------------------------


def ru_map_figure(ru: Mapping[str, Any]) -> str:
    """The R-U map: one point per variant; Pareto-optimal ones filled and joined.

    Axes are oriented so that better is toward the lower left: an axis where higher is better
    (e.g. k of k-anonymity, "higher = safer") is drawn reversed.
    """
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    from anoneval.core.report import higher_is_worse

    points = [p for p in ru["points"] if isinstance(p["risk"], float | int)
              and isinstance(p["loss"], float | int)
              and math.isfinite(p["risk"]) and math.isfinite(p["loss"])]
    fig, (ax,) = new_figure(width=6.4, height=4.6)
    for p in points:
        on = bool(p["pareto"])
        ax.scatter([p["risk"]], [p["loss"]], s=60 if on else 40, zorder=3,
                   marker="D" if on else "o", color=COLORS["pareto" if on else "other"],
                   facecolors=None if on else "none")
        ax.annotate(p["variant"], (p["risk"], p["loss"]), textcoords="offset points",
                    xytext=(6, 6), fontsize=9)
    front = sorted(((p["risk"], p["loss"]) for p in points if p["pareto"]),
                   key=lambda t: (t[0] if higher_is_worse(ru["risk_direction"]) else -t[0]))
    if len(front) > 1:
        ax.step([f[0] for f in front], [f[1] for f in front], where="post",
                color=COLORS["pareto"], alpha=0.5, zorder=2)
    for axis, label, direction, invert in (
            ("x", ru["risk"], ru["risk_direction"], ax.invert_xaxis),
            ("y", ru["loss"], ru["loss_direction"], ax.invert_yaxis)):
        rev = not higher_is_worse(direction)
        text = f"{label} ({direction}{'; axis reversed' if rev else ''})"
        (ax.set_xlabel if axis == "x" else ax.set_ylabel)(text)
        if rev:
            invert()
    for axis in (ax.xaxis, ax.yaxis):  # plain numbers, no "1e8" offset
        axis.set_major_formatter(FuncFormatter(
            lambda v, _: f"{v:,.0f}" if abs(v) >= 1e4 else f"{v:.4g}"))
    ax.margins(0.15)  # room for the variant labels at the edges
    ax.grid(alpha=0.3)
    ax.set_title("risk–utility map (better: lower left)")
    ax.legend(handles=[
        Line2D([], [], marker="D", linestyle="", color=COLORS["pareto"], label="Pareto-optimal"),
        Line2D([], [], marker="o", linestyle="", color=COLORS["other"], markerfacecolor="none",
               label="dominated")], loc="best")
    missing = len(ru["points"]) - len(points)
    caption = (f"{ru['risk']} against {ru['loss']} for {len(points)} variants; "
               f"{sum(1 for p in points if p['pareto'])} Pareto-optimal.")
    if missing:
        caption += f" {missing} variants not drawn (a value is missing or infinite)."
    return figure_block(fig, "risk–utility map", caption)


def _ecdf(ax: Axes, values: np.ndarray, color: str, label: str) -> None:
    x = np.sort(values)
    ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", color=color, label=label)


def synthesis_figures(original: Dataset, replica: Dataset, seed: int = 0) -> str:
    """ECDFs, Q–Q scatter and a pair scatter of actual against replica (numeric columns), or
    category frequencies (text columns)."""
    from anoneval.core.data import Microdata

    if not (isinstance(original, Microdata) and isinstance(replica, Microdata)):
        return ""
    a, b = original.frame, replica.frame
    common = [c for c in a.columns if c in b.columns]
    numeric = [c for c in common if pd.api.types.is_numeric_dtype(a[c])
               and pd.api.types.is_numeric_dtype(b[c]) and not pd.api.types.is_bool_dtype(a[c])]
    categorical = [c for c in common if c not in numeric]
    out: list[str] = []
    shown = numeric[:MAX_ECDF_COLUMNS]
    more = (f" ({len(numeric) - len(shown)} more numeric columns not drawn)"
            if len(numeric) > len(shown) else "")
    if shown:
        ncols = min(3, len(shown))
        nrows = math.ceil(len(shown) / ncols)
        fig, axes = new_figure(ncols, nrows, width=3.6, height=2.8)
        fig2, axes2 = new_figure(ncols, nrows, width=3.6, height=2.8)
        q = np.linspace(0, 1, 101)
        for ax, ax2, col in zip(axes, axes2, shown, strict=False):
            x = a[col].to_numpy(np.float64)
            y = b[col].to_numpy(np.float64)
            x, y = x[np.isfinite(x)], y[np.isfinite(y)]
            _ecdf(ax, x, COLORS["original"], "actual")
            _ecdf(ax, y, COLORS["replica"], "replica")
            ax.set_title(str(col))
            if len(x) and len(y):
                qa, qb = np.quantile(x, q), np.quantile(y, q)
                ax2.scatter(qa, qb, s=8, color=COLORS["replica"])
                lo, hi = min(qa[0], qb[0]), max(qa[-1], qb[-1])
                ax2.plot([lo, hi], [lo, hi], color=COLORS["other"], linewidth=1)
            ax2.set_title(str(col))
            ax2.set_xlabel("actual quantile")
            ax2.set_ylabel("replica quantile")
        axes[0].legend()
        for ax in [*axes[len(shown):], *axes2[len(shown):]]:
            ax.set_axis_off()
        out.append(figure_block(fig, "ECDFs of actual and replica",
                                "Empirical CDFs of each numeric column, actual against replica"
                                + more + "."))
        out.append(figure_block(fig2, "Q-Q scatter of actual against replica",
                                "Percentiles of the replica against those of the actual data "
                                "(on the diagonal when the marginals agree)" + more + "."))
    if len(numeric) >= 2:
        cx, cy = numeric[:2]
        rng = np.random.default_rng(seed)
        fig, axes = new_figure(2, width=4.2, height=3.6)
        for ax, frame, name in ((axes[0], a, "actual"), (axes[1], b, "replica")):
            take = (rng.choice(len(frame), MAX_SCATTER_POINTS, replace=False)
                    if len(frame) > MAX_SCATTER_POINTS else np.arange(len(frame)))
            ax.scatter(frame[cx].to_numpy()[take], frame[cy].to_numpy()[take], s=4, alpha=0.5,
                       color=COLORS["original" if name == "actual" else "replica"])
            ax.set_title(f"{name} ({len(take)} of {len(frame)} records)")
            ax.set_xlabel(str(cx))
            ax.set_ylabel(str(cy))
        for ax in axes[1:]:
            ax.sharex(axes[0])
            ax.sharey(axes[0])
        out.append(figure_block(fig, "scatter of actual and replica",
                                f"{cy} against {cx}, actual and replica."))
    if categorical:
        shown_c = categorical[:MAX_ECDF_COLUMNS]
        ncols = min(3, len(shown_c))
        fig, axes = new_figure(ncols, math.ceil(len(shown_c) / ncols), width=3.6, height=2.8)
        for ax, col in zip(axes, shown_c, strict=False):
            fa = a[col].astype(str).value_counts(normalize=True)
            fb = b[col].astype(str).value_counts(normalize=True)
            cats = sorted(set(fa.index) | set(fb.index))[:30]
            pos = np.arange(len(cats))
            ax.bar(pos - 0.2, [fa.get(c, 0.0) for c in cats], 0.4, label="actual",
                   color=COLORS["original"])
            ax.bar(pos + 0.2, [fb.get(c, 0.0) for c in cats], 0.4, label="replica",
                   color=COLORS["replica"])
            ax.set_xticks(pos, cats, rotation=90, fontsize=7)
            ax.set_title(str(col))
        axes[0].legend()
        for ax in axes[len(shown_c):]:
            ax.set_axis_off()
        out.append(figure_block(fig, "category frequencies of actual and replica",
                                "Share of each category, actual against replica."))
    return "\n".join(out)


def sweep_figure(frame: pd.DataFrame, param: str, overlay: bool = False) -> Figure:
    """Value against the swept param: one panel per measure label (one line per variant), or
    with ``overlay`` one panel with a line per label and variant.

    ``frame`` has columns ``param_value``, ``variant``, ``label`` and ``value``.
    """
    labels = list(pd.unique(frame["label"]))
    groups = [[label] for label in labels] if not overlay else [labels]
    ncols = min(2, max(len(groups), 1))
    nrows = max(math.ceil(len(groups) / ncols), 1)
    fig, axes = new_figure(ncols, nrows, width=5.2 if len(groups) > 1 else 6.4, height=3.6)
    numeric_x = pd.api.types.is_numeric_dtype(frame["param_value"])
    for ax, group in zip(axes, groups, strict=False):
        sub = frame[frame["label"].isin(group)]
        keys = sub["label"] + sub["variant"].map(lambda v: f" [{v}]" if isinstance(v, str)
                                                 else "")
        for key, part in sub.groupby(keys, sort=False):
            x = part["param_value"] if numeric_x else part["param_value"].astype(str)
            ax.plot(x, part["value"].astype(float), marker="o", markersize=3, label=str(key))
        ax.set_title(str(group[0]) if not overlay else "")
        ax.set_xlabel(param)
        ax.set_ylabel("value" if overlay else str(group[0]))
        ax.grid(alpha=0.3)
        if overlay or sub["variant"].notna().any():
            ax.legend(fontsize=8)
    for ax in axes[len(groups):]:
        ax.set_axis_off()
    return fig


__all__ = ["BuiltinSections", "PlotDependencyError", "figure_block", "img_tag", "new_figure",
           "png_bytes", "require_matplotlib", "ru_map_figure", "sweep_figure",
           "synthesis_figures"]
