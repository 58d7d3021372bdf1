import json

from robustcount.cli import main
from robustcount.runs import read_run


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
    assert "all" in capsys.readouterr().out


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
