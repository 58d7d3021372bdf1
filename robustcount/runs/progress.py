"""Progress of a dataset run: a progress bar in a terminal, and elsewhere (a log, CI) one line every
`interval` seconds, so that long work is never silent. A long run (more than LONG examples to do)
also says, off a terminal, how long it expects to take as soon as its first examples are done."""

from __future__ import annotations

import sys
import time

from tqdm import tqdm

LONG = 100


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"


class Progress:
    """Counts finished examples (or other `unit`s) out of `total` (`done` of them finished before
    this session)."""

    def __init__(self, name: str, total: int, done: int, *, enabled: bool = True, interval: float = 30.0,
                 stream=None, unit: str = "examples"):
        self.stream = stream or sys.stderr
        self.name, self.total, self.done, self.start_done, self.unit = name, total, done, done, unit
        self.interval, self.began = interval, time.monotonic()
        self.last = self.began
        terminal = enabled and getattr(self.stream, "isatty", lambda: False)()
        self.bar = tqdm(total=total, initial=done, desc=name, unit="ex" if unit == "examples" else unit.rstrip("s"),
                        file=self.stream) if terminal else None
        self.lines = enabled and not terminal
        self.announce = total - done > LONG

    def update(self, count: int) -> None:
        self.done += count
        if self.bar is not None:
            self.bar.update(count)
        now = time.monotonic()
        if self.lines and count and (now - self.last >= self.interval or self.announce):
            self.last, self.announce = now, False
            self.stream.write(self._line(now) + "\n")
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
