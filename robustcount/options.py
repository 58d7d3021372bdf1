"""Options declared once, on the dataclass fields that hold them.

A field's metadata `option(...)` says how the command line offers it: its help, bounds, choices,
whether it is a flag or repeatable, and its option name when that is not the field's. The CLI
builds every option from these (`robustcount.cli.options`), and each library object takes the same
dataclass, so a default, a bound or a name is written in one place.
"""

from __future__ import annotations

from collections.abc import Callable


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
