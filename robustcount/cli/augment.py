"""Command `augment`: perturbed copies of a file's texts (or standard input's lines), written as CSV
or JSONL: uniform points of a space, Zéroe attacks, or an attack recipe's adversarial examples."""

from __future__ import annotations

import csv
import io
import json
import sys

import click

from robustcount.attacks.zeroe_protocol import LEVELS
from robustcount.augment import METHODS, AugmentOptions, augment
from robustcount.cli.common import data_from, data_options, overwrite_option, space_from, space_options, utf8_text
from robustcount.cli.group import cli
from robustcount.cli.options import click_options, from_options
from robustcount.errors import RobustcountError
from robustcount.spaces.perturbers import PERTURBERS
from robustcount.training.augment import CopiesFile

FORMATS = ("csv", "jsonl")


def standard_input_texts() -> list[str]:
    """The non-empty lines of standard input, each one text."""
    texts = [line for line in utf8_text(sys.stdin.buffer.read(), "standard input").splitlines() if line.strip()]
    if not texts:
        raise RobustcountError("standard input holds no text")
    return texts


@cli.command("augment")
@data_options(default_data="-")
@space_options
@click_options(AugmentOptions, "augment_")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="csv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, writable=True), default="-", show_default=True,
              help="Where to write the copies (-: standard output); written whole at the end.")
@overwrite_option("--out")
def augment_command(output_format, out, overwrite, **options):
    """Write perturbed copies of the texts of --data (a .csv/.tsv/.jsonl file, demo:train, or - for
    standard input's lines): id, origin, text and label of each copy, as CSV or JSONL."""
    target = None if out == "-" else CopiesFile(out, overwrite=overwrite)  # claimed before any work
    try:
        rows, texts = made_rows(from_options(AugmentOptions, "augment_", options), options)
        text = formatted(rows, output_format)
        if target is None:
            click.echo(text, nl=False)
        else:
            target.write(text)
    finally:
        if target is not None:
            target.close()
    if target is not None:
        click.echo(f"{len(rows)} copies of {len(texts)} texts written to {out}", err=True)


def made_rows(wanted: AugmentOptions, options: dict) -> tuple[list[dict], list[str]]:
    """The rows of the copies `wanted` asks for of the data in `options` (id, origin, text, label),
    and the texts copied."""
    seed = options["seed"]
    data_spec = data_from(options)
    if data_spec.spec == "-":
        texts = standard_input_texts()
        ids, labels = [str(i) for i in range(len(texts))], None
    else:
        examples = data_spec.load(seed)
        if any(not isinstance(e.input, str) for e in examples):
            raise RobustcountError("augment perturbs single texts; this data has (premise, hypothesis) pairs")
        texts, ids, labels = [e.input for e in examples], [e.id for e in examples], [str(e.label) for e in examples]
    made = augment(texts, labels=labels, method=wanted.method, space=space_from(options), radius=wanted.radius,
                   copies=wanted.copies, attackers=wanted.attackers or tuple(PERTURBERS),
                   levels=wanted.levels or tuple(LEVELS), model=wanted.model, seed=seed, ids=ids,
                   progress=wanted.method not in METHODS)
    rows = [{"id": c.example.id, "origin": ids[c.origin], "text": c.example.input, "label": c.example.label}
            for c in made]
    return rows, texts


def formatted(rows: list[dict], output_format: str) -> str:
    """`rows` as CSV (with a header line) or JSON lines."""
    if output_format == "jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    stream = io.StringIO()
    writer = csv.DictWriter(stream, fieldnames=["id", "origin", "text", "label"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return stream.getvalue()
