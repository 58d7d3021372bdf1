"""What a dataset command is, and the registry of them.

A dataset command (`evaluate`, `attack`, `certify`, ...) is one `Command` object, declared in one
module of `robustcount.commands`: its options (a frozen dataclass whose fields carry their
command-line declaration, see `robustcount.options`), the work on each example (`task`), the
summary of a run (`summarise`), its table, the report's sections about it, what the CLI prints
or writes after the run, and what makes a run file read back untrustworthy (`run_problems`).
Defining a subclass registers it:

    class Certify(Command, name="certify", options=CertifyOptions):
        # the class docstring is the command's help; then task, summarise, table, ...

The runner, the report and the CLI find commands by name in `runs.registry`; adding a command is
adding one module to `robustcount.commands` (importing that package imports every module in it).
The option fields several commands share are declared once, below the commands: the budget and
time limit in `robustcount.options`, the most points of an enumeration in `robustcount.goal`.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar

from robustcount.errors import RobustcountError
from robustcount.options import NoOptions, is_options_dataclass
from robustcount.proofs.certify_record import WINDOW_FIELD
from robustcount.runs.registry import register
from robustcount.spaces.build import words_beyond
from robustcount.text import perturbed_part, tokenize
from robustcount.status import Undecided

if TYPE_CHECKING:
    from robustcount.data import Example
    from robustcount.runs.files import Run
    from robustcount.runs.report import Section
    from robustcount.runs.spec import RunSpec, Worker




TIMINGS = "timings"
"""The record key whose value (times, any JSON) the runner logs apart, never in the run file."""
TIMED = frozenset({"seconds", "model_seconds"})
"""The names under which robustcount's results carry times: `goal.Outcome.seconds` and the
engine's `QueryStats.model_seconds`."""


def timings_apart(record: dict) -> dict:
    """`record`, built from robustcount's results, with every `TIMED` entry at any depth moved
    under its `TIMINGS` key, in the record's shape (a list keeps one entry per item, so that a
    proof's time stays beside its radius). For the commands whose records hold such results; a
    command's own fields are its own, whatever their names."""
    found = _times(record)
    return {**_without_times(record), **({TIMINGS: found} if found is not None else {})}


def _times(value):
    if isinstance(value, dict):
        found = {k: v for k, v in value.items() if k in TIMED}
        found.update((k, t) for k, v in value.items() if k not in TIMED and (t := _times(v)) is not None)
        return found or None
    if isinstance(value, list):
        found = [_times(v) for v in value]
        return found if any(t is not None for t in found) else None
    return None


def _without_times(value):
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k not in TIMED}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def window_field(space) -> dict:
    """A record's `window` field (`proofs.certify_record.WINDOW_FIELD`) when words of the input of `space`
    lie beyond the model's window: the window its definition records, which summaries and
    reports count; else no field, as before windows."""
    return {} if space.window is None else {WINDOW_FIELD: space.window}


def input_window_field(engine, item) -> dict:
    """`window_field` for a command without spaces (`evaluate`): the words of `item` beyond the
    window of the model behind `engine`, when there are any."""
    tokens = tokenize(perturbed_part(item))
    beyond = words_beyond(engine.window, item, tokens)
    return {WINDOW_FIELD: {"size": engine.window.size, "words": len(tokens.words), "beyond": beyond}} if beyond else {}


@dataclasses.dataclass(frozen=True)
class Planned:
    """What a command's work on one example would spend, before any of it runs (`Command.plan`):
    `calls`, the most model calls of each model (None: the command cannot say), `basis` what the
    figure counts, in one line; `radius` and `size`, the r and |Omega_r| it is about (None for a
    command without spaces); `note`, what the run would stop at before its time limit (a space
    above --max-points), or None."""

    calls: int | None
    basis: str
    radius: int | None = None
    size: int | None = None
    note: str | None = None


def capped(planned: Planned, budget: int | None) -> Planned:
    """`planned` under a `budget` of model calls per example (None: no budget): a budget below
    its calls, or in place of calls it cannot say, caps them."""
    if budget is None or planned.calls is not None and planned.calls <= budget:
        return planned
    basis = f"{planned.basis}; capped by --budget {budget}" if planned.calls is not None else \
        "the --budget of model calls per example"
    return dataclasses.replace(planned, calls=budget, basis=basis)


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
        for declared in (options, outputs):
            if not is_options_dataclass(declared):
                raise RobustcountError(f"the options of dataset command {name!r}, {declared.__name__}, must be "
                                       "declared with @robustcount.options.options_dataclass (so they check themselves)")
        cls.name, cls.Options, cls.Outputs, cls.needs_space, cls.models = name, options, outputs, space, models
        cls.help = inspect.cleandoc(cls.__doc__ or "")
        register(cls)

    def task(self, worker: Worker, spec: RunSpec, examples: Sequence[Example]) -> Iterator[dict]:
        """One JSON-able record per example, yielded in order as each is done. Records hold
        results only, so that the same inputs and seed give the same records wherever they run:
        times go under the record's `timings` key (`TIMINGS`, see `timings_apart`), which the
        runner logs in the timings file and leaves out of the run file. Nothing else is removed."""
        raise NotImplementedError

    def summarise(self, run: Run) -> dict:
        """The command's part of the run summary, from the run alone: its typed options
        (`run.options`), header and records."""
        raise NotImplementedError

    def table(self, summary: dict) -> tuple[list[str], list[list]]:
        """The headers and rows of the table that sums up `summary`."""
        raise NotImplementedError

    def undecided(self, record: dict) -> Undecided | None:
        """The one status every search has (`robustcount.status`): None when the search on this
        record's example reached its answer (decided: certified or adversarial, an adversary or
        none, an estimate...), else the limit that stopped it short of one (undecided: the budget,
        the time limit, max points) and the reason in words. Summaries count the undecided,
        reports list them, and a resume that raises a limit runs again the examples it stopped.
        None, for a command whose examples are no searches."""
        return None

    def undecided_note(self, summary: dict) -> str:
        """How many of a run's examples were decided and how many not, and what its figures cover,
        for a run with undecided examples (`summaries.decided_note`): the decided only, unless the
        command says otherwise."""
        return (f"{summary['decided']} examples decided, {summary['undecided']} undecided (a limit, never a result; "
                f"listed in the report): every figure covers the {summary['decided']} decided only")

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

    def plan(self, spec: RunSpec, space, example: Example) -> Planned:
        """What `task` would spend on `example` (its `space`, None for a command without spaces),
        computed without any model call (`--dry-run`, `runs.plan`): the model calls it makes at
        most. By default the command cannot say, unless a budget caps it."""
        return capped(Planned(None, f"{self.name} declares no plan of its model calls"),
                      getattr(spec.options, "budget", None))

    def header_options(self, options) -> dict:
        """The options as the run header records them."""
        return dataclasses.asdict(options)

    def recorded_options(self, recorded: dict):
        """The Options dataclass of a run header's `options` (the inverse of `header_options`),
        checked as any Options are when built."""
        return self.Options(**recorded)

    def examples_per_chunk(self, spec: RunSpec) -> int:
        """Examples per unit of work; it depends on the spec alone, so every run of the same spec
        forms the same chunks. One, for commands whose examples are searches of their own."""
        return 1

    def check(self, spec: RunSpec, outputs) -> None:
        """Refuse, before any work, what cannot be done (an output that cannot be written, ...)."""

    def example_log(self, spec: RunSpec, outputs, as_json: bool, echo):
        """What follows a run's examples as they finish, for the command line: None, or a callable
        `(record, resumed)` that the runner calls with every record (`runner.execute`'s
        `on_record`), which may `echo(line)` (print, as JSON with `as_json`) and write the files of
        `outputs`, and whose `close()` is called when the run ends. None, unless the command says."""
        return None

    def finish(self, spec: RunSpec, summary: dict, outputs, data_spec: str) -> list[str]:
        """Write the command's files after a run; the lines to print under its table."""
        return []

