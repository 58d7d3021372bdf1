"""Commands `models`, `predict` and `report`, their options declared once (`robustcount.options`)."""

from __future__ import annotations

import json
import sys
from dataclasses import field
from pathlib import Path

import click

from robustcount.cli.common import command_line_text, model_from, model_options, shorten, utf8_text
from robustcount.cli.group import cli
from robustcount.cli.options import click_options, from_options
from robustcount.commands import read_run
from robustcount.errors import RobustcountError
from robustcount.models.zoo import DEFAULT_MODEL, MODELS, save_model as save_built_in
from robustcount.options import option, options_dataclass
from robustcount.runs.report import write_report
from robustcount.runs.tables import format_table

OWN = "own_"
"""The prefix under which a command's own generated options are parsed."""


@options_dataclass
class ModelsOptions:
    """How `models` prints the list."""

    as_json: bool = field(default=False, metadata=option("Print JSON.", names=("--json",), flag=True))


@options_dataclass
class PredictOptions:
    """The premise of `predict`'s texts, and how it prints its predictions."""

    premise: str | None = field(default=None, metadata=option(
        "Premise for every TEXT (which become hypotheses).", kind=str))
    as_json: bool = field(default=False, metadata=option("Print JSON lines.", names=("--json",), flag=True))


@options_dataclass
class ReportOptions:
    """Where `report` writes."""

    out_dir: Path | None = field(default=None, metadata=option(
        "Directory for report.html, report.md and its figures (default: RUN-report beside the first RUN).",
        names=("--out",), path="directory"))


@cli.command()
@click_options(ModelsOptions, OWN)
def models(**options):
    """List the models available offline: family, size, white or black box, where the weights come
    from, and accuracy on demo:test."""
    described = [{"name": e.name, "default": e.name == DEFAULT_MODEL, "family": e.family,
                  "box": "white" if e.white_box else "black", "size": e.size, "weights": e.source,
                  "demo_test_accuracy": e.test_accuracy()} for e in MODELS.values()]
    if from_options(ModelsOptions, OWN, options).as_json:
        click.echo(json.dumps(described, indent=2))
        return
    click.echo(format_table(["model", "family", "box", "size", "demo:test accuracy", "weights"],
                            [(d["name"] + (" (default)" if d["default"] else ""), d["family"], d["box"], d["size"],
                              d["demo_test_accuracy"], d["weights"]) for d in described]))
    click.echo("\nAlso: a model directory (`robustcount harden` writes one), a transformers directory "
               "(`robustcount save-model` writes one), a hub name (online), or py:module:function.")


@cli.command("save-model")
@click.argument("name")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def save_model(name, directory):
    """Write the built-in transformers model NAME (minilm-rt-ft) to DIRECTORY as a plain checkpoint
    (safetensors, config, tokenizer) that `--model DIRECTORY` loads like any of yours."""
    written = save_built_in(name, directory)
    click.echo(f"written: {written} (load it with --model {written})")


@cli.command()
@click.argument("texts", nargs=-1)
@click_options(PredictOptions, OWN, only=("premise",))
@model_options
@click_options(PredictOptions, OWN, only=("as_json",))
def predict(texts, **options):
    """Predict the label of each TEXT (or of each line of standard input when TEXT is -)."""
    own = from_options(PredictOptions, OWN, options)
    premise = own.premise
    if not texts:
        raise click.UsageError("give at least one TEXT, or - to read lines from standard input")
    if texts == ("-",):
        texts = tuple(line for line in utf8_text(sys.stdin.buffer.read(), "standard input").split("\n")
                      if line.strip())
        if not texts:
            raise RobustcountError("standard input holds no text")
    for text in (*texts, *(() if premise is None else (premise,))):
        command_line_text(text)
    engine = model_from(options).engine()
    inputs = [(premise, t) if premise is not None else t for t in texts]
    probs = engine.predict_proba(inputs)
    labels = engine.labels
    if own.as_json:
        for text, row in zip(texts, probs):
            click.echo(json.dumps({"text": text, "premise": premise, "label": labels[int(row.argmax())],
                                   "probabilities": dict(zip(labels, map(float, row)))}, ensure_ascii=False))
        return
    rows = [(shorten(t), labels[int(r.argmax())], *map(float, r)) for t, r in zip(texts, probs)]
    click.echo(format_table(["text", "label", *(f"p({name})" for name in labels)], rows))


@cli.command()
@click.argument("run_files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click_options(ReportOptions, OWN)
def report(run_files, **options):
    """Write the report of RUN_FILES (--output files of dataset commands): a self-contained HTML page
    and Markdown with the runs' tables and plots; several runs share one page, each section titled by
    its file's name."""
    out_dir = from_options(ReportOptions, OWN, options).out_dir or run_files[0].with_name(run_files[0].name.removesuffix(".jsonl") + "-report")
    runs = [read_run(path) for path in run_files]
    if len(runs) == 1:
        html_path, markdown_path = write_report(runs[0], out_dir)
    else:
        html_path, markdown_path = write_report(runs, out_dir, labels=[p.name.removesuffix(".jsonl") for p in run_files])
    click.echo(f"written: {html_path}, {markdown_path}")
