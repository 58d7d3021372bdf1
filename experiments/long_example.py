"""One certify example that needs `--minutes` (default 10): how often progress shows on a terminal
and off one, and what a kill -9 half-way costs once resumed.

Three runs of `robustcount certify` on one text, in subprocesses: (1) uninterrupted, standard
error to a pipe (off a terminal): the gaps between its progress lines; (2) the same under a
pseudo-terminal, killed with SIGKILL at half the reference's time: the gaps between the bar's
refreshes; (3) `--resume` of (2): its wall time, and whether its run file is byte-identical to
(1)'s. The model is a function (`sleeping_model`) positive on every text that sleeps a fixed
time per forward batch, chosen from |Omega_r| so that the example takes about `--minutes`
whatever else the machine runs (the prover's own work, enumeration, cache and checkpoints, is
real).

Run: `PYTHONPATH=. .venv/bin/python experiments/long_example.py [--minutes 10] [--out DIR]`
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from robustcount.models.engine import DEFAULT_BATCH_SIZE
from robustcount.models.function_adapter import FunctionClassifier
from robustcount.spaces.build import SpaceSpec

TEXT = ("a good film with a fine cast, a great story and a clever script, some sharp dialogue and a warm, honest "
        "ending and a lovely score by a gifted young composer, a bright and funny first act and a moving, quiet finale")
RADIUS = 5  # |Omega_5| = 353,118 points (the default synonyms), Omega_1..4 inside it
SLEEP = "ROBUSTCOUNT_LONG_EXAMPLE_SLEEP"


def sleeping_model():
    """Positive on every text; each forward batch sleeps $ROBUSTCOUNT_LONG_EXAMPLE_SLEEP seconds."""
    pause = float(os.environ.get(SLEEP, "0"))

    def classify(batch):
        time.sleep(pause)
        return [[0.3, 0.7] for _ in batch]

    return FunctionClassifier(classify, ["negative", "positive"], name="sleeping")


def command(data: Path, out: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "robustcount", "certify", "--model", "py:experiments.long_example:sleeping_model",
            "--data", str(data), "--radius", str(RADIUS), "--max-points", "100000000", "--time-limit", "0",
            "--output", str(out), *more]


def longest_gap(times: list[float], ended: float) -> float:
    """The longest silence between one output and the next (or the end)."""
    marks = [*times, ended]
    return max(b - a for a, b in zip(marks, marks[1:]))


def off_a_terminal(argv: list[str], environ: dict) -> tuple[float, float, float, int]:
    """Wall time, seconds to the first progress line (start-up, model loading, then one
    interval), longest gap between progress lines and their number, standard error a pipe."""
    began = time.monotonic()
    child = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=environ, text=True)
    times = []
    for line in child.stderr:
        if line.startswith("robustcount certify:"):
            times.append(time.monotonic())
    child.wait()
    ended = time.monotonic()
    return ended - began, times[0] - began, longest_gap(times, ended), len(times)


def on_a_terminal_killed(argv: list[str], environ: dict, after: float) -> tuple[float, int]:
    """Longest gap between the bar's refreshes, standard error a pseudo-terminal, and their
    number, until the run is killed with SIGKILL `after` seconds in."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))  # a terminal of 160 columns
    began = time.monotonic()
    child = subprocess.Popen(argv, stderr=follower, stdout=subprocess.DEVNULL, env=environ, start_new_session=True)
    os.close(follower)
    times = []
    while time.monotonic() - began < after:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                if os.read(leader, 65536):
                    times.append(time.monotonic())
            except OSError:
                break
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    os.close(leader)
    return longest_gap(times, began + after), len(times)  # from the bar's first drawing, once the model is loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=None, help="keep the run files here (default: a temporary folder)")
    args = parser.parse_args()
    points = SpaceSpec().builder()(TEXT).count(RADIUS)  # the smaller radii's points are answered from the cache
    pause = args.minutes * 60 / (points / DEFAULT_BATCH_SIZE)
    environ = {**os.environ, SLEEP: str(pause), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    folder = args.out or Path(tempfile.mkdtemp(prefix="long-example-"))
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "one.csv"
    data.write_text(f'id,text,label\n0,"{TEXT}",positive\n')
    print(f"one example, |Omega_{RADIUS}| = {points} points, {pause * 1000:.1f} ms per batch of "
          f"{DEFAULT_BATCH_SIZE}: about {args.minutes:g} minutes", flush=True)
    reference, killed = folder / "reference.jsonl", folder / "killed.jsonl"
    for path in folder.glob("*.jsonl"):
        path.unlink()
    whole, first, line_gap, lines = off_a_terminal(command(data, reference), environ)
    print(f"uninterrupted: {whole:.0f} s; off a terminal {lines} progress lines, the first after {first:.0f} s, "
          f"then at most {line_gap:.1f} s apart", flush=True)
    bar_gap, refreshes = on_a_terminal_killed(command(data, killed), environ, whole / 2)
    print(f"on a terminal: {refreshes} bar refreshes in {whole / 2:.0f} s, longest gap {bar_gap:.1f} s; "
          f"killed with SIGKILL at {whole / 2:.0f} s", flush=True)
    began = time.monotonic()
    subprocess.run(command(data, killed, "--resume"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=environ, check=True)
    resumed = time.monotonic() - began
    same = killed.read_bytes() == reference.read_bytes()
    print(f"resumed: {resumed:.0f} s more ({resumed / (whole / 2):.2f} x the half lost); run file byte-identical: "
          f"{same}", flush=True)


if __name__ == "__main__":
    main()
