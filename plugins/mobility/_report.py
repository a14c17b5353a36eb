"""HTML report sections of the mobility attacks: tile heat maps of visits and risk histograms."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from anoneval.core.api import hookimpl

ATTACKS = {"LocationAttack", "LocationSequenceAttack", "LocationTimeAttack",
           "UniqueLocationAttack", "LocationFrequencyAttack", "LocationProbabilityAttack",
           "LocationProportionAttack", "HomeWorkAttack"}


def heat_map(measure: Mapping[str, Any]) -> str | None:
    """Visits per tile, original beside anonymized, on one colour scale (log counts)."""
    tv = measure.get("details", {}).get("tile_visits")
    if not isinstance(tv, Mapping):
        return None
    sides = [s for s in ("original", "anonymized") if isinstance(tv.get(s), list)]
    if not sides:
        return None
    from anoneval.core.report.plots import figure_block, new_figure

    if tv.get("kind") == "h3":
        return _hex_map(measure, tv, sides)
    nx, ny = int(tv["nx"]), int(tv["ny"])
    grids = {}
    for side in sides:
        g = np.zeros(nx * ny)
        pairs = np.asarray(tv[side], dtype=np.int64).reshape(-1, 2)
        g[pairs[:, 0]] = pairs[:, 1]
        grids[side] = g.reshape(nx, ny).T  # rows: y (south → north), columns: x
    vmax = max(float(g.max()) for g in grids.values())
    fig, axes = new_figure(ncols=len(sides), width=4.2 * len(sides), height=3.8)
    image = None
    for ax, side in zip(np.atleast_1d(axes), sides, strict=True):
        g = grids[side]
        image = ax.imshow(np.where(g > 0, np.log10(np.maximum(g, 1)), np.nan), origin="lower",
                          cmap="cividis", vmin=0, vmax=np.log10(max(vmax, 1)) or 1,
                          interpolation="nearest", aspect="equal")
        ax.set_title(f"{side}: {int(g.sum())} visits in {int((g > 0).sum())} tiles")
        ax.set_xticks([])
        ax.set_yticks([])
    if image is not None:
        fig.colorbar(image, ax=list(np.atleast_1d(axes)), label="log10 visits per tile")
    return figure_block(fig, f"{measure.get('label', measure['name'])}: visits per tile",
                        f"Visits per tile ({nx} × {ny} tiles, north up), same colour scale "
                        "on each side; empty tiles blank.")


def _hex_map(measure: Mapping[str, Any], tv: Mapping[str, Any], sides: list[str]) -> str | None:
    """H3 cells as hexagon markers at their centres, one colour scale for both sides."""
    from anoneval.core.report.plots import figure_block, new_figure

    centres = tv.get("centres")
    if not isinstance(centres, Mapping) or not centres:
        return None
    counts = {side: np.asarray(tv[side], dtype=np.int64).reshape(-1, 2) for side in sides}
    vmax = max(float(c[:, 1].max()) if len(c) else 1.0 for c in counts.values())
    fig, axes = new_figure(ncols=len(sides), width=4.2 * len(sides), height=3.8)
    image = None
    for ax, side in zip(np.atleast_1d(axes), sides, strict=True):
        c = counts[side]
        xy = np.array([centres[str(int(t))] for t in c[:, 0]]).reshape(-1, 2)
        image = ax.scatter(xy[:, 0], xy[:, 1], c=np.log10(np.maximum(c[:, 1], 1)), marker="h",
                           s=40, cmap="cividis", vmin=0, vmax=np.log10(max(vmax, 1)) or 1,
                           linewidths=0)
        ax.set_title(f"{side}: {int(c[:, 1].sum())} visits in {len(c)} cells")
        ax.set_aspect(1 / np.cos(np.radians(float(np.mean(xy[:, 1])))) if len(xy) else 1)
        ax.set_xticks([])
        ax.set_yticks([])
    if image is not None:
        fig.colorbar(image, ax=list(np.atleast_1d(axes)), label="log10 visits per cell")
    return figure_block(fig, f"{measure.get('label', measure['name'])}: visits per H3 cell",
                        "Visits per H3 cell (hexagons at the cells' centres, north up), same "
                        "colour scale on each side; cells without visits blank.")


def risk_histogram(measure: Mapping[str, Any]) -> str | None:
    """A bar chart of the per-user risk histogram in the details."""
    hist = measure.get("details", {}).get("risk_histogram")
    if not isinstance(hist, Mapping):
        return None
    from anoneval.core.report.plots import COLORS, figure_block, new_figure

    edges = np.asarray(hist.get("edges", []), dtype=np.float64)
    counts = np.asarray(hist.get("counts", []), dtype=np.float64)
    if len(edges) != len(counts) + 1 or not counts.sum():
        return None
    fig, (ax,) = new_figure()
    ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color=COLORS["original"],
           edgecolor="white")
    ax.set_xlabel("re-identification risk per user (1 / matching users)")
    ax.set_ylabel("users")
    ax.set_xlim(0, 1)
    return figure_block(fig, f"{measure.get('label', measure['name'])}: per-user risk",
                        f"{int(counts.sum())} users by risk ({len(counts)} bins).")


@hookimpl
def report_section(measure: dict[str, Any], report: dict[str, Any]) -> str | None:
    if measure.get("name") not in ATTACKS or measure.get("error"):
        return None
    if not isinstance(measure.get("details"), Mapping):
        return None
    parts = [p for p in (risk_histogram(measure), heat_map(measure)) if p]
    return "".join(str(p) for p in parts) or None
