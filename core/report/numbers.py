"""Numbers as people read them, for the terminal summary and the HTML report.

Conventions: numbers from 10,000 on get thousands separators (``12,345``; four-digit numbers
such as years stay ``2020``); a measure whose ``unit`` is
``"share"`` is shown as a percentage (``5.16 %``); any other unit (``"bits"``, ``"nats"``,
``"metres"``, ...) follows the number; a value within :data:`ZERO_TOLERANCE` of zero is
floating-point round-off and is shown as ``0`` (the JSON report keeps the exact value).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from anoneval.core.api import Direction

if TYPE_CHECKING:
    from anoneval.registry import Registry

#: Values closer to zero than this are shown as 0 (round-off such as ``6.4e-16``).
ZERO_TOLERANCE = 1e-12
#: Thousands separators from this magnitude on (not in four-digit numbers such as years).
SEPARATE_FROM = 10_000
#: The unit a measure declares when its value is a proportion in [0, 1].
SHARE = "share"
ZERO_NOTE = (f"values within ±{ZERO_TOLERANCE:g} of zero are floating-point round-off and "
             "are shown as 0")


def is_roundoff(value: Any) -> bool:
    """True for a non-zero float that :func:`fmt_value` shows as 0."""
    return (isinstance(value, float) and value != 0.0 and math.isfinite(value)
            and abs(value) < ZERO_TOLERANCE)


def _int(value: int) -> str:
    return f"{value:,}" if abs(value) >= SEPARATE_FROM else str(value)


def _plain(value: float) -> str:
    """A finite float: whole numbers in full, others to 6 significant digits (separators from
    10,000 on; scientific notation only below 1e-4 or from 1e15)."""
    if abs(value) < ZERO_TOLERANCE:
        return "0"
    if value.is_integer() and abs(value) < 1e15:
        return _int(int(value))
    if abs(value) < 1e-4 or abs(value) >= 1e15:
        return f"{value:.4g}"
    if abs(value) >= SEPARATE_FROM:
        digits = len(str(int(abs(value))))
        text = f"{value:,.{max(0, 6 - digits)}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{value:.6g}"


def _number(value: int | float, unit: str | None) -> str:
    """A number without its unit (shares as percentages)."""
    value = float(value) if unit == SHARE else value
    if isinstance(value, int):
        return _int(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if unit == SHARE:
        share = 100 * value
        return "0" if abs(value) < ZERO_TOLERANCE else (
            f"{share:.4g}" if abs(share) >= 1e-3 else f"{share:.2g}")
    return _plain(value)


def fmt_value(value: Any, unit: str | None = None, ci: Any = None) -> str:
    """A value as people read it, with its unit (see the module doc); None is "–".

    With ``ci`` (``[low, high]``) the interval follows the value, the unit written once after
    both: ``0.12 [0.08, 0.17]``, ``12.3 [8.1, 17.2] %``, ``40 [31, 52] metres``.
    """
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value).lower()
    if not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    text = _number(value, unit)
    if is_interval(ci):
        text += f" [{_number(float(ci[0]), unit)}, {_number(float(ci[1]), unit)}]"
    suffix = unit_label(unit)
    return f"{text} {suffix}" if suffix else text


def is_interval(ci: Any) -> bool:
    """Whether ``ci`` is an interval as reports hold it: two finite numbers, low <= high."""
    return (isinstance(ci, list | tuple) and len(ci) == 2
            and all(isinstance(c, int | float) and not isinstance(c, bool)
                    and math.isfinite(c) for c in ci) and ci[0] <= ci[1])


def unit_label(unit: str | None) -> str:
    """How an axis or a column header names the unit: "%" for shares, else the unit."""
    if not unit:
        return ""
    return "%" if unit == SHARE else unit


def axis_label(name: str, unit: str | None) -> str:
    """``name (unit)`` for a chart axis."""
    u = unit_label(unit)
    return f"{name} ({u})" if u else name


def axis_scale(unit: str | None) -> float:
    """The factor from values to axis numbers (100 for shares drawn as percentages)."""
    return 100.0 if unit == SHARE else 1.0


def unit_of(registry: Registry | None, kind: str, name: str,
            params: Mapping[str, Any] | None = None) -> str | None:
    """The unit of the measure registered as ``name`` under ``params`` (its class's
    ``unit_for``; None when the plugin is unknown or declares none)."""
    if registry is None:
        return None
    try:
        cls = registry.get(kind, name)
        unit = cls.unit_for(params or {}) if hasattr(cls, "unit_for") else None
    except Exception:  # a report read back without its plugin: no unit, same numbers
        return None
    return unit if isinstance(unit, str) and unit else None


def higher_is_worse(direction: str) -> bool:
    """Read a report's direction ("higher = riskier", "higher = less loss", ...)."""
    try:
        return Direction(direction).higher_is_worse
    except ValueError:
        raise ValueError(f"unknown direction {direction!r}; expected 'higher = riskier', "
                         "'higher = safer', 'higher = more loss' or 'higher = less loss'"
                         ) from None


__all__ = ["SHARE", "ZERO_NOTE", "ZERO_TOLERANCE", "axis_label", "axis_scale", "fmt_value",
           "higher_is_worse", "is_interval", "is_roundoff", "unit_label", "unit_of"]
