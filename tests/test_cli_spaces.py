import io
import json
import sys
from itertools import combinations

from robustcount.cli import main
from robustcount.text import tokenize
from robustcount.runs import read_run
from tests.factories import SENTIMENT_TABLE


def test_perturb_prints_a_seeded_attack(capsys):
    args = ["perturb", "Adversarial attacks are harmless.", "--attack", "visual", "--level", "high", "--seed", "1"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    assert capsys.readouterr().out == first != "Adversarial attacks are harmless.\n"


def test_perturb_refuses_unknown_attacks_and_levels(capsys):
    assert main(["perturb", "text", "--attack", "rot13"]) == 1
    assert "unknown source" in capsys.readouterr().err
    assert main(["perturb", "text", "--attack", "visual", "--level", "1.5"]) == 1
    assert "[0, 1]" in capsys.readouterr().err


def test_space_prints_candidates_and_size(capsys):
    assert main(["space", "A gripping film.", "--source", "wordnet", "--radius", "2", "--stop-words"]) == 0
    out = capsys.readouterr().out
    assert "'gripping'" in out and "'movie'" in out
    assert "|Omega_2| = 126" in out  # gripping: its own synonyms and grip's, as -ing forms


def test_space_json_unions_sources(capsys):
    assert main(["space", "good film", "--source", "truncate", "--source", "segment", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [(p["kind"], p["candidates"]) for p in record["positions"]] == [
        ("word", ["good", "goo"]), ("gap", [" ", ""]), ("word", ["film", "fil"])]
    assert record["size"] == "4"  # radius 1: the original and three single changes


def test_space_refuses_unknown_sources(capsys):
    assert main(["space", "text", "--source", "thesaurus"]) == 1
    assert "unknown source" in capsys.readouterr().err


def _brute_force_size(positions: list[dict], radius: int) -> int:
    """|Omega_r| counted from the candidates listed: every choice of at most `radius` positions
    times the other candidates each chosen one has."""
    others = [len(p["candidates"]) - 1 for p in positions]
    total = 0
    for r in range(radius + 1):
        for chosen in combinations(others, r):
            product = 1
            for k in chosen:
                product *= k
            total += product
    return total


def test_space_writes_one_json_line_per_text_of_the_data(capsys, tmp_path):
    data = tmp_path / "texts.csv"  # no label column: a space needs none
    data.write_text("key,text\nx1,a good film and a bad movie\nx2,The acting is wonderful.\nx3,zzz qqq\n")
    assert main(["space", "--data", str(data), "--id-column", "key", "--source", SENTIMENT_TABLE,
                 "--radius", "1", "--radius", "2", "--radius", "3", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["id"] for line in lines] == ["x1", "x2", "x3"]
    for line in lines:
        words = tokenize(line["text"]).words
        for p in line["positions"]:
            assert p["original"] == p["candidates"][0] == words[p["index"]]
        assert line["sizes"] == {str(r): str(_brute_force_size(line["positions"], r)) for r in (1, 2, 3)}
    assert lines[0]["positions"] and lines[2]["positions"] == [] and lines[2]["sizes"]["3"] == "1"
    assert main(["space", "a good film and a bad movie", "--source", SENTIMENT_TABLE, "--radius", "2", "--json"]) == 0
    single = json.loads(capsys.readouterr().out)  # one text as before: the same space
    assert single["size"] == lines[0]["sizes"]["2"] and single["digest"] == lines[0]["digest"]
    assert [p["candidates"] for p in single["positions"]] == [p["candidates"] for p in lines[0]["positions"]]


def test_space_takes_a_sample_of_the_demo_data_and_standard_input(capsys, monkeypatch):
    assert main(["space", "--data", "demo:test", "--sample", "3", "--seed", "5", "--json"]) == 0
    first = [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()]
    assert main(["space", "--data", "demo:test", "--sample", "3", "--seed", "5", "--json"]) == 0
    assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == first
    assert len(first) == 3 and all(i.startswith("rt-") for i in first)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a good film\n\nbad movie\n")))
    assert main(["space", "--source", SENTIMENT_TABLE, "--radius", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("0: a good film\n") and "\n1: bad movie\n" in out and out.count("|Omega_2|") == 2


def test_space_refuses_a_text_with_data_and_a_sample_of_standard_input(capsys, monkeypatch):
    assert main(["space", "good film", "--data", "demo:test"]) == 2
    assert "not both" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a good film\n")))
    assert main(["space", "--first", "1"]) == 2
    assert "standard input" in capsys.readouterr().err


def test_zeroe_writes_table_json_and_plot(capsys, tmp_path):
    out = tmp_path / "z"
    assert main(["zeroe", "--model", "tfidf-rt", "--sample", "40", "--attack", "truncate", "--attack", "visual",
                 "--out", str(out)]) == 0
    record = json.loads((out / "zeroe.json").read_text())
    assert [(r["attack"], r["level"]) for r in record["rows"]] == [
        (a, lvl) for a in ("truncate", "visual") for lvl in ("low", "mid", "high")]
    assert record["seed"] == 0 and record["examples"] == 40
    assert (out / "zeroe.png").stat().st_size > 1000
    rows = [line.split() for line in (out / "zeroe.md").read_text().splitlines()[2:]]
    assert rows[0][:3] == ["none", "-", f"{record['clean_accuracy']:.4f}"]
    assert [row[:3] for row in rows[1:]] == [[r["attack"], r["level"], f"{r['accuracy']:.4f}"] for r in record["rows"]]


def test_attack_command_writes_rechecked_results(capsys, tmp_path):
    out = tmp_path / "attack.jsonl"
    args = ["attack", "--method", "pdp", "--model", "bow-rt", "--sample", "6", "--seed", "1",
            "--source", SENTIMENT_TABLE, "--source", "truncate",
            "--output", str(out), "--json"]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])  # after a JSON line per example
    run = read_run(out)
    records = run.records
    assert summary["examples"] == len(records) == 6
    assert run.header["seed"] == 1 and run.header["options"]["method"] == "pdp"
    assert summary["skipped"] == sum(r["status"] == "skipped" for r in records)
    for r in records:
        assert r["method"] == "pdp" and r["space_digest"]
        if r["status"] == "success":
            assert r["distance"] == len(r["point"]) and r["margin"] <= 0


def test_attack_oracle_refusals_are_undecided(capsys):
    assert main(["attack", "--method", "exhaustive", "--model", "bow-rt", "--sample", "3", "--source", "zeroe",
                 "--max-points", "10", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["refused"] + summary["skipped"] == 3
    assert summary["undecided"] == summary["refused"] and summary["survived"] == summary["successes"] == 0
    assert summary["accuracy_under_attack"] == 0.0  # refused examples are not counted as robust


def test_textfooler_greedy_search_from_the_command_line(capsys, tmp_path):
    out = tmp_path / "greedy.jsonl"
    assert main(["attack", "--method", "textfooler", "--no-pos-check", "--no-similarity-check", "--model", "bow-rt",
                 "--sample", "5", "--source", SENTIMENT_TABLE, "--output", str(out),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    run = read_run(out)
    assert run.header["options"]["settings"] == {"setting": "paper", "pos_check": False, "similarity_check": False,
                                                  "word_order": "importance"}
    assert summary["examples"] == 5 and all(r["similarity"] is None for r in run.records)
    assert not any("similarity_queries" in r for r in run.records)  # no encoder ran


def test_textfooler_counts_its_sentence_encoder_calls_apart(capsys, tmp_path):
    out = tmp_path / "textfooler.jsonl"
    assert main(["attack", "--method", "textfooler", "--no-pos-check", "--model", "bow-rt", "--sample", "4",
                 "--seed", "1", "--output", str(out)]) == 0
    run = read_run(out)
    records = run.records
    stop_words = set(run.header["space"]["filters"]["stop_words"])
    assert "with" in stop_words and "could" in stop_words  # the setting's stop words, recorded
    for r in records:  # and never substituted
        if r["adversarial"]:
            changed = [a for a, b in zip(r["input"].split(), r["adversarial"].split()) if a != b]
            assert changed and not stop_words & {w.lower().strip(".,") for w in changed}
    attacked = [r for r in records if r["status"] != "skipped" and r["space_positions"]]
    assert attacked and all(r["similarity_queries"]["model_calls"] > 0 for r in attacked)
    assert all(r["similarity_queries"]["model_calls"] == 0 for r in records if not r["space_positions"])


def test_perturb_and_zeroe_take_your_misspelling_table(capsys, tmp_path):
    table = tmp_path / "typos.txt"
    table.write_text("film flim fillm\nmovie moive\n")
    assert main(["perturb", "a film and a movie", "--attack", f"natural:{table}", "--level", "high", "--seed", "1"]) == 0
    assert capsys.readouterr().out.split() == ["a", "fillm", "and", "a", "moive"]
    out = tmp_path / "z"
    assert main(["zeroe", "--model", "bow-rt", "--sample", "5", "--attack", f"natural:{table}", "--out", str(out)]) == 0
    record = json.loads((out / "zeroe.json").read_text())
    assert {r["attack"] for r in record["rows"]} == {f"natural:{table}"}
    neighbours = tmp_path / "neighbours.json"
    neighbours.write_text('{"film": ["movie"], "wonderful": ["marvellous"]}')
    capsys.readouterr()
    assert main(["perturb", "a wonderful film", "--attack", f"table:{neighbours}", "--level", "high", "--seed", "3"]) == 0
    assert capsys.readouterr().out == "a marvellous movie\n"
