import json

import pytest

from robustcount.cli import main
from robustcount.runs import read_run
from robustcount.runs.summaries import summarise_run
from robustcount.spaces.space import Position, Space
from tests.factories import SENTIMENT_TABLE


def summary_and_records(capsys, out, *arguments: str) -> tuple[dict, list[dict]]:
    """Run `robustcount ARGUMENTS --output OUT --json` (which must succeed): the summary it prints
    and the records of its run file."""
    assert main([*arguments, "--output", str(out), "--json"]) == 0
    return json.loads(capsys.readouterr().out), read_run(out).records


def test_certify_prints_shares_and_writes_checkable_certificates(capsys, tmp_path):
    out = tmp_path / "certs.jsonl"
    summary, records = summary_and_records(capsys, out, "certify", "--model", "bow-rt", "--sample", "8", "--radius", "2")
    assert summary["examples"] == len(records) == 8
    shares = summary["certified_share"]
    assert shares["1"] >= shares["2"]
    for r in records:
        if r["correct"]:
            statuses = [c["status"] for c in r["certificates"]]
            assert statuses.count("certified") == (1 if r["certified_radius"] else 0)
            if r["certified_radius"]:
                assert r["certificates"][0]["radius"] == r["certified_radius"]
    assert main(["verify", str(out)]) == 0
    certificates = sum(len(r.get("certificates", [])) for r in records)
    assert capsys.readouterr().out.splitlines()[-1] == f"all {certificates} certificates hold" and certificates


def test_verify_fails_with_status_1_on_a_tampered_file(capsys, tmp_path):
    out = tmp_path / "certs.jsonl"
    assert main(["certify", "--model", "bow-rt", "--sample", "12", "--radius", "1", "--output", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    target = next(c for r in lines for c in r.get("certificates", []) if c["status"] == "certified")
    target["checked"] = "1"
    out.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    captured = capsys.readouterr()
    assert "DOES NOT HOLD" in captured.out and "do not hold" in captured.err


def test_verify_refuses_files_without_certificates(capsys, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text('{"id": 1}\n')
    assert main(["verify", str(path)]) == 1
    assert "no certificate" in capsys.readouterr().err


def test_radius_brackets_every_example(capsys, tmp_path):
    out = tmp_path / "radius.jsonl"
    assert main(["radius", "--model", "bow-rt", "--sample", "8", "--radius", "2", "--output", str(out),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["exact"] + summary["bracketed"] + summary["misclassified"] == 8
    for r in read_run(out).records:
        if r["lower"] is not None and r["upper"] is not None:
            assert r["lower"] <= r["upper"]
            assert (r["kind"] == "exact") == (r["lower"] == r["upper"])


def honest_certificate(bow_rt) -> dict:
    from robustcount.models.engine import QueryEngine
    from robustcount.proofs.certificate import make_certificate
    from robustcount.proofs.prover import CERTIFIED, prove
    from robustcount.spaces.build import build_space

    space = build_space("a wonderful film", ["truncate"])
    engine = QueryEngine(bow_rt)
    proof = prove(engine, space, 1, 1)
    assert proof.status == CERTIFIED
    return make_certificate("ex", space, 1, bow_rt.labels, proof, "bow-rt", bow_rt.digest(), engine.batching())


def run_verify(tmp_path, certificate, *extra, env=None):
    """`robustcount verify` in a separate process, so that nothing a certificate could make it run
    reaches the test runner."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "certificate.json"
    path.write_text(json.dumps(certificate))
    command = [str(Path(sys.executable).parent / "robustcount"), "verify", str(path), *extra]
    return subprocess.run(command, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300)


def test_verify_never_imports_what_a_certificate_names(tmp_path, bow_rt):
    marker = tmp_path / "imported"
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\ndef model():\n    raise SystemExit(9)\n")
    env = {"PYTHONPATH": str(tmp_path)}
    bare = {"format": "robustcount-certificate/1", "example_id": "e", "model": {"spec": "py:os:abort", "digest": None}}
    done = run_verify(tmp_path, bare, env=env)
    assert done.returncode == 1 and "malformed certificate" in done.stdout and "Traceback" not in done.stderr
    forged = honest_certificate(bow_rt)
    forged["model"]["spec"] = "py:evil:model"
    done = run_verify(tmp_path, forged, env=env)
    assert done.returncode == 1 and "pass your copy with --model" in done.stderr
    assert not marker.exists()


def test_verify_refuses_a_certificate_without_a_model_digest(capsys, tmp_path, bow_rt):
    certificate = honest_certificate(bow_rt)
    path = tmp_path / "certificate.json"
    path.write_text(json.dumps(certificate))
    assert main(["verify", str(path)]) == 0
    certificate["model"]["digest"] = None
    path.write_text(json.dumps(certificate))
    capsys.readouterr()
    assert main(["verify", str(path)]) == 1 and "cannot be tied to a model" in capsys.readouterr().out


def test_verify_checks_a_witness_against_the_claimed_radius(capsys, bow_rt):
    import copy

    from robustcount.models.engine import QueryEngine
    from robustcount.proofs.certificate import make_certificate, verify_certificate
    from robustcount.proofs.prover import ADVERSARIAL, prove
    from robustcount.spaces.build import build_space

    engine = QueryEngine(bow_rt)
    space = build_space("a wonderful and moving film", [SENTIMENT_TABLE])
    proof = prove(engine, space, 1, 2)
    assert proof.status == ADVERSARIAL and len(proof.smallest_margin_point) >= 1
    certificate = make_certificate("ex", space, 1, bow_rt.labels, proof, "bow-rt", bow_rt.digest(), engine.batching())
    assert "--allow-files" in verify_certificate(certificate, engine).reason  # a table of the certifier's
    assert verify_certificate(certificate, engine, allow_files=True).holds
    shrunk = copy.deepcopy(certificate)
    shrunk["radius"] = len(proof.smallest_margin_point) - 1
    shrunk["points"] = str(space.count(shrunk["radius"]))
    assert "beyond the radius" in verify_certificate(shrunk, engine, allow_files=True).reason
    headless = copy.deepcopy(certificate)
    headless["smallest_margin_point"] = None
    assert "witness" in verify_certificate(headless, engine, allow_files=True).reason


def test_certify_caps_the_radius_at_the_space_and_never_certifies_an_empty_space(capsys, tmp_path):
    data = tmp_path / "three.csv"
    data.write_text("text,label\nwonderful moving film,positive\nquiet,positive\n")
    table = tmp_path / "table.json"
    table.write_text(json.dumps({"wonderful": ["fine"], "moving": ["touching"], "film": ["movie"]}))
    out = tmp_path / "certs.jsonl"
    assert main(["certify", "--model", "bow-rt", "--data", str(data), "--source", f"table:{table}",
                 "--radius", "50", "--output", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    full, empty = read_run(out).records
    assert full["space_positions"] == 3 and len(full["proofs"]) <= 3 and full["certified_radius"] <= 3
    assert empty["space_positions"] == 0 and empty["proofs"] == [] and not empty.get("certificates")
    assert not empty.get("whole_space_certified")
    assert summary["empty_spaces"] == 1 and len(summary["certified"]) == 3  # rows up to the largest space
    assert summary["certified"]["3"] <= 1
    assert main(["certify", "--radius", str(10**30)]) == 2


def test_sources_that_yield_nothing_are_refused(capsys, tmp_path):
    as_json = tmp_path / "misspellings.json"
    as_json.write_text(json.dumps({"good": ["goood"]}))
    assert main(["space", "good film", "--source", f"natural:{as_json}"]) == 1
    assert "no entries in the `word variant1" in capsys.readouterr().err
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    assert main(["space", "good film", "--source", f"table:{empty}"]) == 1
    assert "has no entries" in capsys.readouterr().err


def test_report_never_imports_what_a_run_file_names(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "certs.jsonl"
    assert main(["certify", "--model", "bow-rt", "--sample", "2", "--radius", "1", "--source", "truncate",
                 "--output", str(out)]) == 0
    lines = out.read_text().splitlines()
    header = json.loads(lines[0])
    header["models"][0]["spec"] = "py:evil:model"
    records = [json.loads(line) for line in lines[1:]]
    for certificate in (c for record in records for c in record.get("certificates", [])):
        certificate["model"]["spec"] = "py:evil:model"  # a consistent file, so that report reads it all
    out.write_text("\n".join(json.dumps(line) for line in [header, *records]) + "\n")
    marker = tmp_path / "imported"
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    done = subprocess.run([str(Path(sys.executable).parent / "robustcount"), "report", str(out), "--out",
                           str(tmp_path / "report")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert not marker.exists()


# -- Forged run files: `verify` checks a certify run file as a whole, and every reader of a run
# (`report`, the summaries) refuses what verify refuses without a model. Each edit below forges a
# real run (`honest_runs`) as a forger would, recomputing digests and counts where that helps.


@pytest.fixture(scope="module")
def honest_runs(tmp_path_factory):
    """Two certify runs as lists of JSON lines (header first): bow-rt on six demo examples (one
    certified at r = 1 then broken at r = 2, some broken at r = 1, one misclassified), and the
    tie model on "a good film", whose adversary is an exact 0.5/0.5 tie."""
    folder = tmp_path_factory.mktemp("honest")
    assert main(["certify", "--model", "bow-rt", "--sample", "6", "--radius", "2", "--source", "truncate",
                 "--source", "disemvowel", "--output", str(folder / "bow.jsonl")]) == 0
    data = folder / "tie.csv"
    data.write_text("text,label\na good film,positive\n")
    assert main(["certify", "--model", "py:tests.factories:tie_model", "--data", str(data), "--source", "truncate",
                 "--radius", "1", "--output", str(folder / "tie.jsonl")]) == 0
    runs = {name: [json.loads(line) for line in (folder / f"{name}.jsonl").read_text().splitlines()]
            for name in ("bow", "tie")}
    for role in (_both, _broken, _misclassified):
        role(runs["bow"])  # the run has a record of each kind (StopIteration if not)
    return runs


def _both(lines) -> dict:
    """The record certified at r = 1 and broken at r = 2."""
    return next(r for r in lines[1:] if r.get("certified_radius") == 1 and len(r["certificates"]) == 2)


def _broken(lines) -> dict:
    """A record broken at r = 1 (an adversarial certificate only)."""
    return next(r for r in lines[1:] if r.get("certified_radius") == 0 and r["certificates"])


def _misclassified(lines) -> dict:
    return next(r for r in lines[1:] if not r["correct"])


def _recount(certificate: dict) -> None:
    """Recompute a certificate's space digest and counts after an edit, as a forger would."""
    positions = tuple(Position(k, i, tuple(c)) for k, i, c in certificate["space"]["positions"])
    space = Space(certificate["input"], positions, certificate["space"]["definition"])
    certificate["space"]["digest"] = space.digest()
    certificate["points"] = certificate["checked"] = str(space.count(certificate["radius"]))


def _smaller_space(lines):
    """The certified certificate over the truncations alone, digest and counts recomputed."""
    record = _both(lines)
    certificate = record["certificates"][0]
    certificate["space"]["definition"]["sources"] = [{"source": "truncate"}]
    for position in certificate["space"]["positions"]:
        position[2] = position[2][:2]
    _recount(certificate)
    record["space_digest"] = certificate["space"]["digest"]
    record["proofs"][0]["total"] = certificate["points"]
    record["proofs"][0]["checked"] = int(certificate["points"])


def _move_certificate(lines):
    """The certified example's proofs and certificates put into a broken example's record."""
    source, target = _both(lines), _broken(lines)
    target.update({k: source[k] for k in ("proofs", "certificates", "certified_radius", "space_digest",
                                          "space_positions")})


def _tolerance_everywhere(lines, tolerance: float) -> None:
    lines[0]["margin_tolerance"] = tolerance
    for record in lines[1:]:
        for certificate in record.get("certificates", []):
            certificate["margin_tolerance"] = tolerance


def _hide_adversary(lines) -> None:
    """The broken example's adversarial proof called undecided (a time limit), its certificate dropped."""
    record = _broken(lines)
    record["proofs"][-1].update(status="undecided", reason="the time limit of 600 s was reached", witness=None)
    record["certificates"], record["undecided"] = [], True


def _cyrillic(lines):
    certificate = _both(lines)["certificates"][0]
    certificate["input"] = certificate["input"].replace("e", "\u0435", 1)  # CYRILLIC SMALL LETTER IE
    _recount(certificate)


def _other_gold(record: dict) -> str:
    return "negative" if record["gold"] == "positive" else "positive"


def _two_records(lines):
    """A second record of the certified example, which says the model misclassifies it, in the
    misclassified example's place."""
    outcome = ("certified_radius", "whole_space_certified", "undecided", "certificates")
    forged = {k: v for k, v in _both(lines).items() if k not in outcome}
    forged.update(index=_misclassified(lines)["index"], correct=False, proofs=[])
    lines[lines.index(_misclassified(lines))] = json.loads(json.dumps(forged))


def _invented_proof(lines):
    """A certified r = 3 proof after the adversarial r = 2 one, the run's radius raised to 3."""
    record = _both(lines)
    lines[0]["options"]["radius"] = 3
    record["proofs"].append({**record["proofs"][0], "radius": 3, "witness": None})
    record["certified_radius"] = 2


def _clean_witness(record: dict) -> None:
    """The adversary made the clean input itself (the witness at distance 0), with the other gold."""
    record["gold"] = _other_gold(record)
    record["proofs"][-1].update(smallest_margin_point=[], witness=record["input"])
    record["certificates"][-1].update(smallest_margin_point=[], gold=record["gold"])


def _total(lines):
    """A count of points one more than |Omega_1|, in the proof and its certificate alike."""
    record = _both(lines)
    proof, certificate = record["proofs"][0], record["certificates"][0]
    proof["total"] = certificate["points"] = certificate["checked"] = str(int(proof["total"]) + 1)
    proof["checked"] += 1


def _header_of(lines, other):
    lines[0] = other[0]


# name: (the run forged, its edit (given the other run's lines too when it takes two), what verify
# and report say)
RUN_TAMPERS = {
    "the header names another model": (
        "bow", lambda ls: ls[0]["models"][0].__setitem__("spec", "tfidf-rt"),
        "its model.spec is not what its record and the run header give"),
    "the header names other weights": (
        "bow", lambda ls: ls[0]["models"][0].__setitem__("digest", "0" * 64), "its model.digest is not"),
    "the header's labels swapped": (
        "bow", lambda ls: ls[0]["models"][0].__setitem__("labels", ["positive", "negative"]), "its labels[0] is not"),
    "the header's sources edited": (
        "bow", lambda ls: ls[0]["space"]["sources"].pop(), "its space.definition.sources is not"),
    "the header's filters edited": (
        "bow", lambda ls: ls[0]["space"]["filters"].__setitem__("min_length", 4),
        "its space.definition.filters.min_length is not"),
    "the header's seed edited": (
        "bow", lambda ls: ls[0].__setitem__("seed", 1), "the space must be built with the run's seed"),
    "the header's max_points below a decided proof": (
        "bow", lambda ls: ls[0]["options"].__setitem__("max_points", 5), "above the run's max_points 5, yet"),
    "a header option written as text": (
        "bow", lambda ls: ls[0]["options"].__setitem__("time_limit", "600"), "options: time_limit must be a finite number"),
    "the planned examples as a boolean": (
        "bow", lambda ls: ls[0]["data"].__setitem__("examples", True), "data.examples must be an integer"),
    "the header of another run": ("tie", lambda ls, other: _header_of(ls, other), "is not what its record and the"),
    "a certificate moved into another example's record": (
        "bow", _move_certificate, "certificate 1 (certified): its example_id is not"),
    "a certificate for a smaller space than the header's": (
        "bow", _smaller_space, "its space.definition.sources is not"),
    "a certificate's input a Cyrillic look-alike of the record's": ("bow", _cyrillic, "its input is not"),
    "the record's gold edited": ("bow", lambda ls: _both(ls).__setitem__("gold", _other_gold(_both(ls))),
                                 "its gold is not"),
    "the record's input edited": ("bow", lambda ls: _both(ls).__setitem__("input", _both(ls)["input"] + " Great."),
                                  "its input is not"),
    "two contradicting records of one example": ("bow", _two_records, "appears twice (at indices"),
    "a duplicated record": ("bow", lambda ls: ls.append(json.loads(json.dumps(_both(ls)))), "appears twice"),
    "whole_space_certified without a certified certificate": (
        "bow", lambda ls: _broken(ls).__setitem__("whole_space_certified", True),
        "whole_space_certified is true, its proofs give false"),
    "an invented certified proof after the adversarial one": (
        "bow", _invented_proof, "proof 3 follows an adversarial proof at r = 2"),
    "the witness text edited": (
        "bow", lambda ls: _both(ls)["proofs"][1].__setitem__("witness", "a masterpiece"),
        "its witness text is not the text its smallest_margin_point gives"),
    "a NaN margin": (
        "bow", lambda ls: _both(ls)["certificates"][0].__setitem__("smallest_margin", float("nan")),
        "certificates[0].smallest_margin is not a finite number"),
    "an infinite margin": (
        "bow", lambda ls: _both(ls)["proofs"][0].__setitem__("smallest_margin", float("inf")),
        "proofs[0].smallest_margin is not a finite number"),
    "the witness is the clean input": ("tie", lambda ls: _clean_witness(ls[1]),
                                       "its witness is at distance 0 (the clean input)"),
    "reordered proofs": ("bow", lambda ls: _both(ls)["proofs"].reverse(), "proof 1: it is at radius 2"),
    "a wrong certified radius": (
        "bow", lambda ls: _both(ls).__setitem__("certified_radius", 2), "certified_radius is 2, its proofs give 1"),
    "points checked edited in a proof": (
        "bow", lambda ls: _both(ls)["proofs"][0].__setitem__("checked", _both(ls)["proofs"][0]["checked"] - 1),
        "proof 1: certified after checking"),
    "points checked edited in a certificate": (
        "bow", lambda ls: _both(ls)["certificates"][0].__setitem__("checked", "1"), "its checked is not"),
    "a total one above |Omega_r|": ("bow", _total, "proof 1: total is"),
    "a truncated certificate": (
        "bow", lambda ls: _both(ls)["certificates"][1].pop("smallest_margin_point"),
        "certificate 2 (adversarial): its smallest_margin_point is missing"),
    "a dropped certificate": ("bow", lambda ls: _both(ls)["certificates"].pop(),
                              "holds 1 certificate(s), its proofs give 2"),
    "an extra key in a record": ("bow", lambda ls: _both(ls).__setitem__("verified_by", "me"),
                                 "holds verified_by, a field certify never writes"),
    "an extra key in a proof": ("bow", lambda ls: _both(ls)["proofs"][0].__setitem__("exact", True),
                                "proof 1: holds exact, a field a proof never has"),
    "an extra key in a certificate": ("bow", lambda ls: _both(ls)["certificates"][0].__setitem__("trusted", True),
                                      "its trusted is a field certify never writes"),
    "a number written as a string": ("bow", lambda ls: _both(ls).__setitem__("certified_radius", "1"),
                                     'certified_radius is "1", its proofs give 1'),
    "a boolean as a number": ("bow", lambda ls: _both(ls).__setitem__("certified_radius", True),
                              "certified_radius is true, its proofs give 1"),
    "a negative radius": ("bow", lambda ls: _both(ls)["proofs"][0].__setitem__("radius", -1),
                          "proof 1: it is at radius -1"),
    "more space positions than the certificate's space": (
        "bow", lambda ls: _broken(ls).__setitem__("space_positions", _broken(ls)["space_positions"] + 1),
        "space_positions is"),
    "negative query counts": ("bow", lambda ls: _both(ls)["queries"].__setitem__("model_calls", -5),
                              "queries must map the engine's counters to integers >= 0"),
    "a misclassified example claimed correct": (
        "bow", lambda ls: _misclassified(ls).__setitem__("correct", True), "the field certificates is missing"),
    "proofs on a misclassified example": (
        "bow", lambda ls: _misclassified(ls).__setitem__("proofs", _both(ls)["proofs"]),
        "a misclassified example has proofs"),
    "an index outside the data": ("bow", lambda ls: _both(ls).__setitem__("index", 99), "index 99 is outside"),
    "an index written as a boolean": ("bow", lambda ls: _both(ls).__setitem__("index", True),
                                      "is not an example record"),
    "the header's margin tolerance lowered": (
        "bow", lambda ls: ls[0].__setitem__("margin_tolerance", 0.0), "margin_tolerance must be 0.0001"),
    "a larger margin tolerance in the header and every certificate": (
        "bow", lambda ls: _tolerance_everywhere(ls, 0.6), "margin_tolerance must be 0.0001"),
    "a certificate's batching invented": (
        "bow", lambda ls: _both(ls)["certificates"][0]["model"].__setitem__("batching", "trust me"),
        "its model.batching must say how the model was evaluated"),
    "an adversarial proof relabelled undecided": (
        "bow", _hide_adversary, "undecided although it saw a margin of"),
}


def test_the_run_tamper_suite_has_forty_kinds():
    assert len(RUN_TAMPERS) >= 40


def _write(path, lines) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _certified_counts(path) -> dict:
    return summarise_run(read_run(path))["certified"]


@pytest.mark.parametrize("tamper", list(RUN_TAMPERS))
def test_no_forged_run_file_verifies_or_reports(capsys, tmp_path, honest_runs, tamper):
    run, edit, said = RUN_TAMPERS[tamper]
    lines = json.loads(json.dumps(honest_runs[run]))
    other = honest_runs["tie" if run == "bow" else "bow"]
    edit(lines, json.loads(json.dumps(other))) if edit.__code__.co_argcount == 2 else edit(lines)
    path = tmp_path / "forged.jsonl"
    _write(path, lines)
    capsys.readouterr()
    verify = ["verify", str(path)] + (["--model", "py:tests.factories:tie_model"] if run == "tie" else [])
    assert main(verify) == 1
    captured = capsys.readouterr()
    assert said in captured.out + captured.err and "Traceback" not in captured.err
    assert main(["report", str(path), "--out", str(tmp_path / "report")]) == 1
    refused = capsys.readouterr().err
    assert said in refused and refused.count("\n") == 1


def _renumbered_without(lines, k: int) -> None:
    """Record k left out and the later ones moved up, as if the data held one example fewer."""
    del lines[1 + k]
    for record in lines[1 + k :]:
        record["index"] -= 1
    lines[0]["data"]["examples"] -= 1


def _copied_under_a_new_id(lines) -> None:
    """The certified record copied as one more example of its own (its certificates renamed)."""
    copy = json.loads(json.dumps(_both(lines)))
    copy["id"], copy["index"] = copy["id"] + "-again", len(lines) - 1
    for certificate in copy["certificates"]:
        certificate["example_id"] = copy["id"]
    lines.append(copy)
    lines[0]["data"]["examples"] += 1


@pytest.mark.parametrize("forge", [lambda ls: _renumbered_without(ls, 0), _copied_under_a_new_id])
def test_verify_checks_the_records_against_the_data_the_header_names(capsys, tmp_path, honest_runs, forge):
    """Records left out and renumbered, or copied under a new id, agree with their certificates;
    only the data (demo:test here, at hand) show the run is not theirs."""
    lines = json.loads(json.dumps(honest_runs["bow"]))
    forge(lines)
    path = tmp_path / "forged.jsonl"
    _write(path, lines)
    capsys.readouterr()
    assert main(["verify", str(path)]) == 1
    assert "are not those the header records" in capsys.readouterr().out


def test_verify_checks_each_record_against_its_example(capsys, tmp_path):
    """A record taken from a run over the same texts with one gold label flipped agrees with its
    certificates and the run; only the data show its gold label is not the example's."""
    data, flipped = tmp_path / "data.csv", tmp_path / "flipped.csv"
    data.write_text("id,text,label\na,a good film,positive\nb,a dull film,negative\n")
    flipped.write_text("id,text,label\na,a good film,negative\nb,a dull film,negative\n")
    runs = {}
    for name, file in (("honest", data), ("flipped", flipped)):
        runs[name] = tmp_path / f"{name}.jsonl"
        assert main(["certify", "--model", "bow-rt", "--data", str(file), "--id-column", "id", "--radius", "1",
                     "--source", "truncate", "--output", str(runs[name])]) == 0
    honest, other = ([json.loads(line) for line in runs[n].read_text().splitlines()] for n in ("honest", "flipped"))
    honest[1] = other[1]
    _write(runs["honest"], honest)
    capsys.readouterr()
    assert main(["verify", str(runs["honest"])]) == 1
    assert "a: DOES NOT HOLD: its gold is not that of the data's example 0" in capsys.readouterr().out
    flipped.unlink()
    assert main(["verify", str(runs["flipped"])]) == 0
    assert "data: not checked" in capsys.readouterr().out
    assert main(["verify", str(runs["flipped"]), "--data", str(data)]) == 1
    assert "are not those the header records" in capsys.readouterr().out
    assert main(["verify", str(runs["flipped"]), "--data", str(tmp_path / "nothing.csv")]) == 1


def test_an_honest_run_verifies_and_reports(capsys, tmp_path, honest_runs):
    for run, extra in (("bow", []), ("tie", ["--model", "py:tests.factories:tie_model"])):
        path = tmp_path / f"{run}.jsonl"
        _write(path, honest_runs[run])
        assert main(["verify", str(path), *extra]) == 0
        assert main(["report", str(path), "--out", str(tmp_path / f"{run}-report")]) == 0
    assert _certified_counts(tmp_path / "bow.jsonl") == {1: 1, 2: 0}


def test_verify_evaluates_the_clean_input_of_an_adversarial_certificate(capsys, tmp_path, honest_runs):
    """The tie is adversarial for either gold label, so a forger who changes the gold of record and
    certificate alike leaves them consistent: only the model says that the clean input does not
    have that label. Nothing counts it as certified."""
    lines = json.loads(json.dumps(honest_runs["tie"]))
    record = lines[1]
    assert record["proofs"][-1]["smallest_margin"] == 0.0  # the witness is a tie
    record["gold"] = record["certificates"][0]["gold"] = _other_gold(record)
    lines[0]["data"]["spec"] = str(tmp_path / "elsewhere.csv")  # the data are not at hand: only the model tells
    path = tmp_path / "forged.jsonl"
    _write(path, lines)
    capsys.readouterr()
    assert main(["verify", str(path), "--model", "py:tests.factories:tie_model"]) == 1
    assert "does not give the clean input the gold label 'negative'" in capsys.readouterr().out
    assert _certified_counts(path) == {1: 0}


def test_runs_and_certificates_record_the_batching_and_the_margin_tolerance(capsys, tmp_path):
    """A batch-dependent model of the user's is said so on one line, evaluated one text at a time,
    and the run header and every certificate say which; verify, with its own batch size, agrees."""
    data = tmp_path / "two.csv"
    data.write_text("text,label\ngood film,positive\nbad good film,positive\n")
    table = tmp_path / "table.json"
    table.write_text(json.dumps({"good": ["bad"], "film": ["film we saw in a cinema near the old harbour"]}))
    for model, batching in (("bow-rt", "batch-invariant: checked"),
                            ("py:tests.factories:padded_mean_model",
                             "evaluated one text at a time (answers depend on their batch)")):
        out = tmp_path / "certs.jsonl"
        assert main(["certify", "--model", model, "--data", str(data), "--source", f"table:{table}", "--radius", "2",
                     "--output", str(out), "--overwrite"]) == 0
        warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
        assert len(warnings) == (0 if model == "bow-rt" else 1)
        assert all(w.startswith("robustcount: warning: padded-mean: answers depend on the other inputs")
                   for w in warnings)
        run = read_run(out)
        assert run.header["models"][0]["batching"] == batching and run.header["margin_tolerance"] == 1e-4
        certificates = [c for r in run.records for c in r.get("certificates", [])]
        assert certificates and all(c["model"]["batching"] == batching and c["margin_tolerance"] == 1e-4
                                    for c in certificates)
        assert main(["verify", str(out), "--model", model, "--allow-files", "--batch-size", "1"]) == 0
        assert f"{model}: evaluated one text at a time (batch size 1)" in capsys.readouterr().out.splitlines()


def test_a_model_failure_on_one_example_keeps_the_records_before_it(capsys, tmp_path):
    """The run header's batch probe runs the model on some of the examples; one the model fails
    on must fail as its own example does, after the records before it are written."""
    data = tmp_path / "d.csv"
    data.write_text("text,label\ngood film,positive\nbad film,negative\nboom,negative\n")
    out = tmp_path / "certs.jsonl"
    assert main(["certify", "--model", "py:tests.factories:fragile_model", "--data", str(data), "--radius", "1",
                 "--source", "truncate", "--output", str(out)]) == 1
    assert "model failed on 'boom'" in capsys.readouterr().err
    assert [r["input"] for r in read_run(out).records] == ["good film", "bad film"]


def test_a_parallel_run_verifies_and_reports_whatever_each_worker_decided_about_batching(capsys, tmp_path):
    """Each worker's engine probes its model on its own first request; a certificate records its
    engine's outcome, which may differ from the header's, and the run still verifies and reports."""
    data = tmp_path / "d.csv"
    data.write_text("text,label\ngood film,positive\nbad film,negative\na good day,positive\nthe dull end,negative\n")
    out = tmp_path / "certs.jsonl"
    assert main(["certify", "--model", "py:tests.factories:short_texts_model", "--data", str(data), "--radius", "1",
                 "--source", "truncate", "--workers", "2", "--output", str(out)]) == 0
    assert main(["verify", str(out), "--model", "py:tests.factories:short_texts_model"]) == 0
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
