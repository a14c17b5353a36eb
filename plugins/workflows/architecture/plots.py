"""PNG plots of the architecture run: Pflughoeft et al.'s Figures 2-5 (the ``report`` extra).

Figure 2: scatter of the raw and the transformed data with marginal kernel densities (Task 1).
Figure 3: actual and replica scatter with their least-squares lines (Tasks 10-11).
Figure 4: ECDFs of actual and replica with the ME model's CDF, per column (Tasks 14-16).
Figure 5: kernel density of the actual data against the contours of f* and f** (Tasks 9, 16).
Drawn with matplotlib's object API (no pyplot state), without timestamps in the PNG.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from anoneval.plugins._shared.continuous import backward, kde_on_grid, rule_of_thumb_bandwidth

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from anoneval.plugins.workflows.architecture.config import ArchitectureConfig
    from anoneval.plugins.workflows.architecture.model import ModelView

ACTUAL, REPLICA, MODEL = "#1f77b4", "#d62728", "#2ca02c"
#: The PNG files a run may write into the plots folder.
FIGURES = ("figure2_exploration", "figure3_replica", "figure4_cdfs", "figure5_contours")
MAX_POINTS = 5000
MAX_COLUMNS = 6


def _save(fig: Figure, path: Path) -> str:
    from anoneval.core.report.atomic import write_bytes_atomic

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    write_bytes_atomic(path, buf.getvalue())
    return str(path)


def _thin(a: np.ndarray) -> np.ndarray:
    """At most MAX_POINTS rows for scatter plots (evenly spaced, deterministic)."""
    if len(a) <= MAX_POINTS:
        return a
    return a[np.linspace(0, len(a) - 1, MAX_POINTS).astype(int)]


def _density_1d(v: np.ndarray, points: int = 256) -> tuple[np.ndarray, np.ndarray]:
    h = rule_of_thumb_bandwidth(v[:, None])
    h = np.where(h > 0, h, 1.0)
    t = np.linspace(v.min() - 3 * h[0], v.max() + 3 * h[0], points)
    return t, kde_on_grid(v[:, None], h, [t])


def _scatter_with_margins(fig: Figure, spec: Any, data: np.ndarray, names: Sequence[str],
                          title: str) -> None:
    """A scatter with the marginal kernel densities on the top and right (Figure 2)."""
    inner = spec.subgridspec(2, 2, width_ratios=[4, 1], height_ratios=[1, 4],
                             hspace=0.05, wspace=0.05)
    ax = fig.add_subplot(inner[1, 0])
    top = fig.add_subplot(inner[0, 0], sharex=ax)
    right = fig.add_subplot(inner[1, 1], sharey=ax)
    pts = _thin(data)
    ax.scatter(pts[:, 0], pts[:, 1], s=6, alpha=0.5, color=ACTUAL)
    ax.set_xlabel(names[0])
    ax.set_ylabel(names[1])
    ax.ticklabel_format(style="sci", scilimits=(-3, 4))
    t, f = _density_1d(data[:, 0])
    top.plot(t, f, color=ACTUAL)
    t, f = _density_1d(data[:, 1])
    right.plot(f, t, color=ACTUAL)
    top.set_title(title)
    top.tick_params(labelbottom=False)
    right.tick_params(labelleft=False)


def draw_all(folder: Path, cfg: ArchitectureConfig, columns: list[str], X: np.ndarray,
             fitted: Any, model: ModelView | None, Y: np.ndarray | None,
             rmodel: ModelView | None, axes_for: Callable[..., list[np.ndarray]],
             kde_probs: Callable[..., np.ndarray]) -> dict[str, str]:
    """Draw whatever the run reached; returns {figure name: PNG path}."""
    from matplotlib.figure import Figure

    from anoneval.core.report.plots import grid_margins

    out: dict[str, str] = {}
    names = cfg.plot_columns or columns[:2]
    missing = [c for c in names if c not in columns]
    if missing:
        from anoneval.core.api import ConfigError

        raise ConfigError([("plot_columns", f"{missing} are not among the columns {columns}")])
    cols = [columns.index(c) for c in names]
    raw = backward(X, fitted)
    g = {f.column: f.label() for f in fitted}  # axis labels on the transformed scale

    # Figure 2
    fig = Figure(figsize=(11, 5))  # fixed margins: one draw, no layout engine
    margins = grid_margins(11, 5, 2, wgap=1.1)
    if len(cols) == 2:
        grid = fig.add_gridspec(1, 2, **margins)
        _scatter_with_margins(fig, grid[0], raw[:, cols], names, "raw data")
        _scatter_with_margins(fig, grid[1], X[:, cols], [g[c] for c in names],
                              "transformed data")
    else:
        a1, a2 = fig.subplots(1, 2, gridspec_kw=margins)
        for ax, data, label, xlabel in ((a1, raw, "raw data", names[0]),
                                        (a2, X, "transformed data", g[names[0]])):
            t, f = _density_1d(data[:, cols[0]])
            ax.hist(data[:, cols[0]], bins=40, density=True, alpha=0.3, color=ACTUAL)
            ax.plot(t, f, color=ACTUAL)
            ax.set_title(label)
            ax.set_xlabel(xlabel)
    out["figure2_exploration"] = _save(fig, folder / "figure2_exploration.png")

    if Y is not None:
        # Figure 3
        fig = Figure(figsize=(6, 5))
        ax = fig.subplots(gridspec_kw=grid_margins(6, 5))
        for data, color, label in ((X, ACTUAL, "actual"), (Y, REPLICA, "replica")):
            pts = _thin(data[:, cols])
            if len(cols) == 2:
                ax.scatter(pts[:, 0], pts[:, 1], s=6, alpha=0.45, color=color, label=label)
                b, a = np.polyfit(data[:, cols[0]], data[:, cols[1]], 1)
                t = np.linspace(data[:, cols[0]].min(), data[:, cols[0]].max(), 50)
                ax.plot(t, a + b * t, color=color, lw=2)
            else:
                t, f = _density_1d(data[:, cols[0]])
                ax.plot(t, f, color=color, label=label)
        ax.set_xlabel(g[names[0]])
        ax.set_ylabel(g[names[1]] if len(cols) == 2 else "density")
        ax.set_title("actual and replica (transformed scale)")
        ax.legend()
        out["figure3_replica"] = _save(fig, folder / "figure3_replica.png")

    if model is not None:
        # Figure 4
        show = list(range(min(len(columns), MAX_COLUMNS)))
        fig = Figure(figsize=(5 * len(show), 4))
        axs = np.atleast_1d(fig.subplots(1, len(show), gridspec_kw=grid_margins(
            5 * len(show), 4, len(show), left=0.6, wgap=0.6)))
        for ax, j in zip(axs, show, strict=True):
            for data, color, label in ((X, ACTUAL, "actual"), (Y, REPLICA, "replica")):
                if data is None:
                    continue
                v = np.sort(data[:, j])
                ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", color=color,
                        label=f"ECDF {label}")
            lo = min(X[:, j].min(), Y[:, j].min() if Y is not None else np.inf)
            hi = max(X[:, j].max(), Y[:, j].max() if Y is not None else -np.inf)
            t = np.linspace(lo, hi, 400)
            ax.plot(t, model.marginal_cdf(j, t), color=MODEL, ls="--", label="ME model f*")
            ax.set_xlabel(g[columns[j]])
            ax.legend(loc="lower right")
        out["figure4_cdfs"] = _save(fig, folder / "figure4_cdfs.png")

        # Figure 5
        arrays = [X] if Y is None else [X, Y]
        axes = axes_for(arrays, cols)
        P = kde_probs(X, cols, axes)
        panels = [("kernel density f̃ (actual)", None, P), ("ME model f*", model, None)]
        if rmodel is not None:
            panels.append(("ME model f** (replica)", rmodel, None))
        fig = Figure(figsize=(5 * len(panels), 4.5))
        axs = np.atleast_1d(fig.subplots(1, len(panels), sharex=True, sharey=True,
                                         gridspec_kw=grid_margins(5 * len(panels), 4.5,
                                                                  len(panels))))
        for ax, (title, mv, dens) in zip(axs, panels, strict=True):
            z = dens if dens is not None else np.exp(mv.logpdf(axes, cols))
            if len(cols) == 2:
                ax.contour(axes[0], axes[1], z.T, levels=8,
                           colors=ACTUAL if dens is not None else MODEL)
                ax.set_ylabel(g[names[1]])
            else:
                ax.plot(axes[0], z / z.max(), color=ACTUAL if dens is not None else MODEL)
            ax.set_title(title)
            ax.set_xlabel(g[names[0]])
        out["figure5_contours"] = _save(fig, folder / "figure5_contours.png")
    return out
