"""Command `harden`."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from robustcount.attacks.zeroe_protocol import LEVELS
from robustcount.cli.common import data_from, data_options
from robustcount.cli.group import cli
from robustcount.errors import RobustcountInterrupted
from robustcount.models.model_dir import ARCHITECTURES
from robustcount.models.zoo import MODELS
from robustcount.spaces.perturbers import PERTURBERS
from robustcount.training.harden import AUGMENTS, WORK, HardenSpec, harden


@cli.command("harden")
@click.option("--model", "architecture", type=click.Choice(ARCHITECTURES), default="minilm-rt", show_default=True,
              help="The family to train (minilm-rt: its head; cnn-rt, lstm-rt: the networks; minilm-rt-ft: its LoRA "
                   "adapters).")
@data_options(default_data="demo:train")
@click.option("--augment", type=click.Choice(AUGMENTS), default="zeroe", show_default=True,
              help="Perturbed copies to train on besides the data: Zéroe attacks (seed 000), the adversarial examples "
                   "TextFooler or PDP finds against the built-in model (seed 002), or none.")
@click.option("--attacker", "attackers", multiple=True, type=click.Choice(tuple(PERTURBERS)),
              help="zeroe: an attacker to draw from (repeatable; default: all ten).")
@click.option("--level", "levels", multiple=True, type=click.Choice(tuple(LEVELS)),
              help="zeroe: a level to draw from (repeatable; default: low, mid and high).")
@click.option("--copies", type=click.IntRange(min=1), default=1, show_default=True,
              help="zeroe: perturbed copies of each training example.")
@click.option("--attack-sample", type=click.IntRange(min=0), default=2000, show_default=True,
              help="textfooler, pdp: attack a seeded sample of this many training examples (0: all of them).")
@click.option("--epochs", type=click.IntRange(min=1), default=None,
              help="Epochs (default: the family's; the minilm-rt head has none).")
@click.option("--threads", type=click.IntRange(min=1), default=2, show_default=True,
              help="torch CPU threads (the result is reproducible for a fixed number).")
@click.option("--out", "directory", required=True, type=click.Path(path_type=Path),
              help="The model directory to write (new or empty); `--model DIR` loads it.")
@click.option("--resume", is_flag=True, help="Continue the interrupted training in --out.")
@click.option("--no-evaluate", "evaluate", is_flag=True, default=True, flag_value=False,
              help="Skip measuring the model on demo:test.")
def harden_command(architecture, augment, attackers, levels, copies, attack_sample, epochs, threads, directory,
                   resume, evaluate, **options):
    """Train a model family on the data plus perturbed copies (adversarial training) and write a model
    directory that `--model DIR` loads, with its demo:test accuracy. Deterministic for --seed and
    --threads; --resume continues an interrupted training."""
    spec = HardenSpec(architecture, augment, tuple(attackers) or tuple(PERTURBERS), tuple(levels) or tuple(LEVELS),
                      copies, attack_sample or None, epochs, options["seed"], threads)
    data_spec = data_from(options)
    examples = data_spec.load(options["seed"])
    data = {**data_spec.header(), "seed": options["seed"]}
    try:
        card = harden(spec, examples, data, directory, resume=resume, evaluate=evaluate,
                      log=lambda line: click.echo(line, err=True),
                      command_line=shlex.join(["robustcount", *sys.argv[1:]]))
    except KeyboardInterrupt:
        raise RobustcountInterrupted(f"interrupted: the work done is kept in {directory / WORK}; continue it with "
                                     "the same command and --resume") from None
    training = card["training"]
    click.echo(f"written: {directory} ({architecture} trained on {training['trained_on']} texts: "
               f"{len(examples)} examples and {training['copies_made']} perturbed copies); load it with --model {directory}")
    if "demo_test" in card:
        click.echo(f"demo:test accuracy {card['demo_test']['test_accuracy']:.4f} "
                   f"(the built-in {architecture}: {MODELS[architecture].test_accuracy():.4f})")
