"""Commands `certify`, `verify` and `radius`."""

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
    from robustcount.report import format_table, results_file

    examples = load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                             encoding, sample, seed)
    build = space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed)
    model = load_cli_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    digest = model_digest(model)
    run = {"command": "certify", "model": model_spec, "model_digest": digest, "data": data_spec,
           "sample": sample, "seed": seed, "sources": list(sources), "radius": radius, "order": order,
           "robustcount": __version__}
    certified_at = [0] * (radius + 1)
    counts = {"skipped": 0, "undecided": 0}
    with results_file(output, run) as save:
        for example in tqdm(examples, desc="certify", unit="ex", file=sys.stderr, disable=None):
            space = build(example.input)
            gold = label_index(example.label, engine.labels)
            with engine.example(budget) as stats:
                correct = int(engine.predict([example.input])[0]) == gold
                proofs = certify_radii(engine, space, gold, radius, order=order, max_points=max_points,
                                       time_limit=time_limit) if correct else []
            record = {"id": example.id, "input": example.input, "gold": engine.labels[gold],
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
            save(record)
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
            engines[spec] = QueryEngine(load_cli_model(spec, device, "float32", batch_size, False), batch_size=batch_size)
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
    from robustcount.report import format_table, results_file

    examples = load_examples(data_spec, text_column, label_column, premise_column, id_column, split,
                             encoding, sample, seed)
    build = space_builder(sources, stop_words, min_length, max_candidates, skip_positions, same_pos, seed)
    model = load_cli_model(model_spec, device, precision, batch_size, trust_remote_code)
    engine = QueryEngine(model, batch_size=batch_size)
    run = {"command": "radius", "model": model_spec, "data": data_spec, "sample": sample, "seed": seed,
           "sources": list(sources), "max_radius": radius, "beam": beam, "robustcount": __version__}
    kinds = Counter()
    with results_file(output, run) as save:
        for example in tqdm(examples, desc="radius", unit="ex", file=sys.stderr, disable=None):
            space = build(example.input)
            gold = label_index(example.label, engine.labels)
            record = {"id": example.id, "input": example.input, "lower": None, "upper": None}
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
            save(record)
    summary = {**run, "examples": len(examples), **{k: kinds[k] for k in ("exact", "bracketed", "misclassified")}}
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(format_table(["examples", "exact radius", "bracketed only", "misclassified"],
                            [(len(examples), kinds["exact"], kinds["bracketed"], kinds["misclassified"])]))
