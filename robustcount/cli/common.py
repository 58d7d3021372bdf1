"""The command group and the options and helpers the commands share."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import click

from robustcount import __version__


MAX_RADIUS = 10_000
"""The largest radius an option accepts: no space that can be counted has more positions."""


def model_options(command):
    """--model, --device, --precision, --batch-size, --trust-remote-code."""
    for option in reversed([
        click.option("--model", "model_spec", default="minilm-rt", show_default=True,
                     help="A name from `robustcount models`, a transformers directory, a hub name "
                          "(online) or py:module:function."),
        click.option("--device", default="auto", show_default=True, help="cpu, cuda, cuda:N or auto."),
        click.option("--precision", default="float32", show_default=True,
                     type=click.Choice(["float32", "float16", "bfloat16"]), help="Half precision needs a GPU."),
        click.option("--batch-size", default=64, show_default=True, type=click.IntRange(min=1)),
        click.option("--trust-remote-code", is_flag=True, help="Run code shipped with a hub checkpoint."),
    ]):
        command = option(command)
    return command


def data_options(command):
    """--data and the column options."""
    for option in reversed([
        click.option("--data", "data_spec", default="demo:test", show_default=True,
                     help="demo:train, demo:test, a .csv/.tsv/.jsonl file or a saved `datasets` directory."),
        click.option("--text-column", default="text", show_default=True,
                     help="The text (the hypothesis when --premise-column is given)."),
        click.option("--label-column", default="label", show_default=True),
        click.option("--premise-column", default=None, help="Makes inputs (premise, hypothesis) pairs."),
        click.option("--id-column", default=None, help="Example ids (default: the row number)."),
        click.option("--split", default=None, help="The split of a saved DatasetDict."),
        click.option("--encoding", default="utf-8", show_default=True),
        click.option("--sample", type=click.IntRange(min=1), default=None,
                     help="Use a random sample of this many examples (drawn with --seed)."),
        click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice."),
    ]):
        command = option(command)
    return command


def load_examples(data_spec, text_column, label_column, premise_column, id_column, split, encoding,
                  sample, seed):
    """The labelled examples the data options name, or a `sample` of them drawn with `seed`."""
    from robustcount.data import load_data

    examples = load_data(data_spec, text_column=text_column, label_column=label_column,
                         premise_column=premise_column, id_column=id_column, split=split, encoding=encoding)
    if sample is not None and sample < len(examples):
        chosen = sorted(random.Random(seed).sample(range(len(examples)), sample))
        examples = [examples[i] for i in chosen]
    return examples


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="robustcount")
def cli():
    """Attack, certify and count adversarial perturbations of text classifiers."""


def space_options(command):
    """--source and the space filters; every command's default source is the same."""
    from robustcount.spaces.build import DEFAULT_SOURCE

    for option in reversed([
        click.option("--source", "sources", multiple=True, default=(DEFAULT_SOURCE,), show_default=True,
                     help="Candidate source, repeatable (union): synonyms (counter-fitted neighbours, "
                          "meaning-preserving), wordnet, glove-raw (raw GloVe: not meaning-preserving), "
                          "vectors:PATH[,VOCAB], table:PATH, the ten Zéroe names, zeroe (all ten), "
                          "natural:PATH. Measure one with `robustcount source-quality`."),
        click.option("--stop-words", is_flag=True, help="Leave English stop words (scikit-learn's list) alone."),
        click.option("--min-length", type=click.IntRange(min=0), default=0, show_default=True),
        click.option("--max-candidates", type=click.IntRange(min=1), default=None, help="Cap per position."),
        click.option("--skip", "skip_positions", type=int, multiple=True,
                     help="Word index to leave alone (repeatable)."),
        click.option("--same-pos", is_flag=True,
                     help="Keep only substitutes with the word's POS in context (pos extra)."),
    ]):
        command = option(command)
    return command


def pr_options(command):
    """--radius, --radius-share, --method, --eps, --delta, --point."""
    for option in reversed([
        click.option("--radius", type=click.IntRange(min=0, max=MAX_RADIUS), default=None,
                     help="Radius r (default: --radius-share of each text's words, at least 1)."),
        click.option("--radius-share", type=click.FloatRange(0, 1, min_open=True), default=0.25, show_default=True),
        click.option("--method", type=click.Choice(["adaptive", "hoeffding", "clopper-pearson", "exact"]),
                     default="adaptive", show_default=True),
        click.option("--eps", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.025,
                     show_default=True),
        click.option("--delta", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.005,
                     show_default=True),
        click.option("--point", type=click.Choice(["mean", "midpoint"]), default="mean", show_default=True,
                     help="adaptive: report the sample mean (a fully robust region reads 1.0) or the interval's "
                          "midpoint (about half the samples near PR 0 or 1, never reads 1.0)."),
        click.option("--shell-samples", type=click.IntRange(min=0, max=1_000_000), default=100, show_default=True,
                     help="PR at each exact distance 1..r from this many uniform points per distance (a shell "
                          "this small or smaller is counted); 0: none."),
    ]):
        command = option(command)
    return command


def check_writable(path: Path, directory: bool = False) -> None:
    """Fail now, before any work, when `path` (a file, or with `directory` a directory, created
    if missing) cannot be written."""
    from robustcount.errors import RobustcountError

    place = path if directory else path.parent
    try:
        place.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=place):
            pass
    except OSError as err:
        raise RobustcountError(f"cannot write {path}: {err.strerror or err}") from err


def shorten(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def run_options(command):
    """--output, --resume, --overwrite, --workers, --cluster and --json of the dataset commands."""
    for option in reversed([
        click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Run file: a header line, then one JSON line per example, flushed as it comes."),
        click.option("--resume", is_flag=True, help="Continue the run in --output, skipping finished examples."),
        click.option("--overwrite", is_flag=True, help="Replace an existing --output file."),
        click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Worker processes on this machine (joblib), each loading the model once."),
        click.option("--cluster", default=None,
                     help="Run on Dask: local, local:N (a cluster on this machine) or a scheduler address."),
        click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON."),
    ]):
        command = option(command)
    return command


def model_from(options: dict):
    """The ModelOptions of the model options."""
    from robustcount.runs.spec import ModelOptions

    return ModelOptions(options["model_spec"], options["device"], options["precision"], options["batch_size"],
                        options["trust_remote_code"])


def space_from(options: dict):
    """The SpaceOptions of the space options."""
    from robustcount.runs.spec import SpaceOptions

    return SpaceOptions(tuple(options["sources"]), options["stop_words"], options["min_length"],
                        options["max_candidates"], tuple(options["skip_positions"]), options["same_pos"])


def run_dataset(spec, options: dict) -> dict:
    """Run `spec` over the examples the data options name, as the run options say; print the
    summary (a table, or JSON with --json, without the run header) and return it."""
    from robustcount.runs.backends import make_backend
    from robustcount.runs.runner import execute
    from robustcount.runs.summaries import summarise_run, summary_table

    if options["resume"] and options["output"] is None:
        raise click.UsageError("--resume needs --output, the run file to continue")
    if options["resume"] and options["overwrite"]:
        raise click.UsageError("give --resume or --overwrite, not both")
    backend = make_backend(options["workers"], options["cluster"])
    examples = load_examples(options["data_spec"], options["text_column"], options["label_column"],
                             options["premise_column"], options["id_column"], options["split"],
                             options["encoding"], options["sample"], options["seed"])
    data = {key: options[key] for key in ("text_column", "label_column", "premise_column", "id_column",
                                          "split", "sample")}
    run = execute(spec, examples, {"spec": options["data_spec"], **data}, output=options["output"],
                  resume=options["resume"], overwrite=options["overwrite"],
                  backend=backend)
    summary = summarise_run(run)
    if options["as_json"]:  # the summary; the run's whole header is in the run file
        click.echo(json.dumps({key: value for key, value in summary.items() if key != "run"}, indent=2))
    else:
        from robustcount.report import format_table

        click.echo(format_table(*summary_table(summary)))
    return summary
