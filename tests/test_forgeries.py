"""Forgeries of a certify run, field by field: every field of its header, records, proofs and
certificates edited to a wrong but well-typed value is refused by `verify` (or its edit provably
changes no claim: `HARMLESS`), and edited to an ill-typed value (null, a string, a number of 5,000
digits, a nested object, NaN) is refused by `verify` and `report` in lines of their own, never an
internal error. Also the edits an audit found `verify` accepted: an adversarial certificate's
recorded margin, the header's precision."""

import copy
import json
from dataclasses import fields

import pytest

from robustcount.cli import main
from robustcount.commands.certify import CertifyOptions
from robustcount.errors import RobustcountError
from robustcount.models.engine import QueryEngine
from robustcount.proofs.certificate import verify_certificate
from robustcount.proofs.records import DATA_FIELDS, HEADER_FIELDS, MODEL_FIELDS, OPTION_FIELDS, SERVED_FIELDS, run_problems
from robustcount.runs.files import read_run
from tests.test_inflight import TEXTS, contextual_certify, stopped_after_keeping

HUGE = "1" * 5000
ILL_TYPED = {"null": None, "a string": "x", "a 5000-digit number": "@HUGE@", "a nested object": {"a": {"b": []}},
             "NaN": "@NAN@", "a 5000-digit string": HUGE}


@pytest.fixture(scope="module")
def honest_run(tmp_path_factory):
    """A bow-rt certify run (lines, header first) with a record of each kind: certified at r = 2
    (a proof at r = 1 without a certificate of its own), adversarial, undecided (past max_points)
    and misclassified."""
    folder = tmp_path_factory.mktemp("honest")
    out = folder / "run.jsonl"
    assert main(["certify", "--model", "bow-rt", "--first", "8", "--radius", "2", "--max-points", "100",
                 "--output", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for kind in KINDS:
        _record(lines, kind)  # StopIteration if the run lacks one
    return lines


KINDS = {
    "certified": lambda r: r.get("certified_radius") == 2,
    "adversarial": lambda r: r.get("certified_radius") == 0 and r["certificates"],
    "undecided": lambda r: r.get("undecided"),
    "misclassified": lambda r: not r["correct"],
}


def _record(lines, kind) -> dict:
    return next(r for r in lines[1:] if KINDS[kind](r))


def _write(path, lines) -> None:
    text = "".join(json.dumps(line) + "\n" for line in lines)
    path.write_text(text.replace('"@HUGE@"', HUGE).replace('"@NAN@"', "NaN"))


def _checked(capsys, path, *, report_too: bool = True) -> tuple[int, int | None, str]:
    """verify's and report's exit codes on `path`, and all they printed (no traceback allowed)."""
    capsys.readouterr()
    verified = main(["verify", str(path)])
    reported = main(["report", str(path), "--out", str(path.parent / "report")]) if report_too else None
    printed = capsys.readouterr()
    said = printed.out + printed.err
    assert "internal error" not in said and "Traceback" not in said, said
    return verified, reported, said


def test_an_adversarial_certificates_recorded_margin_must_be_its_witnesss(honest_run, bow_rt):
    certificate = copy.deepcopy(_record(honest_run, "adversarial")["certificates"][-1])
    assert verify_certificate(certificate, QueryEngine(bow_rt)).holds
    certificate["smallest_margin"] = 0.9
    verdict = verify_certificate(certificate, QueryEngine(bow_rt))
    assert not verdict.holds and "the witness's margin is" in verdict.reason


def test_a_certified_certificates_smallest_margin_point_must_hold_its_margin(honest_run, bow_rt):
    certificate = copy.deepcopy(_record(honest_run, "certified")["certificates"][0])
    assert certificate["smallest_margin_point"] and certificate["radius"] == 2
    certificate["smallest_margin_point"] = []  # the clean input, whose margin is another
    verdict = verify_certificate(certificate, QueryEngine(bow_rt))
    assert not verdict.holds and "the margin at its smallest_margin_point" in verdict.reason
    certificate.update(smallest_margin=None, smallest_margin_point=None)
    verdict = verify_certificate(certificate, QueryEngine(bow_rt))
    assert not verdict.holds and "records no smallest margin" in verdict.reason


def test_a_header_whose_precision_is_edited_is_refused(honest_run, tmp_path, capsys):
    lines = copy.deepcopy(honest_run)
    assert lines[0]["models"][0]["precision"] == "float32"
    lines[0]["models"][0]["precision"] = "bfloat16"
    _write(tmp_path / "run.jsonl", lines)
    verified, _, said = _checked(capsys, tmp_path / "run.jsonl", report_too=False)
    assert verified == 1 and "bfloat16" in said


@pytest.mark.parametrize("where", ["certificate", "proof"])
def test_a_count_of_5000_digits_is_refused_in_one_line(honest_run, tmp_path, capsys, where):
    lines = copy.deepcopy(honest_run)
    record = _record(lines, "certified")
    if where == "certificate":
        record["certificates"][0]["points"] = HUGE
    else:
        record["proofs"][0]["total"] = HUGE
    _write(tmp_path / "run.jsonl", lines)
    verified, reported, said = _checked(capsys, tmp_path / "run.jsonl")
    assert verified == reported == 1 and f"example {record['id']}" in said
    if where == "certificate":  # alone, a bare certificate
        (tmp_path / "certificate.json").write_text(json.dumps(record["certificates"][0]))
        verified, _, said = _checked(capsys, tmp_path / "certificate.json", report_too=False)
        assert verified == 1 and "points and checked must be decimal strings" in said


def test_a_proof_without_a_certificate_of_its_own_has_its_margin_checked(honest_run, tmp_path, capsys):
    lines = copy.deepcopy(honest_run)
    inner = _record(lines, "certified")["proofs"][0]  # r = 1: the certificate is r = 2's
    inner["smallest_margin"] = 0.9
    _write(tmp_path / "run.jsonl", lines)
    verified, _, said = _checked(capsys, tmp_path / "run.jsonl", report_too=False)
    assert verified == 1 and "proof 1: the margin at its smallest_margin_point" in said


# -- The sweep: every field, edited.

PARTS = {  # what is edited: the record of a kind (None: the header) and where in it
    "header": (None, ()),
    "certified record": ("certified", ()),
    "its proof at r = 1 (no certificate of its own)": ("certified", ("proofs", 0)),
    "its proof at r = 2": ("certified", ("proofs", 1)),
    "its certificate": ("certified", ("certificates", 0)),
    "an adversarial proof": ("adversarial", ("proofs", 0)),
    "an adversarial certificate": ("adversarial", ("certificates", 0)),
    "an undecided record": ("undecided", ()),
    "a misclassified record": ("misclassified", ()),
}
HARMLESS = {
    "chunk_size": "how the examples were cut into units of work: no result depends on it",
    "python": "provenance only", "dependencies": "provenance only",
    "models.0.batch_size": "verify batches as it is told; batch invariance is the engine's probe's",
    "models.0.trust_remote_code": "verify never runs a checkpoint's code whatever a file says",
    "options.time_limit": "a limit ends a search undecided; a reason says so, nothing is claimed",
    "options.budget": "likewise",
    "options.max_points": "a proof over more points than it must be undecided: checked, and the edit "
                          "keeps the records consistent",
    "data.text_column": "demo data have no columns", "data.label_column": "likewise", "data.id_column": "likewise",
    "data.premise_column": "likewise", "data.split": "likewise",
    "data.spec": "data that are not at hand are not checked, and verify says so",
    "queries": "the engine's counters: only a re-run shows them (docs/certificates.md)",
    "data.label_map": "deleted, read as null: the value it had", "data.sample": "likewise",
    "options.method": "deleted, read as an earlier run's, which enumerated: so did this one (bound proofs are refused)",
}

DELETABLE = {  # (header or record, the field) -> why deleting it claims nothing (any other edit is refused)
    ("header", ("models", 0, "prompt")): "read as null, bow-rt's; a language model's digest covers its prompt",
    ("header", ("models", 0, "verbalizer")): "likewise",
    ("header", ("models", 0, "calibration")): "read as auto, bow-rt's; a language model's digest covers it",
    ("record", ("space_coverage",)): "records written before it have none, and a summary then names no coverage; "
                                     "one present is checked against the space rebuilt",
}


def _leaves(value, path=()):
    """Every field under `value` (the first entry standing for a list's), as (path, value)."""
    yield path, value
    children = value.items() if isinstance(value, dict) else list(enumerate(value))[:1] if isinstance(value, list) \
        else ()
    for key, child in children:
        if key != "definition" and not (path and path[0] == "dependencies"):  # the header's, swept there
            yield from _leaves(child, (*path, key))


def _wrong(value):
    """A well-typed value other than `value`, or None."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1 if isinstance(value, int) else -value - 0.5
    if isinstance(value, str):
        return str(int(value) + 1) if value.isdigit() else value + "x"
    if isinstance(value, list):
        return value[:-1] if value else None
    return {**value, "extra": 1} if isinstance(value, dict) else None


def _harmless(part: str, path: tuple) -> bool:
    dotted = ".".join(map(str, path))
    return part == "header" and any(dotted == key or dotted.startswith(key + ".") for key in HARMLESS) or \
        "queries" in path


@pytest.mark.parametrize("part", list(PARTS))
def test_every_field_forged_is_refused_or_harmless_and_never_an_internal_error(honest_run, tmp_path, capsys, part):
    kind, where = PARTS[part]
    base = honest_run[0] if kind is None else _record(honest_run, kind)
    for step in where:
        base = base[step]
    wrong = []
    for path, value in list(_leaves(base)):
        if not path:
            continue
        edits = [("well-typed", _wrong(value))] + [(name, v) for name, v in ILL_TYPED.items() if v != value]
        for name, new in edits + [("deleted", KeyError)]:
            if new is None and name == "well-typed":
                continue
            lines = copy.deepcopy(honest_run)
            target = lines[0] if kind is None else _record(lines, kind)
            for step in (*where, *path[:-1]):
                target = target[step]
            if new is KeyError:
                del target[path[-1]]
            else:
                target[path[-1]] = new
            _write(tmp_path / "run.jsonl", lines)
            try:
                read_run(tmp_path / "run.jsonl")  # what report and every summary read it with
                refused = False
            except RobustcountError:
                refused = True
            deletable = ("header" if kind is None else "record", path) in DELETABLE and not where
            if refused or _harmless(part, path) or new is KeyError and deletable:
                continue
            verified, _, said = _checked(capsys, tmp_path / "run.jsonl", report_too=False)
            if verified != 1:
                shown = "" if new is KeyError else json.dumps(new)[:40]
                wrong.append(f"{'.'.join(map(str, path))} {name} {shown}: verify accepts it")
    assert not wrong, wrong


def test_the_header_fields_the_run_checks_know_are_those_certify_writes(honest_run):
    header = honest_run[0]
    only_some = {"window"} | SERVED_FIELDS  # a windowed model's, a served model's
    assert set(header) == HEADER_FIELDS and set(header["models"][0]) == MODEL_FIELDS - only_some
    assert set(header["data"]) <= DATA_FIELDS and set(header["options"]) == OPTION_FIELDS


def test_the_header_options_are_held_to_the_bounds_certify_options_declare(honest_run):
    """The run checks refuse a header option outside `CertifyOptions`' declared bounds and choices
    with the message building those options gives, whatever the declaration says."""
    refused = 0
    for f in fields(CertifyOptions):
        declared = f.metadata["option"]
        bad = ["no such choice"] if declared["choices"] else \
            [v for v in (declared["minimum"] - 1 if declared["minimum"] is not None else None,
                         declared["maximum"] + 1 if declared["maximum"] is not None else None) if v is not None]
        for value in bad:
            header = copy.deepcopy(honest_run[0])
            header["options"][f.name] = value
            with pytest.raises(RobustcountError) as built:
                CertifyOptions(**{**honest_run[0]["options"], f.name: value})
            problems = run_problems(header, honest_run[1:])
            assert [str(p) for p in problems][:1] == [f"the run header: options: {built.value}"]
            refused += 1
    assert refused == 7  # radius (both ends), method, order, max_points, time_limit, budget


def test_a_kept_space_with_a_candidate_dropped_is_read_but_the_run_does_not_verify(tmp_path, capsys, monkeypatch):
    """A space kept beside a run file (`runs/kept_spaces.py`) is read by the resumed run once it is
    of the text and the definition and every list comes from the sources; what the scores decided is
    not re-checked there, so a list forged shorter goes into the run, whose verify rebuilds it and
    refuses it."""
    data = tmp_path / "texts.csv"
    data.write_text("text,label\n" + "".join(f"{text},positive\n" for text in TEXTS))
    out = tmp_path / "run.jsonl"
    assert stopped_after_keeping(monkeypatch, data, out, 1) == 130
    kept = out.with_name(f".{out.name}.example-0.spaces")
    saved = json.loads(kept.read_text())
    kind, index, candidates, sources = saved["spaces"][0]["positions"][0]
    assert len(candidates) > 2
    saved["spaces"][0]["positions"][0] = [kind, index, candidates[:-1], sources[:-1]]  # one kept candidate dropped
    kept.write_text(json.dumps(saved))
    assert contextual_certify(data, out, "--resume") == 0
    verified, _, said = _checked(capsys, out, report_too=False)
    assert verified == 1 and "DOES NOT HOLD" in said and "differ from those the space's definition builds" in said, said
