"""How a run of a dataset command goes, declared once (`RunOptions`: the command line's run options
and `--seed`, the Python API's keywords), and the one way such a run starts from them (`launch`),
which the command line and `robustcount.api` share."""

from __future__ import annotations

import os
from dataclasses import field
from datetime import datetime, timezone
from pathlib import Path

from robustcount.atomic import is_staged
from robustcount.data import DataSpec
from robustcount.errors import RobustcountError
from robustcount.options import option, options_dataclass
from robustcount.runs.backends import make_backend
from robustcount.runs.files import Run
from robustcount.runs.runner import RunOutput, execute
from robustcount.runs.spec import RunSpec


@options_dataclass
class RunOptions:
    """Where a run's records go, how its work is spread, what the command line prints, and the
    seed of every random choice (recorded in the run header)."""

    output: Path | None = field(default=None, metadata=option(
        "Run file: a header line, then one JSON line per example, flushed as it comes.", path="file"))
    resume: bool = field(default=False, metadata=option(
        "Continue the run in --output, skipping finished examples.", flag=True))
    overwrite: bool = field(default=False, metadata=option("Replace an existing --output file.", flag=True))
    workers: int = field(default=1, metadata=option(
        "Worker processes on this machine (joblib), each loading the model once.", minimum=1))
    cluster: str | None = field(default=None, metadata=option(
        "Run on Dask: local, local:N (a cluster on this machine) or a scheduler address.", kind=str))
    as_json: bool = field(default=False, metadata=option(
        "Print the summary as one JSON line (attack: after a JSON line per example).", names=("--json",), flag=True))
    seed: int = field(default=0, metadata=option("Seed of every random choice.", kind=int))

    def __post_init__(self):
        """An output given as a string is a path; resuming needs the run file, and excludes replacing it."""
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise RobustcountError(f"seed must be an integer, got {self.seed!r}")
        if self.output is not None:
            object.__setattr__(self, "output", Path(self.output))
        if self.resume and self.output is None:
            raise RobustcountError("--resume needs --output, the run file to continue")
        if self.resume and self.overwrite:
            raise RobustcountError("give --resume or --overwrite, not both")


def default_run_file(command: str) -> Path:
    """Where a run without --output goes, so that an interruption loses nothing: a new file named by
    the command, the time and this process (two runs started in the same second never share one),
    in $ROBUSTCOUNT_RUNS or else ./runs."""
    folder = Path(os.environ.get("ROBUSTCOUNT_RUNS") or "runs")
    stem = f"{command}-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{os.getpid()}"
    path, n = folder / f"{stem}.jsonl", 1
    while path.exists() or is_staged(path):
        n += 1
        path = folder / f"{stem}-{n}.jsonl"
    return path


def launch(spec: RunSpec, data: DataSpec, options: RunOptions, *, announce=None, on_record=None,
           progress: bool = True) -> Run:
    """Run `spec` over the examples `data` names (drawn with the seed of `spec`, which must be
    `options.seed`) as `options` say, into `options.output` (given: `runner.execute`'s `output`,
    `announce`, `on_record` and `progress`), and return the whole run, resumed records included."""
    if spec.seed != options.seed:
        raise RobustcountError(f"the run's seed {spec.seed} is not its options' seed {options.seed}")
    if options.output is None:
        raise RobustcountError("a run needs its output, the run file (default_run_file names a new one)")
    return execute(spec, data.load(options.seed), data.header(),
                   output=RunOutput(options.output, options.resume, options.overwrite),
                   backend=make_backend(options.workers, options.cluster), announce=announce, on_record=on_record,
                   progress=progress)
