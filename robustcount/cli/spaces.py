"""Commands `perturb`, `space` and `zeroe`."""

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
@click.argument("text")
@click.option("--attack", required=True, help="One of the ten Zéroe perturbers (see `robustcount space --help`).")
@click.option("--level", default="mid", show_default=True, help="low (0.2), mid (0.5), high (0.8) or a number in [0, 1].")
@click.option("--seed", type=int, default=0, show_default=True)
def perturb(text, attack, level, seed):
    """Print TEXT attacked by one Zéroe perturber under the paper's random protocol."""
    from robustcount.attacks.zeroe import zeroe_attack
    from robustcount.spaces.zeroe import get_perturber

    click.echo(zeroe_attack(text, get_perturber(attack), level, seed))


@cli.command()
@click.argument("text")
@space_options("wordnet")
@click.option("--radius", type=click.IntRange(min=0), default=1, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the seeded sources (shuffles).")
@click.option("--json", "as_json", is_flag=True, help="Print the space as JSON.")
def space(text, sources, stop_words, min_length, max_candidates, skip_positions, same_pos, radius, seed, as_json):
    """Print each position's candidates and |Omega_r| for TEXT."""
    built = space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed)(text)
    if as_json:
        click.echo(json.dumps({
            "text": text, "radius": radius, "size": str(built.count(radius)), "digest": built.digest(),
            "definition": built.definition,
            "positions": [{"kind": p.kind, "index": p.index, "candidates": list(p.candidates),
                           "sources": list(p.sources)} for p in built.positions],
        }, ensure_ascii=False, indent=2))
        return
    click.echo(built.describe(radius))


@cli.command()
@model_options
@data_options
@click.option("--attack", "attacks", multiple=True, help="Attack to run (repeatable; default: all ten).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("zeroe-results"),
              show_default=True, help="Directory for zeroe.json, zeroe.md and zeroe.png.")
def zeroe(model_spec, device, precision, batch_size, trust_remote_code, data_spec, text_column, label_column,
          premise_column, id_column, split, encoding, sample, seed, attacks, out_dir):
    """Accuracy under the ten Zéroe attacks at low, mid and high (the paper's Table 6 and Figure 1)."""
    from collections import Counter

    from robustcount.data import label_index
    from robustcount.models.engine import QueryEngine
    from robustcount.report import format_table
    from robustcount.spaces.zeroe import PERTURBERS, get_perturber
    from robustcount.zeroe_benchmark import plot_zeroe, rows_as_dicts, run_zeroe

    chosen = list(attacks) or list(PERTURBERS)
    for name in chosen:
        get_perturber(name)  # fail on an unknown name before any work
    examples = load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                             encoding, sample, seed)
    model = load_cli_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    progress = tqdm(total=len(chosen) * 3, desc="zeroe", unit="cell", file=sys.stderr, disable=None)
    out_dir.mkdir(parents=True, exist_ok=True)
    majority = max(Counter(label_index(e.label, engine.labels) for e in examples).values()) / len(examples)
    record = {"command": "zeroe", "model": model_spec, "data": data_spec, "sample": sample, "seed": seed,
              "robustcount": __version__, "examples": len(examples), "majority_baseline": majority,
              "complete": False, "rows": []}
    done = []

    def save(row):  # rewrite the record after every cell, so that a failure keeps the finished ones
        progress.update(1)
        done.append(row)
        record.update(rows=rows_as_dicts(done), queries=engine.total.as_dict())
        (out_dir / "zeroe.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")

    try:
        clean, rows = run_zeroe(engine, examples, chosen, seed=seed, on_row=save)
    finally:
        progress.close()
    table = format_table(["attack", "level", "accuracy", "relative", "changed"],
                         [("none", "-", clean, 1.0, 0.0)]
                         + [(r.attack, r.level, r.accuracy, r.relative, r.changed) for r in rows])
    record.update(clean_accuracy=clean, complete=True, rows=rows_as_dicts(rows), queries=engine.total.as_dict())
    (out_dir / "zeroe.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (out_dir / "zeroe.md").write_text(table + "\n", encoding="utf-8")
    plot_zeroe(clean, rows, majority, out_dir / "zeroe.png", f"{model_spec} on {data_spec} ({len(examples)} examples)")
    click.echo(table)
    click.echo(f"\nwritten: {out_dir / 'zeroe.json'}, {out_dir / 'zeroe.md'}, {out_dir / 'zeroe.png'}")
