"""Dataset runs: resumable run files, parallel and distributed execution, summaries and reports.

`execute(spec, examples, data, output=..., resume=..., backend=...)` runs a `RunSpec`;
`read_run(path)` reads a run file back; `summarise_run(run)` sums it up.
"""

from robustcount.runs.files import Run, read_run
from robustcount.runs.runner import execute
from robustcount.runs.spec import ModelOptions, RunSpec, SpaceOptions
from robustcount.runs.summaries import summarise_run

__all__ = ["ModelOptions", "Run", "RunSpec", "SpaceOptions", "execute", "read_run", "summarise_run"]
