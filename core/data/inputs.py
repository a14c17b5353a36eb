"""Which datasets a measure reads: ``Inputs``, ``ControlUse`` and the released side."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from anoneval.core.data.kinds import Dataset

#: Which datasets a measure needs: both sides, either one (the released side when both are
#: given: the anonymized one), or none (analytic measures).
Inputs = Literal["both", "either", "none"]
#: Whether a measure uses the control set (original records held out of the release):
#: "required" (a missing control set is a config error), "optional" or "none".
ControlUse = Literal["required", "optional", "none"]


def released(original: Dataset | None, anonymized: Dataset | None) -> Dataset:
    """The dataset a one-sided ("either") measure assesses: the anonymized one when given."""
    data = anonymized if anonymized is not None else original
    if data is None:
        raise ValueError("this measure needs a dataset, but none was given")
    return data
