"""The registry of dataset commands, by name.

Defining a subclass of `runs.command.Command` registers it here; importing the package
`robustcount.commands` (as the CLI does) defines the built-in commands. Nothing in `runs/` imports
a command by name: a run names its command, and whoever runs or reads it has imported the
module that declares it (a worker process gets the command object itself, see `runs.backends`).
"""

from __future__ import annotations

from robustcount.errors import RobustcountError
from robustcount.registry import register as register_named

COMMANDS: dict = {}
"""Each registered dataset command (a `runs.command.Command` object) by its name."""


def register(command) -> None:
    """Make the `Command` subclass `command` a dataset command (its name must be new, unless the
    same class is defined again, as when its module is reloaded)."""
    register_named(COMMANDS, command.name, command(), "dataset command")


def command_named(name: str):
    """The registered dataset command called `name`."""
    if name not in COMMANDS:
        known = f"known: {', '.join(sorted(COMMANDS))}" if COMMANDS else "none is registered"
        raise RobustcountError(f"unknown dataset command {name!r} ({known}; importing robustcount.commands "
                               "registers the built-in ones)")
    return COMMANDS[name]
