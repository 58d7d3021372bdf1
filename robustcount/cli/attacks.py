"""Command `attack`."""

from __future__ import annotations

import click

from robustcount.cli.common import (cli, data_options, model_from, model_options, run_dataset, run_options,
                                    space_from, space_options)


@cli.command()
@click.option("--method", type=click.Choice(["pdp", "textfooler", "exhaustive"]), default="pdp", show_default=True)
@model_options
@data_options
@space_options
@click.option("--beam", type=click.IntRange(min=1), default=10, show_default=True, help="PDP's K.")
@click.option("--max-substitutions", type=click.IntRange(min=1), default=None,
              help="PDP and the oracle look no further (default: every position).")
@click.option("--order", type=click.Choice(["sensitivity", "importance", "text"]), default="sensitivity",
              show_default=True, help="PDP's position order.")
@click.option("--no-pruning", is_flag=True,
              help="PDP keeps its K lowest-margin states whatever their margins (no additivity pruning).")
@click.option("--setting", type=click.Choice(["paper", "official-code"]), default="paper", show_default=True,
              help="TextFooler's setting.")
@click.option("--no-pos-check", is_flag=True, help="TextFooler without its part-of-speech check.")
@click.option("--no-similarity-check", is_flag=True,
              help="TextFooler without its sentence-similarity check (with --no-pos-check: its pure greedy search).")
@click.option("--max-points", type=click.IntRange(min=1), default=50_000, show_default=True,
              help="The oracle checks at most this many points, refusing at the first distance that would pass it.")
@click.option("--budget", type=click.IntRange(min=1), default=None, help="Model calls per example.")
@run_options
def attack(**options):
    """Attack every example: PDP (fewest substitutions), TextFooler (baseline) or the exhaustive oracle."""
    from robustcount.runs.spec import RunSpec

    o, method = options, options["method"]
    settings = {"pdp": dict(beam=o["beam"], max_substitutions=o["max_substitutions"], order=o["order"],
                            prune=not o["no_pruning"]),
                "textfooler": dict(setting=o["setting"], pos_check=not o["no_pos_check"],
                                   similarity_check=not o["no_similarity_check"]),
                "exhaustive": dict(max_distance=o["max_substitutions"], max_points=o["max_points"])}[method]
    spec = RunSpec("attack", (model_from(o),), o["seed"], space_from(o),
                   {"method": method, "settings": settings, "budget": o["budget"]})
    run_dataset(spec, options)
