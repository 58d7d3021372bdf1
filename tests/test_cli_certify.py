import json

from robustcount.cli import main
from robustcount.runs import read_run
from tests.factories import SENTIMENT_TABLE


def test_certify_prints_shares_and_writes_checkable_certificates(capsys, tmp_path):
    out = tmp_path / "certs.jsonl"
    assert main(["certify", "--model", "bow-rt", "--sample", "8", "--radius", "2", "--output", str(out),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    records = read_run(out).records
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
    out.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    marker = tmp_path / "imported"
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    done = subprocess.run([str(Path(sys.executable).parent / "robustcount"), "report", str(out), "--out",
                           str(tmp_path / "report")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert not marker.exists()


def test_verify_checks_the_run_records_against_their_certificates(capsys, tmp_path):
    out = tmp_path / "certs.jsonl"
    assert main(["certify", "--model", "bow-rt", "--sample", "10", "--radius", "2", "--source", "truncate",
                 "--source", "disemvowel", "--output", str(out)]) == 0
    assert main(["verify", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    certified = next(i for i, r in enumerate(lines) if r.get("certified_radius"))
    broken = next((i for i, r in enumerate(lines) if any(c["status"] == "adversarial"
                                                         for c in r.get("certificates", []))), None)
    edits = [lambda rs: rs[certified].__setitem__("certified_radius", rs[certified]["certified_radius"] + 1),
             lambda rs: rs[certified]["proofs"][0].__setitem__("status", "undecided")]
    if broken is not None:
        edits.append(lambda rs: rs[broken]["proofs"][-1].__setitem__("smallest_margin_point", [[0, 1], [1, 1]]))
    for edit in edits:
        forged = [json.loads(json.dumps(r)) for r in lines]
        edit(forged)
        out.write_text("\n".join(json.dumps(r) for r in forged) + "\n")
        capsys.readouterr()
        assert main(["verify", str(out)]) == 1
        assert "run record disagrees" in capsys.readouterr().out


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
