"""Long runs are never silent: a progress bar in a terminal, periodic lines elsewhere."""

import io

from robustcount.runs.progress import Progress


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
