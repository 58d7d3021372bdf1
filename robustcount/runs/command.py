"""What a dataset command is, and the registry of them.

A dataset command (`evaluate`, `attack`, `certify`, ...) is one `Command` object, declared in one
module of `robustcount.commands`: its options (a frozen dataclass whose fields carry their
command-line declaration, see `robustcount.options`), the work on each example (`task`), the
summary of a run (`summarise`), its table, the report's sections about it and what the CLI prints
or writes after the run. The runner, the report and the CLI find it by name here; adding a command
is adding one module to `robustcount.commands` (it registers itself when imported).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar

from robustcount.errors import RobustcountError

if TYPE_CHECKING:
    from robustcount.data import Example
    from robustcount.runs.files import Run
    from robustcount.runs.report import Section
    from robustcount.runs.spec import RunSpec, Worker


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """A command without options of its own."""


class Command:
    """One dataset command (see the module docstring). Subclasses set the class attributes and
    implement `task`, `summarise` and `table`; the rest has defaults."""

    name: ClassVar[str]
    help: ClassVar[str]
    Options: ClassVar[type] = NoOptions
    """The options recorded in the run header (a frozen dataclass)."""
    Outputs: ClassVar[type] = NoOptions
    """Where the command writes files besides the run file: offered by the CLI, never recorded."""
    needs_space: ClassVar[bool] = True
    models: ClassVar[int] = 1
    """How many models a run compares (the CLI's --model is then repeated that many times)."""

    def task(self, worker: Worker, spec: RunSpec, examples: Sequence[Example]) -> Iterator[dict]:
        """One JSON-able record per example, yielded in order as each is done. Records hold
        results only: seconds are the runner's to log apart, so that the same inputs and seed
        give the same records wherever they run."""
        raise NotImplementedError

    def summarise(self, run: Run) -> dict:
        """The command's part of the run summary, from the run's header and records alone."""
        raise NotImplementedError

    def table(self, summary: dict) -> tuple[list[str], list[list]]:
        """The headers and rows of the table that sums up `summary`."""
        raise NotImplementedError

    def sections(self, run: Run, summary: dict) -> list[Section]:
        """The report's sections about this command's results (after the summary table)."""
        return []

    def header_options(self, options) -> dict:
        """The options as the run header records them."""
        return dataclasses.asdict(options)

    def examples_per_chunk(self, spec: RunSpec) -> int:
        """Examples per unit of work; it depends on the spec alone, so every run of the same spec
        forms the same chunks. One, for commands whose examples are searches of their own."""
        return 1

    def check(self, spec: RunSpec, outputs) -> None:
        """Refuse, before any work, what cannot be done (an output that cannot be written, ...)."""

    def finish(self, spec: RunSpec, summary: dict, outputs, data_spec: str) -> list[str]:
        """Write the command's files after a run; the lines to print under its table."""
        return []


COMMANDS: dict[str, Command] = {}


def register(command: type[Command]) -> type[Command]:
    """Class decorator: make `command` a dataset command (its name must be new)."""
    if command.name in COMMANDS and type(COMMANDS[command.name]) is not command:
        raise RobustcountError(f"two dataset commands are named {command.name!r}")
    COMMANDS[command.name] = command()
    return command


def dataset_commands() -> dict[str, Command]:
    """Every dataset command, by name: those of `robustcount.commands` (imported here, once) and
    any registered elsewhere."""
    package = importlib.import_module("robustcount.commands")
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    return COMMANDS


def command_named(name: str) -> Command:
    """The dataset command called `name`."""
    commands = COMMANDS if name in COMMANDS else dataset_commands()
    if name not in commands:
        raise RobustcountError(f"unknown dataset command {name!r} (known: {', '.join(sorted(commands))})")
    return commands[name]
