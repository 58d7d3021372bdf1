"""The dataset commands, one module each (see `robustcount.runs.command`): importing this package
imports every module in it, and each module's `Command` subclass registers itself
(`robustcount.runs.registry`), so that the runner, the report and the CLI find it by name.

`read_run` and `summarise_run` are re-exported here: a run file names its command, so reading a
built-in command's run needs that command registered, which importing this package does."""

from robustcount.registry import import_package
from robustcount.runs import read_run, summarise_run
from robustcount.runs.registry import COMMANDS

import_package(__name__)

__all__ = ["dataset_commands", "read_run", "summarise_run"]


def dataset_commands() -> dict:
    """Every registered dataset command by name: the built-in ones and any defined elsewhere."""
    return COMMANDS
