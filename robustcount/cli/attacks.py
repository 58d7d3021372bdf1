"""Command `attack`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from tqdm import tqdm

from robustcount import __version__
from robustcount.cli.common import (load_examples, load_cli_model, space_builder, cli,
                                    data_options, model_options, space_options)


@cli.command()
@click.option("--method", type=click.Choice(["pdp", "textfooler", "exhaustive"]), default="pdp", show_default=True)
@model_options
@data_options
@space_options("vectors")
@click.option("--beam", type=click.IntRange(min=1), default=10, show_default=True, help="PDP's K.")
@click.option("--max-substitutions", type=click.IntRange(min=1), default=None,
              help="PDP and the oracle look no further (default: every position).")
@click.option("--order", type=click.Choice(["sensitivity", "importance", "text"]), default="sensitivity",
              show_default=True, help="PDP's position order.")
@click.option("--setting", type=click.Choice(["paper", "official-code"]), default="paper", show_default=True,
              help="TextFooler's setting.")
@click.option("--no-pos-check", is_flag=True, help="TextFooler without its part-of-speech check.")
@click.option("--max-points", type=click.IntRange(min=1), default=50_000, show_default=True,
              help="The oracle refuses spaces larger than this.")
@click.option("--budget", type=click.IntRange(min=1), default=None, help="Model calls per example.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write one JSON line per example here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def attack(method, model_spec, device, precision, batch_size, trust_remote_code, data_spec, text_column,
           label_column, premise_column, id_column, split, encoding, sample, seed, sources, stop_words, min_length,
           max_candidates, skip_positions, same_pos, beam, max_substitutions, order, setting, no_pos_check,
           max_points, budget, output, as_json):
    """Attack every example: PDP (fewest substitutions), TextFooler (baseline) or the exhaustive oracle."""
    from robustcount.attacks.summary import run_attacks, summary_row, summarise
    from robustcount.models.engine import QueryEngine
    from robustcount.report import format_table, results_file

    examples = load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                             encoding, sample, seed)
    build = space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed)
    model = load_cli_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    options = {"pdp": dict(beam=beam, max_substitutions=max_substitutions, order=order),
               "textfooler": dict(setting=setting, pos_check=not no_pos_check),
               "exhaustive": dict(max_distance=max_substitutions, max_points=max_points)}[method]
    run = {"command": "attack", "method": method, "model": model_spec, "data": data_spec, "sample": sample,
           "seed": seed, "sources": list(sources), "options": options, "budget": budget,
           "robustcount": __version__}
    progress = tqdm(total=len(examples), desc=method, unit="ex", file=sys.stderr, disable=None)
    with results_file(output, run) as save, progress:

        def record(example, result, space):
            progress.update(1)
            save({"id": example.id, **result.as_dict(), "gold": engine.labels[result.gold],
                  "space_digest": space.digest(), "space_positions": len(space.positions)})

        results = run_attacks(method, engine, examples, build, options, budget, on_result=record)
    summary = summarise(results)
    if as_json:
        click.echo(json.dumps({**run, **summary}, indent=2))
        return
    click.echo(format_table(list(summary_row(summary)), [list(summary_row(summary).values())]))
