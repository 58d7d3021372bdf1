"""Commands `models`, `predict` and `evaluate`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from tqdm import tqdm

from robustcount import __version__
from robustcount.cli.common import (load_examples, load_cli_model, shorten, cli,
                                    data_options, model_options)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def models(as_json):
    """List the models available offline and where they come from."""
    from robustcount.models.zoo import DEFAULT_MODEL, MODELS

    rows = [(e.name + (" (default)" if e.name == DEFAULT_MODEL else ""), e.kind, e.source)
            for e in MODELS.values()]
    if as_json:
        click.echo(json.dumps([{"name": e.name, "kind": e.kind, "source": e.source} for e in MODELS.values()],
                              indent=2))
        return
    from robustcount.report import format_table

    click.echo(format_table(["model", "kind", "source"], rows))
    click.echo("\nAlso: a transformers directory, a hub name (online), or py:module:function.")


@cli.command()
@click.argument("texts", nargs=-1)
@click.option("--premise", default=None, help="Premise for every TEXT (which become hypotheses).")
@model_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines.")
def predict(texts, premise, model_spec, device, precision, batch_size, trust_remote_code, as_json):
    """Predict the label of each TEXT (or of each line of standard input when TEXT is -)."""
    if not texts:
        raise click.UsageError("give at least one TEXT, or - to read lines from standard input")
    if texts == ("-",):
        texts = tuple(line.rstrip("\n") for line in sys.stdin if line.strip())
    from robustcount.models.engine import QueryEngine
    from robustcount.report import format_table

    model = load_cli_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    inputs = [(premise, t) if premise is not None else t for t in texts]
    probs = engine.predict_proba(inputs)
    labels = engine.labels
    if as_json:
        for text, row in zip(texts, probs):
            click.echo(json.dumps({"text": text, "premise": premise, "label": labels[int(row.argmax())],
                                   "probabilities": dict(zip(labels, map(float, row)))}, ensure_ascii=False))
        return
    rows = [(shorten(t), labels[int(r.argmax())], *map(float, r)) for t, r in zip(texts, probs)]
    click.echo(format_table(["text", "label", *(f"p({name})" for name in labels)], rows))


@cli.command()
@model_options
@data_options
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write one JSON line per example here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def evaluate(model_spec, device, precision, batch_size, trust_remote_code, data_spec, text_column,
             label_column, premise_column, id_column, split, encoding, sample, seed, output, as_json):
    """Accuracy of a model on a labelled dataset (default: minilm-rt on demo:test)."""
    from robustcount.evaluate import evaluate as run_evaluation
    from robustcount.models.engine import QueryEngine
    from robustcount.report import format_table, results_file

    examples = load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                             encoding, sample, seed)
    model = load_cli_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    labels = engine.labels
    run = {"command": "evaluate", "model": model_spec, "data": data_spec, "sample": sample, "seed": seed,
           "robustcount": __version__}
    progress = tqdm(total=len(examples), desc="evaluate", unit="ex", file=sys.stderr, disable=None)
    with results_file(output, run) as save, progress:

        def record(prediction):
            progress.update(1)
            save({"id": prediction.example.id, "input": prediction.example.input, "gold": labels[prediction.gold],
                  "predicted": labels[prediction.predicted], "correct": prediction.correct,
                  "probabilities": [float(p) for p in prediction.probabilities]})

        result = run_evaluation(engine, examples, on_prediction=record)
    summary = {**run, "examples": result.examples, "correct": result.correct, "accuracy": result.accuracy,
               "ci95": [result.ci_low, result.ci_high], "queries": result.stats.as_dict()}
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(format_table(
        ["model", "data", "examples", "accuracy", "95% CI", "model calls", "model s"],
        [(model_spec, data_spec, result.examples, result.accuracy,
          f"[{result.ci_low:.4f}, {result.ci_high:.4f}]", result.stats.model_calls,
          f"{result.stats.model_seconds:.1f}")],
    ))
