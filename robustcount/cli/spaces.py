"""Commands `perturb` and `space`."""

from __future__ import annotations

import json
import sys
from dataclasses import fields

import click

from robustcount.attacks.zeroe_protocol import zeroe_attack
from robustcount.cli.common import (
    DATA,
    MODEL,
    command_line_text,
    model_from,
    model_options,
    shorten,
    space_from,
    space_options,
    standard_input_texts,
    utf8_text,
)
from robustcount.cli.group import cli
from robustcount.cli.options import click_options, from_options
from robustcount.data import DataSpec, Example
from robustcount.errors import RobustcountError
from robustcount.models.context_models import context_for
from robustcount.models.spec import ModelSpec
from robustcount.options import MAX_RADIUS
from robustcount.spaces.context import SCORES
from robustcount.spaces.perturbers import get_perturber
from robustcount.text import perturbed_part

SPACE_DATA_OPTIONS = ("spec", "text_column", "premise_column", "id_column", "split", "encoding", "sample", "first")
"""The data options of `space`: no labels (a space does not depend on them)."""


@cli.command()
@click.argument("text")
@click.option("--attack", required=True,
              help="One source (see `robustcount space --help`): a Zéroe perturber attacks with its own random "
                   "face, any other word source with a neighbour drawn uniformly.")
@click.option("--level", default="mid", show_default=True, help="low (0.2), mid (0.5), high (0.8) or a number in [0, 1].")
@click.option("--seed", type=int, default=0, show_default=True)
def perturb(text, attack, level, seed):
    """Print TEXT attacked by one source under the Zéroe paper's random protocol; TEXT - attacks
    each line of standard input (line k with seed + k)."""
    if text != "-":
        click.echo(zeroe_attack(command_line_text(text), get_perturber(attack), level, seed))
        return
    perturber = get_perturber(attack)
    for k, line in enumerate(utf8_text(sys.stdin.buffer.read(), "standard input").splitlines()):
        click.echo(zeroe_attack(line, perturber, level, seed + k) if line.strip() else line)


@cli.command()
@click.argument("text", required=False)
@space_options
@model_options(defaults={"spec": None})
@click_options(DataSpec, DATA, only=SPACE_DATA_OPTIONS, defaults={"spec": "-"})
@click.option("--radius", type=click.IntRange(min=0, max=MAX_RADIUS), multiple=True, default=(1,), show_default=True,
              help="|Omega_r| for this radius, repeatable.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the seeded sources (shuffles) and of --sample.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the space as JSON (of many texts: one JSON object a line).")
def space(text, radius, seed, as_json, **options):
    """Print each position's candidates and |Omega_r| for TEXT, or for each text of --data (a
    .csv/.tsv/.jsonl file, demo:test, or - for standard input's lines, as without TEXT); with
    --model, within the model's window (the words beyond it left out and counted; default: no
    model, every word)."""
    window = _model_window(options)
    spec = space_from(options)
    builder = spec.builder(seed, window, context_for(spec.filters))
    if text is not None and text != "-":
        if options[DATA + "spec"] != "-":
            raise click.UsageError("give a TEXT or --data, not both")
        _print_one_space(text, builder.build(command_line_text(text)), spec.filters, radius, as_json)
        return
    for example in _space_examples(options, seed):
        result = builder.build(example.input)
        built, removed = result.space, contextual_removals(spec.filters, result)
        if as_json:
            click.echo(json.dumps(space_record(example, built, radius, removed), ensure_ascii=False))
        else:
            click.echo(f"{example.id}: {shorten(perturbed_part(example.input))}\n{built.describe(radius[0])}"
                       + "".join(f"\n|Omega_{r}| = {built.count(r)}" for r in radius[1:])
                       + (f"\n{_removals_line(removed)}" if removed else "") + "\n")
    if not as_json:
        _print_scoring_calls(spec.filters, builder)


def _removals_line(removed: dict) -> str:
    """What the contextual filters removed, in words."""
    return ("contextual filters: " + "; ".join(f"{name} removed {count}" for name, count in removed.items()
                                              if name != "borderline")
            + f"; {removed['borderline']} candidates borderline (within the tolerance of a threshold)")


def _print_scoring_calls(filters, builder) -> None:
    """The scoring models' calls, when the filters scored candidates."""
    if not any(filters.needs_models):
        return
    models = builder.context
    click.echo("scoring model calls: " + ", ".join(
        f"{name} {engine.total.model_calls} ({engine.total.model_seconds:.2f} s)"
        for (name, engine), used in zip((("language model", models.lm), ("sentence encoder", models.encoder),
                                         ("word encoder", models.word_encoder)), filters.needs_models) if used))


def contextual_removals(filters, built) -> dict:
    """What each contextual filter set in `filters` removed from the space `built` (a
    `spaces.build.Built`): names and expressions in words left alone, the LM and the encoder's
    similarities in candidates; and the borderline candidates."""
    wanted = {"names": filters.keep_names, "expressions": filters.keep_expressions,
              **dict(zip(SCORES, filters.needs_models))}
    if not any(wanted.values()):
        return {}
    removed = {name: built.removed[name] for name, on in wanted.items() if on}
    return {**removed, "borderline": sum(len(unsure) for _, unsure in built.borderline.values())}


def _model_window(options: dict):
    """The window of the model the model options name, None without --model (every word); another
    model option given without --model is refused in one line."""
    if options[MODEL + "spec"] is not None:
        return model_from(options).engine().window
    given = [f.name for f in fields(ModelSpec) if f.name != "spec" and options[MODEL + f.name] != f.default]
    if given:
        raise RobustcountError(f"--{given[0].replace('_', '-')} applies to the model of --model, and none is given")
    return None


def _print_one_space(text: str, result, filters, radius: tuple[int, ...], as_json: bool) -> None:
    """One TEXT's space (`result`, a `spaces.build.Built`), as the command printed it before it
    took many texts (the first radius as `radius` and `size`, every radius under `sizes`), with
    what the contextual filters removed."""
    built, removed = result.space, contextual_removals(filters, result)
    if not as_json:
        click.echo(built.describe(radius[0]) + "".join(f"\n|Omega_{r}| = {built.count(r)}" for r in radius[1:]))
        if removed:
            click.echo(_removals_line(removed))
        return
    click.echo(json.dumps({
        "text": text, "radius": radius[0], "size": str(built.count(radius[0])),
        "sizes": {str(r): str(built.count(r)) for r in radius}, "digest": built.digest(),
        "definition": built.definition,
        "positions": [{"kind": p.kind, "index": p.index, "candidates": list(p.candidates),
                       "sources": list(p.sources)} for p in built.positions],
        **({"contextual_filters": removed} if removed else {}),
    }, ensure_ascii=False, indent=2))


def _space_examples(options: dict, seed: int) -> list:
    """The texts of the data options (no labels read): standard input's non-empty lines for -."""
    data_spec = from_options(DataSpec, DATA, options, label_column=None)
    if data_spec.spec != "-":
        return data_spec.load(seed)
    if data_spec.sample is not None or data_spec.first is not None:
        raise click.UsageError("--sample and --first choose among the examples of --data, not standard input's lines")
    return [Example(str(i), line, None) for i, line in enumerate(standard_input_texts())]


def space_record(example, built, radius: tuple[int, ...], removed: dict | None = None) -> dict:
    """One text's space as `space --json` writes it for many texts: the id, the text, |Omega_r|
    for each radius asked, and each position's index, kind, original and candidates (the
    original first), with the digest and definition that rebuild it, and what the contextual
    filters removed (`removed`, when they ran)."""
    return {"id": example.id, "text": example.input, "sizes": {str(r): str(built.count(r)) for r in radius},
            "positions": [{"index": p.index, "kind": p.kind, "original": p.original, "candidates": list(p.candidates)}
                          for p in built.positions],
            "digest": built.digest(), "definition": built.definition,
            **({"contextual_filters": removed} if removed else {})}
