"""Every summary names the space its figures are over (sources, filters, coverage), from the run's
header and records, so that runs in different spaces are not read as comparable."""

import json
from statistics import median_low

import pytest

from robustcount.cli import main
from robustcount.data import load_demo
from robustcount.errors import RobustcountError
from robustcount.runs.files import read_run
from robustcount.spaces.build import build_space, english_stop_words
from robustcount.text import tokenize

TEXTS = load_demo("test")[:5]


def expected_line(radius, texts=TEXTS, **filters) -> str:
    """The space line computed here from the texts' spaces."""
    spaces = [build_space(e.input, ["truncate"], **filters) for e in texts]
    words = sum(len(tokenize(e.input).words) for e in texts)
    changeable = sum(sum(p.kind == "word" for p in s.positions) for s in spaces)
    size = median_low(s.count(s.max_radius() if radius is None else min(radius, s.max_radius())) for s in spaces)
    omega = "|Omega|" if radius is None else f"|Omega_{radius}|"
    return f"{changeable / words:.0%} of words changeable, median {omega} = {size:,} (over {len(texts)} texts)"


def test_attack_and_certify_name_their_space_under_the_table_and_in_the_report(capsys, tmp_path):
    attack = ["attack", "--model", "bow-rt", "--data", "demo:test", "--first", "5", "--source", "truncate"]
    assert main([*attack, "--output", str(tmp_path / "a.jsonl")]) == 0
    assert main([*attack, "--stop-words", "--max-candidates", "1", "--output", str(tmp_path / "b.jsonl")]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("space: ")]
    assert lines == [f"space: truncate; {expected_line(None)}",
                     "space: truncate; stop words left alone, at most 1 candidate per position; "
                     f"{expected_line(None, stop_words=english_stop_words(), max_candidates=1)}"]
    assert main(["certify", "--model", "bow-rt", "--data", "demo:test", "--first", "5", "--source", "truncate",
                 "--radius", "2", "--output", str(tmp_path / "c.jsonl"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["space"]["sources"] == ["truncate"] and summary["space"]["texts"] == 5
    assert main(["report", str(tmp_path / "c.jsonl"), "--out", str(tmp_path / "report")]) == 0
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert f"Space: truncate; {expected_line(2)}." in markdown
    assert main(["verify", str(tmp_path / "c.jsonl")]) == 0


@pytest.mark.parametrize("field, value", [("words", 1), ("changeable_words", 0), ("radius", 1), ("radius", 99),
                                          ("size", "7")])
def test_a_certify_record_whose_coverage_disagrees_is_refused(capsys, tmp_path, field, value):
    path = tmp_path / "c.jsonl"
    assert main(["certify", "--model", "bow-rt", "--data", "demo:test", "--first", "2", "--source", "truncate",
                 "--radius", "2", "--output", str(path)]) == 0
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[1]["space_coverage"][field] = value
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(RobustcountError, match="space_coverage"):
        read_run(path)
