"""Command `harden`: its training options are `HardenSpec`'s fields (`cli/options.py` builds them)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from robustcount.cli.common import data_from, data_options
from robustcount.cli.group import cli
from robustcount.cli.options import click_options, from_options
from robustcount.errors import RobustcountInterrupted
from robustcount.models.zoo import built_in_of
from robustcount.training.harden import WORK, HardenSpec, harden
from robustcount.training.harden_model import harden_model


@cli.command("harden")
@click_options(HardenSpec, "harden_")
@data_options(default_data="demo:train")
@click.option("--out", "directory", required=True, type=click.Path(path_type=Path),
              help="The model directory to write (new or empty); `--model DIR` loads it.")
@click.option("--resume", is_flag=True, help="Continue the interrupted training in --out.")
@click.option("--no-evaluate", "evaluate", is_flag=True, default=True, flag_value=False,
              help="Skip measuring a family's model on demo:test.")
def harden_command(directory, resume, evaluate, **options):
    """Train your model (--model) or a model of a family (--family) on the data plus perturbed copies
    (adversarial training) and write a model of the same kind that `--model DIR` loads, with a card
    of how it was made. Deterministic for --seed and --threads; --resume continues an interrupted
    training."""
    spec = from_options(HardenSpec, "harden_", options, seed=options["seed"])
    data_spec = data_from(options)
    examples = data_spec.load(options["seed"])
    data = {**data_spec.header(), "seed": options["seed"]}
    command_line = shlex.join(["robustcount", *sys.argv[1:]])
    log = lambda line: click.echo(line, err=True)  # noqa: E731
    try:
        if spec.model is not None:
            card = harden_model(spec, examples, data, directory, resume=resume, log=log, command_line=command_line)
        else:
            card = harden(spec, examples, data, directory, resume=resume, evaluate=evaluate, log=log,
                          command_line=command_line)
    except KeyboardInterrupt:
        raise RobustcountInterrupted(f"interrupted: the work done is kept in {directory / WORK}; continue it with "
                                     "the same command and --resume") from None
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
