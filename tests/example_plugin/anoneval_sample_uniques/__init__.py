"""An example third-party anoneval plugin, packaged on its own with an entry point.

``SampleUniques`` is the share of records whose quasi-identifier combination occurs once in the
released data: the records a prosecutor re-identifies with certainty (El Emam & Dankar 2008,
"sample uniques"). Missing values count as a value of their own.

The package shows all three ways to extend anoneval: a measure (``risk_measure`` hook), its own
section of the HTML report (``report_section``) and a command (``register_commands``:
``anoneval sample-uniques FILE --qi COLUMN``).
"""

from __future__ import annotations

import html

import click
from pydantic import Field

from anoneval.core.api import (
    Context,
    Dataset,
    MeasureResult,
    Microdata,
    Params,
    RiskMeasure,
    hookimpl,
    released,
)


class SampleUniques(RiskMeasure):
    """Share of records that are unique on the quasi-identifiers (class size 1)."""

    name = "SampleUniques"
    description = "Share of records that are unique on the quasi-identifiers."
    accepts = ("microdata",)
    inputs = "either"

    class Params(Params):
        quasi_identifiers: list[str] = Field(min_length=1,
                                             description="Columns an intruder may know.")

    def compute(self, original: Dataset | None, anonymized: Dataset | None,
                ctx: Context) -> MeasureResult:
        data = released(original, anonymized)
        assert isinstance(data, Microdata)
        qi = self.params.quasi_identifiers
        data.require(qi, "quasi-identifier")
        ids, _ = data.group_ids(qi)
        uniques = int((data.group_sizes(qi)[ids] == 1).sum())
        return MeasureResult(value=uniques / len(data) if len(data) else 0.0,
                             details={"uniques": uniques, "records": len(data)})


@hookimpl
def risk_measure(register):  # type: ignore[no-untyped-def]
    register(SampleUniques)


@hookimpl
def report_section(measure):  # type: ignore[no-untyped-def]
    """A sentence for the HTML report under SampleUniques' section (None for other measures)."""
    if measure["name"] != "SampleUniques" or measure["error"]:
        return None
    d = measure["details"]
    return (f'<p class="sample-uniques">{html.escape(str(d["uniques"]))} of '
            f'{html.escape(str(d["records"]))} records are unique on the quasi-identifiers.</p>')


@click.command("sample-uniques")
@click.argument("path")
@click.option("--qi", "qis", multiple=True, required=True, help="a quasi-identifier column")
def sample_uniques_command(path, qis):  # type: ignore[no-untyped-def]
    """Print the share of sample uniques of a data file."""
    from anoneval.core import evaluate, load

    report = evaluate(None, load(path), [{"name": "SampleUniques",
                                          "params": {"quasi_identifiers": list(qis)}}])
    m = report["SampleUniques"]
    if m.error:
        raise click.ClickException(m.error)
    click.echo(f"{m.details['uniques']} of {m.details['records']} records are sample uniques "
               f"({m.value:.1%})")
    return 0


@hookimpl
def register_commands(cli):  # type: ignore[no-untyped-def]
    cli.add_command(sample_uniques_command)
