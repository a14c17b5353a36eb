"""The randomized-response family's report section: a curve such as leakage against ε.

Drawn for any measure whose details have ``curve``: ``{"param", "x", "y"[, "label",
"xscale", "ylabel"]}`` or a list of them (MILeakage).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from anoneval.core.api import hookimpl
from anoneval.core.report.plots import drawable, figure_block, floats, new_figure


def curve_section(measure: Mapping[str, Any]) -> str | None:
    """A curve such as MILeakage's leakage against a parameter."""
    raw = measure["details"].get("curve")
    curves = raw if isinstance(raw, list) else [raw]
    curves = [c for c in curves if isinstance(c, Mapping) and "x" in c and "y" in c]
    if not curves:
        return None
    fig, (ax,) = new_figure()
    for i, c in enumerate(curves):
        ax.plot(floats(c["x"]), floats(c["y"]), marker="o", markersize=3,
                label=str(c.get("label") or f"curve {i + 1}"))
        if c.get("xscale") in ("log", "linear", "symlog"):
            ax.set_xscale(c["xscale"])
    ax.set_xlabel(str(curves[0].get("param") or "x"))
    ylabel = curves[0].get("ylabel") or measure["label"]
    if "ylabel" not in curves[0] and measure.get("name") == "MILeakage":
        ylabel = f"{ylabel} (bits)"
    ax.set_ylabel(str(ylabel))
    if len(curves) > 1:
        ax.legend()
    ax.grid(alpha=0.3)
    return figure_block(fig, f"{measure['label']}: curve",
                        f"{measure['label']} against {curves[0].get('param') or 'x'}.")


@hookimpl
def report_section(measure: dict[str, Any]) -> str | None:
    if not drawable(measure):
        return None
    return curve_section(measure)
