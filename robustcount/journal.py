"""What a long search on one example tells the run while it goes: how far it has got (`beat`:
points of Omega_r checked, samples drawn) and, at most every CHECKPOINT_INTERVAL seconds, where
it could continue from (`due`, `save`, and `saved` when it continues).

A search reads `current()`, the journal the runner set for the work of this thread (`keeping`);
outside a run it is a journal that keeps nothing, so the algorithms run the same from Python.
The runner decides where beats and checkpoints go (`runs/inflight.py`); a search only reports.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

CHECKPOINT_INTERVAL = 30.0
"""The most seconds of work a killed run loses inside one example."""


@dataclass(frozen=True)
class SearchProgress:
    """How far a search has got: `done` of `total` `unit`s (points, samples), `counted` of them
    in the `seconds` since this count began (a resumed search starts counting where it stood)."""

    done: int
    total: int
    unit: str
    counted: int
    seconds: float


class Journal:
    """One unit of work's journal: the last `SearchProgress` beaten, the checkpoint it continues from
    (`saved`, a JSON-able dict or None) and, when `save_to` is given, where checkpoints go, every
`interval` seconds at most (default CHECKPOINT_INTERVAL)."""

    def __init__(self, saved: dict | None = None, save_to: Callable[[dict], None] | None = None,
                 interval: float | None = None):
        self.saved, self._save_to = saved, save_to
        self.interval = CHECKPOINT_INTERVAL if interval is None else interval
        self.position: SearchProgress | None = None
        self._count_began, self._count_from = time.monotonic(), 0
        self._last_save = time.monotonic()

    @property
    def keeps(self) -> bool:
        """Whether checkpoints are kept (a search builds one only then)."""
        return self._save_to is not None

    def beat(self, done: int, total: int, unit: str) -> None:
        """Say that `done` of `total` `unit`s are done (a new `total` or `unit` starts a new count)."""
        now = time.monotonic()
        if self.position is None or (self.position.total, self.position.unit) != (total, unit) or done == 0:
            self._count_began, self._count_from = now, done
        self.position = SearchProgress(done, total, unit, done - self._count_from, now - self._count_began)

    def due(self) -> bool:
        """Whether a checkpoint is due (kept, and none saved for `interval` seconds)."""
        return self.keeps and time.monotonic() - self._last_save >= self.interval

    def save(self, state: dict) -> None:
        """Keep `state`, the JSON-able state the search continues from after a kill."""
        self._save_to(state)
        self._last_save = time.monotonic()


_NOWHERE = Journal()
_local = threading.local()


def current() -> Journal:
    """The journal of the work this thread does (one that keeps nothing outside a run)."""
    return getattr(_local, "journal", _NOWHERE)


@contextmanager
def keeping(journal: Journal) -> Iterator[Journal]:
    """Make `journal` this thread's current one for the block."""
    before = current()
    _local.journal = journal
    try:
        yield journal
    finally:
        _local.journal = before
