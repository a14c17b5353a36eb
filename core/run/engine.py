"""Execution engines: where the independent tasks of a run (variants, blocks) are computed.

``local`` (the default) runs them in this process, or in ``workers`` processes: this one and
``workers - 1`` processes of a :class:`concurrent.futures.ProcessPoolExecutor` for variants,
``workers`` pool processes for blocks; ``dask`` runs them on a Dask cluster, either one
already running (``address``) or a ``distributed.LocalCluster`` started for the run and closed
after it. Every engine returns the reports in the variants' order and gives the same reports
as a serial run (apart from timings): each task rebuilds the evaluator from the same original,
measures and seed, and measures draw randomness only from the seed.

The local engine's processes are forked from multiprocessing's fork server, a process started
once per Python process that imports anoneval, pandas and the first run's plugins and does
nothing else (no state of a run reaches it; :mod:`anoneval.core.run.forkserver`), or spawned
where there is no fork server (Windows). They are kept for the next run of this process with
the same ``workers`` and environment (an embedder calling ``evaluate`` in a loop starts them
once), and end :data:`POOL_IDLE` seconds after their last run, at exit, on :func:`close_pool`,
or when another config or environment needs others; a run sends them its own recipe and shared
objects. A main script without an ``if __name__ == "__main__":`` guard is not run again in
them; plugins of registry files are loaded in them by value. While they start, this process
evaluates variants and blocks itself (variants also after, beside them); so it does while a
LocalCluster started for a run starts (in a background thread). Variants too small to pay for a
task of their own are grouped, several to a task (:func:`chunk_size`), and tasks report each
finished measure to the caller's progress bar (a queue from the processes, Dask events from the
workers).

Two levels of tasks exist: the variants of a run, and the *blocks* of one measure's pairwise
work (:class:`Blocks`, reached by plugins through ``Context.map_blocks``). A run with several
variants spreads the variants and runs each measure's blocks serially inside its task (no
nested pools); a run with one variant runs it here and spreads the blocks.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import contextvars
import dataclasses
import functools
import importlib.util
import inspect
import ipaddress
import multiprocessing
import os
import pickle
import re
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from dataclasses import dataclass
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from anoneval.core.data.blocks import SERIAL_BLOCKS, Blocks, as_task, mark_task_process
from anoneval.core.data.progress import relayed
from anoneval.core.data.sharded import all_paused, wait_unpaused
from anoneval.core.errors import AnonevalError, ConfigError
from anoneval.core.run.config import EngineSpec
from anoneval.core.run.forkserver import (
    GUARD,
    ONE_THREAD,
    PRELOAD,
    context,
    import_all,
    one_thread_env,
    unguarded_main,
)
from anoneval.core.run.lifecycle import (
    parent_environ,
    private_dir,
    watch_from,
)

if TYPE_CHECKING:
    from anoneval.core.data.kinds import Dataset
    from anoneval.core.report.model import Report
    from anoneval.core.run.config import PlannedMeasure

#: How to install what the dask engine needs.
DASK_EXTRA = 'pip install "anoneval[dask]"'
#: The environment variable that lets a run connect to a scheduler that is not on this machine
#: (outside the measured config, so a config alone cannot send data to another host).
ALLOW_REMOTE_ENV = "ANONEVAL_ALLOW_REMOTE_CLUSTER"
#: Seconds to wait for a started LocalCluster's workers, and for a scheduler's first worker.
WORKERS_TIMEOUT = 120.0
#: Seconds a scheduler address may refuse or ignore TCP connections before it counts as
#: unreachable (a scheduler starting up is given that long), not ``connect_timeout`` (Dask
#: retries a refused connection until then: 30 s by default).
REACH_TIMEOUT = 4.0
#: Times a variant whose scattered data was lost with its worker is sent again.
RESEND_ROUNDS = 3
#: Environment of the Dask workers anoneval starts. glibc's heap-trim threshold: Dask's 64 KiB
#: default returns freed heap to the OS after every large numpy temporary; 128 MiB does not.
#: Setting it also stops glibc's mmap threshold from growing (from 128 KiB up to 32 MiB as
#: mapped blocks are freed, mallopt(3)): every array above 128 KiB would be mapped and unmapped
#: again, with page faults each time, so the mmap threshold is set to 1 MiB (a serial
#: 100-variant run took 1.14× the default's time with the trim threshold alone, 1.31× with
#: Dask's, 0.99× with both; 32 MiB was no faster there and raised a census worker's peak by a
#: fifth, as blocks up to it stay in the heap). pyarrow's system allocator: its default
#: mimalloc/jemalloc pools keep the memory of every Parquet file read, which Dask counts as the
#: worker's unmanaged memory.
WORKER_ENV = {"MALLOC_TRIM_THRESHOLD_": str(128 * 2**20),
              "MALLOC_MMAP_THRESHOLD_": str(2**20),
              "ARROW_DEFAULT_MEMORY_POOL": "system"}
S = TypeVar("S")
B = TypeVar("B")
R = TypeVar("R")


class EngineError(AnonevalError):
    """The engine cannot run the tasks: missing extra, unreachable scheduler, lost cluster."""


def engine_spec(engine: Any) -> tuple[EngineSpec, Any]:
    """``(spec, client)`` from a name, a config dict, an :class:`EngineSpec` or a
    ``distributed.Client`` (then the spec describes it and ``client`` is that client). None is
    the serial default: one task after the other in this process."""
    if engine is None:
        return EngineSpec(workers=1), None
    if isinstance(engine, EngineSpec):
        return engine, None
    if isinstance(engine, str):
        return _validated({"name": engine}), None
    if isinstance(engine, Mapping):
        return _validated(dict(engine)), None
    if type(engine).__name__ == "Client" and hasattr(engine, "scheduler"):
        return EngineSpec(name="dask"), engine
    raise TypeError(f"engine must be a name, a config dict or a distributed.Client, not "
                    f"{type(engine).__name__}")


def _validated(raw: dict[str, Any]) -> EngineSpec:
    from pydantic import ValidationError

    try:
        return EngineSpec.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError([("engine" + "".join(f".{p}" for p in e["loc"]), e["msg"])
                           for e in exc.errors()]) from exc


def public_address(address: str | None) -> str | None:
    """The scheduler address without credentials (user:password@ never reaches a report)."""
    if address is None:
        return None
    try:
        parts = urlsplit(address)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return address.split("://", 1)[0] + "://***"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def masked(text: str, address: str | None = None) -> str:
    """``text`` with ``address`` and any ``scheme://user:password@`` in it shown without
    credentials (messages, logs and reports never carry them)."""
    if address:
        text = text.replace(address, public_address(address) or "")
        netloc = address.split("//", 1)[-1].split("/", 1)[0]
        if "@" in netloc:
            text = text.replace(netloc.rsplit("@", 1)[0] + "@", "***@")
    return re.sub(r"(\b[a-z][a-z0-9+.-]*://)[^\s/@]*@", r"\1***@", text, flags=re.IGNORECASE)


_ALLOW_REMOTE: contextvars.ContextVar[bool] = contextvars.ContextVar("allow_remote",
                                                                     default=False)


@contextlib.contextmanager
def remote_clusters_allowed(allowed: bool = True) -> Iterator[None]:
    """Within the block, a Dask scheduler not on this machine may be used (the CLI's
    ``--allow-remote-cluster``); the environment variable :data:`ALLOW_REMOTE_ENV` = ``1``
    allows it everywhere."""
    token = _ALLOW_REMOTE.set(allowed)
    try:
        yield
    finally:
        _ALLOW_REMOTE.reset(token)


def is_loopback(address: str) -> bool:
    """Whether a scheduler address is on this machine (``inproc://``, ``localhost``, a
    loopback IP). A host name is not resolved: only ``localhost`` counts."""
    try:
        parts = urlsplit(address)
    except ValueError:
        return False
    if parts.scheme == "inproc":
        return True
    host = parts.hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_address(address: str | None) -> None:
    """Refuse a scheduler address that is not on this machine unless allowed outside the
    config: its workers would receive the data and could return pickles that run code here."""
    if address is None or is_loopback(address):
        return
    if _ALLOW_REMOTE.get() or os.environ.get(ALLOW_REMOTE_ENV, "") == "1":
        return
    raise EngineError(
        f"engine.address {public_address(address)} is not on this machine: a Dask cluster "
        "receives the data and its workers send back results that run code in anoneval, so a "
        "remote scheduler must be allowed outside the config: `anoneval run "
        f"--allow-remote-cluster` or {ALLOW_REMOTE_ENV}=1 (see docs/security.md)")


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


def require_dask() -> None:
    """Raise :class:`EngineError` naming the extra when Dask or distributed is not installed."""
    missing = [m for m in ("dask", "distributed") if _missing(m)]
    if missing:
        raise EngineError(f"the dask engine needs {' and '.join(missing)}, which "
                          f"{'is' if len(missing) == 1 else 'are'} not installed: "
                          f"{DASK_EXTRA}")


def check_engine(engine: Any) -> EngineSpec:
    """The engine's spec, refused now if it cannot run: Dask not installed, or a remote
    scheduler not allowed (``validate`` and the start of a run)."""
    spec, client = engine_spec(engine)
    if spec.name == "dask" and client is None:
        require_dask()
        check_address(spec.address)
    return spec


# -- what a task needs -----------------------------------------------------------------------


@dataclass(frozen=True)
class Recipe:
    """Everything a worker needs to rebuild the evaluator: shipped once per worker.

    ``build`` is the evaluator's class (the engine runs plain tasks and imports no evaluator).
    """

    token: str
    build: Callable[..., Any]
    original: Dataset | None
    measures: Sequence[PlannedMeasure]
    seed: int
    data_kind: str | None
    base_dir: Path | None
    timings: bool
    control: Dataset | None = None

    def evaluator(self) -> Any:
        return self.build(self.original, list(self.measures), seed=self.seed,
                         data_kind=self.data_kind, base_dir=self.base_dir, timings=self.timings,
                         control=self.control)


_EVALUATORS: dict[str, Any] = {}


def content_token(recipe: Recipe) -> str:
    """A token naming what ``recipe`` evaluates with, for workers that outlive a run (a running
    Dask cluster): the SHA-256 of the pickled recipe (the original, the control set, the
    measures and their params, the seed), of the size and modification time of the inputs'
    files and of every file the measures' params name (hierarchies, populations), and of the
    source of the registry files' plugins. Two runs with the same token build the same
    evaluator, so a worker keeps the one it prepared (the original's codes, kinds and
    hierarchies) for the next run instead of building it again; a changed input, param or file
    gives another token. A recipe that does not pickle keeps its own token."""
    import hashlib

    digest = hashlib.sha256()
    try:
        digest.update(pickle.dumps(dataclasses.replace(recipe, token=""),
                                   protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # sent by value elsewhere, or not at all: nothing to share
        return recipe.token
    for name, (path, source) in sorted(_user_modules().items()):
        digest.update(f"\0module {name} {path}\0{source}".encode())
    for file in sorted(_param_files(recipe) | _data_files(recipe)):
        try:
            st = file.stat()
            stamp = f"{st.st_size}:{st.st_mtime_ns}"
        except OSError:
            stamp = "missing"
        digest.update(f"\0file {file} {stamp}".encode())
    return "content-" + digest.hexdigest()


def _data_files(recipe: Recipe) -> set[Path]:
    """The files of the recipe's inputs kept on disk, which a worker reads (a file rewritten in
    place pickles as before: its size and time tell the change)."""
    return {Path(f) for data in (recipe.original, recipe.control)
            for f in getattr(getattr(data, "located", None), "files", ())}


def _param_files(recipe: Recipe) -> set[Path]:
    """The files the recipe's measures read, as absolute paths (as ``Context.path`` resolves
    them)."""
    from anoneval.core.data.parampaths import param_paths

    base = recipe.base_dir if recipe.base_dir is not None else Path()
    files = set()
    for planned in recipe.measures:
        params = getattr(planned.measure, "params", None)
        if params is None:
            continue
        with contextlib.suppress(Exception):  # params of another shape name no file
            for _, value in param_paths(params):
                path = Path(value).expanduser()
                files.add(Path(os.path.abspath(path if path.is_absolute() else base / path)))
    return files


def _evaluator_for(recipe: Recipe) -> Any:
    """One evaluator per recipe per worker process (its original-side work done once; kept
    for the next run with the same :func:`content_token` on a cluster's lasting workers)."""
    if recipe.token not in _EVALUATORS:
        _EVALUATORS.clear()
        _EVALUATORS[recipe.token] = recipe.evaluator()
    return _EVALUATORS[recipe.token]


def run_variant_chunk(recipe: Recipe, items: Sequence[tuple[str, Any]],
                      topic: str | None = None) -> list[Report]:
    """Evaluate variants, each ``(name, data or a zero-argument loader run here)``, one after
    the other; on a Dask worker, each finished measure is an event on ``topic`` (the bar of the
    process that started the run)."""
    relay = (functools.partial(_log_progress, topic) if topic is not None
             else _put_progress if _PROGRESS is not None else None)
    with as_task(), relayed(relay) if relay is not None else contextlib.nullcontext():
        evaluator = _evaluator_for(_plain(recipe))
        return [evaluator.evaluate(data() if callable(data) else data, variant=name)
                for name, data in items]


def _log_progress(topic: str, n: int) -> None:
    from distributed import get_worker

    get_worker().log_event(topic, n)


def run_task(fn: Callable[..., R], *args: Any) -> R:
    """``fn(*args)`` as an engine task (plugins inside use one thread and serial blocks)."""
    with as_task():
        return _plain(fn)(*(_plain(a) for a in args))


def _identity(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Pickled:
    """A value pickled here and unpickled by the worker's task: a Dask scheduler unpickles
    the task graph and cannot import the plugins of registry files, which workers load by
    value (:func:`_ship_user_modules`)."""

    blob: bytes


def _opaque(value: Any) -> Any:
    """``value``, as :class:`Pickled` when plugins of registry files are loaded here."""
    if not _user_modules():
        return value
    return Pickled(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def _plain(value: Any) -> Any:
    """The value :func:`_opaque` wrapped."""
    return pickle.loads(value.blob) if isinstance(value, Pickled) else value


#: A worker process's queue to the bars of the runs (a ``multiprocessing.SimpleQueue`` of the
#: kept pool, :class:`_Kept`), and the run whose task it is running.
_PROGRESS: Any = None
_RUN: str | None = None


def _user_modules() -> dict[str, tuple[str, str]]:
    """The plugin modules of registry files loaded here, to be loaded by value on workers."""
    from anoneval.registry import user_modules

    return user_modules()


def _load_user_modules(modules: dict[str, tuple[str, str]]) -> None:
    from anoneval.registry import load_user_sources

    load_user_sources(modules)  # one that fails here fails the task that needs it


def _init_process(environ: Mapping[str, str], modules: dict[str, tuple[str, str]],
                  progress: Any = None, imports: Sequence[str] = (),
                  recipe: str | None = None) -> None:
    """A worker process: the caller's environment (a forked process has the fork server's),
    the registry files' plugin modules, the queue its finished measures go to (``progress``),
    and, while the caller computes, not in the first task: ``imports`` imported and the
    evaluator of the recipe written at ``recipe`` (the run that starts the processes) built
    and prepared (a failure there is the task's to report)."""
    global _PROGRESS
    _PROGRESS = progress
    os.environ.clear()
    os.environ.update(environ)
    watch_from(environ)  # die with the process that started the pool
    mark_task_process()
    _load_user_modules(modules)
    import_all(imports)
    if recipe is not None:
        with contextlib.suppress(Exception), as_task():
            _evaluator_for(_load_shared(recipe)).prepare()


def _put_progress(n: int) -> None:
    _PROGRESS.put((_RUN, n))


def _run_in_process(path: str, run: str, items: Sequence[tuple[str, Any]]) -> list[Report]:
    """Variants of run ``run`` evaluated with the recipe written at ``path``."""
    global _RUN
    _RUN = run
    try:
        return run_variant_chunk(_load_shared(path), items)
    finally:
        _RUN = None


_SHARED: dict[str, Any] = {}


def _load_shared(path: str) -> Any:
    """The shared object written at ``path``, read once per process (kept until another is
    read: a worker kept for later runs holds the last one)."""
    if path not in _SHARED:
        _SHARED.clear()
        with open(path, "rb") as f:
            _SHARED[path] = pickle.load(f)
    return _SHARED[path]


@contextlib.contextmanager
def _pickled(value: Any, what: str) -> Iterator[str]:
    """The path of a private temporary file holding ``value`` pickled, for worker processes to
    read once each (:func:`_load_shared`); deleted at the end of the block."""
    with tempfile.NamedTemporaryFile(prefix=f"anoneval-{what}-", suffix=".pkl",
                                     dir=private_dir(), delete=False) as f:
        pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        yield f.name
    finally:
        os.unlink(f.name)


def _run_block_in_process(fn: Callable[[Any, Any], Any], path: str, block: Any) -> Any:
    return fn(_load_shared(path), block)


def _run_block_task(fn: Callable[[Any, Any], Any], shared: Any, block: Any) -> Any:
    with as_task():
        return _plain(fn)(shared, _plain(block))


class ProcessBlocks(Blocks):
    """Blocks in the local engine's worker processes; ``shared`` is written once to a temporary
    file that each process reads once. Fewer than two blocks per worker run in this process
    (starting the processes would cost more than it saves). While the processes start (and
    import ``fn``'s module), this process computes blocks itself."""

    def __init__(self, engine: LocalEngine) -> None:
        self.engine = engine
        self.parallelism = engine.workers

    def map(self, fn: Callable[[S, B], R], blocks: Sequence[B], shared: S) -> list[R]:
        if len(blocks) < 2 * self.parallelism:
            return super().map(fn, blocks, shared)
        refuse_main_objects([fn], "the function")
        with _pickled(shared, "blocks") as path, self.engine.interruptible():
            return _while_starting(self.engine.starting(modules=_own([fn])),
                                   [(b,) for b in blocks],
                                   functools.partial(fn, shared),
                                   functools.partial(_run_block_in_process, fn, path))


class DaskBlocks(Blocks):
    """Blocks on the Dask workers; a task holds ``shared`` (a lost worker's copy is recomputed)
    and failed blocks are retried."""

    def __init__(self, engine: DaskEngine) -> None:
        self.engine = engine
        self.parallelism = max(engine.describe()["workers"], 1)

    def map(self, fn: Callable[[S, B], R], blocks: Sequence[B], shared: S) -> list[R]:
        if len(blocks) <= 1:
            return super().map(fn, blocks, shared)
        client = self.engine.client
        held = client.submit(_plain, _opaque(shared), pure=False, retries=3)
        futures = client.map(_run_block_task, [_opaque(fn)] * len(blocks),
                             [held] * len(blocks), [_opaque(b) for b in blocks], pure=False,
                             retries=3)
        return list(self.engine.gathered(futures, "the blocks of a measure"))


# -- engines ------------------------------------------------------------------------------


class Engine:
    """Runs variant tasks, generic tasks (:meth:`map`) and the blocks of measures
    (:meth:`blocks`); :meth:`describe` is the report's ``engine`` section."""

    name = "local"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "address": None, "workers": 1}

    def blocks(self) -> Blocks:
        """The block runner for measures evaluated in this process."""
        return SERIAL_BLOCKS

    def map(self, fn: Callable[[S], R], items: Sequence[S]) -> list[R]:
        """``[fn(item) for item in items]`` as independent tasks (``fn`` picklable, top-level),
        in the items' order."""
        return [fn(item) for item in items]

    def run_variants(self, recipe: Recipe, variants: Mapping[str, Any],
                     serial: Callable[[str, Any], Report],
                     progress: Callable[[int], None] | None = None) -> list[Report]:
        """The variants' reports, in their order: ``serial(name, data)`` evaluates one here
        (and advances the bar itself); tasks elsewhere report each finished measure to
        ``progress``."""
        return [serial(name, data) for name, data in variants.items()]

    def close(self) -> None:
        """Release what the engine started (worker processes)."""


def refuse_main_objects(objects: Iterable[Any], what: str) -> None:
    """An :class:`EngineError` when a worker process would need a class or function defined in
    an unguarded main script (such a script is not run again in the workers)."""
    path = unguarded_main() if "forkserver" in multiprocessing.get_all_start_methods() else None
    if path is None:
        return
    defined = [o if isinstance(o, type) or inspect.isfunction(o) else type(o)
               for o in objects]
    names = sorted({o.__qualname__ for o in defined if o.__module__ == "__main__"})
    if names:
        raise EngineError(
            f"{what} {', '.join(names)} defined in {path}, which has no `{GUARD}` guard: "
            "worker processes cannot use it. Put the code that starts the run under "
            f"`{GUARD}` (or move {', '.join(names)} into a module), or run with workers: 1")


def _own(objects: Iterable[Any]) -> list[str]:
    """The anoneval modules defining ``objects`` (worth importing in a worker ahead of its
    first task; other modules are imported where used)."""
    names = (getattr(o, "__module__", None) or type(o).__module__ for o in objects)
    return sorted({n for n in names if n.startswith("anoneval.")})


def _start_pool(workers: int, ctx: BaseContext, progress: Any = None,
                imports: Sequence[str] = (), recipe: str | None = None) -> ProcessPoolExecutor:
    """``workers`` fresh processes with one native thread each, started and initialized (with
    ``progress``, a queue of ``ctx``, their finished measures reported to it; ``imports``
    imported; the evaluator of the recipe file ``recipe`` prepared)."""
    environ = {**ONE_THREAD, **os.environ, **parent_environ()}
    # a forked process has the fork server's native threads; a spawned one reads them at start
    spawned = ctx.get_start_method() == "spawn"
    pool = None
    try:
        with one_thread_env() if spawned else contextlib.nullcontext():
            pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx,
                                       initializer=_init_process,
                                       initargs=(environ, _user_modules(), progress,
                                                 tuple(imports), recipe))
            started = [pool.submit(_identity, None) for _ in range(workers)]
        for f in started:
            f.result()
    except BaseException:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
        raise
    return pool


def _start_in_background(workers: int, modules: Sequence[str] = (), progress: Any = None,
                         recipe: str | None = None) -> Future[ProcessPoolExecutor]:
    """:func:`_start_pool` in a daemon thread (the fork server is started here, preloading
    ``modules``, which the processes also import if it runs without them): the pool when it
    has started. A daemon, so that a process ending while its kept pool still starts (a short
    ``anoneval run``) does not wait for it."""
    ctx = context(modules)
    future: Future[ProcessPoolExecutor] = Future()

    def start() -> None:
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(_start_pool(workers, ctx, progress, modules, recipe))
            except BaseException as exc:  # handed to whoever waits
                future.set_exception(exc)

    threading.Thread(target=start, name="anoneval-pool-start", daemon=True).start()
    return future


def _close_when_started(starting: Future[ProcessPoolExecutor], wait: bool = True) -> None:
    """Shut down the pool once it has started (its queued tasks cancelled; ``wait``: until
    its processes have ended)."""
    if starting.exception() is None:
        starting.result().shutdown(wait=wait, cancel_futures=True)


def _results(futures: Sequence[Future[R]]) -> list[R]:
    """The futures' results in order; on the first error (or an interrupt) the futures not yet
    running are cancelled, so that a kept pool is free for the next run."""
    try:
        return [f.result() for f in futures]
    except BaseException:
        for f in futures:
            f.cancel()
        raise


def _while_starting(starting: Future[ProcessPoolExecutor], tasks: Sequence[tuple[Any, ...]],
                    here: Callable[..., R], there: Callable[..., R]) -> list[R]:
    """``there(*task)`` for each task on the pool that ``starting`` gives, in the tasks'
    order; until the pool has started this process runs tasks itself, ``here(*task)`` as an
    engine task, the last first (it stops after the one it is running)."""
    results: dict[int, R] = {}
    todo = list(range(len(tasks)))
    while todo and not starting.done():
        i = todo.pop()
        with as_task():
            results[i] = here(*tasks[i])
    if todo:
        with _pool_errors():
            pool = starting.result()
            futures = [pool.submit(there, *tasks[i]) for i in todo]
            results.update(zip(todo, _results(futures), strict=True))
    return [results[i] for i in range(len(tasks))]


@contextlib.contextmanager
def _pool_errors() -> Iterator[None]:
    """A worker process that died (killed, out of memory, ``os._exit`` in a plugin, a failed
    start) is an :class:`EngineError`, not a traceback."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        yield
    except BrokenProcessPool as exc:
        raise EngineError(f"a worker process of the local engine died ({exc}); no report was "
                          "written. Run with workers: 1 to see which measure ends the "
                          "process") from exc


#: Seconds the local engine's worker processes stay up after a run, idle, for the next run in
#: this process (an embedder calling ``evaluate`` in a loop pays their start once, not per
#: call: about 0.2 s of CPU per process, and the measures' imports in each).
POOL_IDLE = 60.0


class _Kept:
    """The local engine's worker processes kept for the runs of this process: ``size``
    processes, started by ``starting``, for the engine config and environment ``key``;
    ``queue`` carries ``(run, steps)`` from the workers to the bar of each run (``routes``),
    read by one thread."""

    def __init__(self, key: tuple[Any, ...], size: int, modules: Sequence[str],
                 recipe: str | None = None) -> None:
        ctx = context(modules)
        self.key = key
        self.size = size
        self.queue = ctx.SimpleQueue()
        self.starting = _start_in_background(size, modules, self.queue, recipe)
        self.users = 0  # engines using the processes now
        self.uses = 0  # borrowings so far: an idle timer of an earlier one does nothing
        self.retired = False
        self.routes: dict[str, tuple[Callable[[int], None], threading.Event]] = {}
        self.reader: threading.Thread | None = None

    def failed(self) -> bool:
        """Whether the processes failed to start or one of them died (the pool is broken)."""
        if not self.starting.done():
            return False
        return self.starting.exception() is not None or bool(
            getattr(self.starting.result(), "_broken", False))

    @contextlib.contextmanager
    def routed(self, run: str, progress: Callable[[int], None] | None) -> Iterator[None]:
        """Within the block, the steps the workers report for ``run`` go to ``progress``;
        at its end, every step written before it is handed on (a worker writes its steps
        before its result, and the marker put here follows them on the queue)."""
        if progress is None:
            yield
            return
        done = threading.Event()
        with _KEPT_LOCK:
            self.routes[run] = (progress, done)
            if self.reader is None:
                self.reader = threading.Thread(target=self._read, name="anoneval-progress",
                                               daemon=True)
                self.reader.start()
        try:
            yield
        finally:
            with contextlib.suppress(Exception):
                self.queue.put((run, None))
                done.wait(5.0)
            self.routes.pop(run, None)

    def _read(self) -> None:
        while True:
            try:
                item = self.queue.get()
            except (EOFError, OSError):
                return
            if item is None:
                return
            run, steps = item
            route = self.routes.get(run)
            if route is None:  # a run that ended (failed) before its tasks
                continue
            if steps is None:
                route[1].set()
            else:
                with contextlib.suppress(Exception):
                    route[0](steps)


_KEPT: _Kept | None = None
_KEPT_LOCK = threading.RLock()


def _pool_key(workers: int) -> tuple[Any, ...]:
    """What the kept processes were started for: this process (not a fork of it), the
    configured worker count, the environment they were given and the registry files' plugin
    modules they loaded; another key needs other processes."""
    environ = {**ONE_THREAD, **os.environ, **parent_environ()}
    return (os.getpid(), workers, tuple(sorted(environ.items())),
            tuple(sorted(_user_modules().items())))


def _borrow(workers: int, size: int, modules: Sequence[str], recipe: str | None = None) -> _Kept:
    """The kept processes for ``workers`` (at least ``size`` of them), started now when there
    are none fit for the call (another key, fewer, broken: then preparing ``recipe``'s
    evaluator as they start); in use until :func:`_give_back`."""
    global _KEPT
    key = _pool_key(workers)
    with _KEPT_LOCK:
        kept = _KEPT
        if kept is not None and (kept.key != key or kept.size < size or kept.failed()):
            _retire(kept)
            kept = None
        if kept is None:
            kept = _KEPT = _Kept(key, size, modules, recipe)
        kept.users += 1
        kept.uses += 1
        return kept


def _give_back(kept: _Kept) -> None:
    """End a use of ``kept``: shut down when retired or broken, else after :data:`POOL_IDLE`
    seconds without a new use."""
    with _KEPT_LOCK:
        kept.users -= 1
        if kept.users > 0:
            return
        if kept.retired or kept.failed():
            _retire(kept)
            return
        timer = threading.Timer(POOL_IDLE, _expire, (kept, kept.uses))
        timer.daemon = True
        timer.start()


def _expire(kept: _Kept, uses: int) -> None:
    with _KEPT_LOCK:
        if kept.users == 0 and kept.uses == uses:
            _retire(kept)


def _retire(kept: _Kept, block: bool = False) -> None:
    """No new use of ``kept``; its processes end once it has started and its last use ended
    (``block``: wait for that here)."""
    global _KEPT
    with _KEPT_LOCK:
        if _KEPT is kept:
            _KEPT = None
        kept.retired = True
        if kept.users > 0:
            return
        if kept.reader is not None:
            with contextlib.suppress(Exception):
                kept.queue.put(None)
    if block:
        _close_when_started(kept.starting)
    else:
        kept.starting.add_done_callback(functools.partial(_close_when_started, wait=False))


def _terminate(kept: _Kept) -> None:
    """Retire ``kept`` and end its processes now, running tasks and all."""
    global _KEPT
    with _KEPT_LOCK:
        kept.retired = True
        if _KEPT is kept:
            _KEPT = None
    if kept.starting.done() and kept.starting.exception() is None:
        pool = kept.starting.result()
        for process in list(getattr(pool, "_processes", {}).values()):  # no public way < 3.14
            with contextlib.suppress(Exception):
                process.terminate()


def close_pool() -> None:
    """End the local engine's kept worker processes now, waiting for them (for callers that
    want their memory back before :data:`POOL_IDLE` has passed); the next run starts new
    ones."""
    with _KEPT_LOCK:
        kept = _KEPT
    if kept is not None:
        _retire(kept, block=True)


#: Seconds the exit of a process waits for its kept processes still starting.
EXIT_WAIT = 30.0


def _close_at_exit() -> None:
    """As the interpreter begins to exit, before :mod:`concurrent.futures` refuses new tasks
    and :mod:`multiprocessing` joins its children: the kept processes end, a pool still
    starting (a run that finished first) once it has started, at most :data:`EXIT_WAIT`
    seconds later. Left starting, a worker could be joined at exit without ever being told to
    stop (the exit hung), or fail to open the pool's semaphores once they were removed (a
    traceback on stderr after a successful run). A start that takes longer is left to die
    with this process (:func:`watch_from`)."""
    with _KEPT_LOCK:
        kept = _KEPT
    if kept is None:
        return
    with contextlib.suppress(Exception):  # a timeout: still starting, left as below
        kept.starting.exception(timeout=EXIT_WAIT)
    _retire(kept, block=kept.starting.done())


# threading's exit hooks run before its threads are joined and before atexit, newest first:
# this one before concurrent.futures' own (which would refuse the pool's first tasks)
_at_thread_exit = getattr(threading, "_register_atexit", atexit.register)
_at_thread_exit(_close_at_exit)


class LocalEngine(Engine):
    """This process, or ``workers`` worker processes, kept for the next engine of this process
    with the same ``workers`` and environment (:class:`_Kept`; what a run sends them, its
    recipe and shared objects, is its own)."""

    def __init__(self, workers: int | None) -> None:
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        self._kept: _Kept | None = None

    def describe(self) -> dict[str, Any]:
        return {"name": "local", "address": None, "workers": self.workers}

    def starting(self, tasks: int | None = None, modules: Sequence[str] = (),
                 recipe: str | None = None) -> Future[ProcessPoolExecutor]:
        """The engine's worker processes, taken from the kept ones or started in the background
        at the first call (no more than ``tasks`` when given; preloading ``modules``, preparing
        the evaluator of the recipe file ``recipe``)."""
        if self._kept is None:
            n = self.workers if tasks is None else max(1, min(self.workers, tasks))
            self._kept = _borrow(self.workers, n, modules, recipe)
        return self._kept.starting

    def pool(self, tasks: int | None = None) -> ProcessPoolExecutor:
        """The engine's worker processes, started at the first use."""
        return self.starting(tasks).result()

    def blocks(self) -> Blocks:
        return ProcessBlocks(self) if self.workers > 1 else SERIAL_BLOCKS

    def map(self, fn: Callable[[S], R], items: Sequence[S]) -> list[R]:
        if self.workers <= 1 or len(items) <= 1:
            return super().map(fn, items)
        refuse_main_objects([fn], "the function")
        with _pool_errors(), self.interruptible():
            pool = self.pool(len(items))  # runs are heavy: this process takes none
            return _results([pool.submit(fn, item) for item in items])

    def run_variants(self, recipe: Recipe, variants: Mapping[str, Any],
                     serial: Callable[[str, Any], Report],
                     progress: Callable[[int], None] | None = None) -> list[Report]:
        """The variants on this process and ``workers - 1`` of the engine's processes, each
        building the evaluator once from ``recipe`` (written once to a file each reads once).
        This process evaluates variants with ``serial`` one at a time from the small end (the
        last first), from the start, while the processes start; once started, they take tasks
        from the large end (the largest first when the sizes are known), small variants several
        to a task (:func:`chunk_size`), one task per process at a time. The processes report
        each finished measure to ``progress`` through their queue."""
        if self.workers <= 1 or len(variants) <= 1:
            return super().run_variants(recipe, variants, serial, progress)
        refuse_main_objects([p.measure for p in recipe.measures], "the measure")
        procs = min(self.workers, len(variants)) - 1
        size = chunk_size(len(variants), _work(recipe, variants), procs + 1)
        run = uuid.uuid4().hex
        with _pickled(recipe, "recipe") as path:
            starting = self.starting(procs, _own(p.measure for p in recipe.measures), path)
            assert self._kept is not None
            with self._kept.routed(run, progress), _pool_errors(), self.interruptible():
                results = _from_both_ends(
                    starting, procs, _largest_first(variants), size,
                    lambda name: serial(name, variants[name]),
                    lambda chunk: (_run_in_process, path, run,
                                   [(n, variants[n]) for n in chunk]))
        return [results[n] for n in variants]

    @contextlib.contextmanager
    def interruptible(self) -> Iterator[None]:
        """An interrupt (Ctrl-C, SIGTERM's :class:`KeyboardInterrupt`) while the processes
        run this engine's tasks ends them at once: their running tasks may take long, and the
        next run gets new processes instead of waiting behind them."""
        try:
            yield
        except Exception:
            raise
        except BaseException:
            if self._kept is not None:
                _terminate(self._kept)
            raise

    def close(self) -> None:
        """The engine's use of the kept processes ends (they stay for the next run)."""
        if self._kept is not None:
            _give_back(self._kept)
            self._kept = None


#: The least work (variant rows x measures) one task should hold: smaller variants are
#: grouped, so that a task's own cost (sending it, its report back: about a millisecond) stays
#: small beside its work (about 100 ms of group-by measures at this size).
TASK_WORK = 200_000
#: Tasks per worker at the least, so that the last tasks even out the workers' finishing times.
TASKS_PER_WORKER = 4


def chunk_size(count: int, work: float | None, workers: int) -> int:
    """Variants to a task, of ``count`` variants of ``work`` each (rows x measures; None:
    unknown, one per task): as many as make :data:`TASK_WORK`, but no fewer than
    :data:`TASKS_PER_WORKER` tasks per worker."""
    if work is None or work <= 0:
        return 1
    return max(1, min(-(-TASK_WORK // int(work)), count // (max(workers, 1) * TASKS_PER_WORKER)))


def taken(size: int, remaining: int, takers: int) -> int:
    """Variants the next task takes: ``size`` (:func:`chunk_size`), fewer towards the end, an
    even share of the ``remaining`` ones among the ``takers`` (rounded down, at least one), so
    that the takers finish together (guided self-scheduling, Polychronopoulos and Kuck, IEEE
    Trans. Computers 36(12), 1987, with the share rounded down)."""
    return max(1, min(size, remaining // max(takers, 1)))


def chunked(names: Sequence[str], work: float | None, workers: int) -> list[list[str]]:
    """``names`` in consecutive groups of :func:`chunk_size`, one per task, the last ones
    smaller (:func:`taken`)."""
    size = chunk_size(len(names), work, workers)
    chunks, start = [], 0
    while start < len(names):
        end = start + taken(size, len(names) - start, workers)
        chunks.append(list(names[start:end]))
        start = end
    return chunks


class _Ends:
    """Names taken from both ends by two threads: this process's from the back, the worker
    processes' tasks from the front."""

    def __init__(self, names: Sequence[str]) -> None:
        self._names = collections.deque(names)
        self._lock = threading.Lock()

    def back(self) -> str | None:
        with self._lock:
            return self._names.pop() if self._names else None

    def front(self, size: int, takers: int) -> list[str]:
        """The next task's names (:func:`taken`; ``takers``: this process and the workers)."""
        with self._lock:
            if not self._names:
                return []
            return [self._names.popleft()
                    for _ in range(taken(size, len(self._names), takers))]

    def clear(self) -> None:
        with self._lock:
            self._names.clear()


class _Feeder:
    """A thread that, once the pool has started, keeps ``procs`` tasks of ``size`` names (fewer
    at the end: :func:`taken`) from the front of ``todo`` running on it (``task(chunk)``: the
    function and its arguments), their reports into ``results``; on an error it empties
    ``todo`` (the caller stops after the variant it is evaluating) and :meth:`finish` raises
    it. Names all taken by the caller before the pool has started leave the pool alone:
    :meth:`finish` does not wait for it."""

    def __init__(self, starting: Future[Any], procs: int, todo: _Ends, size: int,
                 task: Callable[[list[str]], tuple[Any, ...]], results: dict[str, Any]) -> None:
        self._error: BaseException | None = None
        self._wake = threading.Event()  # the pool has started, or the caller is done
        starting.add_done_callback(lambda _: self._wake.set())
        self._thread = threading.Thread(
            target=self._feed, args=(starting, procs, todo, size, task, results),
            name="anoneval-feeder", daemon=True)
        self._thread.start()

    def _feed(self, starting: Future[Any], procs: int, todo: _Ends, size: int,
              task: Callable[[list[str]], tuple[Any, ...]], results: dict[str, Any]) -> None:
        self._wake.wait()
        pool = None  # asked for at the first task: none left, a failed start is not an error
        pending: dict[Future[list[Any]], list[str]] = {}
        try:
            while True:
                while len(pending) < procs and (chunk := todo.front(size, procs + 1)):
                    if pool is None:
                        pool = starting.result()
                    pending[pool.submit(*task(chunk))] = chunk
                if not pending:
                    return
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    results.update(zip(pending.pop(f), f.result(), strict=True))
        except BaseException as exc:
            self._error = exc
            todo.clear()
            for f in pending:
                f.cancel()

    def finish(self) -> None:
        """Wait for the tasks; raise the first error."""
        self._wake.set()
        self._thread.join()
        if self._error is not None:
            raise self._error


def _from_both_ends(starting: Future[Any], procs: int, names: Sequence[str], size: int,
                    here: Callable[[str], R], there: Callable[[list[str]], tuple[Any, ...]]
                    ) -> dict[str, R]:
    """``here(name)`` of each name, as an engine task, one at a time from the back (the last
    first), while the pool that ``starting`` gives runs up to ``procs`` tasks at a time from
    the front, once it has started: ``there(chunk)`` is the function and arguments of the
    task of ``size`` names (its result: their results in order). An error stops both sides;
    it is raised after the name being evaluated here."""
    todo = _Ends(names)
    results: dict[str, R] = {}
    feeder = _Feeder(starting, procs, todo, size, there, results)
    try:
        while (name := todo.back()) is not None:
            with as_task():
                results[name] = here(name)
    finally:
        todo.clear()  # after an error here the feeder starts no more tasks
    feeder.finish()
    return results


def _work(recipe: Recipe, variants: Mapping[str, Any]) -> float | None:
    """The typical work of a variant (rows x measures): the median length of the variants
    given as data, else the original's (loaders' variants are usually as long)."""
    sizes = sorted(len(v) for v in variants.values() if not callable(v) and hasattr(v, "__len__"))
    if sizes:
        rows = sizes[len(sizes) // 2]
    elif recipe.original is not None and hasattr(recipe.original, "__len__"):
        rows = len(recipe.original)
    else:
        return None
    return float(rows * max(len(recipe.measures), 1))


def _largest_first(variants: Mapping[str, Any]) -> list[str]:
    """The variants' names, the largest first when every variant is data with a length (loaders
    keep their order): the last, shortest tasks then even out the workers' finishing times."""
    sizes = {n: len(v) for n, v in variants.items()
             if not callable(v) and hasattr(v, "__len__")}
    if len(sizes) < len(variants):
        return list(variants)
    return sorted(variants, key=lambda n: -sizes[n])


class DaskEngine(Engine):
    """A Dask cluster: the caller's client, a scheduler at an address, or a LocalCluster (then
    ``starting`` gives ``(client, address)`` once it has started in the background, and
    ``memory`` is its workers' memory limit, known before)."""

    name = "dask"

    def __init__(self, client: Any, address: str | None,
                 gather_limit: int | None = None,
                 starting: Future[tuple[Any, str]] | None = None,
                 memory: int | None = None) -> None:
        self._client = client
        self._starting = starting
        self.address = address
        #: bytes a measure may gather into this process (None: see ``scaled.gather_limit``)
        self.gather_limit = gather_limit
        self._memory = memory

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (waits for a LocalCluster still starting)."""
        if self._client is None and self._starting is not None:
            self._client, self.address = self._starting.result()
        return self._client

    def ready(self) -> bool:
        """Whether the cluster has started (or failed to)."""
        return self._starting is None or self._starting.done()

    def worker_memory(self) -> int | None:
        """The smallest memory limit of the workers (None: none set)."""
        if not self.ready():
            return self._memory
        workers = self.client.scheduler_info(n_workers=-1).get("workers", {}).values()
        limits = [m for m in (w.get("memory_limit") or 0 for w in workers) if m > 0]
        return min(limits) if limits else None

    def describe(self) -> dict[str, Any]:
        workers = len(self.client.scheduler_info(n_workers=-1).get("workers", {}))
        return {"name": "dask", "address": public_address(self.address), "workers": workers}

    def blocks(self) -> Blocks:
        return DaskBlocks(self)

    def gathered(self, futures: list[Any], what: str) -> list[Any]:
        """The futures' results; a lost cluster is an :class:`EngineError`."""
        import distributed.client
        from distributed import KilledWorker

        # a task cancelled because its inputs were lost (older Dask: no such error)
        cancelled = getattr(distributed.client, "FutureCancelledError", KilledWorker)
        try:
            wait_unpaused(self.client, futures)
            return list(self.client.gather(futures))
        except (KilledWorker, cancelled) as exc:
            raise EngineError(f"the Dask cluster lost the workers running {what} "
                              f"({exc}); no report was written") from exc
        except OSError as exc:
            raise EngineError(f"the Dask cluster at {public_address(self.address)} was lost: "
                              f"{exc}; no report was written") from exc

    def map(self, fn: Callable[[S], R], items: Sequence[S]) -> list[R]:
        if len(items) <= 1:
            return super().map(fn, items)
        futures = self.client.map(run_task, [_opaque(fn)] * len(items),
                                  [_opaque(i) for i in items], pure=False, retries=3)
        return self.gathered(futures, "the tasks")

    def run_variants(self, recipe: Recipe, variants: Mapping[str, Any],
                     serial: Callable[[str, Any], Report],
                     progress: Callable[[int], None] | None = None) -> list[Report]:
        """The variants as tasks, small ones several to a task (:func:`chunked`); while a
        LocalCluster started for the run is starting, this process evaluates variants with
        ``serial`` (the last first). Each task reads its variant (a loader runs on the worker)
        and runs every measure in memory; its finished measures reach ``progress`` as Dask
        events (none are sent without ``progress``). On a cluster that outlives the run, the
        recipe is named by its content (:func:`content_token`), so the workers keep their
        prepared evaluator for the next run of the same original and measures."""
        results: dict[str, Report] = {}
        todo = list(variants)
        while todo and not self.ready():
            name = todo.pop()
            with as_task():
                results[name] = serial(name, variants[name])
        if todo:
            if self._starting is None:
                recipe = dataclasses.replace(recipe, token=content_token(recipe))
            topic = f"anoneval-progress-{recipe.token}" if progress is not None else None
            with self._events(topic, progress, len(todo) * len(recipe.measures)):
                results.update(self._tasks(recipe, {n: variants[n] for n in todo}, topic))
        return [results[n] for n in variants]

    @contextlib.contextmanager
    def _events(self, topic: str | None, progress: Callable[[int], None] | None,
                steps: int) -> Iterator[None]:
        """``progress`` called with the steps the tasks log on ``topic``; when the block ends,
        the steps not heard of within a second (events may trail the results) are given."""
        if progress is None or topic is None:
            yield
            return
        heard = [0]
        done = threading.Event()

        def handler(event: Any) -> None:
            heard[0] += int(event[1])
            progress(int(event[1]))
            if heard[0] >= steps:
                done.set()

        self.client.subscribe_topic(topic, handler)
        try:
            yield
            done.wait(1.0)
        finally:
            with contextlib.suppress(Exception):
                self.client.unsubscribe_topic(topic)
        if heard[0] < steps:
            progress(steps - heard[0])

    def _tasks(self, recipe: Recipe, variants: Mapping[str, Any],
               topic: str | None) -> dict[str, Report]:
        """The variants' reports from tasks on the cluster. The data is sent outside the task
        graph, once: the recipe (the original, the measures) scattered to every worker, each
        in-memory variant to one (a loader is sent as it is and runs on the worker). So the
        graph stays small (no "large graph" warning, the original is not sent with each task),
        and a task whose data or worker was lost is sent again, up to :data:`RESEND_ROUNDS`
        times."""
        client = self.client
        workers = max(len(client.scheduler_info(n_workers=-1).get("workers", {})), 1)
        chunks = chunked(list(variants), _work(recipe, variants), workers)
        done: dict[str, Report] = {}
        shared: Any = None
        for _ in range(RESEND_ROUNDS):
            todo = [c for c in chunks if c[0] not in done]
            if not todo:
                break
            names = [n for c in todo for n in c]
            data = {n: variants[n] for n in names}
            in_memory = [n for n in names if not callable(data[n])]
            try:
                if shared is None or shared.status != "finished":
                    [shared] = client.scatter([_opaque(recipe)], broadcast=True, hash=False)
                if in_memory:
                    sent = client.scatter([data[n] for n in in_memory], hash=False)
                    data.update(zip(in_memory, sent, strict=True))
            except (TimeoutError, asyncio.TimeoutError) as exc:  # no worker took the data
                paused = all_paused(client)
                if paused is None:
                    raise
                raise paused from exc
            futures = client.map(run_variant_chunk, [shared] * len(todo),
                                 [[(n, data[n]) for n in c] for c in todo],
                                 [topic] * len(todo), pure=False, retries=3)
            wait_unpaused(client, futures)  # errors are raised below
            finished = [(c, f) for c, f in zip(todo, futures, strict=True)
                        if f.status != "cancelled" and f.status != "lost"]
            results = self.gathered([f for _, f in finished], "the variants")
            for (chunk, _), reports in zip(finished, results, strict=True):
                done.update(zip(chunk, reports, strict=True))
        missing = [n for n in variants if n not in done]
        if missing:
            raise EngineError(f"the Dask cluster lost the data of variant(s) "
                              f"{', '.join(map(repr, missing))} {RESEND_ROUNDS} times; no "
                              "report was written")
        return done


#: Job sizes (variants × original rows × measures) below which a parallel engine ran slower
#: than a serial run of the same config through ``anoneval run`` on the 2-core development
#: machine: the one place for these figures, which come from ``benchmarks/bench_breakeven.py``
#: (its table in docs/scaling.md, "When an engine pays"): the start-up of worker processes
#: (local) or of a LocalCluster (dask) outweighs the work.
BREAK_EVEN = {"local": 2_000_000, "dask": 25_000_000}


def scale_hint(engine: Mapping[str, Any] | None, variants: int, rows: int,
               measures: int) -> str | None:
    """One line when a parallel engine ran a job smaller than its measured break-even point
    (:data:`BREAK_EVEN`), else None. A running scheduler (``address``) costs no start-up, so
    it gets no hint."""
    if not engine or engine.get("address") is not None:
        return None
    name = engine.get("name")
    if name not in BREAK_EVEN or (name == "local" and (engine.get("workers") or 1) <= 1):
        return None
    size = variants * rows * measures
    if size >= BREAK_EVEN[name]:
        return None
    return (f"hint: this run ({variants:,} variants x {rows:,} rows x {measures:,} measures = "
            f"{size:,}) is below the {name} engine's measured break-even of about "
            f"{BREAK_EVEN[name]:,} (docs/scaling.md); a serial run (no engine section, or "
            "--engine local --workers 1) would likely be faster")


def parallel(engine: Engine) -> bool:
    """Whether ``engine`` runs tasks anywhere but one after the other in this process."""
    return isinstance(engine, DaskEngine) or (isinstance(engine, LocalEngine)
                                              and engine.workers > 1)


def _import_distributed() -> Any:
    require_dask()
    import distributed

    return distributed


@contextlib.contextmanager
def open_engine(engine: Any = None, tasks: int | None = None) -> Iterator[Engine]:
    """The engine for a run; a cluster started here is closed when the run ends. ``tasks``
    (when known: the variants) caps the workers started for the run. A scheduler that is not
    on this machine is refused unless allowed (:func:`check_address`); waiting for a
    scheduler or for workers is bounded."""
    spec, client = engine_spec(engine)
    if spec.name == "local":
        local = LocalEngine(spec.workers)
        try:
            yield local
        finally:
            local.close()
        return
    distributed = _import_distributed()
    from dask.utils import parse_bytes

    limit = (None if spec.gather_limit is None or spec.gather_limit == "auto"
             else int(parse_bytes(spec.gather_limit)))
    if client is not None:
        _ship_user_modules(client)
        yield DaskEngine(client, getattr(client.scheduler, "address", None), limit)
        return
    if spec.address is not None:
        check_address(spec.address)
        _reachable(spec.address, min(spec.connect_timeout, REACH_TIMEOUT))
        try:
            client = distributed.Client(spec.address, timeout=spec.connect_timeout,
                                        set_as_default=False)
        except Exception as exc:  # any failure: a message without credentials
            _discard_failed_client(distributed, exc)
            raise EngineError(masked(
                f"cannot reach the Dask scheduler at {public_address(spec.address)} within "
                f"{spec.connect_timeout:g} s: {type(exc).__name__}: {exc}", spec.address)
                ) from None
        with client:
            _wait_for_workers(client, 1, max(spec.connect_timeout, WORKERS_TIMEOUT),
                              public_address(spec.address))
            _ship_user_modules(client)
            yield DaskEngine(client, spec.address, limit)
        return
    n_workers = spec.workers or os.cpu_count() or 1
    if tasks is not None:
        n_workers = max(1, min(n_workers, tasks))
    with contextlib.ExitStack() as stack:
        starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="anoneval-dask-start")
        starting = starter.submit(_start_local_cluster, stack, spec, n_workers)
        starter.shutdown(wait=False)
        try:
            yield DaskEngine(None, None, limit, starting,
                             _local_memory_limit(spec.memory_limit, spec.threads_per_worker,
                                                 n_workers))
        finally:
            wait([starting])  # a cluster still starting is closed once it has started


def _start_local_cluster(stack: contextlib.ExitStack, spec: EngineSpec,
                         n_workers: int) -> tuple[Any, str]:
    """A LocalCluster of ``n_workers`` and its client, closed with ``stack``, once its workers
    have started (run in a thread: meanwhile, the caller evaluates variants)."""
    distributed = _import_distributed()
    with dask_worker_env():
        cluster = stack.enter_context(distributed.LocalCluster(
            n_workers=n_workers, threads_per_worker=spec.threads_per_worker, processes=True,
            memory_limit=spec.memory_limit or "auto", host="127.0.0.1",
            dashboard_address="127.0.0.1:0"))
    client = stack.enter_context(distributed.Client(cluster, set_as_default=False))
    _wait_for_workers(client, n_workers, WORKERS_TIMEOUT, "the LocalCluster")
    _ship_user_modules(client)
    # the workers import what a task needs while the caller still evaluates variants, instead
    # of in their first task, when the caller has handed its variants over and waits
    client.run(import_all, [PRELOAD])
    return client, cluster.scheduler_address


def _local_memory_limit(configured: str | None, threads: int, workers: int) -> int | None:
    """The memory limit of each worker of a LocalCluster of ``workers`` (as Dask sets it:
    ``configured``, or "auto", this machine's memory shared by the workers)."""
    from dask.utils import parse_bytes
    from distributed.system import MEMORY_LIMIT

    if configured is not None and configured != "auto":
        return int(parse_bytes(configured))
    return int(MEMORY_LIMIT // max(workers, 1)) or None


def _reachable(address: str, timeout: float) -> None:
    """Fail within ``timeout`` seconds when nothing accepts TCP connections at a ``tcp://`` or
    ``tls://`` scheduler address (a wrong port, a stopped scheduler, a host that drops the
    packets); other transports are left to Dask."""
    import socket
    import time

    parts = urlsplit(address)
    if parts.scheme not in ("tcp", "tls") or not parts.hostname:
        return
    deadline = time.monotonic() + timeout
    while True:  # a refused port is tried again until the deadline: a scheduler starting up
        left = deadline - time.monotonic()
        try:
            with socket.create_connection((parts.hostname, parts.port or 8786),
                                          timeout=max(left, 0.05)):
                return
        except ConnectionRefusedError as exc:
            if left > 0.2:
                time.sleep(0.2)
                continue
            why = exc.strerror or str(exc)
        except OSError as exc:
            why = "timed out" if isinstance(exc, socket.timeout) else (exc.strerror or str(exc))
        raise EngineError(masked(
            f"cannot reach the Dask scheduler at {public_address(address)} within "
            f"{timeout:g} s: {why}; check the address and that the scheduler runs "
            "(`dask scheduler`)", address)) from None


def _discard_failed_client(distributed: Any, exc: BaseException) -> None:
    """Close the client whose connection failed with ``exc`` now (its finaliser would
    otherwise wait a minute at exit and print a traceback)."""
    tb = exc.__traceback__
    while tb is not None:
        client = tb.tb_frame.f_locals.get("self")
        if isinstance(client, distributed.Client) and client.status != "running":
            client.status = "closed"  # its finaliser has nothing left to do
            with contextlib.suppress(Exception):
                client._loop_runner.stop()
            return
        tb = tb.tb_next


def _wait_for_workers(client: Any, n: int, timeout: float, where: str) -> None:
    """Wait at most ``timeout`` seconds for ``n`` workers (a scheduler without workers would
    hold the tasks forever)."""
    try:
        client.wait_for_workers(n, timeout=timeout)
    except (TimeoutError, asyncio.TimeoutError):  # distinct classes before Python 3.11
        have = len(client.scheduler_info(n_workers=-1).get("workers", {}))
        raise EngineError(f"the Dask scheduler at {where} has {have} worker(s) after "
                          f"{timeout:g} s, {n} needed; start workers "
                          "(`dask worker ADDRESS`) or check that they can reach it") from None


def _ship_user_modules(client: Any) -> None:
    """The plugin modules of registry files, loaded by value on every worker (those joining
    later too): a worker cannot import a ``file.py:Class`` by name."""
    modules = _user_modules()
    if modules:
        from anoneval.core.run.dask_code import UserModules

        client.register_plugin(UserModules(modules), name="anoneval-user-modules")


#: Dask settings of the workers anoneval starts (their nannies pass them on). Dask's statistical
#: profiler samples the running task's stack every 10 ms for the dashboard's profile page: it
#: took a fifth of the workers' CPU seconds on the 100-variant adult config
#: (``benchmarks/bench_many.py``), for a page no run reads.
WORKER_CONFIG = {"distributed.worker.profile.enabled": False}


@contextlib.contextmanager
def dask_worker_env() -> Iterator[None]:
    """Workers started in this block get :data:`WORKER_ENV` in their environment and
    :data:`WORKER_CONFIG` in their Dask config. The variables are also set in this process
    for the block: a Nanny prefers this process's values to its config, and every Nanny
    leaves its own (Dask's defaults, from any earlier cluster) in ``os.environ``."""
    import dask

    before = {k: os.environ.get(k) for k in WORKER_ENV}
    os.environ.update(WORKER_ENV)
    try:
        with dask.config.set({**{f"distributed.nanny.pre-spawn-environ.{k}": v
                                 for k, v in WORKER_ENV.items()}, **WORKER_CONFIG}):
            yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def new_recipe(build: Callable[..., Any], original: Dataset | None,
               measures: Sequence[PlannedMeasure], seed: int, data_kind: str | None,
               base_dir: Path | None, timings: bool, control: Dataset | None = None) -> Recipe:
    """A recipe with a fresh token (workers cache one evaluator per token); ``build`` makes the
    evaluator from the rest. ``base_dir`` is made absolute here: the measures resolve the
    paths of their params against it where they run, and a Dask worker's working folder is
    not this process's."""
    if base_dir is not None:
        base_dir = Path(os.path.abspath(base_dir))
    return Recipe(uuid.uuid4().hex, build, original, tuple(measures), seed, data_kind, base_dir,
                  timings, control)
