"""One click command per dataset command, generated from its declaration (`runs.command.Command`):
the model options (repeated `--model` for commands that compare models), the data options, the
space options when the command builds spaces, its own options and outputs, and the run options."""

from __future__ import annotations

from dataclasses import fields

import click
from tqdm import tqdm

from robustcount.cli.common import (
    MODEL,
    data_from,
    data_options,
    dry_run,
    model_from,
    model_options,
    print_plan,
    run_dataset,
    run_from,
    run_options,
    space_from,
    space_options,
)
from robustcount.cli.options import VariantsCommand, click_options, from_options
from robustcount.models.spec import SERVED_OPTIONS, ModelSpec
from robustcount.models.zoo import is_language_model, is_served
from robustcount.runs.command import Command
from robustcount.runs.spec import RunSpec

OPTION, OUTPUT = "option_", "output_"


def dataset_click_command(command: Command) -> click.Command:
    """The click command that runs `command` on a dataset."""
    def callback(**values):
        run = run_from(values)
        spec = RunSpec(command.name, _models(command, values), run.seed,
                       space_from(values) if command.needs_space else None,
                       from_options(command.Options, OPTION, values))
        if dry_run(values):
            print_plan(spec, values)
            return
        outputs = from_options(command.Outputs, OUTPUT, values)
        command.check(spec, outputs)
        log = command.example_log(spec, outputs, run.as_json, _echo)
        try:
            summary = run_dataset(spec, values, on_record=log)
        finally:
            if log is not None:
                log.close()
        lines = command.finish(spec, summary, outputs, data_from(values).spec)
        if not run.as_json:
            for line in lines:
                click.echo("\n" + line)

    decorators = [_model_options(command), data_options]
    if command.needs_space:
        decorators.append(space_options)
    decorators += [click_options(command.Options, OPTION), click_options(command.Outputs, OUTPUT), run_options]
    for decorate in reversed(decorators):
        callback = decorate(callback)
    return click.command(command.name, cls=VariantsCommand, help=command.help)(callback)


def _echo(line: str) -> None:
    """Print one line of a run's output now, with any progress bar cleared around it."""
    with tqdm.external_write_mode():
        click.echo(line)


def _model_options(command: Command):
    """The model options, with a repeated --model for a command that compares several models."""
    if command.models == 1:
        return model_options
    def decorate(function):
        function = model_options(only=SHARED_MODEL_OPTIONS)(function)
        return click.option("--model", "model_specs", multiple=True, required=True,
                            help=f"A model to compare; give exactly {command.models}.")(function)
    return decorate


SHARED_MODEL_OPTIONS = tuple(f.name for f in fields(ModelSpec) if f.name != "spec")
"""The model options a command comparing models takes once for all of them: every one but --model."""


def _models(command: Command, values: dict) -> tuple:
    """The ModelSpecs the parsed options name (exactly `command.models` of them)."""
    if command.models == 1:
        return (model_from(values),)
    if len(values["model_specs"]) != command.models:
        raise click.UsageError(f"{command.name} needs exactly {command.models} --model options")
    names = values["model_specs"]
    return tuple(model_from(_applying(values, name, names), spec=name) for name in names)


def _applying(values: dict, name: str, names: tuple[str, ...]) -> dict:
    """The parsed model options as they apply to the model `name` among the compared `names`: a
    language model's options (prompt, verbaliser, calibration) and a served model's (api,
    requests, cache, limits) at their defaults for a model of another kind when one of `names`
    takes them (with none that does, `ModelSpec` refuses them in one line)."""
    defaults = {}
    if not is_language_model(name) and any(is_language_model(other) for other in names):
        defaults |= NOT_A_LANGUAGE_MODEL
    if not is_served(name) and any(is_served(other) for other in names):
        defaults |= SERVED_OPTIONS
    return {**values, **{MODEL + option: value for option, value in defaults.items()}}


NOT_A_LANGUAGE_MODEL = {"prompt": None, "verbalizer": None, "calibration": "auto"}
"""The language-model options of a command comparing models apply to its language models only."""
