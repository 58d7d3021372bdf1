"""Run files: an append-only JSON-lines file per dataset run, and its timings beside it.

`RUN.jsonl` starts with one header line (`"record": "run"`: the command, its options, the seed,
the models' digests, the space's definition, the data, robustcount's and its dependencies'
versions), then one line per example (`"record": "example"`, with its `index` in the dataset),
written in dataset order and flushed one by one. Nothing in it depends on the machine, the number
of workers or the moment, so the same inputs and seed give a byte-identical file.

`RUN.timings.jsonl` gets what does: one line per session (backend, workers, start time) and one
per chunk of work (its examples, wall seconds, seconds inside the model, model calls, the
worker process and its device).

One process at a time writes a run file: its writer holds `.RUN.jsonl.lock` (a `filelock` lock;
the file holds the process id of its last holder and stays beside the run file after it is
released), and a second writer, fresh, resuming or overwriting, is refused in one line naming
the holder.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field, fields
from pathlib import Path

from filelock import FileLock, Timeout

from robustcount.atomic import StagedFile, replaced_whole, staging_path
from robustcount.data import parse_jsonl
from robustcount.errors import RobustcountError
from robustcount.models.identity import current_digest
from robustcount.models.spec import ModelSpec, recorded_options
from robustcount.runs.registry import command_named
from robustcount.status import BUDGET, COST_LIMIT, REQUEST_LIMIT, TIME_LIMIT, Undecided

FORMAT = "robustcount-run/1"


def dumps(record: dict) -> str:
    """The canonical JSON line of a record (sorted keys, UTF-8 text)."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"


def timings_path(path: Path) -> Path:
    """Where the timings of the run file `path` go."""
    return path.with_name(path.name.removesuffix(".jsonl") + ".timings.jsonl")


@dataclass
class Run:
    """A run: its header, its command's options (the command's Options dataclass, as the header
    records them; None only for a run file read back unchecked), its example records in file
    order and its timings."""

    header: dict
    options: object
    records: list[dict]
    timings: list[dict] = field(default_factory=list)


def read_run(path, checked: bool = True) -> Run:
    """Read a run file (and its timings when present); a partial last line, left by a run killed
    while writing, is ignored. The run is refused, in one line, when its command is not
    registered here, when its command finds a problem in it (`Command.run_problems`: a certify
    run's records must agree with their certificates) or when its header's options are not its
    command's, unless `checked` is False (for `verify`, which lists every problem; the run's
    `options` are then None)."""
    path = Path(path)
    if not path.is_file():
        raise RobustcountError(f"{path}: no such run file")
    header, records = _parse(path, path.read_bytes())
    if header is None:
        raise RobustcountError(f"{path}: not a robustcount run file (no header line)")
    timings_file = timings_path(path)
    timings = _parse_lines(timings_file, timings_file.read_bytes())[0] if timings_file.is_file() else []
    run = Run(header, None, records, timings)
    if not checked:
        return run
    try:
        command = command_named(str(header.get("command")))
    except RobustcountError as err:
        raise RobustcountError(f"{path}: {err}") from None
    problems = command.run_problems(run)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RobustcountError(f"{path}: {problems[0]}{more}; `robustcount verify {path}` lists every problem")
    recorded = header.get("options")
    try:
        if not isinstance(recorded, dict):
            raise RobustcountError("no options record")
        run.options = command.recorded_options(recorded)
    except (RobustcountError, TypeError) as err:
        raise RobustcountError(f"{path}: the header's options are not {command.name}'s ({err})") from None
    return run


def _parse_lines(path: Path, data: bytes) -> tuple[list[dict], int]:
    """The complete JSON lines of `data` and the byte length they span (a trailing partial line
    is left out)."""
    end = data.rfind(b"\n") + 1
    try:
        text = data[:end].decode("utf-8")
    except UnicodeDecodeError as err:
        raise RobustcountError(f"{path}: not UTF-8 text (invalid byte at offset {err.start})") from err
    return parse_jsonl(text, path), end


def _parse(path: Path, data: bytes) -> tuple[dict | None, list[dict]]:
    lines, _ = _parse_lines(path, data)
    if not lines:
        return None, []
    header, records = lines[0], lines[1:]
    if header.get("record") != "run" or header.get("format") != FORMAT:
        raise RobustcountError(f"{path}: not a robustcount run file (its first line is no {FORMAT} header)")
    if any(r.get("record") != "example" or type(r.get("index")) is not int for r in records):
        raise RobustcountError(f"{path}: a line after the header is not an example record")
    planned = header.get("data", {}).get("examples") if isinstance(header.get("data"), dict) else None
    indices = set()
    for record in records:
        if record["index"] in indices:
            raise RobustcountError(f"{path}: the example at index {record['index']} appears twice")
        if record["index"] < 0 or type(planned) is int and record["index"] >= planned:
            raise RobustcountError(f"{path}: an example's index {record['index']} is outside the run's "
                                   f"{planned} examples")
        indices.add(record["index"])
    return header, records


def refuse_existing(path, *, resume: bool, overwrite: bool) -> None:
    """Refuse, before any work, a run file that another run is writing (`RunLock`), and an existing
    one unless told to continue it or to start again."""
    path = Path(path)
    if path.parent.is_dir():
        RunLock(path).release()
    _refuse_existing_file(path, resume=resume, overwrite=overwrite)


def _refuse_existing_file(path: Path, *, resume: bool, overwrite: bool) -> None:
    if path.exists() and not (resume or overwrite):
        raise RobustcountError(f"{path} exists: pass --resume to continue that run or --overwrite to start it again")


def lock_path(path: Path) -> Path:
    """The lock file a writer of run file `path` holds."""
    return path.with_name(f".{path.name}.lock")


class RunLock:
    """The lock of one run file, held by this process from `RunLock(path)` to `release()`; taken
    at once or refused in one line naming the process that holds it (and `option`, the option that
    names the file). Taking it removes the staging files a writer of this run file left when it
    was killed (no other writer can be at work)."""

    def __init__(self, path: Path, option: str = "--output"):
        self._lock = FileLock(lock_path(path), on_acquired=_write_pid)
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise RobustcountError(f"{path} is being written by another robustcount run ({_holder(path)}): wait "
                                   f"for it to end, or name another {option}") from None
        for left in (path, timings_path(path)):
            for staged in left.parent.glob(f".{left.name}.*.new"):
                if staged != staging_path(left):
                    staged.unlink(missing_ok=True)

    def release(self) -> None:
        self._lock.release()


def _write_pid(descriptor: int) -> None:
    os.ftruncate(descriptor, 0)
    os.write(descriptor, f"{os.getpid()}\n".encode())


def _holder(path: Path) -> str:
    """Which process holds the lock of run file `path`, as far as its lock file says."""
    try:
        pid = lock_path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        pid = ""
    return f"process {pid}" if pid.isdigit() else "a process that is starting"


class RunWriter:
    """Appends example records to a run file, after its header, holding the run file's lock
    (`RunLock`) until `close`.

    A new file gets `header`. An existing file is refused unless `resume` (continue it: it must be
    a run file, or empty, and its header must equal `header`, but for RAISABLE limits that
    `header` raises: the file is then rewritten at once under `header` without the records they
    stopped, which run again; `done` holds its records by index) or
    `overwrite` (start again: the new run is written beside the old file and replaces it when its
    first record is written, or when the run ends, so that a run that fails first loses nothing).
    A new file likewise comes into being at its first record (or the run's end), when
    `announce(path)` is called: a run that fails or is interrupted before never names a file.
    """

    def __init__(self, path, header: dict, *, resume: bool = False, overwrite: bool = False, announce=None):
        self.path = Path(path)
        self._announce = announce
        self.done: dict[int, dict] = {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = RunLock(self.path)
        try:
            self._open(header, resume=resume, overwrite=overwrite)
        except BaseException:
            self._lock.release()
            raise

    def _open(self, header: dict, *, resume: bool, overwrite: bool) -> None:
        _refuse_existing_file(self.path, resume=resume, overwrite=overwrite)
        if resume and self.path.is_file():
            data = self.path.read_bytes()
            try:
                found, records = _parse(self.path, data)
                if found is None and data:
                    raise RobustcountError("no header line")
            except RobustcountError as err:
                raise RobustcountError(f"{self.path} is not a robustcount run file ({str(err).removeprefix(f'{self.path}: ')}),"
                                       " so there is nothing to resume: name another --output (it is left as it is)"
                                       ) from None
            if found is not None:
                raised = _check_same_run(self.path, found, header)
                self.done = {r["index"]: r for r in records}
                if raised:  # the records the raised limits stopped are done again, under the new header
                    undecided = command_named(header["command"]).undecided
                    self.done = {i: r for i, r in self.done.items() if not _stopped_by(undecided(r), raised)}
                    with replaced_whole(self.path) as handle:
                        handle.write(b"".join(dumps(r).encode("utf-8") for r in [header, *self.done.values()]))
                    data = self.path.read_bytes()
                self._file = self.path.open("r+b")
                self._file.truncate(_parse_lines(self.path, data)[1])  # drop a partial last line
                self._file.seek(0, 2)
                return
        self._file = StagedFile(self.path, "wb")
        self._write(header)

    def append(self, record: dict) -> None:
        """Write one example record and flush it to the operating system."""
        self._write(record)
        self.commit()

    def commit(self) -> None:
        """Make what was written the run file (a no-op when continuing one)."""
        if isinstance(self._file, StagedFile) and not self._file.committed:
            self._file.commit()
            if self._announce:
                self._announce(self.path)

    def _write(self, record: dict) -> None:
        self._file.write(dumps(record).encode("utf-8"))
        self._file.flush()

    def finish(self) -> None:
        """End a complete run: its records in dataset order (a resume with raised limits appended
        the examples it ran again at the end), so that the file is the one a fresh run writes."""
        self.commit()
        self._file.flush()
        data = self.path.read_bytes()
        lines = data.splitlines(keepends=True)
        ordered = [lines[0], *sorted(lines[1:], key=lambda line: json.loads(line)["index"])]
        if ordered != lines:
            self._file.close()
            with replaced_whole(self.path) as handle:
                handle.write(b"".join(ordered))
            self._file = self.path.open("ab")

    def close(self) -> None:
        try:
            self._file.close()
        finally:
            self._lock.release()


RAISABLE = {"time_limit": TIME_LIMIT, "budget": BUDGET, "max_requests": REQUEST_LIMIT, "max_cost": COST_LIMIT}
"""The options a resume may raise (a command's `options.NAME`, or a served model's
`models.K.NAME`), each with the limit (`status.LIMITS`) of the examples it stopped
(`Command.undecided`, which reads a record written before the `limit` field by its reason): those
examples are run again."""


def _check_same_run(path: Path, found: dict, expected: dict) -> list[str]:
    """Refuse to resume a run whose definition differs, naming each difference with both values;
    return the RAISABLE options `expected` raises (their examples stopped by them run again).
    The data may be named by another path (`fx/good.csv`, `./fx/good.csv`) when its examples'
    digest is the same."""
    differences = _differences(_as_written_now(_without_data_path(found)), _without_data_path(expected))
    raised = [name for name, old, new in differences if _raisable(name) and _raises(_raisable(name), old, new)]
    refused = [d for d in differences if d[0] not in raised]
    if refused:
        shown = "; ".join(f"{name}: {_shown(old)} in the file, {_shown(new)} now" for name, old, new in refused[:3])
        more = f" (and {len(refused) - 3} more)" if len(refused) > 3 else ""
        limits = " (a resume may raise --time-limit, --budget, --max-requests and --max-cost, never lower them)" \
            if any(_raisable(name) for name, _, _ in refused) else ""
        raise RobustcountError(f"{path} holds a different run (differs in {shown}{more}){limits}; "
                               "resume it with the same options, or pass --overwrite")
    return [_raisable(name) for name in raised]


def _raisable(name: str) -> str | None:
    """The RAISABLE option a header's dotted `name` is (`options.budget`, `models.0.max_requests`), or None."""
    parts = name.split(".")
    found = parts[1] if len(parts) == 2 and parts[0] == "options" else \
        parts[2] if len(parts) == 3 and parts[0] == "models" and parts[1].isdigit() else None
    return found if found in RAISABLE else None


def _differences(found, expected, prefix: str = "") -> list[tuple[str, object, object]]:
    """The (dotted name, value in `found`, value in `expected`) of every differing leaf (lists of
    one length compared entry by entry)."""
    if isinstance(found, dict) and isinstance(expected, dict):
        return [d for key in sorted(set(found) | set(expected))
                for d in _differences(found.get(key), expected.get(key), f"{prefix}{key}.")]
    if isinstance(found, list) and isinstance(expected, list) and len(found) == len(expected):
        return [d for k, (a, b) in enumerate(zip(found, expected)) for d in _differences(a, b, f"{prefix}{k}.")]
    return [] if found == expected else [(prefix.removesuffix("."), found, expected)]


def _as_written_now(header: dict) -> dict:
    """`header` as a run would write it today: each model's options added to `ModelSpec` since
    (the language models' prompt, verbaliser and calibration) at their defaults, and a built-in
    model's former digest as its current one (`models.identity.current_digest`)."""
    models = header.get("models")
    if not isinstance(models, list):
        return header
    defaults = {f.name: f.default for f in fields(ModelSpec)}
    return {**header, "models": [{**recorded_options({**defaults, "spec": model.get("spec")}), **model,
                                  "digest": current_digest(model.get("digest"))}
                                 if isinstance(model, dict) else model for model in models]}


def _raises(option: str, old, new) -> bool:
    """Whether `new` is a larger limit than `old` (0 seconds or no budget: none)."""
    unlimited = (lambda v: v == 0) if option == "time_limit" else (lambda v: v is None)
    if unlimited(old):
        return False
    return unlimited(new) or (new is not None and old is not None and new > old)


def _stopped_by(found: Undecided | None, raised: list[str]) -> bool:
    """Whether a record's search ended undecided (`found`) on the limit of one of the `raised` options."""
    return found is not None and any(RAISABLE[option] in found.limits for option in raised)


def _shown(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _without_data_path(header: dict) -> dict:
    """`header` with the name of its data left out (the examples' digest still says which data)."""
    data = header.get("data")
    return {**header, "data": {**data, "spec": None}} if isinstance(data, dict) else header


class TimingsWriter:
    """Appends session and chunk timings beside a run file: continuing the file when resuming (a
    partial last line, left by a run killed while writing, is dropped first), else a new one that
    replaces an old file only on `commit`, with the run file."""

    def __init__(self, run_path, *, resume: bool):
        self.path = timings_path(Path(run_path))
        if resume and self.path.is_file():
            with self.path.open("r+b") as handle:
                handle.truncate(self.path.read_bytes().rfind(b"\n") + 1)
        self._file = self.path.open("a", encoding="utf-8") if resume else StagedFile(self.path, "w")

    def append(self, record: dict) -> None:
        self._file.write(dumps(record))
        self._file.flush()

    def commit(self) -> None:
        if isinstance(self._file, StagedFile):
            self._file.commit()

    def close(self) -> None:
        self._file.close()


def check_writable(path: Path, directory: bool = False) -> None:
    """Fail now, before any work, when `path` (a file, or with `directory` a directory, created
    if missing) cannot be written."""
    place = path if directory else path.parent
    try:
        place.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=place):
            pass
    except OSError as err:
        raise RobustcountError(f"cannot write {path}: {err.strerror or err}") from err
