"""A distance named by a measure's param: created, checked against the data and fitted."""

from __future__ import annotations

from anoneval.core.api import Context, DataError, Dataset, Distance, PluginRef


def fitted_distance(ctx: Context, ref: PluginRef, reference: Dataset | None = None,
                    hint: str = "") -> Distance:
    """The distance ``ref`` from the context's registry; it must accept the data kind of
    ``reference`` (``hint`` completes the error), on which it is fitted when given."""
    distance = ctx.create("distance", ref)
    if not isinstance(distance, Distance):
        raise DataError(f"{ref.name} is not a distance plugin")
    if reference is not None:
        if reference.data_kind not in distance.accepts:
            raise DataError(f"distance {distance.name} accepts {', '.join(distance.accepts)} "
                            f"data, the original is {reference.data_kind}{hint}")
        distance.fit(reference, ctx)
    return distance
