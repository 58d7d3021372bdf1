"""Click options generated from dataclass fields declared with `robustcount.options.option`, and
the dataclass values read back from what click parsed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from robustcount.errors import RobustcountError


def click_options(cls, prefix: str, only: tuple[str, ...] | None = None, defaults: dict | None = None):
    """A decorator adding one click option per declared field of `cls` (those in `only`, when
    given), each stored under `prefix` + the field's name; a field declared with
    `options.variants` adds its variants' options (`_variant_options`); `defaults` overrides the
    fields' defaults by name (a command whose data default is another split)."""
    choices = {f.metadata["variants"]["chosen_by"]: tuple(f.metadata["variants"]["options_of"]())
               for f in dataclasses.fields(cls) if "variants" in f.metadata}

    def decorate(command):
        for f in reversed(dataclasses.fields(cls)):
            declared = f.metadata.get("option")
            if "variants" in f.metadata and (only is None or f.name in only):
                command = _variant_options(cls, f, prefix)(command)
            elif declared is not None and (only is None or f.name in only):
                if f.name in choices:
                    declared = {**declared, "choices": choices[f.name]}
                given = {"default": defaults[f.name]} if defaults and f.name in defaults else {}
                command = _click_option(f, declared, prefix + f.name, **given)(command)
        return command
    return decorate


def from_options(cls, prefix: str, values: dict, **given):
    """An instance of `cls` from the parsed `values` of its declared fields (and `given` fields);
    a variants field holds the options of the variant chosen, from the values given for it."""
    kwargs = dict(given)
    for f in dataclasses.fields(cls):
        declared = f.metadata.get("option")
        if declared is not None and prefix + f.name in values:
            kwargs[f.name] = _value(f, declared, values[prefix + f.name])
    for f in dataclasses.fields(cls):
        if "variants" in f.metadata and any(key.startswith(_variant_prefix(prefix, f)) for key in values):
            kwargs[f.name] = _chosen_variant(cls, f, prefix, values, kwargs)
    return cls(**kwargs)


def _value(f: dataclasses.Field, declared: dict, value):
    """A field's value from what click parsed for its option."""
    if declared["flag"]:
        if declared["invert"]:
            return not value
        if declared["flag_value"] is not None:
            return declared["flag_value"]() if value else f.default
        return value
    return tuple(value) if declared["multiple"] else value


def _variant_prefix(prefix: str, f: dataclasses.Field) -> str:
    return f"{prefix}{f.name}__"


def _variant_fields(f: dataclasses.Field) -> dict[str, dict[str, dataclasses.Field]]:
    """The declared fields of each variant of the variants field `f`, by variant name."""
    return {name: {v.name: v for v in dataclasses.fields(options) if "option" in v.metadata}
            for name, options in f.metadata["variants"]["options_of"]().items()}


def _given(declared: dict, value) -> bool:
    """Whether the command line gave an option (its click default means it did not)."""
    return bool(value) if declared["flag"] or declared["multiple"] else value is not None


def _chosen_variant(cls, f: dataclasses.Field, prefix: str, values: dict, kwargs: dict):
    """The chosen variant's options, from the options given for it; an option given that only
    other variants declare is a usage error."""
    chosen_by = f.metadata["variants"]["chosen_by"]
    chosen = kwargs.get(chosen_by, next(c.default for c in dataclasses.fields(cls) if c.name == chosen_by))
    fields_of = _variant_fields(f)
    own, given = fields_of[chosen], {}
    for key, value in values.items():
        if not key.startswith(_variant_prefix(prefix, f)):
            continue
        name = key.removeprefix(_variant_prefix(prefix, f))
        declaring = [variant for variant, declared in fields_of.items() if name in declared]
        declared = fields_of[declaring[0]][name].metadata["option"]
        if not _given(declared, value):
            continue
        if name not in own:
            option_name = (declared["names"] or ("--" + name.replace("_", "-"),))[0]
            raise click.UsageError(f"{option_name} applies to {_spelled(cls, f, declaring)}, "
                                   f"not {_spelled(cls, f, [chosen]).removeprefix(_chooser(cls, f))}")
        given[name] = _value(own[name], own[name].metadata["option"], value)
    return f.metadata["variants"]["options_of"]()[chosen](**given)


def _option_names(cls, name: str) -> tuple[str, ...]:
    declared = next(f for f in dataclasses.fields(cls) if f.name == name).metadata["option"]
    return declared["names"] or ("--" + name.replace("_", "-"),)


def _chooser(cls, f: dataclasses.Field) -> str:
    """How the command line names the chooser of the variants field `f` ("--method "), or nothing
    where the variants say how each is chosen (`spelled`)."""
    if f.metadata["variants"]["spelled"] is not None:
        return ""
    return _option_names(cls, f.metadata["variants"]["chosen_by"])[0] + " "


def _spelled(cls, f: dataclasses.Field, chosen: list[str]) -> str:
    """How the command line chooses any of the variants `chosen` of field `f` ("--method pdp or bae")."""
    spelled = f.metadata["variants"]["spelled"]
    if spelled is None:
        return _chooser(cls, f) + " or ".join(chosen)
    return " or ".join(dict.fromkeys(spelled(variant) for variant in chosen))


class VariantOption(click.Option):
    """An option of one or more variants: `variants` maps each variant that declares it to the
    place of the option among that variant's and the help it gives there; `headings` maps each
    variant to how the command line chooses variants (a function of their names, for the heading
    of their options in --help) and the line that says what the variant is."""

    def __init__(self, *args, variants: dict[str, tuple[int, str]], headings: dict[str, tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.variants, self.headings = variants, headings


class VariantsCommand(click.Command):
    """A click command whose --help lists each variant's options under a heading of its own
    (`With --method pdp`, then what the variant is), after the options every variant shares."""

    def format_options(self, ctx, formatter):
        shared, by_variant, headings = [], {}, {}
        for param in self.get_params(ctx):
            if isinstance(param, VariantOption):
                headings.update(param.headings)
                for variant, (place, help) in param.variants.items():
                    param.help = help
                    by_variant.setdefault(variant, []).append((place, param.get_help_record(ctx)))
            elif (record := param.get_help_record(ctx)) is not None:
                shared.append(record)
        with formatter.section("Options"):
            formatter.write_dl(shared)
        sections: dict[tuple, list[str]] = {}  # variants of the same options and summary share one
        for variant, (_, summary) in headings.items():
            if variant in by_variant:
                records = tuple(record for _, record in sorted(by_variant[variant], key=lambda r: r[0]))
                sections.setdefault((summary, records), []).append(variant)
        for (summary, records), variants in sections.items():
            with formatter.section(f"With {headings[variants[0]][0](variants)}"):
                if summary:
                    formatter.write_text(summary)
                formatter.write_dl(list(records))


def _variant_options(cls, f: dataclasses.Field, prefix: str):
    """The options of every variant of the variants field `f` of `cls`: one per field name
    (variants that share one must declare it alike, but for its help), with no click default (an
    option not given takes the chosen variant's own default, shown in each variant's help)."""
    summaries = f.metadata["variants"]["summaries"]()
    fields_of = _variant_fields(f)
    headings = {variant: (lambda chosen: _spelled(cls, f, chosen), summaries.get(variant, "")) for variant in fields_of}

    def decorate(command):
        for name in reversed(list(dict.fromkeys(name for declared in fields_of.values() for name in declared))):
            declaring = {variant: declared[name] for variant, declared in fields_of.items() if name in declared}
            first = next(iter(declaring.values()))
            declared = first.metadata["option"]
            if any({**v.metadata["option"], "help": None} != {**declared, "help": None} for v in declaring.values()):
                raise RobustcountError(f"the variants of {f.name} declare the option {name!r} differently")
            helps = {variant: (list(fields_of[variant]).index(name), v.metadata["option"]["help"] + (
                f"  [default: {_default(v)}]" if _default(v) not in (None, ()) and not declared["flag"] else ""))
                for variant, v in declaring.items()}
            command = _click_option(first, declared, _variant_prefix(prefix, f) + name, cls=VariantOption,
                                    variants=helps, headings=headings, default=False if declared["flag"] else None,
                                    show_default=False)(command)
        return command
    return decorate


def _default(f: dataclasses.Field):
    return f.default if f.default is not dataclasses.MISSING else f.default_factory()


def _click_option(f: dataclasses.Field, declared: dict, dest: str, **settings):
    """The click option of field `f`; `settings` override what the declaration gives."""
    names = declared["names"] or ("--" + f.name.replace("_", "-"),)
    if declared["flag"]:
        return click.option(*names, dest, is_flag=True, help=declared["help"],
                            **{k: v for k, v in settings.items() if k not in ("default", "show_default")})
    default = _default(f)
    kind = declared["kind"] or type(default)
    if declared["choices"] is not None:
        value_type = click.Choice(declared["choices"])
    elif kind is Path:
        value_type = click.Path(file_okay=declared["path"] != "directory", dir_okay=declared["path"] != "file",
                                path_type=Path)
    elif declared["minimum"] is not None or declared["maximum"] is not None:
        bounds = dict(min=declared["minimum"], max=declared["maximum"], min_open=declared["open_minimum"],
                      max_open=declared["open_maximum"])
        value_type = click.FloatRange(**bounds) if kind is float else click.IntRange(**bounds)
    else:
        value_type = kind
    shown = default is not None and default != ()
    return click.option(*names, dest, **{**dict(type=value_type, default=default, multiple=declared["multiple"],
                                                show_default=shown, help=declared["help"]), **settings})
