"""Generic chart helpers of the HTML report and of sweeps, drawn with matplotlib as PNG.

matplotlib is the optional ``report`` extra: it is imported only when a plot is drawn, and a
missing installation is a :class:`PlotDependencyError` saying how to install it. Figures use
matplotlib's object API (no pyplot state) and are saved without a timestamp, so the same data
give the same bytes. Colours are colour-blind safe: the Okabe–Ito palette for lines and
points, cividis for categorical maps (:func:`status_palette`).

This module knows no measure: the plots of a measure family live in that family's
``_report.py`` and reach the report through the ``report_section`` hook.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from anoneval.core.errors import AnonevalError
from anoneval.core.report.numbers import axis_label, axis_scale, fmt_value, higher_is_worse
from anoneval.core.report.templating import Markup, render

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from anoneval.core.data.kinds import Dataset

INSTALL_HINT = "pip install 'anoneval[report]'"
#: Okabe & Ito (2008), "Color Universal Design": distinguishable with every colour deficiency.
OKABE_ITO = {"blue": "#0072B2", "vermillion": "#D55E00", "orange": "#E69F00",
             "green": "#009E73", "sky": "#56B4E9", "purple": "#CC79A7", "grey": "#7f7f7f"}
COLORS = {"original": OKABE_ITO["blue"], "replica": OKABE_ITO["vermillion"],
          "linked": OKABE_ITO["vermillion"], "unlinked": OKABE_ITO["blue"],
          "pareto": OKABE_ITO["vermillion"], "other": OKABE_ITO["grey"],
          "pass": OKABE_ITO["blue"], "fail": OKABE_ITO["vermillion"]}
MAX_ECDF_COLUMNS = 6
MAX_SCATTER_POINTS = 2000
#: Up to this many variants, the across-variants chart has one labelled bar per variant.
MAX_BARS = 40


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


#: Margins around the panels, in inches: ``left`` fits numeric tick labels and an axis label,
#: ``bottom`` the same below, ``top`` a title; panels are ``left`` apart side by side and
#: ``bottom + top`` apart one above the other, unless told otherwise.
MARGINS = {"left": 0.95, "right": 0.3, "bottom": 0.6, "top": 0.4}
#: Average advance of a DejaVu Sans character, in ems (digits are 0.64, lower case ~0.55).
CHAR_EM = 0.62


def text_inches(texts: Sequence[Any], fontsize: float = 10.0) -> float:
    """Width in inches that the longest of ``texts`` needs at ``fontsize`` points, estimated
    from its length (no text is laid out: that is what makes fixed margins cheap)."""
    longest = max((len(str(t)) for t in texts), default=0)
    return longest * CHAR_EM * fontsize / 72


def grid_margins(width: float, height: float, ncols: int = 1, nrows: int = 1, *,
                 left: float | None = None, right: float | None = None,
                 bottom: float | None = None, top: float | None = None,
                 wgap: float | None = None, hgap: float | None = None) -> dict[str, float]:
    """Gridspec keywords (``left``, ..., ``wspace``, ``hspace``) placing ``nrows × ncols``
    panels in a ``width × height`` inch figure with fixed margins and gaps in inches
    (defaults :data:`MARGINS`; panels ``left`` apart side by side, ``bottom + top`` one above
    the other). Margins and gaps shrink together where they would leave the panels less than a
    quarter of the figure."""
    m = {"left": left, "right": right, "bottom": bottom, "top": top}
    m = {k: MARGINS[k] if v is None else v for k, v in m.items()}
    gw = m["left"] if wgap is None else wgap
    gh = m["bottom"] + m["top"] if hgap is None else hgap
    fw = min(1.0, 0.75 * width / (m["left"] + m["right"] + (ncols - 1) * gw))
    fh = min(1.0, 0.75 * height / (m["bottom"] + m["top"] + (nrows - 1) * gh))
    aw = (width - fw * (m["left"] + m["right"] + (ncols - 1) * gw)) / ncols
    ah = (height - fh * (m["bottom"] + m["top"] + (nrows - 1) * gh)) / nrows
    return {"left": fw * m["left"] / width, "right": 1 - fw * m["right"] / width,
            "bottom": fh * m["bottom"] / height, "top": 1 - fh * m["top"] / height,
            "wspace": fw * gw / aw, "hspace": fh * gh / ah}


def new_figure(ncols: int = 1, nrows: int = 1, width: float = 6.4, height: float = 3.6,
               **margins: float | None) -> tuple[Figure, list[Axes]]:
    """A figure of ``nrows × ncols`` panels and its axes in reading order.

    Margins and gaps are fixed, in inches (:func:`grid_margins`), and the figure uses no layout
    engine: matplotlib's constrained layout measures every text of the figure before the draw
    that saves it, which doubles the cost of each image.
    """
    require_matplotlib()
    from matplotlib.figure import Figure

    w = width * ncols if ncols > 1 else width
    h = height * nrows
    fig = Figure(figsize=(w, h))
    axes = fig.subplots(nrows, ncols, squeeze=False,
                        gridspec_kw=grid_margins(w, h, ncols, nrows, **margins))
    return fig, list(axes.ravel())


def log_axis(ax: Axes, which: str = "x") -> None:
    """A log scale on ``ax``'s ``which`` axis: plain-number labels at the powers of ten,
    unlabelled minor ticks at 2× and 5× only (matplotlib's default draws eight a decade)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    axis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
    axis.set_minor_formatter(NullFormatter())


def status_palette(n: int) -> list[str]:
    """``n`` colours sampled evenly from cividis (Nuñez et al. 2018), light to dark: ordered
    by lightness, so they stay apart for every colour-vision deficiency and in greyscale."""
    require_matplotlib()
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps["cividis"]
    return [to_hex(cmap(x)) for x in np.linspace(0.95, 0.05, max(n, 1))][:n]


def png_bytes(fig: Figure, dpi: int = 96) -> bytes:
    """The figure as PNG bytes, without the software/time metadata."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def drawable(measure: Mapping[str, Any]) -> bool:
    """Whether a report section can draw ``measure``'s entry: it has details (a mapping) and
    no error. The families' ``report_section`` hookimpls start with this guard."""
    return isinstance(measure.get("details"), Mapping) and not measure.get("error")


def figure_block(fig: Figure, alt: str, caption: str) -> Markup:
    """A ``<figure>`` with the figure embedded as a base64 PNG; ``alt`` and ``caption`` are
    escaped."""
    png = base64.b64encode(png_bytes(fig)).decode("ascii")
    return render("figure.html.j2", f={"alt": alt, "caption": caption, "png": png})


def note(text: str) -> Markup:
    """An escaped ``<p class="note">`` for a report section."""
    return render("fragment.html.j2", text=text, cls="note")


def short(text: Any, n: int = 48) -> str:
    """``text`` cut to ``n`` characters with an ellipsis (axis labels, ticks, titles)."""
    text = str(text)
    return text if len(text) <= n else text[:n - 1] + "…"


def floats(values: Any) -> np.ndarray:
    """Numbers from a JSON list (None → NaN, "inf"/"-inf" → ±inf)."""
    out = pd.to_numeric(pd.Series(list(values or []), dtype=object), errors="coerce")
    return out.to_numpy(np.float64)


def ecdf(ax: Axes, values: np.ndarray, color: str, label: str) -> None:
    """An empirical CDF as a step line."""
    x = np.sort(values)
    ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", color=color, label=label)


def variants_figure(label: str, variants: Sequence[str], values: Sequence[float | None],
                    threshold: Mapping[str, Any] | None, direction: str,
                    unit: str | None = None, cis: Sequence[Any] | None = None,
                    passed: Sequence[bool | None] | None = None) -> Markup:
    """One measure across variants: a bar per variant (up to :data:`MAX_BARS`), else the
    values sorted, with the thresholds as dashed lines, failing values marked (``passed``,
    else the value against the bounds) and each value's interval (``cis``) as an error bar."""
    scale = axis_scale(unit)
    v = np.array([np.nan if x is None else float(x) for x in values]) * scale
    thr = threshold or {}
    lo, hi = thr.get("min"), thr.get("max")
    fails = np.zeros(len(v), dtype=bool)
    if passed is not None:
        fails = np.array([p is False for p in passed], dtype=bool)
    else:
        if lo is not None:
            fails |= v < lo * scale
        if hi is not None:
            fails |= v > hi * scale
    err = _errors(v, cis, scale) if cis is not None else None
    colors = [COLORS["fail"] if f else COLORS["pass"] for f in fails]
    finite = np.isfinite(v)
    if len(v) <= MAX_BARS:
        names = [short(n, 24) for n in variants]
        fig, (ax,) = new_figure(width=6.4, height=min(1.2 + 0.28 * len(v), 9),
                                left=text_inches(names) + 0.2)
        pos = np.arange(len(v))
        ax.barh(pos, np.where(finite, v, 0.0), color=colors)
        if err is not None:
            ax.errorbar(np.where(finite, v, np.nan), pos, xerr=err, fmt="none",
                        ecolor="#222222", elinewidth=0.8, capsize=2)
        ax.set_yticks(pos, names)
        ax.invert_yaxis()
        ax.set_xlabel(short(axis_label(label, unit), 60))
        line = ax.axvline
    else:
        fig, (ax,) = new_figure(width=6.4, height=3.6)
        order = np.argsort(np.where(finite, v, np.inf), kind="stable")
        ax.scatter(np.arange(len(v)), v[order], s=8, c=[colors[i] for i in order])
        if err is not None:
            ax.errorbar(np.arange(len(v)), v[order], yerr=err[:, order], fmt="none",
                        ecolor=COLORS["other"], elinewidth=0.6, alpha=0.7)
        ax.set_xlabel(f"variants, sorted by value ({len(v):,})")
        ax.set_ylabel(short(axis_label(label, unit), 40))
        line = ax.axhline
    for bound, name in ((lo, "min"), (hi, "max")):
        if bound is not None:
            line(bound * scale, color=COLORS["other"], linestyle="--",
                 label=f"threshold {name} {fmt_value(bound, unit)}"
                 + (f" on the {thr['on']} end" if thr.get("on", "value") != "value" else ""))
    if lo is not None or hi is not None:
        ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    ax.set_title(short(f"{label} by variant ({direction})", 60))
    caption = f"{label} of {len(v):,} variants"
    if err is not None:
        caption = f"{label} of {len(v):,} variants (bars: each value's interval)"
    if finite.any():
        caption += (f": from {fmt_value(float(np.nanmin(v)) / scale, unit)} to "
                    f"{fmt_value(float(np.nanmax(v)) / scale, unit)}")
    caption += f"; {int(fails.sum()):,} outside the threshold" if (lo, hi) != (None, None) else ""
    missing = int((~finite).sum())
    caption += f"; {missing:,} without a value (not drawn)." if missing else "."
    return figure_block(fig, f"{label}: values by variant", caption)


# -- risk–utility map, synthesizer data, sweeps ----------------------------------------------


def ru_map_figure(ru: Mapping[str, Any], risk_unit: str | None = None,
                  loss_unit: str | None = None) -> Markup:
    """The R-U map of :func:`ru_map` as the HTML report's figure block."""
    fig, caption = ru_map(ru, risk_unit, loss_unit)
    return figure_block(fig, "risk–utility map", caption)


def _errors(centre: np.ndarray, cis: Sequence[Any], scale: float) -> np.ndarray | None:
    """Asymmetric error-bar lengths (2 × n) from ``[low, high]`` intervals (NaN where a point
    has none; an end on the wrong side of the value, as a bootstrap interval may give, draws
    no bar on that side); None when no point has an interval."""
    ends = np.array([[c[0], c[1]] if c is not None else [np.nan, np.nan] for c in cis],
                    dtype=np.float64).reshape(-1, 2) * scale
    if not np.isfinite(ends).any():
        return None
    return np.clip(np.vstack([centre - ends[:, 0], ends[:, 1] - centre]), 0.0, None)


#: Offsets tried for a variant's label on the risk–utility map, in points from its marker:
#: four corners, then the sides, at growing distances (the first free one is taken).
LABEL_OFFSETS = [(dx * r, dy * r) for r in (6, 14, 26, 40)
                 for dx, dy in ((1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (-1, 0), (0, 1),
                                (0, -1))]


def repel_labels(ax: Axes, xy: Sequence[tuple[float, float]], texts: Sequence[str],
                 fontsize: float = 8.0) -> list[bool]:
    """Label each point of ``xy`` with its text where it overlaps no other label, no marker
    and stays inside the axes: each label takes the first free offset of
    :data:`LABEL_OFFSETS` (joined to its marker by a thin line when far from it); a label
    with no free place is left out. Returns which labels were drawn.

    Text extents are measured with the Agg renderer, so the check is the one the PNG shows.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.transforms import Bbox

    fig = ax.figure
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    marker = 4.0 * fig.dpi / 72  # half a marker's width, in pixels
    centres = ax.transData.transform(np.asarray(xy, dtype=np.float64).reshape(-1, 2))
    taken = [Bbox.from_extents(x - marker, y - marker, x + marker, y + marker)
             for x, y in centres]
    drawn: list[bool] = []
    for (x, y), text in zip(xy, texts, strict=True):
        ann = ax.annotate(text, (x, y), textcoords="offset points", xytext=(0, 0),
                          fontsize=fontsize, zorder=4)
        placed = False
        for dx, dy in LABEL_OFFSETS:
            ann.set_position((dx, dy))
            ann.set_horizontalalignment("left" if dx > 0 else "right" if dx < 0 else "center")
            ann.set_verticalalignment("bottom" if dy > 0 else "top" if dy < 0 else "center")
            box = ann.get_window_extent(renderer).padded(1.0)
            inside = (box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0
                      and box.y1 <= frame.y1)
            if inside and not any(box.overlaps(t) for t in taken):
                taken.append(box)
                if abs(dx) > 10 or abs(dy) > 10:  # far: the same label with a leader line
                    ann.remove()
                    ann = ax.annotate(text, (x, y), textcoords="offset points", xytext=(dx, dy),
                                      fontsize=fontsize, zorder=4,
                                      ha=ann.get_horizontalalignment(),
                                      va=ann.get_verticalalignment(),
                                      arrowprops={"arrowstyle": "-", "color": COLORS["other"],
                                                  "lw": 0.5, "shrinkA": 0, "shrinkB": 2})
                placed = True
                break
        if not placed:
            ann.remove()
        drawn.append(placed)
    return drawn


def ru_map(ru: Mapping[str, Any], risk_unit: str | None = None,
           loss_unit: str | None = None) -> tuple[Figure, str]:
    """The R-U map: one point per variant; Pareto-optimal ones filled and joined; each value's
    interval (``risk_ci``, ``loss_ci``) as an error bar. Returns the figure and its caption.

    Axes are oriented so that better is toward the lower left: an axis where higher is better
    (e.g. k of k-anonymity, "higher = safer") is drawn reversed. Shares are drawn in percent.
    Labels never overlap (:func:`repel_labels`, Pareto-optimal variants first): a variant whose
    label finds no free place is left unlabelled, and the caption says how many.
    """
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    sx, sy = axis_scale(risk_unit), axis_scale(loss_unit)
    points = [{**p, "risk": p["risk"] * sx, "loss": p["loss"] * sy} for p in ru["points"]
              if isinstance(p["risk"], float | int) and isinstance(p["loss"], float | int)
              and math.isfinite(p["risk"]) and math.isfinite(p["loss"])]
    def plain(v: float, _: Any = None) -> str:  # plain numbers, no "1e8" offset
        return f"{v:,.0f}" if abs(v) >= 1e4 else f"{v:.4g}"

    widest = [plain(p["loss"] * k) for p in points for k in (1.15, -1.15)]
    fig, (ax,) = new_figure(width=6.4, height=4.8, left=text_inches(widest) + 0.45, top=0.75)
    x = np.array([p["risk"] for p in points], dtype=np.float64)
    y = np.array([p["loss"] for p in points], dtype=np.float64)
    xerr = _errors(x, [p.get("risk_ci") for p in points], sx)
    yerr = _errors(y, [p.get("loss_ci") for p in points], sy)
    if xerr is not None or yerr is not None:
        ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="none", ecolor=COLORS["other"],
                    elinewidth=0.8, capsize=2, alpha=0.7, zorder=2)
    for on in (False, True):
        group = [p for p in points if bool(p["pareto"]) is on]
        if group:
            ax.scatter([p["risk"] for p in group], [p["loss"] for p in group],
                       s=60 if on else 40, zorder=3, marker="D" if on else "o",
                       color=COLORS["pareto" if on else "other"],
                       facecolors=None if on else "none")
    front = sorted(((p["risk"], p["loss"]) for p in points if p["pareto"]),
                   key=lambda t: (t[0] if higher_is_worse(ru["risk_direction"]) else -t[0]))
    if len(front) > 1:
        ax.step([f[0] for f in front], [f[1] for f in front], where="post",
                color=COLORS["pareto"], alpha=0.5, zorder=2)
    for axis, label, direction, invert in (
            ("x", axis_label(ru["risk"], risk_unit), ru["risk_direction"], ax.invert_xaxis),
            ("y", axis_label(ru["loss"], loss_unit), ru["loss_direction"], ax.invert_yaxis)):
        rev = not higher_is_worse(direction)
        text = short(f"{label}, {direction}{'; axis reversed' if rev else ''}", 60)
        (ax.set_xlabel if axis == "x" else ax.set_ylabel)(text)
        if rev:
            invert()
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(plain))
    ax.margins(0.15)  # room for the variant labels at the edges
    ax.grid(alpha=0.3)
    fig.suptitle("risk–utility map (better: lower left)", y=0.985)
    handles = [
        Line2D([], [], marker="D", linestyle="", color=COLORS["pareto"], label="Pareto-optimal"),
        Line2D([], [], marker="o", linestyle="", color=COLORS["other"], markerfacecolor="none",
               label="dominated")]
    if xerr is not None or yerr is not None:
        handles.append(Line2D([], [], color=COLORS["other"], lw=0.8, label="interval (ci)"))
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0),
              ncol=len(handles), frameon=False, fontsize=9)  # above the axes: never on a label
    ax.autoscale_view()
    ax.set_autoscale_on(False)  # labels are placed in the final limits
    at: dict[tuple[float, float], list[str]] = {}  # one label per drawn position
    for p in sorted(points, key=lambda p: not p["pareto"]):
        at.setdefault((p["risk"], p["loss"]), []).append(str(p["variant"]))
    texts = [short(names[0], 24) + (f" (+{len(names) - 1:,})" if len(names) > 1 else "")
             for names in at.values()]
    drawn = repel_labels(ax, list(at), texts)
    missing = len(ru["points"]) - len(points)
    caption = (f"{ru['risk']} against {ru['loss']} for {len(points):,} variants; "
               f"{sum(1 for p in points if p['pareto']):,} Pareto-optimal.")
    if xerr is not None or yerr is not None:
        caption += " Bars: each value's interval (ci)."
    unlabelled = sum(len(names) for names, ok in zip(at.values(), drawn, strict=True) if not ok)
    if unlabelled:
        caption += (f" {unlabelled:,} variants unlabelled where a label would overlap another "
                    "(the table above names every point).")
    if missing:
        caption += f" {missing:,} variants not drawn (a value is missing or infinite)."
    return fig, caption


def synthesis_figures(original: Dataset, replica: Dataset, seed: int = 0) -> Markup:
    """ECDFs, Q–Q scatter and a pair scatter of actual against replica (numeric columns), or
    category frequencies (text columns)."""
    from anoneval.core.data.kinds import Microdata

    if not (isinstance(original, Microdata) and isinstance(replica, Microdata)):
        return Markup("")
    a, b = original.frame, replica.frame
    common = [c for c in a.columns if c in b.columns]
    numeric = [c for c in common if pd.api.types.is_numeric_dtype(a[c])
               and pd.api.types.is_numeric_dtype(b[c]) and not pd.api.types.is_bool_dtype(a[c])]
    categorical = [c for c in common if c not in numeric]
    out: list[Markup] = []
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
            ecdf(ax, x, COLORS["original"], "actual")
            ecdf(ax, y, COLORS["replica"], "replica")
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
        shares = {col: (a[col].astype(str).value_counts(normalize=True),
                        b[col].astype(str).value_counts(normalize=True)) for col in shown_c}
        cats_of = {col: sorted(set(fa.index) | set(fb.index))[:30]
                   for col, (fa, fb) in shares.items()}
        bottom = text_inches([c for cats in cats_of.values() for c in cats], 7) + 0.3
        fig, axes = new_figure(ncols, math.ceil(len(shown_c) / ncols), width=3.6,
                               height=2.8 + bottom - MARGINS["bottom"], bottom=bottom,
                               wgap=0.75)
        for ax, col in zip(axes, shown_c, strict=False):
            fa, fb = shares[col]
            cats = cats_of[col]
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
    return Markup("\n").join(out)


def sweep_figure(frame: pd.DataFrame, param: str, overlay: bool = False) -> Figure:
    """Value against the swept param: one panel per measure label (one line per variant), or
    with ``overlay`` one panel with a line per label and variant.

    ``frame`` has columns ``param_value``, ``variant``, ``label`` and ``value``; its
    ``ci_low`` and ``ci_high``, where given, are drawn as a band around the line.
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
            line, = ax.plot(x, part["value"].astype(float), marker="o", markersize=3,
                            label=str(key))
            if numeric_x and {"ci_low", "ci_high"} <= set(part.columns) \
                    and part["ci_low"].notna().any():  # the intervals as a band
                ax.fill_between(x.astype(float), part["ci_low"].astype(float),
                                part["ci_high"].astype(float), color=line.get_color(),
                                alpha=0.2, linewidth=0)
        ax.set_title(str(group[0]) if not overlay else "")
        ax.set_xlabel(param)
        ax.set_ylabel("value" if overlay else str(group[0]))
        ax.grid(alpha=0.3)
        if overlay or sub["variant"].notna().any():
            ax.legend(fontsize=8)
    for ax in axes[len(groups):]:
        ax.set_axis_off()
    return fig


__all__ = ["COLORS", "OKABE_ITO", "PlotDependencyError", "drawable", "ecdf", "figure_block",
           "floats",
           "grid_margins", "log_axis", "new_figure", "note", "png_bytes", "require_matplotlib",
           "ru_map_figure", "short", "status_palette", "sweep_figure", "synthesis_figures",
           "text_inches", "variants_figure"]
