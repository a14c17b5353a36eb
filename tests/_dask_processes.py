"""A real ``dask scheduler`` and ``dask worker`` processes for the engine tests, each in a
process group of its own that is ended however the test ends."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def dask_processes(n_workers: int, worker_args: Sequence[str] = (), **popen: Any
                   ) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """``(address, workers)``: a scheduler on 127.0.0.1 and ``n_workers`` single-threaded
    workers, started with this interpreter's dask (the scheduler unpickles graphs naming
    anoneval functions); ``popen`` goes to every :class:`subprocess.Popen` (env, cwd). On exit
    each process group gets SIGTERM, and SIGKILL when still running 20 s later."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask_cli = [sys.executable, "-m", "dask"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
             "start_new_session": True, **popen}
    procs = [subprocess.Popen([*dask_cli, "scheduler", "--host", "127.0.0.1", "--port",
                               str(port), "--dashboard-address", "127.0.0.1:0", "--no-show"],
                              **quiet)]
    try:
        deadline = time.monotonic() + 60  # listening before the engine's 4 s reach check
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        workers = [subprocess.Popen([*dask_cli, "worker", address, "--nthreads", "1",
                                     "--host", "127.0.0.1", "--no-dashboard", *worker_args],
                                    **quiet) for _ in range(n_workers)]
        procs += workers
        yield address, workers
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
