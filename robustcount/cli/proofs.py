"""Command `verify`."""

from __future__ import annotations

import json
from dataclasses import field, fields
from pathlib import Path

import click

from robustcount.cli.common import MODEL, model_from, model_options, utf8_text
from robustcount.cli.group import cli
from robustcount.cli.options import click_options, from_options
from robustcount.commands import read_run
from robustcount.data import DataSpec, json_error
from robustcount.errors import RobustcountError
from robustcount.models.device import precision_of
from robustcount.models.identity import current_digest
from robustcount.models.spec import ModelSpec
from robustcount.models.zoo import MODELS
from robustcount.options import option, options_dataclass
from robustcount.proofs.certificate import (
    Verdict,
    proof_margins_problem,
    structure_problem,
    verify_certificate,
    window_problem,
)
from robustcount.proofs.certify_record import WINDOW_FIELD, record_space_problem
from robustcount.proofs.rebuild import rebuilt_space_like
from robustcount.proofs.records import RunProblem, data_problems, run_problems
from robustcount.runs.files import Run
from robustcount.spaces.space import window_note


@options_dataclass
class VerifyOptions:
    """What `verify` checks with besides the model options: the model, the files sources name, the data."""

    model: str | None = field(default=None, metadata=option(
        "The model to check with: yours (a directory, py:module:function, ...). Without it, only certificates "
        "naming a built-in model (`robustcount models`) can be checked.", kind=str))
    allow_files: bool = field(default=False, metadata=option(
        "Rebuild table: and natural: sources from the files the certificates name (regular files only).", flag=True))
    data: str | None = field(default=None, metadata=option(
        "The data a certify run was made of, to check that its records are that data's examples (default: the "
        "data its header names, when they are demo: data or a file here).", kind=str))


VERIFY = "verify_"
"""The prefix under which `VerifyOptions` are parsed."""


@cli.command()
@click.argument("certificates", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click_options(VerifyOptions, VERIFY, only=("model",))
@model_options(only=("device", "batch_size", "trust_remote_code", "prompt", "verbalizer", "calibration",
                     "top_logprobs"))
@click_options(VerifyOptions, VERIFY, only=("allow_files", "data"))
def verify(certificates, **options):
    """Re-check every certificate in CERTIFICATES (a `certify --output` file, or one certificate as JSON).

    A certificate is data: nothing it names is imported or run. A run file is checked as a whole
    first (its header, every record against its certificates and proofs, no example twice, and
    the records against the data it names when those are at hand), and every certificate's
    structure, before any model is loaded; the model is --model, or a built-in
    model the certificate names, run at the precision the run header records (bare certificates:
    float32). Exit status 0 when all hold, 1 when any does not."""
    own = from_options(VerifyOptions, VERIFY, options)
    model_spec, allow_files, data_spec = own.model, own.allow_files, own.data
    owners, found, problems, examples, run = _read_certificates(certificates)
    if run is not None and not problems:
        problems = _data_checked(run, data_spec)
    for problem in problems:
        click.echo(f"{'the run header' if problem.example is None else problem.example}: DOES NOT HOLD: "
                   f"{problem.what}")
    refused = {p.index for p in problems}  # None: the header, so every record
    checked = [i for i, owner in enumerate(owners) if owner not in refused and None not in refused]
    structure = {i: structure_problem(found[i]) for i in checked}
    if model_spec is None:
        _refuse_models_not_built_in(found, structure)
    failed, engines = set(), {}
    records = {record["index"]: record for record in run.records} if run is not None else {}
    margins_checked = set()
    for i in checked:
        certificate = found[i]
        name = certificate.get("example_id") if isinstance(certificate, dict) else None
        if structure[i] is not None:
            failed.add(i)
            click.echo(f"{name}: DOES NOT HOLD: malformed certificate: {structure[i]}")
            continue
        spec = model_spec or certificate["model"]["spec"]
        if spec not in engines:
            engines[spec] = _engine(options, spec, run)
        verdict = verify_certificate(certificate, engines[spec], allow_files=allow_files)
        if verdict.holds and run is not None and owners[i] not in margins_checked:  # the record's proofs, once
            margins_checked.add(owners[i])
            problem = proof_margins_problem(records[owners[i]]["proofs"], certificate, engines[spec])
            verdict = verdict if problem is None else Verdict(False, problem)
        if not verdict.holds:
            failed.add(i)
        definition = certificate["space"]["definition"]
        covers = "" if not verdict.holds or definition.get("window") is None else \
            f"; {window_note(definition['window'], bool(definition['filters'].get('keep_beyond_window')))}"
        click.echo(f"{name}: {'holds' if verdict.holds else 'DOES NOT HOLD'}: {verdict.reason}{covers}")
    for spec, engine in engines.items():
        click.echo(f"{spec}: {engine.batching()}")
    if run is not None and None not in refused:
        run_spec = model_spec or run.header["models"][0]["spec"]

        def engine_of():  # the run's model, loaded when a record's window is to be checked against it
            if run_spec not in engines and (model_spec is not None or run_spec in MODELS):
                engines[run_spec] = _engine(options, run_spec, run)
            return engines.get(run_spec)

        refused |= _spaces_checked(run, refused | set(owners), allow_files, engine_of)
    _refuse_failures(found, examples, owners, refused, failed)
    click.echo(f"all {len(found)} certificates hold")


def _refuse_models_not_built_in(found: list, structure: dict) -> None:
    """Without --model: refuse, before any model loads, a well-formed certificate among those
    checked (the keys of `structure`, each None when well formed) that names a model not built in."""
    for i in structure:
        named = found[i]["model"]["spec"] if structure[i] is None else None
        if named is not None and named not in MODELS:
            raise RobustcountError(f"certificate {found[i]['example_id']} names the model {named!r}; verify "
                                   "loads built-in models only, so pass your copy with --model")


def _refuse_failures(found: list, examples, owners: list, refused: set, failed: set) -> None:
    """Raise, saying how many, when a certificate `failed` or (for a run, whose `examples` are not
    None) a record was `refused` (None among them: the header, so every example)."""
    if examples is None:  # bare certificates
        if failed:
            raise RobustcountError(f"{len(failed)} of {len(found)} certificates do not hold")
    elif refused or failed:
        bad = examples if None in refused else refused | {owners[i] for i in failed}
        raise RobustcountError(f"{len(bad)} of {len(examples)} examples do not hold (their run records or "
                               "certificates)")


def _engine(options: dict, spec: str, run: Run | None):
    """The query engine verify checks with: the model `spec` at the precision the run header
    records (float32 for bare certificates), refused in one line when that model's weight digest
    is not the header's (a precision other than the run's changes a torch model's digest)."""
    precision = run.header["models"][0]["precision"] if run is not None else "float32"
    try:
        prompting = {MODEL + name: value for name, value in _prompting(options, run).items()}
        engine = model_from({**options, **prompting}, spec=spec, precision=precision).engine()
    except RobustcountError as err:
        raise RobustcountError(f"the model as the run records it (at precision {precision}): {err}") from err
    ran = precision_of(engine.model)
    if ran is not None and ran != precision:
        raise RobustcountError(f"the run header: DOES NOT HOLD: it records the precision {precision}, the model "
                               f"{spec} runs at {ran}")
    recorded = run.header["models"][0]["digest"] if run is not None else engine.digest()
    if engine.digest() != current_digest(recorded):
        raise RobustcountError(f"the run header: DOES NOT HOLD: the model {spec} at precision {precision} has the "
                               f"weight digest {str(engine.digest())[:12]}, the header records {str(recorded)[:12]}")
    return engine


PROMPTING = {f.name: f.default for f in fields(ModelSpec)
             if f.name in ("prompt", "verbalizer", "calibration", "top_logprobs")}
"""A language model's options and their defaults (`ModelSpec`'s), which a run header records (a
served model's top_logprobs: the first tokens it was asked for, when given)."""


def _prompting(options: dict, run: Run | None) -> dict:
    """The prompt, verbaliser, calibration (and a served model's top_logprobs) verify runs the
    model with: those given, else those the run header records (so a run's certificates verify
    without typing them again); one given that is not the one recorded is refused in one line."""
    chosen = {}
    for name, default in PROMPTING.items():
        given = options[MODEL + name]
        recorded = run.header["models"][0].get(name, default) if run is not None else default
        if given != default and recorded != default and given != recorded:
            raise RobustcountError(f"--{name} {given!r} is not the one the run records ({recorded!r})")
        chosen[name] = given if given != default else recorded
    return chosen


def _spaces_checked(run: Run, skipped: set, allow_files: bool, engine_of) -> set:
    """The indices of the records (but the `skipped`, refused or with certificates) whose space
    digest, positions and proof counts are not those of their input's space rebuilt from the
    run's definition (within the window the record names, which must be the window of the run's
    model, `engine_of()`, when it can be loaded), each said in one line (a record without
    certificates carries no space)."""
    failed = set()
    for record in run.records:
        if record["index"] in skipped:
            continue
        item = tuple(record["input"]) if isinstance(record["input"], list) else record["input"]
        window = record.get(WINDOW_FIELD)
        definition = run.header["space"] if window is None else {**run.header["space"], "window": window}
        space = rebuilt_space_like(definition, item, record.get("space_digest"), allow_files)
        problem = space if isinstance(space, str) else record_space_problem(record, space)
        if problem is None and window is not None and (engine := engine_of()) is not None:
            problem = window_problem(space, engine)
        if problem is not None:
            failed.add(record["index"])
            click.echo(f"{record['id']}: DOES NOT HOLD: {problem}")
    return failed


def _is_run_header(line: str) -> bool:
    try:
        first = json.loads(line)
    except ValueError:  # not JSON, or an integer past Python's digit limit
        return False
    return isinstance(first, dict) and first.get("record") == "run"


def _read_certificates(path: Path) -> tuple[list, list, list[RunProblem], set | None, Run | None]:
    """The certificates of a JSON certificate, JSON lines of certificates or a `certify` run file:
    each certificate's example (its record's index; None for a bare certificate), the certificates,
    the run file's problems (`proofs.records.run_problems`), its examples' indices and the run
    (both None for bare certificates)."""
    text = utf8_text(path.read_bytes(), str(path))
    if _is_run_header(text.partition("\n")[0]):  # a run file: read as `report` reads it, a torn last line left out
        if not text.endswith("\n"):
            click.echo(f"{path}: its last line is incomplete (a run killed while writing): left out", err=True)
        run = read_run(path, checked=False)
        if run.header.get("command") != "certify":
            raise RobustcountError(f"{path} is a {run.header.get('command')} run: verify checks certify runs and "
                                   "certificates")
        owners, found = [], []
        for record in run.records:
            certificates = record.get("certificates")
            for certificate in certificates if isinstance(certificates, list) else []:
                owners.append(record["index"])
                found.append(certificate)
        problems = run_problems(run.header, run.records)
        if not found and not problems:
            raise RobustcountError(f"{path} holds no certificate")
        return owners, found, problems, {record["index"] for record in run.records}, run
    try:
        found = [json.loads(text)]
    except ValueError:
        try:
            found = [json.loads(line) for line in text.split("\n") if line.strip()]
        except ValueError as err:  # not JSON, or an integer past Python's digit limit
            raise RobustcountError(f"{path}: not JSON or JSON lines ({json_error(err)})") from err
    for number, certificate in enumerate(found, start=1):
        if not isinstance(certificate, dict) or "format" not in certificate:
            raise RobustcountError(f"{path}: line {number} holds no certificate (a certify run is checked as its "
                                   "whole file, header line included)")
    if not found:
        raise RobustcountError(f"{path} holds no certificate")
    return [None] * len(found), found, [], None, None


def _data_checked(run: Run, data_spec: str | None) -> list[RunProblem]:
    """`data_problems` of `run` against `data_spec`, or the data its header names when they are
    demo: data or a file here; without them, one line says the data were not checked."""
    data = run.header["data"]
    spec = data_spec or data.get("spec")
    if data_spec is None and not (isinstance(spec, str) and (spec.startswith("demo:") or Path(spec).is_file())):
        click.echo(f"data: not checked ({spec!r} is not here): pass --data to check that the records are the "
                   "data's examples")
        return []
    examples = DataSpec.from_header({**data, "spec": spec}).load(run.header["seed"])
    problems = data_problems(run.header, run.records, examples)
    if not problems:
        click.echo(f"data: the records are those of {spec} ({len(examples)} examples)")
    return problems
