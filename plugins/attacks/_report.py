"""HTML report section of the attacks: success rates and risk with their confidence intervals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from anoneval.core.api import hookimpl

RATES = (("attack_rate", "main attack (original)", "#d62728"),
         ("control_rate", "control attack", "#1f77b4"),
         ("baseline_rate", "naive baseline", "#7f7f7f"))


def attack_section(measure: Mapping[str, Any]) -> str | None:
    """Rates (value ± error) and the risk interval as horizontal error bars."""
    details = measure.get("details")
    if not isinstance(details, Mapping) or not all(
            isinstance(details.get(k), Mapping) for k, _, _ in RATES):
        return None
    from anoneval.core.report.plots import figure_block, new_figure, text_inches

    rows = [(label, float(details[k]["value"]), float(details[k]["error"]), color)
            for k, label, color in RATES]
    ci = measure.get("ci") or details.get("risk_ci")  # risk_ci: reports before ci existed
    fig, (ax,) = new_figure(width=6.4, height=2.2,
                            left=text_inches([label for label, *_ in rows]) + 0.2)
    for y, (_, value, err, color) in enumerate(reversed(rows)):
        ax.errorbar([value], [y], xerr=[[err], [err]], fmt="o", color=color, capsize=4)
        ax.annotate(f"{value:.3f} ± {err:.3f}", (value, y), textcoords="offset points",
                    xytext=(0, 7), ha="center", fontsize=8)
    labels = [label for label, *_ in reversed(rows)]
    if isinstance(ci, list) and len(ci) == 2 and measure.get("value") is not None:
        y = len(rows)
        risk = float(measure["value"])
        ax.errorbar([risk], [y], xerr=[[risk - ci[0]], [ci[1] - risk]], fmt="s",
                    color="black", capsize=4)
        ax.annotate(f"{risk:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]", (risk, y),
                    textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
        labels.append("risk")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(-0.6, len(labels) - 0.2)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("success rate")
    ax.grid(axis="x", alpha=0.3)
    level = details.get("confidence_level", 0.95)
    caption = (f"Success rates (Wilson centre ± half-width, {level:.0%} confidence) over "
               f"{details.get('n_attacks')} attacks; risk = (main − control)/(1 − control) "
               "with its propagated interval, clipped to [0, 1].")
    return figure_block(fig, f"{measure.get('label')}: attack success rates", caption)


@hookimpl
def report_section(measure: dict[str, Any]) -> str | None:
    if measure.get("error"):
        return None
    return attack_section(measure)
