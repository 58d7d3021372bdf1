"""The `robustcount` command line.

Tables go to standard output for people; `--json` prints JSON instead, and `--output FILE` streams
one JSON line per example. Exit status: 0 ok, 1 failure, 2 usage error, each failure explained in
one line on standard error (set ROBUSTCOUNT_DEBUG=1 to see the traceback as well).
"""

from __future__ import annotations

import json
import os
import random
import sys
import traceback
from pathlib import Path

import click
from tqdm import tqdm

from robustcount import __version__
from robustcount.errors import RobustcountError


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


def _load_model(model_spec, device, precision, batch_size, trust_remote_code):
    from robustcount.models.zoo import load_model

    return load_model(model_spec, device=device, dtype=precision, batch_size=batch_size,
                      trust_remote_code=trust_remote_code)


def _load_examples(data_spec, text_column, label_column, premise_column, id_column, split, encoding,
                   sample, seed, labelled=True):
    from robustcount.data import load_data

    examples = load_data(data_spec, text_column=text_column,
                         label_column=label_column if labelled else None,
                         premise_column=premise_column, id_column=id_column, split=split,
                         encoding=encoding)
    if sample is not None and sample < len(examples):
        chosen = sorted(random.Random(seed).sample(range(len(examples)), sample))
        examples = [examples[i] for i in chosen]
    return examples


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="robustcount")
def cli():
    """Attack, certify and count adversarial perturbations of text classifiers."""


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

    model = _load_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    inputs = [(premise, t) if premise is not None else t for t in texts]
    probs = engine.predict_proba(inputs)
    labels = engine.labels
    if as_json:
        for text, row in zip(texts, probs):
            click.echo(json.dumps({"text": text, "premise": premise, "label": labels[int(row.argmax())],
                                   "probabilities": dict(zip(labels, map(float, row)))}, ensure_ascii=False))
        return
    rows = [(_short(t), labels[int(r.argmax())], *map(float, r)) for t, r in zip(texts, probs)]
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
    from robustcount.report import format_table, write_jsonl

    examples = _load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                              encoding, sample, seed)
    model = _load_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    labels = engine.labels
    run = {"command": "evaluate", "model": model_spec, "data": data_spec, "sample": sample, "seed": seed,
           "robustcount": __version__}
    handle = output.open("w", encoding="utf-8") if output else None
    progress = tqdm(total=len(examples), desc="evaluate", unit="ex", file=sys.stderr, disable=None)

    def record(prediction):
        progress.update(1)
        if handle is not None:
            write_jsonl(handle, {**run, "id": prediction.example.id, "input": prediction.example.input,
                                 "gold": labels[prediction.gold], "predicted": labels[prediction.predicted],
                                 "correct": prediction.correct,
                                 "probabilities": [float(p) for p in prediction.probabilities]})

    try:
        result = run_evaluation(engine, examples, on_prediction=record)
    finally:
        progress.close()
        if handle is not None:
            handle.close()
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
@click.option("--source", "sources", multiple=True, default=("wordnet",), show_default=True,
              help="Candidate source, repeatable (union): the ten Zéroe names, zeroe (all ten), wordnet "
                   "(alias synonyms), vectors[:PATH[,VOCAB]], table:PATH, natural:PATH.")
@click.option("--radius", type=click.IntRange(min=0), default=1, show_default=True)
@click.option("--stop-words", is_flag=True, help="Leave English stop words (scikit-learn's list) alone.")
@click.option("--min-length", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--max-candidates", type=click.IntRange(min=1), default=None, help="Cap per position.")
@click.option("--skip", "skip_positions", type=int, multiple=True, help="Word index to leave alone (repeatable).")
@click.option("--same-pos", is_flag=True, help="Keep only substitutes with the word's POS in context (pos extra).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the seeded sources (shuffles).")
@click.option("--json", "as_json", is_flag=True, help="Print the space as JSON.")
def space(text, sources, radius, stop_words, min_length, max_candidates, skip_positions, same_pos, seed, as_json):
    """Print each position's candidates and |Omega_r| for TEXT."""
    from robustcount.spaces.build import build_space

    built = build_space(text, list(sources), stop_words=_stop_words() if stop_words else None,
                        min_length=min_length, max_candidates=max_candidates, skip_positions=skip_positions,
                        same_pos=same_pos, seed=seed)
    if as_json:
        click.echo(json.dumps({
            "text": text, "radius": radius, "size": str(built.count(radius)), "digest": built.digest(),
            "definition": built.definition,
            "positions": [{"kind": p.kind, "index": p.index, "candidates": list(p.candidates),
                           "sources": list(p.sources)} for p in built.positions],
        }, ensure_ascii=False, indent=2))
        return
    click.echo(built.describe(radius))


def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return ENGLISH_STOP_WORDS


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
    examples = _load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                              encoding, sample, seed)
    model = _load_model(model_spec, device, precision, batch_size, trust_remote_code)
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


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; turn every failure into a one-line message and an exit status."""
    debug = os.environ.get("ROBUSTCOUNT_DEBUG") == "1"
    try:
        cli.main(args=argv, prog_name="robustcount", standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.UsageError as err:
        click.echo(f"robustcount: usage error: {err.format_message()} (see --help)", err=True)
        return 2
    except (click.Abort, KeyboardInterrupt):
        click.echo("robustcount: interrupted", err=True)
        return 130
    except (RobustcountError, OSError) as err:
        if debug:
            traceback.print_exc()
        click.echo(f"robustcount: error: {err}", err=True)
        return 1
    except Exception as err:  # anything unforeseen still ends in one line, never a traceback
        if debug:
            traceback.print_exc()
        message = str(err).strip().splitlines()[0] if str(err).strip() else ""
        click.echo(f"robustcount: internal error: {type(err).__name__}: {message} "
                   "(set ROBUSTCOUNT_DEBUG=1 for the traceback)", err=True)
        return 1
    return 0


def entry_point() -> None:
    sys.exit(main())
