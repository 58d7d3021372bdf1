"""Forgeries of a certify run, field by field: every field of its header, records, proofs and
certificates edited to a wrong but well-typed value is refused by `verify` (or its edit provably
changes no claim: `HARMLESS`), and edited to an ill-typed value (null, a string, a number of 5,000
digits, a nested object, NaN) is refused by `verify` and `report` in lines of their own, never an
internal error. Also the edits an audit found `verify` accepted: an adversarial certificate's
recorded margin, the header's precision."""

import copy
import json

import pytest

from robustcount.cli import main
from robustcount.proofs.certificate import verify_certificate
from robustcount.models.engine import QueryEngine

HUGE = "1" * 5000
ILL_TYPED = {"null": None, "a string": "x", "a 5000-digit number": "@HUGE@", "a nested object": {"a": {"b": []}},
             "NaN": "@NAN@", "a 5000-digit string": HUGE}


@pytest.fixture(scope="module")
def honest_run(tmp_path_factory):
    """A bow-rt certify run (lines, header first) with a record of each kind: certified, adversarial,
    undecided (past max_points) and misclassified."""
    folder = tmp_path_factory.mktemp("honest")
    out = folder / "run.jsonl"
    assert main(["certify", "--model", "bow-rt", "--first", "8", "--radius", "2", "--max-points", "40",
                 "--output", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for kind in KINDS:
        _record(lines, kind)  # StopIteration if the run lacks one
    return lines


KINDS = {
    "certified": lambda r: r.get("certified_radius", 0) >= 1 and len(r["certificates"]) == 1,
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
    assert certificate["smallest_margin_point"]
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
