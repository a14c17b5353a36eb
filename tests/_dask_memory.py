"""Test clusters whose workers run in the test process, with Dask settings fit for them.

In-process workers measure the memory of the whole process, which is the suite's, not their
own data's. Past their ``memory_limit``'s thresholds they would spill every result to disk and
read it back (a run that crawls) or pause (a run that waits), so these clusters do neither.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

#: ``dask.config.set(IN_PROCESS)`` around an in-process ``LocalCluster``.
IN_PROCESS = {
    "distributed.worker.memory.target": False,
    "distributed.worker.memory.spill": False,
    "distributed.worker.memory.pause": False,
    "distributed.worker.memory.terminate": False,
}


@contextlib.contextmanager
def in_process_cluster(tcp: bool = False) -> Iterator[Any]:
    """A ``LocalCluster`` of two single-threaded in-process workers with a memory_limit of
    1 GB (a class summary's budget is ``SUMMARY_SHARE`` of that), under :data:`IN_PROCESS`;
    with ``tcp``, behind a loopback TCP scheduler address, as an engine config takes it."""
    import dask
    import distributed

    where = {"protocol": "tcp", "host": "127.0.0.1"} if tcp else {}
    with dask.config.set(IN_PROCESS), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                     memory_limit="1GB", dashboard_address="127.0.0.1:0",
                                     **where) as cluster:
        yield cluster


@contextlib.contextmanager
def in_process_client() -> Iterator[Any]:
    """A client of :func:`in_process_cluster` (not the default client)."""
    import distributed

    with in_process_cluster() as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        yield client
