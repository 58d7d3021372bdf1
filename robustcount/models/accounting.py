"""The query engine's accounting: what its model calls cost, per engine and per example, and the
limits of one example (a budget of model calls, a time limit).

The counters (`QueryStats`):

- `candidates`: inputs asked for, every repetition included;
- `duplicates`: repeats of an input within the same request, and, for a model given inputs as
  token ids, inputs whose ids an earlier input of the request has (each answered with that
  input's row and cached);
- `cache_hits`: inputs answered from the cache;
- `model_calls`: inputs actually run through the model (candidates = duplicates + cache_hits +
  model_calls for an example; the engine's totals also hold the batch probe's calls and the
  digest's fingerprint);
- `model_batches`, `model_seconds`: forward batches and the time spent inside the model;
- `gradient_calls`: forward-and-backward passes for white-box sensitivities.

A budget caps the model calls (plus gradient calls) of one example: a request that would exceed
it raises `BudgetExhausted` before anything runs, so no partial answer escapes. A time limit is
checked before every forward batch: a batch is refused (`TimeLimitReached`) once the limit has
passed, or when the model's measured speed (characters a second, `input_characters`) says that it
would end more than OVERRUN of the limit past it. Every time is read from one clock
(`Accounting.clock`, `time.perf_counter` unless told otherwise), so that the time limit, the
speed and `model_seconds` agree.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass

from robustcount.errors import BudgetExhausted, TimeLimitReached
from robustcount.models.base import MaskQuery, SubstitutionQuery
from robustcount.text import Input

OVERRUN = 0.1
"""The share of its time limit an example may run past it: a batch expected to end later is refused."""


@dataclass
class QueryStats:
    """Counters of one engine, or of one example (see the module docstring)."""

    candidates: int = 0
    duplicates: int = 0
    cache_hits: int = 0
    model_calls: int = 0
    model_batches: int = 0
    model_seconds: float = 0.0
    gradient_calls: int = 0

    def as_dict(self) -> dict:
        return asdict(self)

    def __add__(self, other: QueryStats) -> QueryStats:
        return QueryStats(**{k: v + getattr(other, k) for k, v in asdict(self).items()})

    def __sub__(self, other: QueryStats) -> QueryStats:
        return QueryStats(**{k: v - getattr(other, k) for k, v in asdict(self).items()})


@dataclass
class EngineState:
    """An example's engine state at a checkpoint (see `QueryEngine.state`), JSON-able with `as_dict`."""

    stats: dict
    cache: list
    """[input, probabilities] pairs, least recently used first (an input pair as a list of two)."""
    seconds: float

    def as_dict(self) -> dict:
        return asdict(self)


def input_characters(item: Input | MaskQuery | SubstitutionQuery) -> int:
    """An input's characters (a pair's two texts together, a mask query's text, a substitution
    query's text and replacements): the measure of forward batches and of the model's speed."""
    if type(item) is str:
        return len(item)
    if isinstance(item, MaskQuery):
        return len(item.text)
    if isinstance(item, SubstitutionQuery):
        return sum(map(len, item.pieces)) + sum(map(len, item.replacements))
    return len(item[0]) + len(item[1]) if isinstance(item, tuple) else len(item)


class Accounting:
    """The counters of one engine (`total`; `probe`, the batch probe's share of it) and of the
    example under way (`example`), with that example's budget and time limit, on `clock`."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self.clock = clock
        self.total = QueryStats()
        self.probe = QueryStats()
        self.example: QueryStats | None = None
        self._budget: int | None = None
        self._time_limit: float | None = None
        self._deadline: float | None = None
        self._began = 0.0
        self._speed = [0, 0.0]  # characters run through the model and seconds it took (forward batches)

    @contextmanager
    def counting(self, budget: int | None, time_limit: float | None, stats: QueryStats,
                 spent: float = 0.0) -> Iterator[QueryStats]:
        """Count one example's work in `stats`, under `budget` model calls and `time_limit`
        seconds (None: none), `spent` seconds of it already gone (a resumed example)."""
        if self.example is not None:
            raise RuntimeError("examples do not nest")
        self._time_limit = time_limit or None
        self._began = self.clock() - spent
        self._deadline = None if self._time_limit is None else self._began + self._time_limit
        self.example, self._budget = stats, budget
        try:
            yield stats
        finally:
            self.example, self._budget, self._deadline = None, None, None

    def seconds(self) -> float:
        """The seconds the example under way has run (those before a checkpoint included)."""
        return self.clock() - self._began

    def count(self, probe: bool = False, **increments) -> None:
        """Add `increments` to the engine's totals and to the example's counters, or with `probe`
        to the probe's instead of the example's."""
        for stats in (self.total, self.probe if probe else self.example):
            if stats is not None:
                for key, value in increments.items():
                    setattr(stats, key, getattr(stats, key) + value)

    def timed(self, run: Callable[[list], object], probe: bool = False) -> Callable[[list], object]:
        """`run` on a batch, counted as one forward batch of its inputs (with `probe`, the probe's),
        whether it answers or raises."""

        def counted(chunk: list):
            began = self.clock()
            try:
                return run(chunk)
            finally:
                self.count(probe=probe, model_calls=len(chunk), model_batches=1, model_seconds=self.clock() - began)

        return counted

    def forward(self, run: Callable[[], object], inputs: int, characters: int):
        """One forward batch of the example's request, `inputs` inputs of `characters` characters
        in all: refused when the time limit says so (`check_time`), else run (`run()`), counted and
        measured for the speed estimate."""
        self.check_time(characters)
        began = self.clock()
        rows = run()
        seconds = self.clock() - began
        self.count(model_calls=inputs, model_batches=1, model_seconds=seconds)
        self._speed[0] += characters
        self._speed[1] += seconds
        return rows

    def check_budget(self, requested: int) -> None:
        """Refuse a request of `requested` new model calls past the example's budget (or its time limit)."""
        if self.example is None or requested == 0:
            return
        used = self.example.model_calls + self.example.gradient_calls
        self.check_time(0)
        if self._budget is not None and used + requested > self._budget:
            raise BudgetExhausted(used, self._budget, requested)

    def check_time(self, characters: int) -> None:
        """Refuse the next forward batch (of `characters`) once the example's time limit has
        passed, or when at the speed measured so far it would end more than OVERRUN of the limit
        past it. The example's first answer is free."""
        if self.example is None or self._deadline is None:
            return
        if not self.example.model_calls + self.example.gradient_calls:
            return
        run, seconds = self._speed
        expected = characters * seconds / run if run else 0.0
        now = self.clock()
        if now > self._deadline or now + expected > self._deadline + OVERRUN * self._time_limit:
            raise TimeLimitReached(self._time_limit)
