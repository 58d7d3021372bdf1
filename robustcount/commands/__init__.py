"""The dataset commands, one module each (see `robustcount.runs.command`): importing this package
imports every module in it, and each module's `Command` subclass registers itself
(`robustcount.runs.registry`), so that the runner, the report and the CLI find it by name."""

import importlib
import pkgutil

from robustcount.runs.registry import COMMANDS

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")


def dataset_commands() -> dict:
    """Every registered dataset command by name: the built-in ones and any defined elsewhere."""
    return COMMANDS
