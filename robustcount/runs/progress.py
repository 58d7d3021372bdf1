"""Progress of a dataset run: a progress bar in a terminal, and elsewhere (a log, CI) one line every
`interval` seconds, so that long work is never silent. A long run (more than LONG examples to do)
also says, off a terminal, how long it expects to take as soon as its first examples are done.
While examples run, `show` adds what they report (`runs/inflight.py`): points checked of
|Omega_r|, samples drawn or model queries, with the rate and the time left, on the bar every
second and in the off-terminal line every `interval` seconds whatever the examples are doing."""

from __future__ import annotations

import sys
import threading
import time

from tqdm import tqdm

LONG = 100
LINE_INTERVAL = 30.0
"""Seconds between two progress lines off a terminal."""


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
        self.name, self.total, self.done, self.start_done, self.unit = name, total, done, done, unit
        self.interval, self.began = LINE_INTERVAL if interval is None else interval, time.monotonic()
        self.last = self.began
        terminal = enabled and getattr(self.stream, "isatty", lambda: False)()
        self.bar = tqdm(total=total, initial=done, desc=name, unit="ex" if unit == "examples" else unit.rstrip("s"),
                        file=self.stream) if terminal else None
        self.lines = enabled and not terminal
        self.announce = total - done > LONG
        self.in_flight = ""
        self._lock = threading.Lock()

    def update(self, count: int) -> None:
        with self._lock:
            self.done += count
            if count:  # what was in flight may have finished: the next beats say
                self.in_flight = ""
            if self.bar is not None:
                self.bar.update(count)
            now = time.monotonic()
            if self.lines and count and (now - self.last >= self.interval or self.announce):
                self.announce = False
                self._write(now)

    def show(self, beats: list[dict]) -> None:
        """Show what the examples in flight report (`inflight.beats`): on the bar at once, off a
        terminal in a line once `interval` seconds have passed since the last."""
        with self._lock:
            self.in_flight = "; ".join(_in_flight(beat) for beat in sorted(beats, key=lambda b: b["index"])[:3])
            if self.bar is not None:
                self.bar.set_postfix_str(self.in_flight, refresh=True)
            now = time.monotonic()
            if self.lines and now - self.last >= self.interval:
                self._write(now)

    def _write(self, now: float) -> None:
        self.last = now
        line = self._line(now)
        self.stream.write(line + (f"; in flight: {self.in_flight}" if self.in_flight else "") + "\n")
        self.stream.flush()

    def _line(self, now: float) -> str:
        elapsed = now - self.began
        line = f"robustcount {self.name}: {self.done} of {self.total} {self.unit}, {_duration(elapsed)}"
        fresh = self.done - self.start_done
        if fresh and self.done < self.total:
            line += f", about {_duration(elapsed / fresh * (self.total - self.done))} left"
        return line

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _in_flight(beat: dict) -> str:
    """One example in flight: how far its search has got, its rate and time left, or its queries."""
    where = f"example {beat['index']}"
    position = beat.get("position")
    if position is None:
        return f"{where}: {beat['queries']} queries, {_duration(beat['seconds'])}"
    done, total, unit, seconds = position["done"], position["total"], position["unit"], position["count_seconds"]
    text = f"{where}: {done} of {total} {unit}"
    if position["counted"] and seconds > 0:
        rate = position["counted"] / seconds
        text += f", {rate:.0f}/s, about {_duration((total - done) / rate)} left"
    return text
