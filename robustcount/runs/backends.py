"""Where chunks of a run execute: this process, joblib workers on this machine, or a Dask cluster.

Every backend maps `run_chunk` over the chunks and yields the results in chunk order, with a
bounded number of chunks in flight, so that the run file is written in dataset order as results
arrive and a crash loses only the chunks in flight (each from its last checkpoint). `beats()`
says, from the driver, what the chunks in flight report (`runs/inflight.py`). A worker process
shows no warning itself: what a chunk warns comes back with its result and is warned again by
the driver (`caught_warnings`, `warn_again`), once, as a serial run warns it.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import sys
import threading
import time
import warnings
from collections import deque
from collections.abc import Iterator, Sequence
from itertools import islice

from robustcount import __version__
from robustcount.data import Example
from robustcount.errors import RobustcountError
from robustcount.models.accounting import QueryStats
from robustcount.models.llm.ledger import LEDGER
from robustcount.runs.command import TIMINGS
from robustcount.runs.inflight import BeatFiles, Checkpoints, beats, in_flight
from robustcount.runs.provenance import dependency_versions
from robustcount.runs.served_ledgers import served_ledgers, unreported_ledger
from robustcount.runs.spec import RunSpec, worker_for

Chunk = Sequence[tuple[int, Example]]


class WorkLost(RobustcountError):
    """Chunks that a backend could not run (workers lost or missing); what was finished is kept."""


def run_chunk(command, spec: RunSpec, chunk: Chunk, checkpoints: Checkpoints | None = None,
              ) -> tuple[list[dict], dict, Exception | None]:
    """The example records of one chunk of `spec`'s run of `command` (a `Command` object, sent
    along so that a worker process imports the module that declares it), its timing and the
    error that stopped it, if one did (with the records finished before it); runs in whichever
    process executes it, in flight under its journal (continuing from its checkpoint in
    `checkpoints`, when one is valid)."""
    worker = worker_for(spec, command)
    worker.start_chunk()
    before = sum((e.total for e in worker.engines), QueryStats())
    ledgers = served_ledgers(worker)
    for ledger in ledgers:  # the limits count the examples' requests, not the probes before them
        ledger.start_limits(again=not worker.examples_started)
    worker.examples_started = True
    began = time.perf_counter()
    records, error = [], None
    try:
        with in_flight(chunk[0][0], worker.engines, checkpoints):
            for record in worker.command.task(worker, spec, [example for _, example in chunk]):
                records.append(record)
    except Exception as failure:  # returned, so that the runner saves the finished records first
        error = failure
    spent = sum((e.total for e in worker.engines), QueryStats()) - before
    timing = {"record": "chunk", "indices": [index for index, _ in chunk[: len(records)]],
              "seconds": time.perf_counter() - began, "model_seconds": spent.model_seconds,
              "model_calls": spent.model_calls,
              "worker": f"{socket.gethostname()}:{os.getpid()}",
              "device": str(getattr(worker.engine.model, "device", "cpu")),
              "examples": [record.get(TIMINGS) for record in records]}
    if ledgers:  # a served model's requests, tokens and cost in this chunk (and its load's, in a worker's first)
        timing[LEDGER] = unreported_ledger(worker)
    return [{"record": "example", "index": index, **{k: v for k, v in record.items() if k != TIMINGS}}
            for (index, _), record in zip(chunk, records)], timing, error


def caught_warnings(run, *args) -> tuple:
    """`run(*args)`, a chunk's result (records, timing, error), with a fourth part: what it warned
    (category, message, file and line of each warning), which this process (a worker, whose
    standard error is the user's) does not show."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(*args)
    said = []
    for warning in caught:  # the category by name: a class of the user's may not unpickle in the driver
        category = f"{warning.category.__module__}:{warning.category.__qualname__}"
        entry = (category, str(warning.message), warning.filename, warning.lineno)
        if entry not in said:
            said.append(entry)
    return (*result, said)


def warn_again(results: Iterator[tuple]) -> Iterator[tuple[list[dict], dict, Exception | None]]:
    """The chunk results of `caught_warnings`, their warnings warned here (each as Python's filters
    say: by default once per place, the place the driver warns it from too)."""
    for *result, said in results:
        for category, message, filename, lineno in said:
            warnings.warn_explicit(message, _category(category), filename, lineno, registry=_registry(filename))
        yield tuple(result)


def _category(name: str) -> type[Warning]:
    """The warning class `module:qualname` as this process has it loaded, else UserWarning."""
    module, _, qualname = name.partition(":")
    found = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found if isinstance(found, type) and issubclass(found, Warning) else UserWarning


_REGISTRY: dict = {}


def _registry(filename: str) -> dict:
    """The warning registry of the loaded module of `filename` (so that a warning the driver gave
    from there is not given again), else one of this module's."""
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == filename:
            return module.__dict__.setdefault("__warningregistry__", {})
    return _REGISTRY


class SerialBackend:
    """Chunks run one after the other in this process."""

    name, workers = "serial", 1

    def connect(self) -> None:
        """Nothing to start (every backend has `connect`, called before any model is loaded)."""

    def map(self, command, spec: RunSpec, chunks: Sequence[Chunk], checkpoints: Checkpoints | None = None,
            ) -> Iterator[tuple[list[dict], dict, Exception | None]]:
        for chunk in chunks:
            yield run_chunk(command, spec, chunk, checkpoints)

    def beats(self) -> list[dict]:
        return beats()


class JoblibBackend:
    """Chunks run in `workers` joblib (loky) worker processes on this machine; each worker loads
    the model once and keeps it for the run (joblib keeps the processes for later runs of this
    process too; they keep the environment they started with)."""

    name = "joblib"

    def __init__(self, workers: int):
        self.workers = workers
        self._beats: BeatFiles | None = None

    def connect(self) -> None:
        """Nothing to start: joblib starts its workers with the first chunk."""

    def map(self, command, spec: RunSpec, chunks: Sequence[Chunk], checkpoints: Checkpoints | None = None,
            ) -> Iterator[tuple[list[dict], dict, Exception | None]]:
        from joblib import Parallel, delayed

        self._beats = BeatFiles(tempfile.mkdtemp(prefix="robustcount-beats-"))
        parallel = Parallel(n_jobs=self.workers, backend="loky", return_as="generator",
                            pre_dispatch=f"{2 * self.workers}")
        try:
            yield from warn_again(parallel(delayed(_guarded_chunk)(os.getpid(), self._beats, command, spec, chunk,
                                                                   checkpoints) for chunk in chunks))
        finally:
            shutil.rmtree(self._beats.directory, ignore_errors=True)
            self._beats = None

    def beats(self) -> list[dict]:
        return self._beats.read() if self._beats is not None else []


def _guarded_chunk(parent: int, beat_files: BeatFiles, command, spec: RunSpec, chunk: Chunk,
                   checkpoints: Checkpoints | None):
    """`run_chunk` in a joblib worker that publishes its beats to `beat_files` and ends itself once
    `parent` (the process that started the run) is gone: a run killed with SIGKILL leaves no
    worker behind holding a model."""
    _watch_parent(parent)
    beat_files.publish()
    return caught_warnings(run_chunk, command, spec, chunk, checkpoints)


_WATCHED: set[int] = set()


def _watch_parent(parent: int, interval: float = 1.0) -> None:
    """Start (once per process and parent) a daemon thread that exits this process when `parent`
    no longer exists or this process has been handed to another parent."""
    if parent in _WATCHED or parent == os.getpid():
        return
    _WATCHED.add(parent)
    adopted = os.getppid() == parent  # a direct child: a change of parent means the parent died

    def watch() -> None:
        while True:
            time.sleep(interval)
            try:
                os.kill(parent, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass
            if adopted and os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="robustcount-parent-watch", daemon=True).start()


class DaskBackend:
    """Chunks run on a Dask cluster: `local` or `local:N` starts one on this machine (N worker
    processes, one thread each; default: one per core), anything else is the address of a running
    scheduler (`tcp://host:8786`). Each worker process loads its own model replica, on its own GPU
    when it has one (see the README on device placement)."""

    name = "dask"

    def __init__(self, address: str):
        try:
            import dask.distributed  # noqa: F401
        except ImportError as err:
            raise RobustcountError("--cluster needs Dask: pip install 'robustcount[distributed]'") from err
        self.local = address == "local" or address.startswith("local:")
        count = address.partition(":")[2] if self.local else ""
        if count and not (count.isdigit() and int(count) > 0):
            raise RobustcountError(f"--cluster {address}: expected local or local:N with N >= 1")
        self.address, self.count = address, int(count) if count else os.cpu_count()
        self.workers = 0
        self._client = self._cluster = self._quiet = None

    def connect(self) -> None:
        """Start the local cluster or reach the scheduler, and check the workers' versions: done
        before any model is loaded or file written, so that a cluster that fails costs nothing."""
        from dask.distributed import Client, LocalCluster

        if self._client is not None:
            return
        if self.local:
            import dask

            # Dask sets MALLOC_TRIM_THRESHOLD_ in its workers, which turns off glibc's adaptive mmap
            # threshold: every large tensor is then mapped and unmapped afresh, and a model
            # spends about half its time in the kernel. The cluster robustcount starts leaves malloc as is.
            environ = {k: v for k, v in dask.config.get("distributed.nanny.pre-spawn-environ").items()
                       if k != "MALLOC_TRIM_THRESHOLD_"}
            # Its workers and nannies log their housekeeping as warnings (a worker slow to stop at
            # the end, an event loop kept busy by the model): noise on the user's standard error;
            # what matters to a run (a worker lost, a chunk failed) robustcount says itself.
            environ["DASK_LOGGING__DISTRIBUTED"] = "error"
            self._quiet = _Quiet("distributed")
            # Its statistical profiler samples each worker thread 100 times a second: off as well.
            with dask.config.set({"distributed.nanny.pre-spawn-environ": environ,
                                  "distributed.worker.profile.enabled": False}):
                self._cluster = LocalCluster(n_workers=self.count, threads_per_worker=1, processes=True,
                                             dashboard_address=None)
            self._client = Client(self._cluster)
        else:
            try:
                self._client = Client(self.address, timeout="20s")
            except OSError as err:
                raise RobustcountError(f"--cluster {self.address}: cannot reach the scheduler ({err})") from err
        try:
            self.workers = max(1, len(self._client.scheduler_info()["workers"]))
            check_versions(self._client.run(installed_versions))
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        for handle in (self._client, self._cluster):
            if handle is not None:
                handle.close()
        if self._quiet is not None:
            self._quiet.restore()
        self._client = self._cluster = self._quiet = None

    def map(self, command, spec: RunSpec, chunks: Sequence[Chunk], checkpoints: Checkpoints | None = None,
            ) -> Iterator[tuple[list[dict], dict, Exception | None]]:
        self.connect()
        try:
            yield from warn_again(_in_order(self._client, self.address, command, spec, chunks, checkpoints,
                                            window=2 * self.workers))
        finally:
            self.close()

    def beats(self) -> list[dict]:
        client = self._client
        if client is None:
            return []
        try:
            return [beat for found in client.run(beats, wait=True).values() for beat in found]
        except Exception:  # a worker going or the run ending: no beats this time
            return []


class _Quiet:
    """The logger `name` (and those under it) showing errors only, until `restore`."""

    def __init__(self, name: str):
        self.logger = logging.getLogger(name)
        self.level = self.logger.level
        self.logger.setLevel(logging.ERROR)

    def restore(self) -> None:
        self.logger.setLevel(self.level)


def installed_versions() -> dict[str, str]:
    """robustcount's version and its dependencies', in the process that calls it."""
    return {"robustcount": __version__, **dependency_versions()}


def check_versions(by_worker: dict[str, dict[str, str]]) -> None:
    """Refuse workers whose robustcount or dependency versions differ from this process's: the
    run file's header, written here, would misstate what produced their results."""
    mine = installed_versions()
    for worker, theirs in sorted(by_worker.items()):
        differing = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
        if differing:
            details = ", ".join(f"{k} {theirs.get(k, 'missing')} (here {mine.get(k, 'missing')})" for k in differing)
            raise RobustcountError(f"Dask worker {worker} has other versions: {details}")


NO_WORKER_WAIT = 60.0
"""Seconds a Dask run waits for a live worker before it stops, saying so."""


def _in_order(client, address: str, command, spec: RunSpec, chunks: Sequence[Chunk],
              checkpoints: Checkpoints | None, window: int):
    """Submit chunks `window` at a time and yield their results in submission order. A chunk
    whose workers keep dying (Dask retries it on others first) and a cluster left without a
    live worker for NO_WORKER_WAIT seconds end the run with `WorkLost`."""
    from distributed import KilledWorker

    def submit(chunk):
        return chunk, client.submit(caught_warnings, run_chunk, command, spec, chunk, checkpoints, pure=False)

    pending = iter(chunks)
    futures = deque(submit(chunk) for chunk in islice(pending, window))
    try:
        while futures:
            chunk, future = futures.popleft()
            try:
                result = _result(client, address, future)
            except KilledWorker:
                allowed = _allowed_failures()
                raise WorkLost(f"the Dask worker running example {chunk[0][0]} died on each of its "
                               f"{allowed + 1} tries") from None
            for chunk in islice(pending, 1):
                futures.append(submit(chunk))
            yield result
    finally:
        for _, future in futures:
            future.cancel()


def _result(client, address: str, future):
    """The future's result, waiting for it while the cluster has a live worker."""
    alone_since = None
    while True:
        try:
            return future.result(timeout=1.0)
        except TimeoutError:
            if client.nthreads():
                alone_since = None
            elif alone_since is None:
                alone_since = time.monotonic()
            elif time.monotonic() - alone_since >= NO_WORKER_WAIT:
                raise WorkLost(f"the Dask cluster {address} has had no live worker for {NO_WORKER_WAIT:g} s") from None


def _allowed_failures() -> int:
    import dask

    return int(dask.config.get("distributed.scheduler.allowed-failures"))


def make_backend(workers: int = 1, cluster: str | None = None):
    """The backend the CLI's --workers and --cluster options name."""
    if cluster is not None and workers != 1:
        raise RobustcountError("give either --workers (this machine) or --cluster (Dask), not both")
    if cluster is not None:
        return DaskBackend(cluster)
    if workers < 1:
        raise RobustcountError(f"--workers must be at least 1, got {workers}")
    return SerialBackend() if workers == 1 else JoblibBackend(workers)
