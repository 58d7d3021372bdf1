"""Options declared once, on the dataclass fields that hold them.

A field's metadata `option(...)` says how the command line offers it: its help, bounds, choices,
whether it is a flag or repeatable, and its option name when that is not the field's. The CLI
builds every option from these (`robustcount.cli.options`), and each library object takes the same
dataclass, so a default, a bound or a name is written in one place.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

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
) -> dict:
    """Field metadata declaring a command-line option (see the module docstring).

    `names`: option names (default `--field-name`); `flag`: a switch (`invert`: the switch sets the
    field to False, as `--no-pruning` for `prune`; `flag_value`: what the field holds when the
    switch is on); `multiple`: repeatable, collected into a tuple; `kind`: the value type when the
    field's default does not tell it (None)."""
    return {"option": dict(help=help, names=names, minimum=minimum, maximum=maximum, open_minimum=open_minimum,
                           open_maximum=open_maximum, choices=choices, flag=flag, flag_value=flag_value,
                           invert=invert, multiple=multiple, kind=kind)}


def radius_field(default: int | None, help: str, minimum: int = 1, names: tuple[str, ...] = ()):
    """The radius r: a number of substitutions (one name, `radius`, wherever it is an option)."""
    return dataclasses.field(default=default, metadata=option(help, names=names, minimum=minimum, maximum=MAX_RADIUS,
                                                              kind=int))


def variants(chosen_by: str, options_of: Callable[[], dict[str, type]],
             summaries: Callable[[], dict[str, str]] = dict) -> dict:
    """Field metadata for a field holding the options of one of several variants (the attack
    command's recipes), chosen by the field named `chosen_by`: `options_of()` maps each variant's
    name to its options dataclass, whose fields are declared with `option`, and `summaries()` to
    a line that says what it is. The command line offers the variants' names as the choices of
    `chosen_by` and every variant's options (one option for a field several variants declare
    alike), each variant's under a heading of its own in --help, and refuses an option given for
    a variant it does not apply to."""
    return {"variants": dict(chosen_by=chosen_by, options_of=options_of, summaries=summaries)}
