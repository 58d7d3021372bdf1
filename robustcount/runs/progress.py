"""Progress of a dataset run: a progress bar in a terminal, and elsewhere (a log, CI) one line every
`interval` seconds, so that long work is never silent. A long run (more than LONG examples to do)
also says, off a terminal, how long it expects to take as soon as its first examples are done.
While examples run, `show` adds what they report (`runs/inflight.py`): points checked of
|Omega_r|, samples drawn or model queries, with the rate and the time left, on the bar every
second and in the off-terminal line every `interval` seconds whatever the examples are doing.
Every rate shown, and the time left from it, is the rate over a sliding window (`WindowRate`), so
that neither a first burst (points answered from the cache) nor one slow batch dominates it."""

from __future__ import annotations

import sys
import threading
import time
from collections import deque

from tqdm import tqdm

from robustcount.models.llm.ledger import ledger_sum

LONG = 100
LINE_INTERVAL = 30.0
"""Seconds between two progress lines off a terminal."""
POINTS_WINDOW = 60.0
"""Seconds of an example's search over which its rate (points, samples) is measured."""
EXAMPLES_WINDOW = 600.0
"""Seconds over which the run's rate of examples is measured."""
LEAST_SPAN = 1.0
"""The fewest seconds a rate is measured over before it is shown."""


class WindowRate:
    """The rate of a count that grows with time, over the last `window` seconds: samples `(t,
    count)` are added in time order, and the rate is the growth from the latest sample at or
    before `t - window` (or the first) to the last, once that span is `least` seconds long.
    A burst before the span and a slow stretch within it weigh by their share of the window."""

    def __init__(self, window: float, least: float = LEAST_SPAN):
        self.window, self.least = window, least
        self.samples: deque[tuple[float, int]] = deque()

    def add(self, t: float, count: int) -> None:
        """Add the count at time `t` (one earlier than the last sample, or lower, starts afresh)."""
        if self.samples and (t < self.samples[-1][0] or count < self.samples[-1][1]):
            self.samples.clear()
        if self.samples and t == self.samples[-1][0]:
            self.samples.pop()  # the same moment seen again (a beat read twice): its latest count
        self.samples.append((t, count))
        while len(self.samples) > 2 and self.samples[1][0] <= t - self.window:
            self.samples.popleft()

    def rate(self) -> float | None:
        """Units per second over the window, or None (too short a span, or no growth)."""
        if not self.samples:
            return None
        (t0, c0), (t1, c1) = self.samples[0], self.samples[-1]
        return (c1 - c0) / (t1 - t0) if t1 > t0 and t1 - t0 >= self.least and c1 > c0 else None


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"


class Progress:
    """Counts finished examples (or other `unit`s) out of `total` (`done` of them finished before
    this session)."""

    def __init__(self, name: str, total: int, done: int, *, enabled: bool = True, interval: float | None = None,
                 stream=None, unit: str = "examples"):
        self.stream = stream or sys.stderr
        self.name, self.total, self.done, self.unit = name, total, done, unit
        self.interval, self.began = LINE_INTERVAL if interval is None else interval, time.monotonic()
        self.last = self.began
        terminal = enabled and getattr(self.stream, "isatty", lambda: False)()
        self.bar = tqdm(total=total, initial=done, desc=name, unit="ex" if unit == "examples" else unit.rstrip("s"),
                        file=self.stream) if terminal else None
        self.lines = enabled and not terminal
        self.announce = total - done > LONG
        self.in_flight = ""
        self.examples_rate = WindowRate(EXAMPLES_WINDOW, least=0.0)
        self.examples_rate.add(self.began, done)
        self.points_rates: dict[int, WindowRate] = {}
        self.ledger: dict | None = None
        """A served model's ledger over the chunks finished in this session (`count_ledger`)."""
        self._lock = threading.Lock()

    def count_ledger(self, chunk: dict | None) -> None:
        """Add a finished chunk's served-model ledger (`models/llm/ledger.py`; None: it has none)."""
        if chunk is not None:
            with self._lock:
                self.ledger = ledger_sum([chunk] + ([self.ledger] if self.ledger else []))

    def update(self, count: int) -> None:
        with self._lock:
            self.done += count
            now = time.monotonic()
            self.examples_rate.add(now, self.done)
            if count:  # what was in flight may have finished: the next beats say
                self.in_flight = ""
            if self.bar is not None:
                self.bar.update(count)
            if self.lines and count and (now - self.last >= self.interval or self.announce):
                self.announce = False
                self._write(now)

    def show(self, beats: list[dict]) -> None:
        """Show what the examples in flight report (`inflight.beats`): on the bar at once, off a
        terminal in a line once `interval` seconds have passed since the last."""
        with self._lock:
            self._measure(beats)
            shown = sorted(beats, key=lambda b: b["index"])[:3]
            self.in_flight = "; ".join(_in_flight(beat, self.points_rates.get(beat["index"])) for beat in shown)
            if self.bar is not None:
                self.bar.set_postfix_str(self.in_flight, refresh=True)
            now = time.monotonic()
            if self.lines and now - self.last >= self.interval:
                self._write(now)

    def _measure(self, beats: list[dict]) -> None:
        """Add each beat's position to its example's window, from its first beat on (so that what
        its first batch answered from the cache is no rate; a new count of the same example starts
        a new window); forget the examples no longer in flight."""
        for beat in beats:
            position = beat.get("position")
            if position is None:
                continue
            rate = self.points_rates.setdefault(beat["index"], WindowRate(POINTS_WINDOW))
            rate.add(position["count_seconds"], position["counted"])
        flying = {beat["index"] for beat in beats}
        for index in [i for i in self.points_rates if i not in flying]:
            del self.points_rates[index]

    def _write(self, now: float) -> None:
        self.last = now
        line = self._line(now)
        self.stream.write(line + (f"; in flight: {self.in_flight}" if self.in_flight else "") + "\n")
        self.stream.flush()

    def _line(self, now: float) -> str:
        self.examples_rate.add(now, self.done)  # a stretch with no example finished slows the rate
        elapsed = now - self.began
        line = f"robustcount {self.name}: {self.done} of {self.total} {self.unit}, {_duration(elapsed)}"
        rate = self.examples_rate.rate()
        if rate and self.done < self.total:
            line += f", about {_duration((self.total - self.done) / rate)} left"
        if self.ledger:
            line += (f"; served model: {self.ledger['requests']} requests, {self.ledger['cache_hits']} from the cache, "
                     f"cost {self.ledger['cost']:.4f}")
        return line

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _in_flight(beat: dict, rate: WindowRate | None) -> str:
    """One example in flight: how far its search has got, its rate over the window and the time
    left at that rate, or its queries."""
    where = f"example {beat['index']}"
    position = beat.get("position")
    if position is None:
        return f"{where}: {beat['queries']} queries, {_duration(beat['seconds'])}"
    done, total, unit = position["done"], position["total"], position["unit"]
    text = f"{where}: {done} of {total} {unit}"
    per_second = rate.rate() if rate is not None else None
    if per_second:
        text += f", {per_second:.0f}/s, about {_duration((total - done) / per_second)} left"
    return text
