"""Click options generated from dataclass fields declared with `robustcount.options.option`, and
the dataclass values read back from what click parsed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click


def click_options(cls, prefix: str, only: tuple[str, ...] | None = None, defaults: dict | None = None):
    """A decorator adding one click option per declared field of `cls` (those in `only`, when
    given), each stored under `prefix` + the field's name; `defaults` overrides the fields'
    defaults by name (a command whose data default is another split)."""
    def decorate(command):
        for f in reversed(dataclasses.fields(cls)):
            declared = f.metadata.get("option")
            if declared is not None and (only is None or f.name in only):
                command = _click_option(f, declared, prefix + f.name, (defaults or {}).get(f.name, _default(f)))(command)
        return command
    return decorate


def _default(f: dataclasses.Field):
    return f.default if f.default is not dataclasses.MISSING else f.default_factory()


def from_options(cls, prefix: str, values: dict, **given):
    """An instance of `cls` from the parsed `values` of its declared fields (and `given` fields)."""
    kwargs = dict(given)
    for f in dataclasses.fields(cls):
        declared = f.metadata.get("option")
        key = prefix + f.name
        if declared is None or key not in values:
            continue
        value = values[key]
        if declared["flag"]:
            if declared["invert"]:
                value = not value
            elif declared["flag_value"] is not None:
                value = declared["flag_value"]() if value else f.default
        elif declared["multiple"]:
            value = tuple(value)
        kwargs[f.name] = value
    return cls(**kwargs)


def _click_option(f: dataclasses.Field, declared: dict, dest: str, default):
    names = declared["names"] or ("--" + f.name.replace("_", "-"),)
    if declared["flag"]:
        return click.option(*names, dest, is_flag=True, help=declared["help"])
    kind = declared["kind"] or type(default)
    if declared["choices"] is not None:
        value_type = click.Choice(declared["choices"])
    elif kind is Path:
        value_type = click.Path(path_type=Path)
    elif declared["minimum"] is not None or declared["maximum"] is not None:
        bounds = dict(min=declared["minimum"], max=declared["maximum"], min_open=declared["open_minimum"],
                      max_open=declared["open_maximum"])
        value_type = click.FloatRange(**bounds) if kind is float else click.IntRange(**bounds)
    else:
        value_type = kind
    shown = default is not None and default != ()
    return click.option(*names, dest, type=value_type, default=default, multiple=declared["multiple"],
                        show_default=shown, help=declared["help"])
