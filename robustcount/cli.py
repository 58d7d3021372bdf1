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
    from robustcount.report import format_table, open_output, write_jsonl

    examples = _load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                              encoding, sample, seed)
    model = _load_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    labels = engine.labels
    run = {"command": "evaluate", "model": model_spec, "data": data_spec, "sample": sample, "seed": seed,
           "robustcount": __version__}
    handle = open_output(output) if output else None
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


def space_options(default_source: str):
    """--source and the space filters."""

    def decorate(command):
        for option in reversed([
            click.option("--source", "sources", multiple=True, default=(default_source,), show_default=True,
                         help="Candidate source, repeatable (union): the ten Zéroe names, zeroe (all ten), "
                              "wordnet (alias synonyms), vectors[:PATH[,VOCAB]], table:PATH, natural:PATH."),
            click.option("--stop-words", is_flag=True, help="Leave English stop words (scikit-learn's list) alone."),
            click.option("--min-length", type=click.IntRange(min=0), default=0, show_default=True),
            click.option("--max-candidates", type=click.IntRange(min=1), default=None, help="Cap per position."),
            click.option("--skip", "skip_positions", type=int, multiple=True,
                         help="Word index to leave alone (repeatable)."),
            click.option("--same-pos", is_flag=True,
                         help="Keep only substitutes with the word's POS in context (pos extra)."),
        ]):
            command = option(command)
        return command

    return decorate


def _space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed):
    """A function from an input to its space under the given options."""
    from robustcount.spaces.build import build_space, make_source

    resolved = [s for spec in sources for s in make_source(spec, seed)]  # load resources once
    stop = _stop_words() if stop_words else None
    return lambda item: build_space(item, resolved, stop_words=stop, min_length=min_length,
                                    max_candidates=max_candidates, skip_positions=skip_positions,
                                    same_pos=same_pos, seed=seed)


@cli.command()
@click.argument("text")
@space_options("wordnet")
@click.option("--radius", type=click.IntRange(min=0), default=1, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the seeded sources (shuffles).")
@click.option("--json", "as_json", is_flag=True, help="Print the space as JSON.")
def space(text, sources, stop_words, min_length, max_candidates, skip_positions, same_pos, radius, seed, as_json):
    """Print each position's candidates and |Omega_r| for TEXT."""
    built = _space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed)(text)
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
    from robustcount.report import format_table, open_output, write_jsonl

    examples = _load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                              encoding, sample, seed)
    build = _space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed)
    model = _load_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    options = {"pdp": dict(beam=beam, max_substitutions=max_substitutions, order=order),
               "textfooler": dict(setting=setting, pos_check=not no_pos_check),
               "exhaustive": dict(max_distance=max_substitutions, max_points=max_points)}[method]
    run = {"command": "attack", "method": method, "model": model_spec, "data": data_spec, "sample": sample,
           "seed": seed, "sources": list(sources), "options": options, "budget": budget,
           "robustcount": __version__}
    handle = open_output(output) if output else None
    progress = tqdm(total=len(examples), desc=method, unit="ex", file=sys.stderr, disable=None)

    def record(example, result, space):
        progress.update(1)
        if handle is not None:
            write_jsonl(handle, {**run, "id": example.id, **result.as_dict(), "gold": engine.labels[result.gold],
                                 "space_digest": space.digest(), "space_positions": len(space.positions)})

    try:
        results = run_attacks(method, engine, examples, build, options, budget, on_result=record)
    finally:
        progress.close()
        if handle is not None:
            handle.close()
    summary = summarise(results)
    if as_json:
        click.echo(json.dumps({**run, **summary}, indent=2))
        return
    click.echo(format_table(list(summary_row(summary)), [list(summary_row(summary).values())]))


@cli.command()
@model_options
@data_options
@space_options("truncate")
@click.option("--radius", type=click.IntRange(min=1), default=3, show_default=True,
              help="Certify r = 1, 2, ... up to this radius.")
@click.option("--order", type=click.Choice(["sensitivity", "importance", "text"]), default="sensitivity",
              show_default=True, help="Positions tried first.")
@click.option("--max-points", type=click.IntRange(min=1), default=1_000_000, show_default=True,
              help="Refuse (undecided) an Omega_r larger than this.")
@click.option("--time-limit", type=float, default=None, help="Seconds per example and radius.")
@click.option("--budget", type=click.IntRange(min=1), default=None, help="Model calls per example.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write one JSON line per example (with its certificates) here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def certify(model_spec, device, precision, batch_size, trust_remote_code, data_spec, text_column, label_column,
            premise_column, id_column, split, encoding, sample, seed, sources, stop_words, min_length,
            max_candidates, skip_positions, same_pos, radius, order, max_points, time_limit, budget, output,
            as_json):
    """Certify that no adversary lies within r substitutions; print the share certified at each r."""
    from robustcount.certificate import make_certificate, model_digest
    from robustcount.data import label_index
    from robustcount.models.engine import QueryEngine
    from robustcount.prove import ADVERSARIAL, CERTIFIED, certify_radii
    from robustcount.report import format_table, open_output, write_jsonl

    examples = _load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                              encoding, sample, seed)
    build = _space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed)
    model = _load_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    digest = model_digest(model)
    run = {"command": "certify", "model": model_spec, "model_digest": digest, "data": data_spec,
           "sample": sample, "seed": seed, "sources": list(sources), "radius": radius, "order": order,
           "robustcount": __version__}
    handle = open_output(output) if output else None
    certified_at = [0] * (radius + 1)
    counts = {"skipped": 0, "undecided": 0}
    try:
        for example in tqdm(examples, desc="certify", unit="ex", file=sys.stderr, disable=None):
            space = build(example.input)
            gold = label_index(example.label, engine.labels)
            with engine.example(budget) as stats:
                correct = int(engine.predict([example.input])[0]) == gold
                proofs = certify_radii(engine, space, gold, radius, order=order, max_points=max_points,
                                       time_limit=time_limit) if correct else []
            record = {**run, "id": example.id, "input": example.input, "gold": engine.labels[gold],
                      "correct": correct, "space_digest": space.digest(), "queries": stats.as_dict(),
                      "proofs": [p.as_dict() for p in proofs]}
            if not correct:
                counts["skipped"] += 1
            else:
                reached = sum(p.status == CERTIFIED for p in proofs)
                for r in range(1, reached + 1):
                    certified_at[r] += 1
                counts["undecided"] += proofs[-1].status not in (CERTIFIED, ADVERSARIAL)
                record["certified_radius"] = reached
                # The proof of the largest certified radius, and the witness that ends the next one.
                kept = ([proofs[reached - 1]] if reached else []) + [p for p in proofs if p.status == ADVERSARIAL]
                record["certificates"] = [make_certificate(example.id, space, gold, engine.labels, proof,
                                                           model_spec, digest) for proof in kept]
            if handle is not None:
                write_jsonl(handle, record)
    finally:
        if handle is not None:
            handle.close()
    n = len(examples)
    shares = {r: certified_at[r] / n for r in range(1, radius + 1)}
    summary = {**run, "examples": n, "misclassified": counts["skipped"], "undecided": counts["undecided"],
               "certified_share": shares, "queries": engine.total.as_dict()}
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(format_table(["radius", "certified", "share of examples"],
                            [(r, certified_at[r], shares[r]) for r in range(1, radius + 1)]))
    click.echo(f"\n{n} examples: {counts['skipped']} misclassified (not certified), "
               f"{counts['undecided']} undecided; {engine.total.model_calls} model calls, "
               f"{engine.total.model_seconds:.1f} s in the model")


@cli.command()
@click.argument("certificates", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--model", "model_spec", default=None,
              help="The model to check with (default: the one each certificate names).")
@click.option("--device", default="auto", show_default=True)
@click.option("--batch-size", default=64, show_default=True, type=click.IntRange(min=1))
def verify(certificates, model_spec, device, batch_size):
    """Re-check every certificate in CERTIFICATES (a `certify --output` file, or one certificate as JSON).

    Exit status 0 when all hold, 1 when any does not."""
    from robustcount.certificate import verify_certificate
    from robustcount.errors import RobustcountError
    from robustcount.models.engine import QueryEngine

    found = _read_certificates(certificates)
    failures, engines = 0, {}
    for certificate in found:
        spec = model_spec or certificate.get("model", {}).get("spec")
        if not spec:
            raise RobustcountError(f"certificate {certificate.get('example_id')} names no model; pass --model")
        if spec not in engines:
            engines[spec] = QueryEngine(_load_model(spec, device, "float32", batch_size, False), batch_size=batch_size)
        verdict = verify_certificate(certificate, engines[spec])
        failures += not verdict.holds
        click.echo(f"{certificate.get('example_id')}: {'holds' if verdict.holds else 'DOES NOT HOLD'}: "
                   f"{verdict.reason}")
    if failures:
        raise RobustcountError(f"{failures} of {len(found)} certificates do not hold")
    click.echo(f"all {len(found)} certificates hold")


def _read_certificates(path: Path) -> list[dict]:
    """Certificates from a JSON certificate or JSON lines (bare, or `certify` records)."""
    from robustcount.errors import RobustcountError

    text = path.read_text(encoding="utf-8")
    try:
        records = [json.loads(text)]
    except json.JSONDecodeError:
        try:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as err:
            raise RobustcountError(f"{path}: not JSON or JSON lines ({err.msg})") from err
    found = []
    for record in records:
        if not isinstance(record, dict):
            raise RobustcountError(f"{path}: expected JSON objects")
        if "format" in record:
            found.append(record)
        else:
            found.extend(record.get("certificates") or [])
    if not found:
        raise RobustcountError(f"{path} holds no certificate")
    return found


@cli.command()
@model_options
@data_options
@space_options("truncate")
@click.option("--radius", type=click.IntRange(min=1), default=3, show_default=True,
              help="The prover certifies up to this radius.")
@click.option("--beam", type=click.IntRange(min=1), default=10, show_default=True, help="PDP's K.")
@click.option("--max-points", type=click.IntRange(min=1), default=1_000_000, show_default=True)
@click.option("--budget", type=click.IntRange(min=1), default=None, help="Model calls per example.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write one JSON line per example here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def radius(model_spec, device, precision, batch_size, trust_remote_code, data_spec, text_column, label_column,
           premise_column, id_column, split, encoding, sample, seed, sources, stop_words, min_length,
           max_candidates, skip_positions, same_pos, radius, beam, max_points, budget, output, as_json):
    """Bracket each example's robust radius: the prover's certified r (lower) and PDP's adversary (upper)."""
    from collections import Counter

    from robustcount.attacks.pdp import pdp_attack
    from robustcount.attacks.result import SUCCESS
    from robustcount.data import label_index
    from robustcount.errors import BudgetExhausted
    from robustcount.models.engine import QueryEngine
    from robustcount.prove import CERTIFIED, certify_radii
    from robustcount.report import format_table, open_output, write_jsonl

    examples = _load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                              encoding, sample, seed)
    build = _space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed)
    model = _load_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    run = {"command": "radius", "model": model_spec, "data": data_spec, "sample": sample, "seed": seed,
           "sources": list(sources), "max_radius": radius, "beam": beam, "robustcount": __version__}
    handle = open_output(output) if output else None
    kinds = Counter()
    try:
        for example in tqdm(examples, desc="radius", unit="ex", file=sys.stderr, disable=None):
            space = build(example.input)
            gold = label_index(example.label, engine.labels)
            record = {**run, "id": example.id, "input": example.input, "lower": None, "upper": None}
            with engine.example(budget) as stats:
                try:
                    correct = int(engine.predict([example.input])[0]) == gold
                    if correct:
                        proofs = certify_radii(engine, space, gold, radius, max_points=max_points)
                        record["lower"] = sum(p.status == CERTIFIED for p in proofs)
                        found = pdp_attack(engine, space, gold, beam=beam)
                        record["upper"] = found.distance - 1 if found.status == SUCCESS else None
                except BudgetExhausted as exhausted:
                    correct, record["reason"] = True, str(exhausted)
            record["queries"] = stats.as_dict()
            if not correct:
                kind = "misclassified"
            elif record["upper"] is not None and record["lower"] == record["upper"]:
                kind = "exact"
            else:
                kind = "bracketed"
            record["kind"] = kind
            kinds[kind] += 1
            if handle is not None:
                write_jsonl(handle, record)
    finally:
        if handle is not None:
            handle.close()
    summary = {**run, "examples": len(examples), **{k: kinds[k] for k in ("exact", "bracketed", "misclassified")}}
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(format_table(["examples", "exact radius", "bracketed only", "misclassified"],
                            [(len(examples), kinds["exact"], kinds["bracketed"], kinds["misclassified"])]))


def pr_options(command):
    """--radius, --radius-share, --method, --eps, --delta."""
    for option in reversed([
        click.option("--radius", type=click.IntRange(min=0), default=None,
                     help="Radius r (default: --radius-share of each text's words, at least 1)."),
        click.option("--radius-share", type=click.FloatRange(0, 1, min_open=True), default=0.25, show_default=True),
        click.option("--method", type=click.Choice(["adaptive", "hoeffding", "clopper-pearson", "exact"]),
                     default="adaptive", show_default=True),
        click.option("--eps", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.025,
                     show_default=True),
        click.option("--delta", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.005,
                     show_default=True),
    ]):
        command = option(command)
    return command


def _estimate_all(engine, examples, build, radius, radius_share, method, eps, delta, seed, on_record, desc):
    """PR estimates for every correctly classified example; misclassified ones are recorded as such."""
    import hashlib

    from robustcount.count import estimate_pr
    from robustcount.data import label_index

    records = []
    for example in tqdm(examples, desc=desc, unit="ex", file=sys.stderr, disable=None):
        space = build(example.input)
        gold = label_index(example.label, engine.labels)
        example_seed = int(hashlib.sha256(f"{seed}:{example.id}".encode()).hexdigest()[:16], 16)
        with engine.example() as stats:
            correct = int(engine.predict([example.input])[0]) == gold
            r = radius if radius is not None else max(1, round(radius_share * len(space.tokens.words)))
            found = estimate_pr(engine, space, gold, r, method=method, eps=eps, delta=delta,
                                seed=example_seed) if correct else None
        record = {"id": example.id, "input": example.input, "gold": engine.labels[gold], "correct": correct,
                  "seed": seed, "example_seed": example_seed, "space_digest": space.digest(),
                  "estimate": None if found is None else found.as_dict(), "queries": stats.as_dict()}
        records.append(record)
        on_record(record)
    return records


@cli.command()
@model_options
@data_options
@space_options("truncate")
@pr_options
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write one JSON line per example here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def estimate(model_spec, device, precision, batch_size, trust_remote_code, data_spec, text_column, label_column,
             premise_column, id_column, split, encoding, sample, seed, sources, stop_words, min_length,
             max_candidates, skip_positions, same_pos, radius, radius_share, method, eps, delta, output, as_json):
    """Estimate PR, the share of each example's neighbourhood that keeps the label, with (eps, delta)."""
    from statistics import median

    from robustcount.count import hoeffding_n, summarise_pr
    from robustcount.models.engine import QueryEngine
    from robustcount.report import format_table, open_output, write_jsonl

    examples = _load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                              encoding, sample, seed)
    build = _space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed)
    model = _load_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    run = {"command": "estimate", "model": model_spec, "data": data_spec, "sample": sample, "seed": seed,
           "sources": list(sources), "radius": radius, "radius_share": radius_share, "method": method,
           "eps": eps, "delta": delta, "robustcount": __version__}
    handle = open_output(output) if output else None

    def save(record):
        if handle is not None:
            write_jsonl(handle, {**run, **record})

    try:
        records = _estimate_all(engine, examples, build, radius, radius_share, method, eps, delta, seed, save,
                                "estimate")
    finally:
        if handle is not None:
            handle.close()
    estimates = [r["estimate"] for r in records if r["estimate"]]
    summary = {**run, "examples": len(records), **summarise_pr([e["pr"] for e in estimates]),
               "misclassified": sum(not r["correct"] for r in records),
               "median_samples": median(e["samples"] for e in estimates) if estimates else None,
               "hoeffding_n": hoeffding_n(eps, delta), "queries": engine.total.as_dict()}
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(format_table(
        ["examples", "misclassified", "median PR", "PR > 0.9", "median samples", "Hoeffding N", "model calls"],
        [(len(records), summary["misclassified"], summary["median"], summary["share_above_0.9"],
          summary["median_samples"], summary["hoeffding_n"], engine.total.model_calls)]))
    click.echo(f"\nmethod {method}, eps {eps}, delta {delta}: each PR lies within eps of its estimate "
               f"with probability >= {1 - delta}")


@cli.command()
@click.option("--model", "model_specs", multiple=True, required=True, help="Give exactly two.")
@click.option("--device", default="auto", show_default=True)
@click.option("--batch-size", default=64, show_default=True, type=click.IntRange(min=1))
@data_options
@space_options("truncate")
@pr_options
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=Path("compare.png"),
              show_default=True, help="Violin plot of PR_hat per model.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write one JSON line per example and model here.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def compare(model_specs, device, batch_size, data_spec, text_column, label_column, premise_column, id_column,
            split, encoding, sample, seed, sources, stop_words, min_length, max_candidates, skip_positions,
            same_pos, radius, radius_share, method, eps, delta, plot, output, as_json):
    """Compare two models' PR on the same spaces and the same samples, with a paired test and a violin plot."""
    from scipy.stats import wilcoxon

    from robustcount.count import summarise_pr
    from robustcount.errors import RobustcountError
    from robustcount.models.engine import QueryEngine
    from robustcount.report import format_table, open_output, write_jsonl, violin_plot

    if len(model_specs) != 2:
        raise click.UsageError("compare needs exactly two --model options")
    examples = _load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                              encoding, sample, seed)
    build = _space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed)
    run = {"command": "compare", "models": list(model_specs), "data": data_spec, "sample": sample, "seed": seed,
           "sources": list(sources), "radius": radius, "radius_share": radius_share, "method": method,
           "eps": eps, "delta": delta, "robustcount": __version__}
    handle = open_output(output) if output else None
    per_model = {}
    try:
        for spec in model_specs:
            engine = QueryEngine(_load_model(spec, device, "float32", batch_size, False), batch_size=batch_size)

            def save(record, spec=spec):
                if handle is not None:
                    write_jsonl(handle, {**run, "model": spec, **record})

            per_model[spec] = _estimate_all(engine, examples, build, radius, radius_share, method, eps, delta,
                                            seed, save, spec)
    finally:
        if handle is not None:
            handle.close()
    a, b = model_specs
    both = [(x["estimate"]["pr"], y["estimate"]["pr"]) for x, y in zip(per_model[a], per_model[b])
            if x["estimate"] and y["estimate"]]
    if not both:
        raise RobustcountError("no example is classified correctly by both models")
    differences = [x - y for x, y in both]
    test = wilcoxon(differences) if any(differences) else None
    summaries = {spec: summarise_pr([r["estimate"]["pr"] for r in per_model[spec] if r["estimate"]])
                 for spec in model_specs}
    violin_plot({spec: [r["estimate"]["pr"] for r in per_model[spec] if r["estimate"]] for spec in model_specs},
                plot, f"PR on {data_spec} ({method}, eps {eps}, delta {delta})")
    summary = {**run, "models_summary": summaries, "paired_examples": len(both),
               "mean_difference": sum(differences) / len(differences),
               "wilcoxon_p": None if test is None else float(test.pvalue), "plot": str(plot)}
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(format_table(["model", "estimated", "median PR", "PR > 0.9"],
                            [(spec, s["estimated"], s["median"], s["share_above_0.9"]) for spec, s in summaries.items()]))
    p_value = "n/a (no differences)" if test is None else f"{test.pvalue:.4g}"
    click.echo(f"\npaired on {len(both)} examples: mean PR({a}) - PR({b}) = {summary['mean_difference']:.4f}, "
               f"Wilcoxon signed-rank p = {p_value}; plot: {plot}")


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
