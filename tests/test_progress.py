"""Long runs are never silent: a progress bar in a terminal, periodic lines elsewhere."""

import io

from robustcount.runs.progress import POINTS_WINDOW, Progress


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_off_a_terminal_progress_prints_a_line_per_interval_with_the_time_left(monkeypatch):
    clock = Clock()
    monkeypatch.setattr("robustcount.runs.progress.time.monotonic", clock)
    stream = io.StringIO()  # not a terminal
    progress = Progress("certify", total=100, done=10, interval=30, stream=stream)
    clock.now = 10.0
    progress.update(5)
    assert stream.getvalue() == ""  # not yet an interval
    clock.now = 60.0
    progress.update(5)  # 10 new examples in 60 s; 80 left: about 8 minutes
    assert stream.getvalue() == "robustcount certify: 20 of 100 examples, 1m00s, about 8m00s left\n"
    clock.now = 70.0
    progress.update(1)
    assert stream.getvalue().count("\n") == 1
    progress.close()


def test_progress_can_be_silenced():
    stream = io.StringIO()
    progress = Progress("evaluate", total=3, done=0, enabled=False, interval=0, stream=stream)
    progress.update(3)
    progress.close()
    assert stream.getvalue() == ""


def test_a_long_run_says_how_long_it_expects_once_its_first_examples_are_done(monkeypatch):
    clock = Clock()
    monkeypatch.setattr("robustcount.runs.progress.time.monotonic", clock)
    stream = io.StringIO()
    progress = Progress("certify", total=1975, done=0, interval=30, stream=stream)
    clock.now = 12.0
    progress.update(1)
    assert stream.getvalue() == "robustcount certify: 1 of 1975 examples, 0m12s, about 6h34m left\n"


def in_flight_line(progress: Progress, stream: io.StringIO, clock: Clock, beats: list[tuple[float, int]]) -> str:
    """The line shown after the beats `(count_seconds, points done)` of one example, a second apart."""
    for seconds, done in beats:
        clock.now += 1.0
        progress.show([{"index": 0, "seconds": seconds, "queries": done, "position": {
            "done": done, "total": 10_000, "unit": "points", "counted": done, "count_seconds": seconds}}])
    return stream.getvalue().splitlines()[-1]


def test_the_rate_of_points_is_over_a_window_neither_the_first_burst_nor_one_slow_batch(monkeypatch):
    """The user's run showed 215490/s after a first batch of cache hits, then 3/s: the rate is
    the growth over the last POINTS_WINDOW seconds from the example's first beat on."""
    clock = Clock()
    monkeypatch.setattr("robustcount.runs.progress.time.monotonic", clock)
    stream = io.StringIO()
    progress = Progress("certify", total=3, done=0, interval=0, stream=stream)
    clock.now = 1.0
    progress.show([{"index": 0, "seconds": 0.001, "queries": 49, "position": {
        "done": 49, "total": 10_000, "unit": "points", "counted": 49, "count_seconds": 0.0002}}])
    assert stream.getvalue().endswith("example 0: 49 of 10000 points\n")  # a burst is no rate
    burst_then_steady = [(0.0002, 49)] + [(t, 49 + 10 * t) for t in range(1, 11)]
    assert in_flight_line(progress, stream, clock, burst_then_steady).endswith(
        "example 0: 149 of 10000 points, 10/s, about 16m25s left")  # 9851 left at 10/s
    # a steady 64 points a second for 50 s, then one batch of 64 that took 20 s: the window's rate
    progress = Progress("certify", total=3, done=0, interval=0, stream=stream)
    steady_then_slow = [(float(t), 64 * t) for t in range(1, 51)] + [(70.0, 64 * 51)]
    start = 70.0 - POINTS_WINDOW
    rate = (64 * 51 - 64 * start) / POINTS_WINDOW  # from the beat at 10 s to the one at 70 s
    line = in_flight_line(progress, stream, clock, steady_then_slow)
    assert line.endswith(f"example 0: 3264 of 10000 points, {rate:.0f}/s, about "
                         f"{int((10_000 - 3264) / rate) // 60}m{int((10_000 - 3264) / rate) % 60:02d}s left")
    assert 20 < rate < 64  # neither the last batch's 3/s nor the steady 64/s alone


def test_the_time_left_for_examples_is_from_the_last_ten_minutes(monkeypatch):
    """50 examples answered in the first 10 s (misclassified, or from the cache), then one a
    minute: the time left is at one a minute, not at the whole run's average."""
    clock = Clock()
    monkeypatch.setattr("robustcount.runs.progress.time.monotonic", clock)
    stream = io.StringIO()
    progress = Progress("attack", total=100, done=0, interval=10_000, stream=stream)
    clock.now = 10.0
    progress.update(50)
    for _ in range(10):
        clock.now += 60.0
        progress.update(1)
    progress.interval = 0
    progress.show([])
    assert stream.getvalue().splitlines()[-1] == "robustcount attack: 60 of 100 examples, 10m10s, about 40m00s left"
