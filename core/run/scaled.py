"""How measures run on partitioned data: from class summaries, partition-wise, or gathered.

On the dask engine an input given as a path stays on disk as a
:class:`~anoneval.core.data.partitioned.Partitioned` dataset, and each measure runs in the first way
it supports:

1. **class summaries**: a measure whose :meth:`~anoneval.core.api.Measure.summaries` returns
   specs computes in this process from the summaries; every distinct spec of a dataset is
   computed once per run, all in one partition-wise pass on the cluster (a summary too large
   for one worker as a hash-partitioned group-by left on the workers, which measures reduce);
2. **partition-wise**: a measure defining ``partial``, ``combine`` and ``finalize`` has its
   partials computed on the workers, combined in a tree, and finalized here; a ``paired``
   measure's partials are of the records of both sides paired (:mod:`anoneval.core.data.pairs`);
3. **gathered**: any other measure gets the columns it reads (all, unless it says which)
   gathered into this process, with a warning, when their estimated size fits the gather limit;
   otherwise it fails with an error naming its size, and the other measures still run.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Collection, Mapping
from typing import Any, Literal

import pandas as pd

from anoneval.core.api import Context, Measure, MeasureResult, released
from anoneval.core.data.kinds import Dataset
from anoneval.core.data.partitioned import Partitioned
from anoneval.core.data.records import PairedRecords
from anoneval.core.data.summary import ClassSummary, Side, SummarySpec
from anoneval.core.errors import DataError

Mode = Literal["summaries", "partition-wise", "gathered"]


def mode_of(measure: Measure) -> Mode:
    """How ``measure`` runs on partitioned data."""
    if measure.summaries() is not None:
        return "summaries"
    return "partition-wise" if measure.partition_wise() else "gathered"


def size_text(n: float) -> str:
    """Bytes for people (binary units)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _partial(measure: Measure, ctx: Context, frame: pd.DataFrame) -> Any:
    return measure.partial(frame, ctx)


def _sides(original: Dataset | None, anonymized: Dataset | None) -> dict[Side, Dataset | None]:
    return {"original": original, "anonymized": anonymized}


class ScaledRun:
    """The partition-wise work of the evaluations on one Dask client.

    ``gather_limit`` is the most bytes a measure without a partition-wise form may gather into
    this process. Summaries and gathered frames are cached on the datasets, so the original's
    are computed once for every variant.
    """

    def __init__(self, client: Any, gather_limit: int) -> None:
        self.client = client
        self.gather_limit = gather_limit

    def attach(self, data: Dataset | None) -> None:
        if isinstance(data, Partitioned):
            data.attach(self.client)

    def prefetch(self, measures: Collection[Measure], original: Dataset | None,
                 anonymized: Dataset | None) -> None:
        """Every summary the measures need of the partitioned sides, one pass per dataset."""
        sides = _sides(original, anonymized)
        wanted: dict[Side, list[SummarySpec]] = {"original": [], "anonymized": []}
        for measure in measures:
            try:
                specs = measure.summaries() or ()
                # with a release, not the original's columns it reads only when alone
                reads = measure.release_columns() if anonymized is not None else None
            except Exception:  # reported when the measure runs
                continue
            for spec in specs:
                data = sides[spec.side]
                if (reads is not None and spec.side in reads
                        and not set(spec.columns) <= set(reads[spec.side])):
                    continue
                if isinstance(data, Partitioned) and set(spec.columns) <= set(data.columns):
                    wanted[spec.side].append(spec)
        for side, specs in wanted.items():
            data = sides[side]
            if specs and isinstance(data, Partitioned):
                data.class_summaries(specs)

    def summarizer(self, local: Callable[[SummarySpec], ClassSummary] | None,
                   original: Dataset | None,
                   anonymized: Dataset | None) -> Callable[[SummarySpec], ClassSummary]:
        """``Context.summarize``: partitioned sides from the cluster, others as ``local``."""
        sides = _sides(original, anonymized)

        def summarize(spec: SummarySpec) -> ClassSummary:
            data = sides[spec.side]
            if isinstance(data, Partitioned):
                return data.class_summary(spec)
            if local is None:
                raise DataError(f"no {spec.side} data to summarize ({spec})")
            return local(spec)

        return summarize

    def partition_wise(self, measure: Measure, original: Dataset | None,
                       anonymized: Dataset | None, ctx: Context) -> MeasureResult:
        """``finalize(combine(partial of each partition))`` of the released data (of the
        paired records of both sides, for a paired measure, whose ``finalize`` may pass over them
        again through ``ctx.records``)."""
        remote = Context(seed=ctx.seed, base_dir=ctx.base_dir, prepared=ctx.prepared)
        if measure.paired:
            if not any(isinstance(d, Partitioned) for d in (original, anonymized)):
                return measure.compute(original, anonymized, ctx)
            if original is None or anonymized is None:
                raise DataError(f"{measure.name} pairs the records of the original and the "
                                "anonymized data: give both")
            records = PairedRecords(original, anonymized, measure.columns() or {},
                                    measure.pair_key())
            combined = records.reduce(functools.partial(_partial, measure, remote),
                                      measure.combine)
            return measure.finalize(combined, dataclasses.replace(ctx, records=records))
        data = released(original, anonymized)
        if not isinstance(data, Partitioned):
            return measure.compute(original, anonymized, ctx)
        side: Side = "anonymized" if anonymized is not None else "original"
        columns = (measure.columns() or {}).get(side)
        combined = data.reduce(columns, functools.partial(_partial, measure, remote),
                               measure.combine)
        return measure.finalize(combined, ctx)

    def gather(self, measure: Measure, original: Dataset | None,
               anonymized: Dataset | None) -> tuple[Dataset | None, Dataset | None, str]:
        """Both sides in memory (the columns the measure reads) and the warning to give; an
        error naming the measure and the size when they exceed the gather limit."""
        declared: Mapping[Side, Collection[str]] = measure.columns() or {}
        todo = {side: data for side, data in _sides(original, anonymized).items()
                if isinstance(data, Partitioned)}
        # columns a side lacks are left to the measure, which names them as on the local engine
        columns = {side: [c for c in declared[side] if c in data.columns]
                   if side in declared else None for side, data in todo.items()}
        size = sum(data.gathered_bytes(columns[side]) for side, data in todo.items())
        rows = sum(len(data) for data in todo.values())
        if size > self.gather_limit:
            why = measure.records_reason()
            raise DataError(
                f"{measure.name} has no partition-wise form (summaries, or partial/combine/"
                f"finalize) and would gather {rows} rows, an estimated {size_text(size)}, to "
                f"the client: more than the gather limit of {size_text(self.gather_limit)} "
                "(engine.gather_limit)" + (f". {why}" if why else ""))
        out: dict[Side, Dataset | None] = _sides(original, anonymized)
        for side, data in todo.items():
            cols = columns[side]
            key = ("gathered", None if cols is None else tuple(cols))
            out[side] = data.cached(key, functools.partial(data.gather, cols))
        note = (f"{measure.name} has no partition-wise form: gathered {rows} rows "
                f"({size_text(size)}) to the client")
        return out["original"], out["anonymized"], note


def gather_limit(client: Any, configured: int | None) -> int:
    """``configured``, else the smallest worker memory limit or a quarter of this machine's
    memory, whichever is smaller."""
    if configured is not None:
        return configured
    import psutil

    limit = psutil.virtual_memory().total // 4
    workers = client.scheduler_info(n_workers=-1).get("workers", {}).values()
    limits = [w.get("memory_limit") or 0 for w in workers]
    limits = [m for m in limits if m > 0]
    return int(min([limit, *limits]))


__all__ = ["Mode", "ScaledRun", "gather_limit", "mode_of"]
