"""Command `verify`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from robustcount.cli.common import model_from, model_options, utf8_text
from robustcount.cli.group import cli
from robustcount.errors import RobustcountError
from robustcount.models.zoo import MODELS
from robustcount.proofs.certificate import record_problem, structure_problem, verify_certificate
from robustcount.runs.files import read_run


@cli.command()
@click.argument("certificates", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--model", "model_spec", default=None,
              help="The model to check with: yours (a directory, py:module:function, ...). Without it, "
                   "only certificates naming a built-in model (`robustcount models`) can be checked.")
@model_options(only=("device", "batch_size"))
@click.option("--allow-files", is_flag=True,
              help="Rebuild table: and natural: sources from the files the certificates name (regular files only).")
def verify(certificates, model_spec, allow_files, **options):
    """Re-check every certificate in CERTIFICATES (a `certify --output` file, or one certificate as JSON).

    A certificate is data: nothing it names is imported or run. Every certificate's structure is
    checked before any model is loaded; the model is --model, or a built-in model the certificate
    names. Exit status 0 when all hold, 1 when any does not."""
    records, found = _read_certificates(certificates)
    problems = {i: structure_problem(c) for i, c in enumerate(found)}
    inconsistent = [(record.get("id"), problem) for record in records if (problem := record_problem(record))]
    for name, problem in inconsistent:
        click.echo(f"{name}: DOES NOT HOLD: the run record disagrees with its certificates: {problem}")
    if model_spec is None:
        for i, certificate in enumerate(found):
            named = certificate["model"]["spec"] if problems[i] is None else None
            if named is not None and named not in MODELS:
                raise RobustcountError(f"certificate {certificate['example_id']} names the model {named!r}; verify "
                                       "loads built-in models only, so pass your copy with --model")
    failures, engines = len(inconsistent), {}
    for i, certificate in enumerate(found):
        name = certificate.get("example_id") if isinstance(certificate, dict) else None
        if problems[i] is not None:
            failures += 1
            click.echo(f"{name}: DOES NOT HOLD: malformed certificate: {problems[i]}")
            continue
        spec = model_spec or certificate["model"]["spec"]
        if spec not in engines:
            engines[spec] = model_from(options, spec=spec).engine()
        verdict = verify_certificate(certificate, engines[spec], allow_files=allow_files)
        failures += not verdict.holds
        click.echo(f"{name}: {'holds' if verdict.holds else 'DOES NOT HOLD'}: {verdict.reason}")
    for spec, engine in engines.items():
        click.echo(f"{spec}: {engine.batching()}")
    if failures:
        raise RobustcountError(f"{failures} of {len(found)} certificates (or their run records) do not hold")
    click.echo(f"all {len(found)} certificates hold")


def _is_run_header(line: str) -> bool:
    try:
        first = json.loads(line)
    except json.JSONDecodeError:
        return False
    return isinstance(first, dict) and first.get("record") == "run"


def _read_certificates(path: Path) -> tuple[list[dict], list]:
    """The `certify` records and every certificate of a JSON certificate or JSON lines (bare
    certificates, or `certify` records)."""
    text = utf8_text(path.read_bytes(), str(path))
    if _is_run_header(text.partition("\n")[0]):  # a run file: read as `report` reads it, a torn last line left out
        if not text.endswith("\n"):
            click.echo(f"{path}: its last line is incomplete (a run killed while writing): left out", err=True)
        records = read_run(path).records
    else:
        try:
            records = [json.loads(text)]
        except json.JSONDecodeError:
            try:
                records = [json.loads(line) for line in text.split("\n") if line.strip()]
            except json.JSONDecodeError as err:
                raise RobustcountError(f"{path}: not JSON or JSON lines ({err.msg})") from err
    found, runs = [], []
    for record in records:
        if not isinstance(record, dict):
            raise RobustcountError(f"{path}: expected JSON objects")
        if "format" in record:
            found.append(record)
        else:
            certificates = record.get("certificates") or []
            found.extend(certificates if isinstance(certificates, list) else [certificates])
            runs.append(record)
    if not found:
        raise RobustcountError(f"{path} holds no certificate")
    return runs, found
