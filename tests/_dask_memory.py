"""Dask settings for test clusters whose workers run in the test process.

In-process workers measure the memory of the whole process, which is the suite's, not their
own data's. Past their ``memory_limit``'s thresholds they would spill every result to disk and
read it back (a run that crawls) or pause (a run that waits), so these clusters do neither.
"""

#: ``dask.config.set(IN_PROCESS)`` around an in-process ``LocalCluster``.
IN_PROCESS = {
    "distributed.worker.memory.target": False,
    "distributed.worker.memory.spill": False,
    "distributed.worker.memory.pause": False,
    "distributed.worker.memory.terminate": False,
}
