"""The work in flight: what the journal of each running chunk says (`beats`, shown by the
driver's progress while an example runs) and the checkpoints its searches keep.

A worker runs each chunk `in_flight`: the chunk's journal (`robustcount.journal`) is the current
one of its thread, continues from the chunk's checkpoint when one is valid, and is listed in
this process's `beats`. The driver reads those beats where the chunk runs: in its own process
(serial), from files its joblib workers publish every second (`BeatFiles`), or from its Dask
workers (`client.run(beats)`). Checkpoints are side files beside the run file, one per chunk,
keyed by the run header's digest so that a checkpoint of other options, another model or space
is never used; the runner removes a chunk's checkpoint once its records are in the run file.
The spaces a chunk builds with contextual filters (seconds of scoring each) are kept the same
way (`KeptSpaces`, `.RUN.jsonl.example-N.spaces`), so that a resumed run reads them back
(`runs.kept_spaces.KeptBuilder`) instead of scoring their candidates again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from robustcount.atomic import replaced_whole
from robustcount.journal import Journal, keeping

BEAT_INTERVAL = 1.0
"""Seconds between two beats a worker publishes (the driver shows them as often)."""


@dataclass(frozen=True)
class Checkpoints:
    """The checkpoints of one run's chunks: beside the run file `run_path`, one per chunk named
    by its first example's index, each holding `key` (see `header_key`)."""

    run_path: str
    key: str

    def path(self, index: int) -> Path:
        run = Path(self.run_path)
        return run.with_name(f".{run.name}.example-{index}.checkpoint")

    def spaces_path(self, index: int) -> Path:
        run = Path(self.run_path)
        return run.with_name(f".{run.name}.example-{index}.spaces")

    def load(self, index: int) -> dict | None:
        """The state saved for the chunk starting at `index`, or None when there is none, it is
        unreadable (a file torn by a kill is never renamed into place, but any damage is ignored)
        or it belongs to another run definition."""
        return self._load(self.path(index), index, "state")

    def save(self, index: int, state: dict) -> None:
        """Replace the chunk's checkpoint with `state`, whole (a worker that cannot write there,
        on a cluster without the run's file system, keeps none)."""
        self._save(self.path(index), index, "state", state)

    def load_spaces(self, index: int) -> list:
        """The spaces kept for the chunk starting at `index` (`runs.kept_spaces.kept_form` each; none
        when there is no file, it is unreadable or it belongs to another run definition)."""
        found = self._load(self.spaces_path(index), index, "spaces")
        return found if isinstance(found, list) else []

    def save_spaces(self, index: int, spaces: list) -> None:
        """Replace the spaces kept for the chunk starting at `index`, whole (as `save`)."""
        self._save(self.spaces_path(index), index, "spaces", spaces)

    def _load(self, path: Path, index: int, name: str):
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(saved, dict) or saved.get("key") != self.key or saved.get("index") != index:
            return None
        return saved.get(name)

    def _save(self, path: Path, index: int, name: str, value) -> None:
        try:
            with replaced_whole(path, "w") as handle:
                json.dump({"key": self.key, "index": index, name: value}, handle, ensure_ascii=False)
        except OSError:
            pass

    def remove(self, index: int) -> None:
        self.path(index).unlink(missing_ok=True)
        self.spaces_path(index).unlink(missing_ok=True)

    def remove_all(self) -> None:
        """Remove every checkpoint and kept space of the run file (the run is complete), and any a
        kill left half-written."""
        run = Path(self.run_path)
        for kind in ("checkpoint", "spaces"):
            for pattern in (f".{run.name}.example-*.{kind}", f"..{run.name}.example-*.{kind}.*.new"):
                for path in run.parent.glob(pattern):
                    path.unlink(missing_ok=True)


def header_key(header: dict) -> str:
    """The digest naming a run definition (its header, the data's path aside: the examples'
    digest says which data)."""
    data = header.get("data")
    named = {**header, "data": {**data, "spec": None}} if isinstance(data, dict) else header
    return hashlib.sha256(json.dumps(named, sort_keys=True).encode()).hexdigest()


_IN_FLIGHT: dict[int, tuple[Journal, Sequence, float]] = {}
"""This process's chunks in flight, by first index: journal, query engines, start time."""


@contextmanager
def in_flight(index: int, engines: Sequence, checkpoints: Checkpoints | None) -> Iterator[Journal]:
    """Run the chunk starting at `index` under its journal (see the module docstring)."""
    if checkpoints is None:
        notes = Journal()
    else:
        notes = Journal(saved=checkpoints.load(index), save_to=lambda state: checkpoints.save(index, state))
    _IN_FLIGHT[index] = (notes, engines, time.monotonic())
    before = kept_spaces()
    _local.spaces = None if checkpoints is None else KeptSpaces(
        checkpoints.load_spaces(index), lambda forms: checkpoints.save_spaces(index, forms))
    try:
        with keeping(notes):
            yield notes
    finally:
        _local.spaces = before
        _IN_FLIGHT.pop(index, None)


@dataclass
class KeptSpaces:
    """The spaces built for the examples of the chunk in flight (`runs.kept_spaces.kept_form` each):
    those a killed run of the same definition kept, then each new one, saved whole with
    `save_to` as it is added."""

    forms: list
    save_to: Callable[[list], None]

    def keep(self, form: dict) -> None:
        self.forms.append(form)
        self.save_to(self.forms)


_local = threading.local()


def kept_spaces() -> KeptSpaces | None:
    """The kept spaces of the chunk this thread runs (None outside a chunk that has a run file)."""
    return getattr(_local, "spaces", None)


def beats() -> list[dict]:
    """What each chunk in flight in this process says: its first `index`, the `seconds` it has
    run, the model `queries` of its example so far and, when its search beats, the `position`
    (`done` of `total` `unit`s, `counted` of them in the last `count_seconds`)."""
    found = []
    for index, (notes, engines, began) in list(_IN_FLIGHT.items()):
        stats = [engine.current_example for engine in engines]
        beat = {"index": index, "seconds": time.monotonic() - began,
                "queries": sum(s.model_calls + s.gradient_calls for s in stats if s is not None)}
        if notes.position is not None:
            p = notes.position
            beat["position"] = {"done": p.done, "total": p.total, "unit": p.unit, "counted": p.counted,
                                "count_seconds": p.seconds}
        found.append(beat)
    return found


class BeatFiles:
    """Beats through a directory that every worker process on this machine writes its own file in."""

    def __init__(self, directory: str):
        self.directory = directory

    def publish(self) -> None:
        """Start (once per process) a daemon thread writing this process's beats every BEAT_INTERVAL."""
        if getattr(BeatFiles, "_publishing", None) == self.directory:
            return
        BeatFiles._publishing = self.directory
        target = Path(self.directory) / f"{os.getpid()}.json"

        def publish_forever() -> None:
            staging = target.with_suffix(".new")
            while BeatFiles._publishing == self.directory:
                try:  # written whole, then renamed: a reader never sees half of it
                    staging.write_text(json.dumps(beats()))
                    os.replace(staging, target)
                except OSError:  # the run is over and its directory gone
                    return
                time.sleep(BEAT_INTERVAL)

        threading.Thread(target=publish_forever, name="robustcount-beats", daemon=True).start()

    def read(self) -> list[dict]:
        found = []
        for path in Path(self.directory).glob("*.json"):
            try:
                found.extend(json.loads(path.read_text()))
            except (OSError, ValueError):
                pass
        return found
