"""Running a dataset command: resumable, in one process, in parallel or on a cluster.

`execute` splits the examples into fixed chunks (`Command.examples_per_chunk`), skips those a resumed run
file already holds, runs the rest on a backend and appends each example's record to the run file
as soon as its chunk and every chunk before it are done. Records are the same whatever the
backend, the number of workers or the interruptions, so the file is too. While chunks run, a
thread shows what their examples report (`Progress.show`), and their searches keep checkpoints
beside the run file (`runs/inflight.py`), removed once the records are written.
"""

from __future__ import annotations

import json
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from robustcount.data import Example, label_index, matched_by_position
from robustcount.errors import RobustcountError, RobustcountInterrupted, RobustcountWarning
from robustcount.models.llm.ledger import LEDGER
from robustcount.runs.backends import SerialBackend, WorkLost
from robustcount.runs.served_ledgers import served_ledgers, unreported_ledger
from robustcount.runs.files import Run, RunWriter, TimingsWriter, dumps, refuse_existing
from robustcount.runs.inflight import BEAT_INTERVAL, Checkpoints, header_key
from robustcount.runs.progress import Progress
from robustcount.runs.provenance import run_header
from robustcount.runs.registry import command_named
from robustcount.runs.spec import RunSpec, Worker, worker_for


def check_gold_labels(examples: Sequence[Example], engines) -> None:
    """Refuse, before any file is touched, a gold label that is not one of every model's labels,
    and warn when labels are matched to the model's by their position rather than their name."""
    for engine in engines:
        by_position = {}
        for example in examples:
            if example.label is not None:
                try:
                    index = label_index(example.label, engine.labels)
                except RobustcountError as err:
                    raise RobustcountError(f"example {example.id}: {err}") from None
                if matched_by_position(example.label, engine.labels):
                    by_position[str(example.label)] = engine.labels[index]
        if by_position:
            pairs = ",".join(f"{k}={v}" for k, v in sorted(by_position.items()))
            warnings.warn(f"the data's labels are read by position as the model's: {pairs}; if that is not what "
                          f"they mean, give --label-map (this reading is --label-map {pairs})", RobustcountWarning,
                          stacklevel=2)


@dataclass(frozen=True)
class RunOutput:
    """The run file a run streams its records to (`path`), continued when `resume` and replaced
    when `overwrite` (else an existing one is refused: `files.refuse_existing`)."""

    path: str | Path
    resume: bool = False
    overwrite: bool = False


def execute(
    spec: RunSpec,
    examples: Sequence[Example],
    data: dict,
    *,
    output: RunOutput | None = None,
    backend=None,
    progress: bool = True,
    announce=None,
    on_record=None,
) -> Run:
    """Run `spec` over `examples` (described by `data` in the header) and return the whole run,
    resumed records included. With `output`, records stream to that run file (see `files`);
    `announce(output.path)` is called when a new run file comes into being, at its first record;
    `on_record(record, resumed)` with every record, those the resumed file holds first
    (resumed=True), then each new one as soon as the run file has it."""
    path, resume, overwrite = (output.path, output.resume, output.overwrite) if output else (None, False, False)
    backend = backend or SerialBackend()
    if path is not None:
        refuse_existing(path, resume=resume, overwrite=overwrite)  # before loading any model
    backend.connect()  # a cluster that cannot start fails here, before any model or file
    command = command_named(spec.command)
    header, size, loaded = _header_and_chunk_size(spec, command, backend, examples, data)
    writer = RunWriter(path, header, resume=resume, overwrite=overwrite,
                       announce=announce) if path is not None else None
    done = dict(writer.done) if writer else {}
    chunks = _pending_chunks(examples, size, done)
    timings = TimingsWriter(path, resume=resume) if path is not None else None
    checkpoints = Checkpoints(str(path), header_key(header)) if path is not None else None
    session = {"record": "session", "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "backend": backend.name, "resumed": len(done), "chunks": len(chunks),
               **({LEDGER: loaded} if loaded else {})}
    logged = [session]
    bar = Progress(spec.command, len(examples), len(done), enabled=progress)
    for index in sorted(done) if on_record else ():
        on_record(done[index], True)
    stop = _start_beats(backend, bar) if progress else threading.Event()
    sinks = _Sinks(writer, timings, checkpoints, bar, on_record)
    try:
        if timings:
            timings.append(session)
        for (records, timing, error), chunk in zip(backend.map(command, spec, chunks, checkpoints), chunks):
            sinks.take_chunk(done, records, timing, error, chunk, logged)
            if error is not None:
                raise error
        sinks.finish()
    except KeyboardInterrupt:
        kept = Run(header, spec.options, [done[i] for i in sorted(done)], logged)
        raise RobustcountInterrupted(f"interrupted after {len(kept.records)} of {len(examples)} examples",
                                     kept) from None
    except WorkLost as lost:
        raise RobustcountError(f"{lost}; {_what_is_kept(done, len(examples), path)}") from None
    finally:
        stop.set()
        bar.close()
        for handle in (writer, timings):
            if handle:
                handle.close()
    return Run(header, spec.options, [done[i] for i in sorted(done)], logged)


def _header_and_chunk_size(spec: RunSpec, command, backend, examples: Sequence[Example], data: dict):
    """The run header (which needs the models' digests), the examples per chunk and what the served
    models' requests to load and probe them counted (`unreported_ledger`), after checking the gold
    labels against every model's; a serial run keeps its worker for the work itself."""
    worker = worker_for(spec, command) if isinstance(backend, SerialBackend) else Worker(spec, command, device="cpu")
    size = command.examples_per_chunk(spec)
    check_gold_labels(examples, worker.engines)
    for ledger in served_ledgers(worker):  # the header's batch probe is no example's request
        ledger.pause_limits()
    header = json.loads(dumps(run_header(spec, worker, examples, data, size)))
    return header, size, unreported_ledger(worker)


def _pending_chunks(examples: Sequence[Example], size: int, done: dict) -> list:
    """The examples as chunks of `size` (index, example) pairs, less those whose every example is `done`."""
    chunks = [[(i, examples[i]) for i in range(start, min(start + size, len(examples)))]
              for start in range(0, len(examples), size)]
    return [c for c in chunks if any(i not in done for i, _ in c)]


class _Sinks:
    """Where a finished chunk goes: the run file, the timings file, the checkpoints, the progress
    bar and the caller's `on_record` (each but the bar may be None)."""

    def __init__(self, writer, timings, checkpoints, bar: Progress, on_record):
        self.writer, self.timings, self.checkpoints, self.bar, self.on_record = (
            writer, timings, checkpoints, bar, on_record)

    def take_chunk(self, done: dict, records, timing: dict, error, chunk, logged: list) -> None:
        """Add the chunk's records not yet `done` to it and to every sink, its timing to `logged`,
        and drop its checkpoints when it ended without an error."""
        fresh = [r for r in records if r["index"] not in done]  # a re-run chunk repeats its finished part
        for record in fresh:
            done[record["index"]] = record
            if self.writer:
                self.writer.append(record)  # the first one makes the new file the run file
            if self.on_record:
                self.on_record(record, False)
        logged.append(timing)
        if self.timings:
            self.timings.append(timing)
            if fresh:
                self.timings.commit()
        if self.checkpoints and error is None:
            self.checkpoints.remove(chunk[0][0])
        self.bar.count_ledger(timing.get(LEDGER))
        self.bar.update(len(fresh))

    def finish(self) -> None:
        """A run that ended well: its run file replaces an old one even without records, its
        timings are committed and its checkpoints removed."""
        if self.writer:
            self.writer.finish()
        if self.timings:
            self.timings.commit()
        if self.checkpoints:
            self.checkpoints.remove_all()


def _what_is_kept(done: dict, total: int, output) -> str:
    """What a run whose work was lost keeps, and how to continue it."""
    if not done:
        return "no example was finished"
    if output is not None and Path(output).is_file():
        return f"{len(done)} of {total} examples are in {output}: continue with --output {output} --resume"
    return f"{len(done)} of {total} examples are kept"


def _start_beats(backend, bar: Progress) -> threading.Event:
    """Start the thread that shows the backend's beats on `bar`; it stops when the event returned is set."""
    stop = threading.Event()
    threading.Thread(target=_show_beats, args=(backend, bar, stop), name="robustcount-progress",
                     daemon=True).start()
    return stop


def _show_beats(backend, bar: Progress, stop: threading.Event) -> None:
    """Until `stop`, show every BEAT_INTERVAL what the backend's chunks in flight report."""
    while not stop.wait(BEAT_INTERVAL):
        bar.show(backend.beats())
