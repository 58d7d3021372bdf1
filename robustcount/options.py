"""Options declared once, on the dataclass fields that hold them, and checked when built.

A field's metadata `option(...)` says how the command line offers it: its help, bounds, choices,
whether it is a flag or repeatable, and its option name when that is not the field's. A class
declared with `@options_dataclass` is a frozen dataclass that checks those bounds and choices
(`check_fields`) whenever it is built, in Python as from the command line, so that
`CertifyOptions(radius=-4)` is refused in one line. The CLI builds every option from the same
metadata (`robustcount.cli.options`) and only translates what click parsed into the dataclass.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path

from robustcount.errors import RobustcountError

MAX_RADIUS = 10_000
"""The largest radius an option accepts: no space that can be counted has more positions."""


def option(
    help: str,
    *,
    names: tuple[str, ...] = (),
    minimum: float | None = None,
    maximum: float | None = None,
    open_minimum: bool = False,
    open_maximum: bool = False,
    choices: tuple[str, ...] | None = None,
    flag: bool = False,
    flag_value: Callable[[], object] | None = None,
    invert: bool = False,
    multiple: bool = False,
    kind: type | None = None,
    path: str | None = None,
) -> dict:
    """Field metadata declaring a command-line option (see the module docstring).

    `names`: option names (default `--field-name`); `flag`: a switch (`invert`: the switch sets the
    field to False, as `--no-pruning` for `prune`; `flag_value`: what the field holds when the
    switch is on); `multiple`: repeatable, collected into a tuple; `kind`: the value type when the
    field's default does not tell it (None); `path`: the field is a path that names a `"file"` (never a
    directory) or a `"directory"` (never a file)."""
    return {"option": dict(help=help, names=names, minimum=minimum, maximum=maximum, open_minimum=open_minimum,
                           open_maximum=open_maximum, choices=choices, flag=flag, flag_value=flag_value,
                           invert=invert, multiple=multiple, kind=Path if path else kind, path=path)}


def options_dataclass(cls):
    """`cls` as a frozen dataclass whose declared fields are checked (`check_fields`) each time one
    is built, before the class's own `__post_init__` (if any) normalises them."""
    own = cls.__dict__.get("__post_init__")

    def __post_init__(self):
        check_fields(self)
        if own is not None:
            own(self)

    __post_init__.__doc__ = own.__doc__ if own is not None else None
    cls.__post_init__ = __post_init__
    cls.__checked_options__ = True
    return dataclasses.dataclass(frozen=True)(cls)


def is_options_dataclass(cls) -> bool:
    """Whether `cls` was declared with `options_dataclass` (so it checks itself when built)."""
    return cls.__dict__.get("__checked_options__", False)


def check_fields(options) -> None:
    """Refuse, in one line, a declared field of the dataclass `options` whose value breaks its
    declaration: a choice not among its `choices`, a number outside its bounds or of the wrong
    type, a flag that is not True or False. None passes where it is the field's default."""
    for f in dataclasses.fields(options):
        declared = f.metadata.get("option")
        if declared is None:
            continue
        value = getattr(options, f.name)
        if declared["multiple"]:
            if isinstance(value, str) or not isinstance(value, Sequence):
                raise RobustcountError(f"{f.name} must be a list of values, got {value!r}")
            for item in value:
                _check_value(f, declared, item)
        else:
            _check_value(f, declared, value)


def one_of(value, choices: Sequence[str], what: str):
    """`value` when it is one of `choices`; else a one-line error naming `what` and the choices."""
    if value not in choices:
        raise RobustcountError(f"unknown {what} {value!r} (use {', '.join(choices)})")
    return value


def _check_value(f: dataclasses.Field, declared: dict, value) -> None:
    if value is None and f.default is None:
        return
    name = f.name
    if declared["flag"] and declared["flag_value"] is None:
        if not isinstance(value, bool):
            raise RobustcountError(f"{name} must be True or False, got {value!r}")
    elif declared["choices"] is not None:
        one_of(value, declared["choices"], name.replace("_", " "))
    elif declared["minimum"] is not None or declared["maximum"] is not None:
        kind = declared["kind"] or type(f.default)
        number = (int, float) if kind is float else (int,)
        if isinstance(value, bool) or not isinstance(value, number) or not math.isfinite(value):
            raise RobustcountError(f"{name} must be {'a finite number' if kind is float else 'an integer'}, "
                                   f"got {value!r}")
        low, high = declared["minimum"], declared["maximum"]
        if low is not None and (value <= low if declared["open_minimum"] else value < low):
            raise RobustcountError(f"{name} must be {'more than' if declared['open_minimum'] else 'at least'} "
                                   f"{low:g}, got {value!r}")
        if high is not None and (value >= high if declared["open_maximum"] else value > high):
            raise RobustcountError(f"{name} must be {'less than' if declared['open_maximum'] else 'at most'} "
                                   f"{high:g}, got {value!r}")


@options_dataclass
class NoOptions:
    """A command without options of its own."""


def radius_field(default: int | None, help: str, minimum: int = 1, names: tuple[str, ...] = ()):
    """The radius r: a number of substitutions (one name, `radius`, wherever it is an option)."""
    return dataclasses.field(default=default, metadata=option(help, names=names, minimum=minimum, maximum=MAX_RADIUS,
                                                              kind=int))


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


def variants(chosen_by: str, options_of: Callable[[], dict[str, type]],
             summaries: Callable[[], dict[str, str]] = dict, spelled: Callable[[str], str] | None = None) -> dict:
    """Field metadata for a field holding the options of one of several variants (the attack
    command's recipes), chosen by the field named `chosen_by`: `options_of()` maps each variant's
    name to its options dataclass, whose fields are declared with `option`, and `summaries()` to
    a line that says what it is. The command line offers the variants' names as the choices of
    `chosen_by` and every variant's options (one option for a field several variants declare
    alike), each variant's under a heading of its own in --help (variants of the same options and
    summary under one), and refuses an option given for a variant it does not apply to.
    `spelled(variant)` says how the command line chooses a variant where `chosen_by` is no option
    of its own (default: `--chosen-by VARIANT`). The dataclass settles the field when built with
    `settle_variant`."""
    return {"variants": dict(chosen_by=chosen_by, options_of=options_of, summaries=summaries, spelled=spelled)}


def settle_variant(options, name: str, what: str) -> None:
    """Settle the variants field `name` of the frozen dataclass `options`: None becomes the chosen
    variant's defaults and a dict its options built from it; refused in one line when the variant
    chosen is unknown (`what` names it) or the value is not the options of the variant chosen."""
    declared = next(f for f in dataclasses.fields(options) if f.name == name).metadata["variants"]
    chosen, classes = getattr(options, declared["chosen_by"]), declared["options_of"]()
    kind, value = classes[one_of(chosen, tuple(classes), what)], getattr(options, name)
    if value is None or isinstance(value, dict):
        object.__setattr__(options, name, _built(kind, value or {}, f"{what} {chosen}"))
    elif not isinstance(value, kind):
        raise RobustcountError(f"the {what} {chosen} takes a {kind.__name__}, not a {type(value).__name__}")


def _built(kind: type, given: dict, what: str):
    """`kind(**given)`, a wrong name refused in one line that says it is an option of `what`."""
    try:
        return kind(**given)
    except TypeError as err:
        raise RobustcountError(f"bad options for the {what}: {err}") from None
