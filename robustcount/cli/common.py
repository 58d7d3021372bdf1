"""The options and helpers the commands share: model, data and space options (generated from their
declarations: `ModelSpec`, `DataSpec`, `SpaceSpec`), run options, and running a dataset command."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import fields, replace
from pathlib import Path

import click

from robustcount.cli.options import click_options, from_options
from robustcount.data import DataSpec
from robustcount.errors import RobustcountError, RobustcountInterrupted
from robustcount.models.spec import ModelSpec
from robustcount.runs.launch import RunOptions, default_run_file, launch
from robustcount.runs.plan import PlanOptions, plan_rows, plan_run, total_line
from robustcount.runs.runner import check_gold_labels
from robustcount.runs.space_note import space_line
from robustcount.runs.summaries import decided_note, served_line, summarise_run, summary_table, window_line
from robustcount.runs.tables import format_table
from robustcount.spaces.build import Filters, SpaceSpec

MODEL, DATA, SPACE, FILTER, PLAN, RUN = "model_", "data_", "space_", "filter_", "plan_", ""
"""Prefixes under which the generated model, data, space, filter, plan and run options are parsed
(the run options under their own names: `harden` and `augment` read --seed as `seed`)."""


def model_options(command=None, *, only: tuple[str, ...] | None = None, defaults: dict | None = None):
    """The model options (`ModelSpec`'s fields, or those in `only`; `defaults` overrides defaults by name)."""
    decorate = click_options(ModelSpec, MODEL, only, defaults)
    return decorate if command is None else decorate(command)


def model_from(options: dict, **given) -> ModelSpec:
    """The ModelSpec of the model options."""
    return from_options(ModelSpec, MODEL, options, **given)


def space_options(command):
    """--source and the space filters (`SpaceSpec` and `Filters`); every command's default source
    is the same."""
    return click_options(SpaceSpec, SPACE)(click_options(Filters, FILTER)(command))


def space_from(options: dict) -> SpaceSpec:
    """The SpaceSpec of the space options."""
    return from_options(SpaceSpec, SPACE, options, filters=from_options(Filters, FILTER, options))


def data_options(command=None, *, default_data: str = "demo:test"):
    """The data options (`DataSpec`'s fields; --data defaults to `default_data`) and --seed
    (`RunOptions.seed`)."""
    if command is None:
        return lambda command: data_options(command, default_data=default_data)
    command = click_options(RunOptions, RUN, only=("seed",))(command)
    return click_options(DataSpec, DATA, defaults={"spec": default_data})(command)


def data_from(options: dict) -> DataSpec:
    """The DataSpec of the data options."""
    return from_options(DataSpec, DATA, options)


def utf8_text(data: bytes, where: str) -> str:
    """`data` decoded as UTF-8, or a one-line error naming `where` and the first invalid byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RobustcountError(f"{where}: not UTF-8 text (invalid byte at offset {err.start})") from None


def standard_input_texts() -> list[str]:
    """The non-empty lines of standard input, each one text."""
    texts = [line for line in utf8_text(sys.stdin.buffer.read(), "standard input").splitlines() if line.strip()]
    if not texts:
        raise RobustcountError("standard input holds no text")
    return texts


def command_line_text(text: str) -> str:
    """A TEXT argument, refused when it is empty or was not valid UTF-8 (the shell's bytes)."""
    if not text.strip():
        raise RobustcountError("a TEXT is empty: robustcount runs only texts with something to perturb")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RobustcountError(f"a TEXT is not valid UTF-8: {text.encode('utf-8', 'replace')[:40]!r}") from None
    return text


def shorten(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def overwrite_option(target: str):
    """--overwrite: replace the existing file that the option `target` names (every command that
    writes a file refuses an existing one without it)."""
    return click.option("--overwrite", is_flag=True, help=f"Replace an existing {target} file.")


def run_options(command):
    """The run options but --seed (`RunOptions`'s fields, which `data_options` adds with the data)
    and --dry-run (`PlanOptions`) of the dataset commands."""
    command = click_options(PlanOptions, PLAN)(command)
    return click_options(RunOptions, RUN, only=tuple(f.name for f in fields(RunOptions) if f.name != "seed"))(command)


def run_from(options: dict) -> RunOptions:
    """The RunOptions of the run options; a combination they refuse is a usage error."""
    try:
        return from_options(RunOptions, RUN, options)
    except RobustcountError as err:
        raise click.UsageError(str(err)) from None


def run_dataset(spec, options: dict, on_record=None) -> dict:
    """Run `spec` over the examples the data options name, as the run options say (`launch`;
    `on_record` as `runner.execute` takes it); print the summary (a table, or one JSON line with
    --json, without the run header) and return it."""
    run_options = run_from(options)
    announce = None
    if run_options.output is None:
        run_options = replace(run_options, output=default_run_file(spec.command))

        def announce(path):
            click.echo(f"robustcount: the run goes to {path} (continue it with --output {path} --resume)", err=True)
    output = run_options.output
    try:
        run = launch(spec, data_from(options), run_options, announce=announce, on_record=on_record)
    except RobustcountInterrupted as interrupted:
        summary = summarise_run(interrupted.kept)
        click.echo(format_table(*summary_table(summary)))
        kept = f"; they are in {output}: continue with --output {output} --resume" \
            if summary["examples"] and Path(output).is_file() else ""
        raise RobustcountInterrupted(f"interrupted: {summary['examples']} of {summary['planned_examples']} "
                                     f"examples done{kept}") from None
    summary = summarise_run(run)
    if run_options.as_json:  # the summary; the run's whole header is in the run file
        shown = {key: value for key, value in summary.items() if key != "run"}
        click.echo(json.dumps(without_nan(shown), allow_nan=False))
    else:
        click.echo(format_table(*summary_table(summary)))
        if space_line(summary["space"]):
            click.echo(space_line(summary["space"]))
        if summary["undecided"]:
            click.echo(decided_note(summary))
        if window_line(summary):
            click.echo(window_line(summary))
        if served_line(summary):
            click.echo(served_line(summary))
    return summary


def print_plan(spec, options: dict) -> None:
    """--dry-run: the plan of `spec` on the examples the data options name (`runs.plan`), a row
    per example as it is made (one JSON object per example with --json), then the total."""
    examples = data_from(options).load(spec.seed)
    plans = []
    for plan in plan_run(spec, examples, check=lambda engines: check_gold_labels(examples, engines)):
        click.echo(json.dumps(plan.as_dict()) if options["as_json"] else "\n".join(plan_rows(plan, not plans)))
        plans.append(plan)
    if not options["as_json"]:
        click.echo(total_line(plans))


def dry_run(options: dict) -> bool:
    """Whether the run options ask for the plan alone (--dry-run)."""
    return from_options(PlanOptions, PLAN, options).dry_run


def without_nan(value):
    """`value` with every NaN (a mean or share of nothing) as None, which JSON can hold."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: without_nan(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_nan(item) for item in value]
    return value
