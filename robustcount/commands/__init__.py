"""The dataset commands, one module each (see `robustcount.runs.command`): importing this package
imports every module in it, and each module's `Command` subclass registers itself
(`robustcount.runs.registry`), so that the runner, the report and the CLI find it by name."""

from robustcount.registry import import_package
from robustcount.runs.registry import COMMANDS

import_package(__name__)


def dataset_commands() -> dict:
    """Every registered dataset command by name: the built-in ones and any defined elsewhere."""
    return COMMANDS
