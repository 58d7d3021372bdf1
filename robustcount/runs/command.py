"""What a dataset command is, and the registry of them.

A dataset command (`evaluate`, `attack`, `certify`, ...) is one `Command` object, declared in one
module of `robustcount.commands`: its options (a frozen dataclass whose fields carry their
command-line declaration, see `robustcount.options`), the work on each example (`task`), the
summary of a run (`summarise`), its table, the report's sections about it, what the CLI prints
or writes after the run, and what makes a run file read back untrustworthy (`run_problems`).
Defining a subclass registers it:

    class Certify(Command, name="certify", options=CertifyOptions):
        # the class docstring is the command's help; then task, summarise, table, ...

The runner, the report and the CLI find commands by name here; adding a command is adding one
module to `robustcount.commands` (each module there is imported when the commands are first
listed). The option fields several commands share are declared once below.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar

from robustcount.goal import MAX_POINTS
from robustcount.options import option
from robustcount.registry import import_package, named
from robustcount.registry import register as register_named

if TYPE_CHECKING:
    from robustcount.data import Example
    from robustcount.runs.files import Run
    from robustcount.runs.report import Section
    from robustcount.runs.spec import RunSpec, Worker


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """A command without options of its own."""


def max_points_field(help: str = "Refuse (undecided) an Omega_r larger than this."):
    """The most points one exhaustive enumeration checks."""
    return dataclasses.field(default=MAX_POINTS, metadata=option(help, minimum=1))


DEFAULT_TIME_LIMIT = 600.0
"""Ten minutes per example unless told otherwise: a long text can hold more points than a day's work."""


def time_limit_field():
    """Seconds one example may take."""
    return dataclasses.field(default=DEFAULT_TIME_LIMIT, metadata=option(
        "Seconds per example; an example still running then ends undecided, with the reason (0: no limit). "
        "Only examples that reach it depend on the machine's speed.", minimum=0, kind=float))


def budget_field():
    """A cap on the model calls of one example."""
    return dataclasses.field(default=None, metadata=option("Model calls per example.", minimum=1, kind=int))


class Command:
    """One dataset command (see the module docstring). Subclasses implement `task`, `summarise`
    and `table`; the rest has defaults. The class keywords say:

    `name`: the command's name; `options`: the dataclass of the options recorded in the run header;
    `outputs`: the dataclass of where it writes files besides the run file (offered by the CLI,
    never recorded); `space`: whether it builds each input's space; `models`: how many models a
    run compares (the CLI's --model is then repeated that many times). The class docstring is the
    command's help."""

    name: ClassVar[str]
    help: ClassVar[str]
    Options: ClassVar[type]
    Outputs: ClassVar[type]
    needs_space: ClassVar[bool]
    models: ClassVar[int]

    def __init_subclass__(cls, *, name: str, options: type = NoOptions, outputs: type = NoOptions,
                          space: bool = True, models: int = 1, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.name, cls.Options, cls.Outputs, cls.needs_space, cls.models = name, options, outputs, space, models
        cls.help = inspect.cleandoc(cls.__doc__ or "")
        register(cls)

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

    def run_problems(self, run: Run) -> list[str]:
        """What makes `run`, read back from a file, untrustworthy before anything is summarised:
        one line per problem, naming the example. Every reader refuses a run that has any
        (`runs.files.read_run`). None, unless the command says otherwise."""
        return []

    def sections(self, run: Run, summary: dict) -> list[Section]:
        """The report's sections about this command's results (after the summary table)."""
        return []

    def space_for(self, options, space):
        """The space specification a run with `options` uses, from the one asked for (the same,
        unless the command's options name part of the space)."""
        return space

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


def register(command: type[Command]) -> None:
    """Make `command` a dataset command (its name must be new); subclassing Command calls it."""
    register_named(COMMANDS, command.name, command(), "dataset command")


def dataset_commands() -> dict[str, Command]:
    """Every dataset command, by name: those of `robustcount.commands` (imported here, once) and
    any registered elsewhere."""
    import_package("robustcount.commands")
    return COMMANDS


def command_named(name: str) -> Command:
    """The dataset command called `name`."""
    return named(COMMANDS, name, "dataset command", dataset_commands)
