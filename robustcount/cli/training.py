"""Command `harden`: its training options are `HardenSpec`'s fields, its copies' `TrainingCopies`'
and the space's `SpaceSpec`'s (`cli/options.py` builds them; each variant's under its heading)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from robustcount.cli.common import data_from, data_options, space_from, space_options
from robustcount.cli.group import cli
from robustcount.cli.options import VariantsCommand, click_options, from_options
from robustcount.data import DataSpec
from robustcount.errors import RobustcountError, RobustcountInterrupted
from robustcount.models.model_dir import CARD_FILE, read_card
from robustcount.models.zoo import built_in_of
from robustcount.runs.tables import format_table
from robustcount.training.evaluation import EvaluationSettings, comparison_table, evaluate_hardening
from robustcount.training.copies import TrainingCopies
from robustcount.training.harden import WORK, Sitting, harden
from robustcount.training.harden_model import HARDENING_CARD, harden_model, read_hardening_card
from robustcount.training.spec import HardenSpec

EVALUATION = "evaluation"
"""The folder of the output that holds `--evaluate`'s runs and report."""


@cli.command("harden", cls=VariantsCommand)
@click_options(HardenSpec, "harden_")
@click_options(TrainingCopies, "copies_")
@space_options
@data_options(default_data="demo:train")
@click.option("--out", "directory", required=True, type=click.Path(path_type=Path),
              help="The model directory to write (new or empty); `--model DIR` loads it.")
@click.option("--resume", is_flag=True, help="Continue the interrupted training in --out.")
@click.option("--no-evaluate", "evaluate", is_flag=True, default=True, flag_value=False,
              help="Skip measuring a family's model on demo:test.")
@click.option("--evaluate", "evaluate_data", default=None, metavar="DATA",
              help="Then measure the input and the hardened model on DATA (demo:test or a file, as --data): clean "
                   "and after-attack accuracy, certified share at r = 1, 2, PR > 0.9 with compare's paired test, "
                   "in one report (OUT/evaluation/report.html).")
@click.option("--evaluate-sample", type=click.IntRange(min=1), default=None, help="--evaluate: a seeded sample this size.")
@click.option("--evaluate-attack", default="textfooler", show_default=True, help="--evaluate: the attack recipe.")
@click.option("--evaluate-time-limit", type=click.FloatRange(min=0, min_open=True), default=None,
              help="--evaluate: seconds per example and measurement, past which it is undecided.")
def harden_command(directory, resume, evaluate, evaluate_data, evaluate_sample, evaluate_attack, evaluate_time_limit,
                   **options):
    """Train your model (--model) or a model of a family (--family) on the data plus perturbed copies
    (adversarial training) and write a model of the same kind that `--model DIR` loads, with a card
    of how it was made. Deterministic for --seed and --threads; --resume continues an interrupted
    training."""
    spec = harden_spec(options)
    data_spec = data_from(options)
    examples = data_spec.load(options["seed"])
    data = {**data_spec.header(), "seed": options["seed"]}
    sitting = Sitting(resume, log=lambda line: click.echo(line, err=True),
                      command_line=shlex.join(["robustcount", *sys.argv[1:]]))
    if evaluate_data and spec.model is None and built_in_of(spec.family) is None:
        raise RobustcountError(f"--evaluate compares with the family's built-in model, and {spec.family} has none")
    finished = resume and not (directory / WORK).exists() and any(
        (directory / name).exists() for name in (CARD_FILE, HARDENING_CARD))
    try:
        if finished and evaluate_data:
            card = read_hardening_card(directory) if spec.model is not None else read_card(directory)
        elif spec.model is not None:
            card = harden_model(spec, examples, data, directory, sitting)
        else:
            card = harden(spec, examples, data, directory, sitting, evaluate=evaluate)
    except KeyboardInterrupt:
        raise RobustcountInterrupted(f"interrupted: the work done is kept in {directory / WORK}; continue it with "
                                     "the same command and --resume") from None
    report(spec, card, directory, examples)
    if evaluate_data:
        evaluated = DataSpec(evaluate_data, sample=evaluate_sample)
        before = spec.model or built_in_of(spec.family).name
        try:
            summary = evaluate_hardening([before, str(directory)], evaluated.load(spec.seed),
                                         {**evaluated.header(), "seed": spec.seed}, directory / EVALUATION,
                                         EvaluationSettings(seed=spec.seed, attack=evaluate_attack,
                                                            time_limit=evaluate_time_limit))
        except KeyboardInterrupt:
            raise RobustcountInterrupted(f"interrupted: the measurements done are kept in {directory / EVALUATION}; "
                                         "continue them with the same command and --resume") from None
        click.echo(format_table(*comparison_table(summary)))
        click.echo(f"report: {directory / EVALUATION / 'report.html'}")


def harden_spec(options: dict) -> HardenSpec:
    """The `HardenSpec` the command line asks for: the training of your --model when it is given
    (with neither --family nor --certified-training), else a family's, certified with
    --certified-training."""
    values, given = dict(options), {}
    if options["harden_trainee__model"] is not None:
        if options["harden_trainee__family"] is not None:
            raise RobustcountError("--family trains a new model of a family; --model trains the model you give as "
                                   "its own kind: give one of them")
        if values.pop("harden_trains"):
            raise RobustcountError("--certified-training trains a word-cnn or word-lstm family (--family), "
                                   "not a --model")
        given["trains"] = "model"
    copies = from_options(TrainingCopies, "copies_", options, space=space_from(options))
    return from_options(HardenSpec, "harden_", values, seed=options["seed"], copies=copies, **given)


def report(spec: HardenSpec, card: dict, directory: Path, examples) -> None:
    """Say what was written."""
    if spec.model is not None:
        hardened = card["hardened"]
        last = hardened["training"]["epochs"][-1]
        click.echo(f"written: {directory} (a {hardened['kind']} model hardened from {spec.model}: last epoch "
                   f"{last['trained_on']} texts, {last['copies']} of them copies); held-out accuracy "
                   f"{hardened['held_out']['accuracy']:.4f}; load it with --model {directory}")
        return
    training = card["training"]
    click.echo(f"written: {directory} (a {spec.family} model trained on {training['trained_on']} texts: "
               f"{len(examples)} examples and {training['copies_made']} perturbed copies); "
               f"load it with --model {directory}")
    built_in = built_in_of(spec.family)
    if "demo_test" in card:
        compared = f" (the built-in {built_in.name}: {built_in.test_accuracy():.4f})" if built_in else ""
        click.echo(f"demo:test accuracy {card['demo_test']['test_accuracy']:.4f}{compared}")
