"""Dataset runs: resumable run files, parallel and distributed execution, summaries and reports.

`execute(spec, examples, data, output=RunOutput(path, resume=...), backend=...)` runs a `RunSpec`;
`read_run(path)` reads a run file back; `summarise_run(run)` sums it up. The dataset commands
themselves are `robustcount.commands` (see `runs.command`): importing that package registers them,
and a run names its command, so reading a built-in command's run in Python goes through `robustcount.commands.read_run`
(importing that package registers the commands; the CLI imports it).
"""

from robustcount.runs.files import Run, read_run
from robustcount.runs.runner import RunOutput, execute
from robustcount.runs.spec import RunSpec
from robustcount.runs.summaries import summarise_run

__all__ = ["Run", "RunOutput", "RunSpec", "execute", "read_run", "summarise_run"]
