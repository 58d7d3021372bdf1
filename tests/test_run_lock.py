"""One writer per run file, with real concurrent processes: a second writer (fresh, --resume or
--overwrite) is refused in one line naming the holder's process id, two identical fresh runs end
with one run file and one refusal, and no staging file outlives a run, however it ends."""

import json
import os
import signal
import multiprocessing
import sys
import time
from pathlib import Path

import pytest


from robustcount.cli import entry_point, main
from robustcount.runs.files import read_run

GATED_MODEL = '''
import os, time
from pathlib import Path
from robustcount.models import FunctionClassifier

def _score(batch):
    if Path(f".run.jsonl.{os.getpid()}.new").exists():  # staged: this process holds the run file's lock
        Path(f"held-{os.getpid()}").touch()  # wait for the test
        while not Path("go").exists():
            time.sleep(0.05)
    return [[0.3, 0.7] if "film" in str(text) else [0.6, 0.4] for text in batch]

def make():
    return FunctionClassifier(_score, ["negative", "positive"])
'''
RUN = ["evaluate", "--model", "py:gated:make", "--data", "good.csv", "--output", "run.jsonl"]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gated.py").write_text(GATED_MODEL)
    (tmp_path / "good.csv").write_text("text,label\na wonderful film,positive\na dull mess,negative\n")
    return tmp_path


class Writer:
    """`robustcount RUN *options` in a process of its own, forked from this one (so it starts at
    once), through the program's entry point; its standard error goes to a file."""

    def __init__(self, *options: str):
        self.err = Path(f"err-{len(list(Path.cwd().glob('err-*')))}.txt")
        self.process = multiprocessing.get_context("fork").Process(target=self._run, args=([*RUN, *options],))
        self.process.start()
        self.pid = self.process.pid

    def _run(self, argv: list[str]) -> None:
        sys.stdout = open(os.devnull, "w")
        sys.stderr = self.err.open("w")
        sys.argv = ["robustcount", *argv]
        try:
            entry_point()
        except SystemExit as done:
            sys.stderr.flush()
            os._exit(done.code)

    def finish(self) -> tuple[int, str]:
        """The exit status and standard error, once the process ends."""
        self.process.join(timeout=120)
        return self.process.exitcode, self.err.read_text()

    def signal(self, number: int) -> None:
        os.kill(self.pid, number)


def wait_until_held(folder: Path, *runs: Writer) -> Writer:
    """The run that holds the lock, once it is at work inside its first example."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for run in runs:
            if (folder / f"held-{run.pid}").exists():
                return run
        time.sleep(0.05)
    raise AssertionError("no run took the lock: " + " | ".join(run.finish()[1] for run in runs))


def staging_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob(".*.new"))


def test_a_second_writer_is_refused_naming_the_holder(capsys, folder):
    assert main(["evaluate", "--model", "bow-rt", "--data", "good.csv", "--output", "run.jsonl"]) == 0
    old = (folder / "run.jsonl").read_bytes()
    holder = Writer("--overwrite")
    wait_until_held(folder, holder)
    for second in ([], ["--resume"], ["--overwrite"]):
        capsys.readouterr()
        assert main([*RUN, *second]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"being written by another robustcount run (process {holder.pid})" in err, err
    assert (folder / "run.jsonl").read_bytes() == old  # the holder's new run is still staged, the old one intact
    (folder / "go").touch()
    code, err = holder.finish()
    assert code == 0, err
    assert len(read_run(folder / "run.jsonl").records) == 2 and staging_files(folder) == []


def test_augment_refuses_a_run_file_a_run_is_writing_naming_the_holder(capsys, folder):
    holder = Writer()
    wait_until_held(folder, holder)
    capsys.readouterr()
    assert main(["augment", "--data", "good.csv", "--out", "run.jsonl", "--overwrite"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"being written by another robustcount run (process {holder.pid})" in err, err
    assert "name another --out" in err
    (folder / "go").touch()
    code, err = holder.finish()
    assert code == 0, err
    assert len(read_run(folder / "run.jsonl").records) == 2 and staging_files(folder) == []


def test_two_identical_fresh_runs_one_wins_the_other_is_refused(folder):
    runs = [Writer(), Writer()]
    winner = wait_until_held(folder, *runs)
    loser = runs[1 - runs.index(winner)]
    code, err = loser.finish()
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"process {winner.pid}" in err or "exists" in err, err
    (folder / "go").touch()
    code, err = winner.finish()
    assert code == 0, err
    lines = (folder / "run.jsonl").read_text().splitlines()
    assert [json.loads(line)["record"] for line in lines] == ["run", "example", "example"]
    assert staging_files(folder) == []


def test_no_staging_file_outlives_a_terminated_or_a_killed_run(capsys, folder):
    terminated = Writer()
    wait_until_held(folder, terminated)
    assert staging_files(folder)  # the new run file is staged until its first record
    terminated.signal(signal.SIGTERM)
    code, err = terminated.finish()
    assert code == 130 and "interrupted" in err and "run.jsonl" not in err, err
    assert staging_files(folder) == [] and not (folder / "run.jsonl").exists()
    killed = Writer()
    wait_until_held(folder, killed)
    killed.signal(signal.SIGKILL)
    killed.finish()
    assert staging_files(folder)  # nothing runs at kill -9: the next writer removes them
    (folder / "go").touch()
    assert main(RUN) == 0
    assert staging_files(folder) == [] and len(read_run(folder / "run.jsonl").records) == 2
